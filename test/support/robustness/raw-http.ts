import http from 'node:http';

/** An answer read to the end, byte for byte. */
export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  text: string;
}

export interface RawPostOptions {
  headers?: Record<string, string>;
  /** Defaults to no pooling (`Connection: close`), so nothing outlives the call. */
  agent?: http.Agent | false;
  timeoutMs?: number;
}

/**
 * POSTs exact bytes (a Buffer may hold invalid UTF-8) to a URL and reads the
 * whole answer. Rejects only when no answer arrives in time or the
 * connection breaks; an error status is a normal result.
 */
export function rawPost(url: string, body: Buffer | string, options: RawPostOptions = {}): Promise<RawResponse> {
  const target = new URL(url);
  const payload = typeof body === 'string' ? Buffer.from(body) : body;
  return new Promise<RawResponse>((resolve, reject) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: 'POST',
        agent: options.agent ?? false,
        headers: { 'content-type': 'application/json', 'content-length': payload.length, ...options.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const buffer = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: buffer, text: buffer.toString('utf8') });
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(options.timeoutMs ?? 15_000, () => req.destroy(new Error(`no complete answer from ${url} within ${options.timeoutMs ?? 15_000} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** A streaming POST whose SSE events are handed over as they arrive; `abort()` is the client vanishing. */
export interface OpenStream {
  status: Promise<number>;
  /** Resolves with the first event for which `match` returns true (or rejects when the stream ends first). */
  waitForEvent(match: (event: { event: string | null; data: any }) => boolean, timeoutMs?: number): Promise<{ event: string | null; data: any }>;
  /** Every event seen so far. */
  readonly events: Array<{ event: string | null; data: any }>;
  /** Resolves when the response ended or broke. */
  closed: Promise<void>;
  abort(): void;
}

export function openSseStream(url: string, body: unknown): OpenStream {
  const target = new URL(url);
  const payload = Buffer.from(JSON.stringify(body));
  const events: Array<{ event: string | null; data: any }> = [];
  const waiters = new Set<{ match: (e: { event: string | null; data: any }) => boolean; resolve(e: { event: string | null; data: any }): void; reject(e: Error): void }>();
  let markStatus!: (s: number) => void;
  let markClosed!: () => void;
  const status = new Promise<number>((resolve) => (markStatus = resolve));
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  let buffered = '';
  let ended = false;
  const finish = () => {
    if (ended) return;
    ended = true;
    markStatus(0);
    for (const w of waiters) w.reject(new Error(`stream ended after ${events.length} events without the awaited one`));
    waiters.clear();
    markClosed();
  };
  const req = http.request(
    {
      host: target.hostname,
      port: target.port,
      path: target.pathname,
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', 'content-length': payload.length, accept: 'text/event-stream' },
    },
    (res) => {
      markStatus(res.statusCode ?? 0);
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffered += chunk;
        let cut: number;
        while ((cut = buffered.indexOf('\n\n')) !== -1) {
          const block = buffered.slice(0, cut);
          buffered = buffered.slice(cut + 2);
          if (!block.trim() || block.startsWith(':')) continue;
          const lines = block.split('\n');
          const event = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? null;
          const data = lines
            .filter((l) => l.startsWith('data: '))
            .map((l) => l.slice(6))
            .join('\n');
          let parsed: unknown;
          try {
            parsed = JSON.parse(data);
          } catch {
            parsed = data;
          }
          const entry = { event, data: parsed as any };
          events.push(entry);
          for (const w of [...waiters]) {
            if (w.match(entry)) {
              waiters.delete(w);
              w.resolve(entry);
            }
          }
        }
      });
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', finish);
    },
  );
  req.on('error', finish);
  req.end(payload);
  return {
    status,
    events,
    closed,
    waitForEvent(match, timeoutMs = 5000) {
      const seen = events.find(match);
      if (seen) return Promise.resolve(seen);
      if (ended) return Promise.reject(new Error('stream already ended'));
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`no matching event within ${timeoutMs} ms (saw ${events.map((e) => e.data?.type).join(', ')})`));
        }, timeoutMs);
        const waiter = {
          match,
          resolve: (e: { event: string | null; data: any }) => {
            clearTimeout(timer);
            resolve(e);
          },
          reject: (e: Error) => {
            clearTimeout(timer);
            reject(e);
          },
        };
        waiters.add(waiter);
      });
    },
    abort: () => req.destroy(),
  };
}
