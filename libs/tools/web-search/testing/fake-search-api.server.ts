import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real HTTP server standing in for a search API in tests: it records each
 * request exactly as it arrived (so tests assert the wire, not a mock's
 * view), answers through a swappable handler, and measures how many
 * requests were in flight at once.
 */

export interface RecordedSearchRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON body, or `undefined` when empty or not JSON. */
  body: any;
}

export type SearchApiHandler = (recorded: RecordedSearchRequest, res: http.ServerResponse, req: http.IncomingMessage) => void | Promise<void>;

export class FakeSearchApi {
  readonly requests: RecordedSearchRequest[] = [];
  /** Requests whose client went away before the answer was written. */
  readonly disconnects: RecordedSearchRequest[] = [];
  handler: SearchApiHandler = (_r, res) => sendJson(res, 200, {});
  inFlight = 0;
  peakInFlight = 0;
  private disconnectWaiters: Array<() => void> = [];

  private constructor(private readonly server: http.Server) {}

  static async start(handler?: SearchApiHandler): Promise<FakeSearchApi> {
    const server = http.createServer();
    const api = new FakeSearchApi(server);
    if (handler) api.handler = handler;
    server.on('request', (req, res) => api.onRequest(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return api;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get last(): RecordedSearchRequest {
    return this.requests[this.requests.length - 1];
  }

  reset(): void {
    this.requests.length = 0;
    this.disconnects.length = 0;
    this.peakInFlight = 0;
  }

  nextDisconnect(): Promise<void> {
    if (this.disconnects.length > 0) return Promise.resolve();
    return new Promise((resolve) => this.disconnectWaiters.push(resolve));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private onRequest(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        body = undefined;
      }
      const url = new URL(req.url ?? '/', 'http://fake');
      const recorded: RecordedSearchRequest = {
        method: req.method ?? '',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body,
      };
      this.requests.push(recorded);
      this.inFlight++;
      this.peakInFlight = Math.max(this.peakInFlight, this.inFlight);
      let counted = true;
      const done = (): void => {
        if (!counted) return;
        counted = false;
        this.inFlight--;
      };
      res.on('finish', done);
      res.on('close', () => {
        if (!res.writableFinished) {
          this.disconnects.push(recorded);
          for (const w of this.disconnectWaiters.splice(0)) w();
        }
        done();
      });
      Promise.resolve(this.handler(recorded, res, req)).catch((err: unknown) => {
        if (!res.headersSent) sendJson(res, 500, { error: String(err) });
      });
    });
  }
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

export function sendText(res: http.ServerResponse, status: number, text: string, contentType = 'text/html'): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': contentType });
  res.end(text);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A canned hit, written the same way for every provider's wire format. */
export interface Hit {
  title: string;
  url: string;
  snippet: string;
  date?: string;
}

/** SearXNG `GET /search?format=json`, trimmed to the fields its docs show. */
export function searxngBody(query: string, hits: Hit[]): unknown {
  return {
    query,
    number_of_results: 0,
    results: hits.map((h, i) => ({
      url: h.url,
      title: h.title,
      content: h.snippet,
      publishedDate: h.date ?? null,
      engine: 'duckduckgo',
      engines: ['duckduckgo'],
      positions: [i + 1],
      score: 1 / (i + 1),
      category: 'general',
    })),
    answers: [],
    corrections: [],
    infoboxes: [],
    suggestions: [],
    unresponsive_engines: [],
  };
}

/** Brave `GET /res/v1/web/search`. */
export function braveBody(query: string, hits: Hit[]): unknown {
  return {
    type: 'search',
    query: { original: query, more_results_available: false },
    web: {
      type: 'search',
      family_friendly: true,
      results: hits.map((h) => ({
        type: 'search_result',
        title: h.title,
        url: h.url,
        description: h.snippet,
        ...(h.date ? { page_age: h.date, age: 'some time ago' } : {}),
        language: 'en',
        family_friendly: true,
        meta_url: { scheme: 'https', hostname: new URL(h.url).hostname },
      })),
    },
  };
}

/** Tavily `POST /search`. */
export function tavilyBody(query: string, hits: Hit[]): unknown {
  return {
    query,
    follow_up_questions: null,
    answer: null,
    images: [],
    results: hits.map((h, i) => ({
      title: h.title,
      url: h.url,
      content: h.snippet,
      score: 1 - i / 10,
      raw_content: null,
      ...(h.date ? { published_date: h.date } : {}),
    })),
    response_time: 0.42,
  };
}

/** Serper `POST /search`. */
export function serperBody(query: string, hits: Hit[]): unknown {
  return {
    searchParameters: { q: query, type: 'search', engine: 'google' },
    organic: hits.map((h, i) => ({ title: h.title, link: h.url, snippet: h.snippet, ...(h.date ? { date: h.date } : {}), position: i + 1 })),
    credits: 1,
  };
}
