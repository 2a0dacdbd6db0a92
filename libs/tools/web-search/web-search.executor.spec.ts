import { Logger } from '@nestjs/common';
import { validateGatewayConfig } from '#config/config.loader.js';
import type { ExecutionContext, GatewayCall, GatewayCallResult } from '#tool-sdk/index.js';
import { RequestToolContext } from '#tool-sdk/index.js';
import { parseWebSearchSettings, type WebSearchSettings } from './config/web-search-settings.js';
import { webSearchConfigSection } from './config/web-search.config-section.js';
import { providerRequirements } from './providers/search-provider.registry.js';
import { WebSearchService } from './search/web-search.service.js';
import { FakeSearchApi, searxngBody, sendJson, type Hit } from './testing/fake-search-api.server.js';
import { DEFAULT_WEB_SEARCH_TIMEOUT_MS, WebSearchExecutor } from './web-search.executor.js';

const HITS: Hit[] = [
  { title: 'Node.js 22 released', url: 'https://nodejs.org/en/blog/release/v22.0.0', snippet: 'Node.js 22 is out.', date: '2024-04-24' },
  { title: 'Node.js on GitHub', url: 'https://github.com/nodejs/node', snippet: 'Node.js JavaScript runtime.' },
];

function call(args: unknown): GatewayCall {
  return { callId: 'call_1', itemId: 'ws_1', modelName: 'web_search', toolName: 'web_search', arguments: typeof args === 'string' ? args : JSON.stringify(args) };
}

function ctx(extra: Partial<ExecutionContext> = {}): ExecutionContext {
  return { request: new RequestToolContext('resp_1'), signal: new AbortController().signal, deadline: Date.now() + 5_000, requestId: 'resp_1', include: [], ...extra };
}

function executor(webSearch: Record<string, unknown>, tools: Record<string, unknown> = {}): WebSearchExecutor {
  const settings: WebSearchSettings = parseWebSearchSettings(webSearch, providerRequirements());
  return new WebSearchExecutor(new WebSearchService(settings), validateGatewayConfig({ tools, webSearch }, { sections: [webSearchConfigSection] }));
}

describe('WebSearchExecutor', () => {
  let api: FakeSearchApi;
  let configured: WebSearchExecutor;
  beforeAll(async () => {
    // Failed searches are logged as warnings; the assertions cover them.
    Logger.overrideLogger(false);
    api = await FakeSearchApi.start();
    configured = executor({ provider: 'searxng', searxng: { baseUrl: api.baseUrl } });
  });
  afterAll(() => api.close());
  beforeEach(() => {
    api.reset();
    api.handler = (r, res) => sendJson(res, 200, searxngBody(r.query.q, HITS));
  });

  it('searches and gives the model compact results, recording queries and sources', async () => {
    const output = await configured.execute(call({ query: 'node 22 release' }), { contextSize: 'medium' }, ctx());
    expect(output.isError).toBeUndefined();
    expect(JSON.parse(output.text)).toEqual({
      query: 'node 22 release',
      results: [
        { title: 'Node.js 22 released', url: HITS[0].url, snippet: 'Node.js 22 is out.', date: '2024-04-24' },
        { title: 'Node.js on GitHub', url: HITS[1].url, snippet: 'Node.js JavaScript runtime.' },
      ],
    });
    expect(output.data).toEqual({
      queries: ['node 22 release'],
      sources: HITS.map((h) => h.url),
      titles: Object.fromEntries(HITS.map((h) => [h.url, h.title])),
      dates: Object.fromEntries(HITS.filter((h) => h.date).map((h) => [h.url, h.date])),
    });
    // The answer's url_citation annotations, from the pages shown.
    const result = { call: call({ query: 'node 22 release' }), status: 'completed', output } as any;
    const answer = 'See https://github.com/nodejs/node and https://nodejs.org/en/blog/release/v22.0.0 today.';
    expect(configured.annotateText(answer, [result])).toEqual([
      { type: 'url_citation', url: 'https://github.com/nodejs/node', title: 'Node.js on GitHub', start_index: 4, end_index: 34 },
      { type: 'url_citation', url: 'https://nodejs.org/en/blog/release/v22.0.0', title: 'Node.js 22 released', start_index: 39, end_index: 81 },
    ]);
  });

  it('runs query and queries together, without duplicates, capped at maxQueriesPerCall', async () => {
    const capped = executor({ provider: 'searxng', searxng: { baseUrl: api.baseUrl }, maxQueriesPerCall: 2 });
    const output = await capped.execute(call({ query: 'a', queries: ['a', ' b ', 'c', 7] }), { contextSize: 'low' }, ctx());
    expect(api.requests.map((r) => r.query.q).sort()).toEqual(['a', 'b']);
    expect(output.data).toMatchObject({ queries: ['a', 'b'] });
    expect(JSON.parse(output.text).queries).toEqual(['a', 'b']);
  });

  it('answers "not configured" without a provider, for every call', async () => {
    const output = await executor({}).execute(call({ query: 'x' }), { contextSize: 'medium' }, ctx());
    expect(output.isError).toBe(true);
    expect(JSON.parse(output.text)).toEqual({ error: { code: 'not_configured', message: 'web search is not configured on this gateway (no webSearch.provider is set).' } });
  });

  it.each([['not json'], [{}], [{ query: '  ' }], [[1, 2]]])('rejects unusable arguments %j', async (args) => {
    const output = await configured.execute(call(args), { contextSize: 'medium' }, ctx());
    expect(output.isError).toBe(true);
    expect(JSON.parse(output.text).error.code).toBe('invalid_arguments');
    expect(api.requests).toHaveLength(0);
  });

  it('fails the call when every query fails, with the provider error for the model', async () => {
    api.handler = (_r, res) => sendJson(res, 429, { error: 'Too many requests' }, { 'retry-after': '60' });
    const output = await configured.execute(call({ query: 'x' }), { contextSize: 'medium' }, ctx());
    expect(output.isError).toBe(true);
    expect(JSON.parse(output.text)).toEqual({
      error: { code: 'search_failed', message: 'searxng rate limit reached (HTTP 429); retry after 60 s: Too many requests' },
    });
  });

  it('keeps the results of the queries that worked', async () => {
    api.handler = (r, res) => (r.query.q === 'bad' ? sendJson(res, 500, {}) : sendJson(res, 200, searxngBody(r.query.q, HITS)));
    const output = await configured.execute(call({ query: 'good', queries: ['bad'] }), { contextSize: 'medium' }, ctx());
    expect(output.isError).toBeUndefined();
    const parsed = JSON.parse(output.text);
    expect(parsed.results).toHaveLength(2);
    expect(parsed.failed_queries).toEqual([{ query: 'bad', message: 'searxng failed (HTTP 500)' }]);
  });

  it('keeps the model output within resultBudgetChars', async () => {
    const many = Array.from({ length: 10 }, (_, i) => ({ title: `T${i}`, url: `https://e.com/${i}`, snippet: 'x '.repeat(400) }));
    api.handler = (r, res) => sendJson(res, 200, searxngBody(r.query.q, many));
    const small = executor({ provider: 'searxng', searxng: { baseUrl: api.baseUrl }, resultBudgetChars: 1000 });
    const output = await small.execute(call({ query: 'q' }), { contextSize: 'high' }, ctx());
    expect(output.text.length).toBeLessThanOrEqual(1000);
    expect((output.data as { sources: string[] }).sources).toEqual(JSON.parse(output.text).results.map((r: { url: string }) => r.url));
  });

  it('plans the OpenAI lifecycle and always closes it with .completed', () => {
    const plan = configured.planEvents(call({ query: 'q1', queries: ['q2'] }), { contextSize: 'medium' }, { include: [] });
    expect(plan.startedItem).toEqual({ type: 'web_search_call', id: 'ws_1', status: 'in_progress', action: { type: 'search', query: 'q1', queries: ['q1', 'q2'] } });
    expect(plan.beforeExecute).toEqual([{ type: 'response.web_search_call.in_progress' }, { type: 'response.web_search_call.searching' }]);
    const failed: GatewayCallResult = { call: call({ query: 'q1' }), status: 'failed', output: { text: '{}', isError: true } };
    expect(plan.afterExecute(failed)).toEqual([{ type: 'response.web_search_call.completed' }]);
  });

  it('adds sources to the public item only when include asks for them', () => {
    const result: GatewayCallResult = {
      call: call({ query: 'a', queries: ['b'] }),
      status: 'completed',
      output: { text: '{}', data: { queries: ['a', 'b'], sources: ['https://x.example/1'] } },
    };
    expect(configured.publicOutput(result, { contextSize: 'medium' }, { include: [] })).toEqual({
      type: 'web_search_call',
      id: 'ws_1',
      status: 'completed',
      action: { type: 'search', query: 'a', queries: ['a', 'b'] },
    });
    expect(configured.publicOutput(result, { contextSize: 'medium' }, { include: ['web_search_call.action.sources'] })).toEqual({
      type: 'web_search_call',
      id: 'ws_1',
      status: 'completed',
      action: { type: 'search', query: 'a', queries: ['a', 'b'], sources: [{ type: 'url', url: 'https://x.example/1' }] },
    });
  });

  it('lists the pages shown, with titles and dates, only when include asks for web_search_call.results', () => {
    const data = {
      queries: ['a'],
      sources: ['https://x.example/1', 'https://x.example/2'],
      titles: { 'https://x.example/1': 'One' },
      dates: { 'https://x.example/1': '2025-01-15' },
    };
    const result: GatewayCallResult = { call: call({ query: 'a' }), status: 'completed', output: { text: '{}', data } };
    expect(configured.publicOutput(result, { contextSize: 'medium' }, { include: [] })).not.toHaveProperty('results');
    expect(configured.publicOutput(result, { contextSize: 'medium' }, { include: ['web_search_call.results'] })).toEqual({
      type: 'web_search_call',
      id: 'ws_1',
      status: 'completed',
      action: { type: 'search', query: 'a' },
      results: [
        { type: 'url', url: 'https://x.example/1', title: 'One', date: '2025-01-15' },
        // A page without a title is listed under its URL.
        { type: 'url', url: 'https://x.example/2', title: 'https://x.example/2' },
      ],
    });
  });

  it('marks a call the scheduler ended as failed, queries taken from the arguments', () => {
    const timedOut: GatewayCallResult = {
      call: call({ query: 'slow' }),
      status: 'failed',
      output: { text: '{"error":{}}', isError: true },
      error: { code: 'tool_timeout', message: 'late' },
    };
    expect(configured.publicOutput(timedOut, { contextSize: 'medium' }, { include: ['web_search_call.action.sources'] })).toEqual({
      type: 'web_search_call',
      id: 'ws_1',
      status: 'failed',
      action: { type: 'search', query: 'slow', sources: [] },
    });
  });

  it('allows parallel calls and takes its deadline from webSearch.timeoutMs, then tools.timeoutMsByType, then its own default', () => {
    expect(configured.supportsParallelExecution()).toBe(true);
    expect(configured.timeoutMs()).toBe(DEFAULT_WEB_SEARCH_TIMEOUT_MS);
    expect(executor({ timeoutMs: 3000 }).timeoutMs()).toBe(3000);
    expect(executor({}, { timeoutMsByType: { web_search: 7000 } }).timeoutMs()).toBeUndefined();
  });
});
