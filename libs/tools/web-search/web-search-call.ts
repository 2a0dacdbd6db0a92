import type { JsonObject } from '#tool-sdk/index.js';

/** What the gateway keeps of one call for its public item; results themselves are not kept. */
export interface WebSearchCallData {
  queries: string[];
  /** URLs the model was shown. */
  sources: string[];
  /** Their titles, by URL, for the answer's `url_citation` annotations. */
  titles?: Record<string, string>;
  /** Their dates or ages as the provider reported them, by URL, for `web_search_call.results`. */
  dates?: Record<string, string>;
}

/**
 * `url_citation` annotations on an answer: each place it gives the URL of a
 * page the search showed the model cites that page (with its title), as
 * OpenAI's web search answers carry them and clients build their "sources"
 * from them (the AI SDK's `sources`, LangChain's citations). Linear in the
 * text per source; a URL that is the prefix of a longer one is cited once,
 * at the longer one.
 */
export function urlCitations(text: string, pages: ReadonlyMap<string, string>): Array<Record<string, unknown>> {
  const found: Array<{ url: string; title: string; start: number; end: number }> = [];
  for (const [url, title] of pages) {
    if (!url) continue;
    for (let at = text.indexOf(url); at >= 0; at = text.indexOf(url, at + url.length)) found.push({ url, title, start: at, end: at + url.length });
  }
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Array<Record<string, unknown>> = [];
  let covered = -1;
  for (const hit of found) {
    if (hit.start < covered) continue;
    covered = hit.end;
    out.push({ type: 'url_citation', url: hit.url, title: hit.title, start_index: hit.start, end_index: hit.end });
  }
  return out;
}

export const SOURCES_INCLUDE = 'web_search_call.action.sources';
/**
 * `include: ["web_search_call.results"]`: the item lists the pages the model
 * was shown with their titles (and dates where the provider gives them).
 * OpenAI names the include without publishing a shape; this one is what
 * Anthropic's `web_search_tool_result` needs, which `/v1/messages` builds from it.
 */
export const RESULTS_INCLUDE = 'web_search_call.results';

/** One entry of a `web_search_call`'s `results` (with `RESULTS_INCLUDE`). */
export interface WebSearchResultEntry {
  type: 'url';
  url: string;
  title: string;
  date?: string;
}

export function searchResults(data: WebSearchCallData | undefined): WebSearchResultEntry[] {
  return (data?.sources ?? []).map((url) => {
    const entry: WebSearchResultEntry = { type: 'url', url, title: data?.titles?.[url] ?? url };
    const date = data?.dates?.[url];
    if (date) entry.date = date;
    return entry;
  });
}

/** The model's arguments: `{query, queries?}`; either field alone is accepted. */
export function parseSearchArguments(args: string, maxQueries: number): { queries: string[] } | { error: string } {
  let parsed: unknown;
  try {
    parsed = args.trim() === '' ? {} : JSON.parse(args);
  } catch {
    return { error: 'The arguments are not valid JSON; call web_search with {"query": "..."}.' };
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return { error: 'The arguments must be a JSON object such as {"query": "..."}.' };
  }
  const { query, queries } = parsed as { query?: unknown; queries?: unknown };
  const listed: unknown[] = [query, ...(Array.isArray(queries) ? queries : [])];
  const unique = [
    ...new Set(
      listed
        .filter((q): q is string => typeof q === 'string')
        .map((q) => q.trim())
        .filter(Boolean),
    ),
  ];
  if (unique.length === 0) return { error: 'No query given; call web_search with {"query": "..."}.' };
  return { queries: unique.slice(0, maxQueries) };
}

/** Queries for display when the call's own record is unavailable (it failed before running). */
export function queriesOf(args: string): string[] {
  const parsed = parseSearchArguments(args, Number.MAX_SAFE_INTEGER);
  return 'queries' in parsed ? parsed.queries : [];
}

/** `action` of a `web_search_call`: `queries` only when there were several, `sources` only on request. */
export function searchAction(queries: readonly string[], sources: readonly string[] | undefined): JsonObject {
  const action: JsonObject = { type: 'search', query: queries[0] ?? '' };
  if (queries.length > 1) action.queries = [...queries];
  if (sources) action.sources = sources.map((url) => ({ type: 'url', url }));
  return action;
}
