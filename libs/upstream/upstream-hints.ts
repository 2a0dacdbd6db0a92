/**
 * The usual fixes for what a misconfigured upstream answers, said where the
 * operator reads the error (the log's `error_detail`), with the URL called.
 */

/**
 * A 404 from a path outside `/v1`: the base URL lacks the `/v1` that vLLM,
 * SGLang, llama.cpp and Ollama serve the OpenAI API under.
 */
export function missingV1Hint(url: string, fromRoot: boolean): string {
  if (fromRoot) return '';
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return '';
  }
  if (/(^|\/)v1(\/|$)/.test(path)) return '';
  const origin = new URL(url).origin;
  return ` The upstream base URL has no /v1, under which OpenAI-compatible servers serve the API: set UPSTREAM_URL (upstream.baseUrl) to e.g. ${origin}/v1.`;
}

/** The message of an upstream 404 as the caller reads it: the upstream's own words when it gave any, no URL. */
export function notFoundMessage(upstreamMessage: string | undefined): string {
  const said = upstreamMessage ? `: ${upstreamMessage.replace(/\.$/, '')}` : '';
  return `The model server answered 404 Not Found${said}.`;
}

/**
 * The operator's detail of an upstream 404 (logged, never sent to a client):
 * the URL called, the upstream's own words, and the fix when one is likely.
 */
export function notFoundDetail(method: string, url: string, upstreamMessage: string | undefined, fromRoot: boolean): string {
  const said = upstreamMessage ? `: ${upstreamMessage.replace(/\.$/, '')}` : '';
  return `Upstream ${method} ${url} answered 404 Not Found${said}.${missingV1Hint(url, fromRoot)}`;
}

/**
 * A bare 404 to \`/responses\`: the server most likely speaks chat completions
 * only (Ollama, llama.cpp, TGI), which is the chat dialect. Said to the caller
 * too: it names a setting, not an address.
 */
export function dialectHint(url: string): string {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return '';
  }
  if (!/\/responses\/?$/.test(path)) return '';
  return ' A server that serves only chat completions (Ollama, llama.cpp, TGI) answers so to /responses: set UPSTREAM_DIALECT=chat (upstream.dialect) for it.';
}
