import type { WebSearchSettings } from '../config/web-search-settings.js';
import { FakeSearchApi, braveBody, searxngBody, sendJson, sleep, type Hit } from '../testing/fake-search-api.server.js';
import type { WebSearchParams } from '../web-search-declaration.js';
import { WebSearchService, mergeResults } from './web-search.service.js';

function hits(prefix: string, n: number, host = 'example.com'): Hit[] {
  return Array.from({ length: n }, (_, i) => ({ title: `${prefix} ${i + 1}`, url: `https://${host}/${prefix}/${i + 1}`, snippet: `About ${prefix} ${i + 1}.` }));
}

function settings(api: FakeSearchApi, extra: Partial<WebSearchSettings> = {}, provider = 'searxng'): WebSearchSettings {
  return {
    provider,
    endpoint: { baseUrl: api.baseUrl, apiKey: 'key-1' },
    maxConcurrentQueries: 4,
    timeoutMs: undefined,
    resultBudgetChars: 6000,
    maxQueriesPerCall: 5,
    ...extra,
  };
}

const medium: WebSearchParams = { contextSize: 'medium' };

describe('WebSearchService', () => {
  let api: FakeSearchApi;
  beforeAll(async () => {
    api = await FakeSearchApi.start();
  });
  afterAll(() => api.close());
  beforeEach(() => api.reset());

  const run = (service: WebSearchService, queries: string[], params: WebSearchParams = medium, signal = new AbortController().signal, deadline = Date.now() + 5_000) =>
    service.search({ queries, params, signal, deadline });

  it('maps search_context_size to the result count: sliced locally for SearXNG, asked for from Brave', async () => {
    api.handler = (r, res) => sendJson(res, 200, r.path === '/search' ? searxngBody(r.query.q, hits('a', 12)) : braveBody(r.query.q, hits('a', 12)));
    const searx = new WebSearchService(settings(api));
    const brave = new WebSearchService(settings(api, {}, 'brave'));
    for (const [size, count] of [
      ['low', 3],
      ['medium', 5],
      ['high', 10],
    ] as const) {
      const out = await run(searx, ['q'], { contextSize: size });
      expect(out.results).toHaveLength(count);
      await run(brave, ['q'], { contextSize: size });
      expect(api.last.query.count).toBe(String(count));
    }
  });

  it('turns user_location into provider locale parameters', async () => {
    api.handler = (r, res) => sendJson(res, 200, r.path === '/search' ? searxngBody(r.query.q, []) : braveBody(r.query.q, []));
    const location: WebSearchParams = { contextSize: 'low', userLocation: { country: 'FR', city: 'Paris', region: 'Ile-de-France', timezone: 'Europe/Paris' } };
    await run(new WebSearchService(settings(api)), ['q'], location);
    expect(api.last.query.language).toBe('fr-FR');
    await run(new WebSearchService(settings(api, {}, 'brave')), ['q'], location);
    expect(api.last.query).toMatchObject({ country: 'FR', search_lang: 'fr', count: '3' });
    expect(api.last.headers).toMatchObject({ 'x-loc-city': 'Paris', 'x-loc-state-name': 'Ile-de-France', 'x-loc-timezone': 'Europe/Paris' });
  });

  it('restricts results to the allowed domains even when the engine ignores site:', async () => {
    api.handler = (r, res) =>
      sendJson(
        res,
        200,
        searxngBody(r.query.q, [...hits('x', 2, 'other.org'), ...hits('y', 2, 'docs.example.com'), ...hits('z', 1, 'example.com'), ...hits('w', 1, 'notexample.com')]),
      );
    const out = await run(new WebSearchService(settings(api)), ['q'], { contextSize: 'medium', allowedDomains: ['example.com'] });
    expect(api.last.query.q).toBe('q site:example.com');
    expect(out.results.map((r) => new URL(r.url).hostname)).toEqual(['docs.example.com', 'docs.example.com', 'example.com']);
  });

  it('drops results from blocked domains and their subdomains even when the engine ignores -site:', async () => {
    api.handler = (r, res) =>
      sendJson(res, 200, searxngBody(r.query.q, [...hits('x', 1, 'other.org'), ...hits('y', 2, 'ads.spam.com'), ...hits('z', 1, 'spam.com'), ...hits('w', 1, 'notspam.com')]));
    const out = await run(new WebSearchService(settings(api)), ['q'], { contextSize: 'medium', blockedDomains: ['spam.com'] });
    expect(api.last.query.q).toBe('q -site:spam.com');
    expect(out.results.map((r) => new URL(r.url).hostname)).toEqual(['other.org', 'notspam.com']);
  });

  // A block list grown 10× and 100× (the declaration's cap): every blocked domain and subdomain is still dropped, nothing else is,
  // and the engine gets -site: terms only while they fit a query (past 10 the list is enforced here alone).
  it.each([1, 10, 100])('drops every blocked domain of a list of %i, keeps the rest in the engine order', async (n) => {
    const blocked = Array.from({ length: n }, (_, i) => `blocked${i}.test`);
    api.handler = (r, res) =>
      sendJson(
        res,
        200,
        searxngBody(
          r.query.q,
          blocked.flatMap((d, i) => [...hits('b', 1, d), ...hits('s', 1, `www.${d}`), ...hits('c', 1, `clean${i}.org`), ...hits('l', 1, `not${d}`)]),
        ),
      );
    const out = await run(new WebSearchService(settings(api)), ['q'], { contextSize: 'high', blockedDomains: blocked });
    expect(api.last.query.q).toBe(n <= 10 ? `q ${blocked.map((d) => `-site:${d}`).join(' ')}` : 'q');
    const kept = blocked.flatMap((d, i) => [`clean${i}.org`, `not${d}`]).slice(0, 10);
    expect(out.results.map((r) => new URL(r.url).hostname)).toEqual(kept);
  });

  it('applies both lists: allowed domains first, then a blocked subdomain of one is still dropped', async () => {
    api.handler = (r, res) => sendJson(res, 200, searxngBody(r.query.q, [...hits('a', 1, 'docs.example.com'), ...hits('b', 1, 'ads.example.com'), ...hits('c', 1, 'other.org')]));
    const out = await run(new WebSearchService(settings(api)), ['q'], { contextSize: 'medium', allowedDomains: ['example.com'], blockedDomains: ['ads.example.com'] });
    expect(api.last.query.q).toBe('q site:example.com -site:ads.example.com');
    expect(out.results.map((r) => new URL(r.url).hostname)).toEqual(['docs.example.com']);
  });

  it('runs several queries concurrently, merges them round-robin and drops duplicate URLs', async () => {
    api.handler = (r, res) => {
      const byQuery: Record<string, Hit[]> = {
        alpha: [hits('a', 1)[0], { title: 'Shared', url: 'https://shared.example/page', snippet: 's' }, hits('a', 2)[1]],
        beta: [{ title: 'Shared again', url: 'http://www.shared.example/page/#top', snippet: 's' }, hits('b', 1)[0]],
      };
      sendJson(res, 200, searxngBody(r.query.q, byQuery[r.query.q]));
    };
    const out = await run(new WebSearchService(settings(api)), ['alpha', 'beta']);
    expect(api.requests.map((r) => r.query.q).sort()).toEqual(['alpha', 'beta']);
    expect(out.results.map((r) => r.url)).toEqual(['https://example.com/a/1', 'http://www.shared.example/page/#top', 'https://example.com/b/1', 'https://example.com/a/2']);
  });

  it('keeps at most maxConcurrentQueries requests in flight, across calls too', async () => {
    api.handler = async (r, res) => {
      await sleep(40);
      sendJson(res, 200, searxngBody(r.query.q, hits(r.query.q, 1)));
    };
    const service = new WebSearchService(settings(api, { maxConcurrentQueries: 2 }));
    const [first, second] = await Promise.all([run(service, ['a', 'b', 'c', 'd', 'e']), run(service, ['f', 'g', 'h'])]);
    expect(api.requests).toHaveLength(8);
    expect(api.peakInFlight).toBe(2);
    expect(first.results).toHaveLength(5);
    expect(second.results).toHaveLength(3);

    api.reset();
    await run(new WebSearchService(settings(api, { maxConcurrentQueries: 4 })), ['a', 'b', 'c', 'd', 'e', 'f']);
    expect(api.peakInFlight).toBe(4);
  });

  it('reports each failed query on its own and keeps the others', async () => {
    api.handler = (r, res) => (r.query.q === 'bad' ? sendJson(res, 502, { error: 'engines down' }) : sendJson(res, 200, searxngBody(r.query.q, hits('ok', 2))));
    const out = await run(new WebSearchService(settings(api)), ['good', 'bad']);
    expect(out.perQuery[0].query).toBe('good');
    expect(out.perQuery[0].error).toBeUndefined();
    expect(out.perQuery[1].error).toMatchObject({ kind: 'server', message: 'searxng failed (HTTP 502): engines down' });
    expect(out.results).toHaveLength(2);
  });

  it('aborts requests in flight and never starts queued ones when the signal fires', async () => {
    api.handler = () => undefined;
    const controller = new AbortController();
    const service = new WebSearchService(settings(api, { maxConcurrentQueries: 1 }));
    const pending = run(service, ['a', 'b', 'c'], medium, controller.signal);
    while (api.requests.length === 0) await sleep(5);
    controller.abort();
    const out = await pending;
    await api.nextDisconnect();
    await sleep(20);
    expect(api.requests).toHaveLength(1);
    expect(out.perQuery.map((o) => o.error?.kind)).toEqual(['aborted', 'aborted', 'aborted']);
  });

  it('ends a query that outlives the deadline with its own timeout, ahead of the scheduler', async () => {
    api.handler = () => undefined;
    // The request's signal never aborts (no scheduler here): only the service's own timeout can end the query.
    const out = await run(new WebSearchService(settings(api)), ['slow'], medium, new AbortController().signal, Date.now() + 400);
    expect(out.perQuery[0].error).toMatchObject({ kind: 'timeout' });
    expect(out.perQuery[0].error!.message).toMatch(/^searxng did not answer within \d+ ms$/);
  });

  it('times out a query still waiting for a slot at the deadline', async () => {
    api.handler = () => undefined;
    const out = await run(new WebSearchService(settings(api, { maxConcurrentQueries: 1 })), ['a', 'b'], medium, new AbortController().signal, Date.now() + 300);
    expect(out.perQuery[1].error!.message).toBe('searxng had no free request slot before the deadline (webSearch.maxConcurrentQueries is 1)');
    expect(api.requests).toHaveLength(1);
  });
});

describe('mergeResults', () => {
  it('interleaves by rank', () => {
    const a = hits('a', 3);
    const b = hits('b', 1);
    expect(mergeResults([a, b]).map((r) => r.title)).toEqual(['a 1', 'b 1', 'a 2', 'a 3']);
  });
});
