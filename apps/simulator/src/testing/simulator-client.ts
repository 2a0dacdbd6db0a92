/**
 * Small HTTP helpers for tests that talk to a listening simulator over real sockets. SSE is parsed
 * by hand on purpose: the tests check the exact framing (no `event:` lines, `\n\n` separators).
 */

export function postJson(baseUrl: string, path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal,
  });
}

export interface SseBlock {
  /** Raw text of the block without its trailing blank line. */
  raw: string;
  /** The `data:` payload. */
  data: string;
  /** Milliseconds since the reader started, when the block was complete. */
  at: number;
}

/** Yields SSE blocks as they arrive. */
export async function* sseBlocks(res: Response): AsyncGenerator<SseBlock> {
  if (!res.body) throw new Error('response has no body');
  const started = performance.now();
  const decoder = new TextDecoder();
  let pending = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    pending += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = pending.indexOf('\n\n')) >= 0) {
      const raw = pending.slice(0, end);
      pending = pending.slice(end + 2);
      const data = raw
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n');
      yield { raw, data, at: performance.now() - started };
    }
  }
  if (pending !== '') throw new Error(`stream ended inside an event: ${JSON.stringify(pending)}`);
}

export async function readSse(res: Response): Promise<SseBlock[]> {
  const blocks: SseBlock[] = [];
  for await (const block of sseBlocks(res)) blocks.push(block);
  return blocks;
}

/** Every block's payload parsed as JSON (the chat `[DONE]` sentinel left out). */
export async function readSseJson<T = Record<string, any>>(res: Response): Promise<T[]> {
  return (await readSse(res)).filter((b) => b.data !== '[DONE]').map((b) => JSON.parse(b.data) as T);
}
