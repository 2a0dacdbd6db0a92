import http from 'node:http';
import { FakeSearchApi, braveBody, searxngBody, sendJson, sendText, serperBody, tavilyBody, type Hit } from '../testing/fake-search-api.server.js';
import { parseRetryAfter } from './provider-http.js';
import { SearchProviderError } from './search-provider.error.js';
import type { SearchOptions, SearchProvider } from './search-provider.interface.js';
import { SEARCH_PROVIDERS } from './search-provider.registry.js';

const HITS: Hit[] = [
  { title: 'Rust &amp; <b>WebAssembly</b>', url: 'https://rustwasm.github.io/book/', snippet: 'The <strong>Rust</strong> and WebAssembly book.', date: '2024-05-01T00:00:00' },
  { title: 'MDN: WebAssembly', url: 'https://developer.mozilla.org/en-US/docs/WebAssembly', snippet: 'WebAssembly is a type of code that can be run in modern web browsers.' },
];

function options(extra: Partial<SearchOptions> = {}): SearchOptions {
  return { count: 5, depth: 'basic', deadline: Date.now() + 5_000, ...extra };
}

function build(name: string, api: FakeSearchApi, extra: Record<string, unknown> = {}): SearchProvider {
  const cls = SEARCH_PROVIDERS.get(name)!;
  return new cls({ baseUrl: api.baseUrl, apiKey: 'key-123', ...extra });
}

async function failure(promise: Promise<unknown>): Promise<SearchProviderError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(SearchProviderError);
    return err as SearchProviderError;
  }
  throw new Error('expected the search to fail');
}

/** Closed at once: requests to it fail with ECONNREFUSED. */
async function deadPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let api: FakeSearchApi;
beforeAll(async () => {
  api = await FakeSearchApi.start();
});
afterAll(() => api.close());
beforeEach(() => api.reset());

describe('SearxngSearchProvider', () => {
  it('sends GET /search with q, format=json, pageno and the locale, and maps results', async () => {
    api.handler = (r, res) => sendJson(res, 200, searxngBody(r.query.q, HITS));
    const provider = build('searxng', api, { apiKey: undefined });

    const results = await provider.search('rust wasm', options({ country: 'DE', language: 'de' }), new AbortController().signal);

    expect(api.last.method).toBe('GET');
    expect(api.last.path).toBe('/search');
    expect(api.last.query).toEqual({ q: 'rust wasm', format: 'json', pageno: '1', language: 'de-DE' });
    expect(api.last.headers.accept).toBe('application/json');
    expect(api.last.headers.authorization).toBeUndefined();
    expect(results).toEqual([
      { title: 'Rust & WebAssembly', url: 'https://rustwasm.github.io/book/', snippet: 'The Rust and WebAssembly book.', date: '2024-05-01T00:00:00' },
      { title: 'MDN: WebAssembly', url: 'https://developer.mozilla.org/en-US/docs/WebAssembly', snippet: 'WebAssembly is a type of code that can be run in modern web browsers.' },
    ]);
  });

  it('adds site: terms for allowed domains, omits language without a location, sends a configured key as bearer', async () => {
    api.handler = (r, res) => sendJson(res, 200, searxngBody(r.query.q, []));
    await build('searxng', api).search('release notes', options({ allowedDomains: ['nodejs.org', 'github.com'] }), new AbortController().signal);
    expect(api.last.query).toEqual({ q: 'release notes site:nodejs.org OR site:github.com', format: 'json', pageno: '1' });
    expect(api.last.headers.authorization).toBe('Bearer key-123');
  });

  it('skips entries without a usable URL', async () => {
    api.handler = (_r, res) => sendJson(res, 200, { results: [{ title: 'no url' }, { title: 'x', url: 'javascript:alert(1)' }, { title: 'ok', url: 'https://ok.example/' }] });
    const results = await build('searxng', api).search('q', options(), new AbortController().signal);
    expect(results).toEqual([{ title: 'ok', url: 'https://ok.example/', snippet: '' }]);
  });

  it('explains the 403 an instance without the JSON format answers', async () => {
    api.handler = (_r, res) => sendText(res, 403, '<html><body>403 Forbidden</body></html>');
    const err = await failure(build('searxng', api).search('q', options(), new AbortController().signal));
    expect(err.kind).toBe('auth');
    expect(err.message).toMatch(/searxng refused the request \(HTTP 403\).*search\.formats/);
  });
});

describe('BraveSearchProvider', () => {
  it('sends GET /res/v1/web/search with count, country, search_lang, the token and location headers', async () => {
    api.handler = (r, res) => sendJson(res, 200, braveBody(r.query.q, HITS));
    const results = await build('brave', api).search(
      'rust wasm',
      options({ count: 10, country: 'US', language: 'en', city: 'San Francisco', region: 'California', timezone: 'America/Los_Angeles' }),
      new AbortController().signal,
    );

    expect(api.last.method).toBe('GET');
    expect(api.last.path).toBe('/res/v1/web/search');
    expect(api.last.query).toEqual({ q: 'rust wasm', count: '10', country: 'US', search_lang: 'en' });
    expect(api.last.headers['x-subscription-token']).toBe('key-123');
    expect(api.last.headers.accept).toBe('application/json');
    expect(api.last.headers['x-loc-city']).toBe('San Francisco');
    expect(api.last.headers['x-loc-state-name']).toBe('California');
    expect(api.last.headers['x-loc-country']).toBe('US');
    expect(api.last.headers['x-loc-timezone']).toBe('America/Los_Angeles');
    expect(results[0]).toEqual({ title: 'Rust & WebAssembly', url: 'https://rustwasm.github.io/book/', snippet: 'The Rust and WebAssembly book.', date: '2024-05-01T00:00:00' });
    expect(results[1]).toEqual({ title: 'MDN: WebAssembly', url: HITS[1].url, snippet: HITS[1].snippet });
  });

  it('caps count at 20, picks the regional search_lang variant, adds site: terms, falls back to age', async () => {
    api.handler = (_r, res) =>
      sendJson(res, 200, { type: 'search', web: { type: 'search', results: [{ title: 'T', url: 'https://bbc.co.uk/a', description: 'd', age: 'March 1, 2024' }] } });
    const results = await build('brave', api).search('news', options({ count: 50, country: 'GB', language: 'en', allowedDomains: ['bbc.co.uk'] }), new AbortController().signal);
    expect(api.last.query).toEqual({ q: 'news site:bbc.co.uk', count: '20', country: 'GB', search_lang: 'en-gb' });
    expect(results).toEqual([{ title: 'T', url: 'https://bbc.co.uk/a', snippet: 'd', date: 'March 1, 2024' }]);
  });

  it('reads an answer without a web section as no results, and leaves out non-ASCII location headers', async () => {
    api.handler = (_r, res) => sendJson(res, 200, { type: 'search', query: { original: 'zzz' } });
    const results = await build('brave', api).search('zzz', options({ country: 'DE', city: 'München' }), new AbortController().signal);
    expect(results).toEqual([]);
    expect(api.last.headers['x-loc-city']).toBeUndefined();
    expect(api.last.headers['x-loc-country']).toBe('DE');
  });
});

describe('TavilySearchProvider', () => {
  it('POSTs /search with a bearer key and the documented body, and maps results', async () => {
    api.handler = (r, res) => sendJson(res, 200, tavilyBody(r.body.query, HITS));
    const results = await build('tavily', api).search(
      'rust wasm',
      options({ count: 10, depth: 'advanced', country: 'US', language: 'en', allowedDomains: ['github.io'] }),
      new AbortController().signal,
    );

    expect(api.last.method).toBe('POST');
    expect(api.last.path).toBe('/search');
    expect(api.last.headers.authorization).toBe('Bearer key-123');
    expect(api.last.headers['content-type']).toBe('application/json');
    expect(api.last.body).toEqual({
      query: 'rust wasm',
      max_results: 10,
      search_depth: 'advanced',
      topic: 'general',
      include_domains: ['github.io'],
      country: 'united states',
    });
    expect(results).toEqual([
      { title: 'Rust & WebAssembly', url: HITS[0].url, snippet: 'The Rust and WebAssembly book.', date: '2024-05-01T00:00:00' },
      { title: 'MDN: WebAssembly', url: HITS[1].url, snippet: HITS[1].snippet },
    ]);
  });

  it('sends blocked domains as exclude_domains', async () => {
    api.handler = (r, res) => sendJson(res, 200, tavilyBody(r.body.query, []));
    await build('tavily', api).search('q', options({ count: 3, blockedDomains: ['spam.com', 'ads.example.org'] }), new AbortController().signal);
    expect(api.last.body).toMatchObject({ query: 'q', exclude_domains: ['spam.com', 'ads.example.org'] });
    expect(api.last.body.include_domains).toBeUndefined();
  });

  it('also puts the key in the body for deployments that read api_key', async () => {
    api.handler = (r, res) => sendJson(res, 200, tavilyBody(r.body.query, []));
    await build('tavily', api, { apiKeyInBody: true }).search('q', options({ count: 3 }), new AbortController().signal);
    expect(api.last.body).toEqual({ query: 'q', max_results: 3, search_depth: 'basic', topic: 'general', api_key: 'key-123' });
    expect(api.last.headers.authorization).toBe('Bearer key-123');
  });
});

describe('SerperSearchProvider', () => {
  it('POSTs /search with X-API-KEY and {q, num, gl, hl, location}, and maps organic results', async () => {
    api.handler = (r, res) => sendJson(res, 200, serperBody(r.body.q, HITS));
    const results = await build('serper', api).search(
      'rust wasm',
      options({ count: 5, country: 'DE', language: 'de', city: 'Berlin', region: 'Berlin', allowedDomains: ['github.io', 'mozilla.org'] }),
      new AbortController().signal,
    );

    expect(api.last.method).toBe('POST');
    expect(api.last.path).toBe('/search');
    expect(api.last.headers['x-api-key']).toBe('key-123');
    expect(api.last.headers['content-type']).toBe('application/json');
    expect(api.last.body).toEqual({
      q: 'rust wasm site:github.io OR site:mozilla.org',
      num: 5,
      gl: 'de',
      hl: 'de',
      location: 'Berlin, Berlin, Germany',
    });
    expect(results.map((r) => r.url)).toEqual(HITS.map((h) => h.url));
    expect(results[0]).toEqual({ title: 'Rust & WebAssembly', url: HITS[0].url, snippet: 'The Rust and WebAssembly book.', date: '2024-05-01T00:00:00' });
  });

  it('sends blocked domains as -site: terms after the allowed ones, on Serper and Brave alike', async () => {
    api.handler = (r, res) => sendJson(res, 200, r.path === '/search' ? serperBody(r.body.q, []) : braveBody(r.query.q, []));
    const filters = options({ allowedDomains: ['example.com'], blockedDomains: ['ads.example.com', 'spam.com'] });
    await build('serper', api).search('rust wasm', filters, new AbortController().signal);
    expect(api.last.body.q).toBe('rust wasm site:example.com -site:ads.example.com -site:spam.com');
    await build('brave', api).search('rust wasm', filters, new AbortController().signal);
    expect(api.last.query.q).toBe('rust wasm site:example.com -site:ads.example.com -site:spam.com');
  });

  it('reads an answer without organic results as no results', async () => {
    api.handler = (_r, res) => sendJson(res, 200, { searchParameters: { q: 'zzz' }, credits: 1 });
    expect(await build('serper', api).search('zzz', options(), new AbortController().signal)).toEqual([]);
    expect(api.last.body).toEqual({ q: 'zzz', num: 5 });
  });
});

/** Each provider's error body, as its API documents it. */
const ERROR_BODIES: Record<string, (status: number, message: string) => unknown> = {
  searxng: (_s, message) => ({ error: message }),
  brave: (status, message) => ({ type: 'ErrorResponse', error: { id: 'e1', status, code: 'SUBSCRIPTION_TOKEN_INVALID', detail: message }, time: 1 }),
  tavily: (_s, message) => ({ detail: { error: message } }),
  serper: (status, message) => ({ message, statusCode: status }),
};

const BODIES: Record<string, (q: string, hits: Hit[]) => unknown> = { searxng: searxngBody, brave: braveBody, tavily: tavilyBody, serper: serperBody };

describe.each([...SEARCH_PROVIDERS.keys()])('%s provider errors', (name) => {
  const run = (opts: Partial<SearchOptions> = {}, signal = new AbortController().signal) => build(name, api).search('q', options(opts), signal);

  it.each([401, 403])('maps HTTP %i to an auth failure carrying the provider message', async (status) => {
    api.handler = (_r, res) => sendJson(res, status, ERROR_BODIES[name](status, 'The provided key is invalid.'));
    const err = await failure(run());
    expect(err).toMatchObject({ kind: 'auth', providerStatus: status, provider: name });
    expect(err.message).toContain(`${name} refused the request (HTTP ${status}): The provided key is invalid.`);
    expect(err.message).not.toContain('key-123');
  });

  it('maps 429 to a rate-limit failure whose text carries the retry hint, without waiting past the deadline', async () => {
    api.handler = (_r, res) => sendJson(res, 429, ERROR_BODIES[name](429, 'Rate limit exceeded.'), { 'retry-after': '120' });
    // Waiting out the 120 s hint would outlast the test's own timeout.
    const err = await failure(run());
    expect(err).toMatchObject({ kind: 'rate_limited', providerStatus: 429, retryAfterSeconds: 120 });
    expect(err.message).toContain('rate limit reached (HTTP 429); retry after 120 s');
    expect(api.requests).toHaveLength(1);
  });

  it('retries a 429 once when the hint fits before the deadline', async () => {
    let calls = 0;
    api.handler = (r, res) =>
      ++calls === 1
        ? sendJson(res, 429, ERROR_BODIES[name](429, 'slow down'), { 'retry-after': '0' })
        : sendJson(res, 200, BODIES[name](String(r.query.q ?? r.body?.query ?? r.body?.q), HITS.slice(0, 1)));
    const results = await run();
    expect(api.requests).toHaveLength(2);
    expect(results.map((r) => r.url)).toEqual([HITS[0].url]);
  });

  it('does not sleep on a retry hint longer than the time left', async () => {
    api.handler = (_r, res) => sendJson(res, 429, ERROR_BODIES[name](429, 'slow down'), { 'retry-after': '60' });
    const started = Date.now();
    const err = await failure(run({ deadline: Date.now() + 30_000 }));
    expect(err.message).toContain('retry after 60 s');
    expect(api.requests).toHaveLength(1);
    // Failing at once, not sleeping until the deadline: half of it holds at any slowdown short of 1000x.
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('maps 5xx to a server failure', async () => {
    api.handler = (_r, res) => sendJson(res, 500, ERROR_BODIES[name](500, 'Internal error'));
    const err = await failure(run());
    expect(err).toMatchObject({ kind: 'server', providerStatus: 500 });
    expect(err.message).toContain(`${name} failed (HTTP 500): Internal error`);
  });

  it('maps a 200 whose body is not JSON to a malformed failure', async () => {
    api.handler = (_r, res) => sendText(res, 200, '{"results": [', 'application/json');
    const err = await failure(run());
    expect(err.kind).toBe('malformed');
    expect(err.message).toContain(`${name} answered HTTP 200 with a body that is not JSON`);
  });

  it('maps JSON of the wrong shape to a malformed failure', async () => {
    api.handler = (_r, res) => sendJson(res, 200, name === 'brave' ? { web: { results: 'none' } } : name === 'serper' ? { organic: {} } : { results: 'none' });
    expect((await failure(run())).kind).toBe('malformed');
    api.handler = (_r, res) => sendJson(res, 200, ['not', 'an', 'object']);
    expect((await failure(run())).kind).toBe('malformed');
  });

  it('gives up at the deadline and closes the request', async () => {
    api.handler = () => undefined; // never answers
    const err = await failure(run({ deadline: Date.now() + 300 }));
    expect(err.kind).toBe('timeout');
    expect(err.message).toMatch(new RegExp(`^${name} did not answer within \\d+ ms$`));
    await api.nextDisconnect();
  });

  it('stops the request when the signal fires', async () => {
    api.handler = () => undefined;
    const controller = new AbortController();
    const pending = run({}, controller.signal);
    while (api.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    const err = await failure(pending);
    expect(err.kind).toBe('aborted');
    await api.nextDisconnect();
    expect(api.disconnects).toHaveLength(1);
  });

  it('reports an unreachable endpoint without its address', async () => {
    const port = await deadPort();
    const cls = SEARCH_PROVIDERS.get(name)!;
    const err = await failure(new cls({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'key-123' }).search('q', options(), new AbortController().signal));
    expect(err.kind).toBe('network');
    expect(err.message).toBe(`${name} could not be reached (ECONNREFUSED)`);
  });
});

describe('parseRetryAfter', () => {
  it('reads delta-seconds and HTTP dates', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('7', now)).toBe(7);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:30 GMT', now)).toBe(30);
    expect(parseRetryAfter('Tue, 31 Dec 2024 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});
