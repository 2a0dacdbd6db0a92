import { FakeSearchApi, searxngBody, sendJson, type Hit } from '#tools/web-search/testing/fake-search-api.server.js';

/** The query without its `site:` / `-site:` terms: what a test scripts hits for. */
const bareQuery = (q: string): string =>
  q
    .replace(/(?:^|\s)-?site:\S+/g, '')
    .replace(/\s+OR(?=\s|$)/g, '')
    .trim();

/**
 * A SearXNG instance for end-to-end tests: a real HTTP server answering
 * `GET /search?format=json` in SearXNG's wire format with three hits per
 * query (on `<query-slug>.example`), the hits in `hits` for a query scripted
 * there (matched without its `site:` terms, which it ignores as some engines
 * do), and HTTP 500 for queries in `failing`.
 */
export class FakeSearxng {
  readonly failing = new Set<string>();
  readonly hits = new Map<string, Hit[]>();

  private constructor(readonly api: FakeSearchApi) {
    api.handler = (r, res) => {
      const q = r.query.q ?? '';
      if (this.failing.has(q)) return sendJson(res, 500, { error: 'all engines failed' });
      sendJson(res, 200, searxngBody(q, this.hits.get(bareQuery(q)) ?? FakeSearxng.hitsFor(q)));
    };
  }

  static async start(): Promise<FakeSearxng> {
    return new FakeSearxng(await FakeSearchApi.start());
  }

  static hitsFor(query: string): Hit[] {
    const slug =
      query
        .replace(/-?\bsite:\S+/g, '')
        .trim()
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/^-|-$/g, '') || 'empty';
    return [1, 2, 3].map((n) => ({
      title: `${query} result ${n}`,
      url: `https://${slug}.example/page-${n}`,
      snippet: `Snippet ${n} about ${query}.`,
      ...(n === 1 ? { date: '2025-01-15T00:00:00' } : {}),
    }));
  }

  get baseUrl(): string {
    return this.api.baseUrl;
  }

  /** The `q` of every search received, in order. */
  get queries(): string[] {
    return this.api.requests.map((r) => r.query.q);
  }

  close(): Promise<void> {
    return this.api.close();
  }
}
