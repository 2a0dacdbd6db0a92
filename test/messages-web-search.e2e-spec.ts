import Anthropic from '@anthropic-ai/sdk';
import type { ServerToolUseBlock, TextBlock, WebSearchResultBlock, WebSearchToolResultBlock } from '@anthropic-ai/sdk/resources/messages/messages';
import { parseSse, startStack, type GatewayStack } from './support/gateway-harness.js';
import { FakeSearxng } from './support/web-search/fake-searxng.js';

const MODEL = 'switchyard-sim';
const search = (query: string) => `[[call web_search ${JSON.stringify({ query })}]]`;
/** What Claude Code declares for its WebSearch tool. */
const WEB_SEARCH_TOOL = { type: 'web_search_20250305' as const, name: 'web_search' as const, max_uses: 8 };

function anthropicClient(stack: GatewayStack): Anthropic {
  return new Anthropic({ baseURL: stack.url.replace(/\/v1$/, ''), apiKey: 'x', maxRetries: 0, timeout: 10_000 });
}

async function postMessages(stack: GatewayStack, body: unknown): Promise<Response> {
  return fetch(`${stack.url}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/** The three hits the SearXNG stand-in answers for a query, as Anthropic's `web_search_result` entries. */
function expectedResults(query: string): WebSearchResultBlock[] {
  return FakeSearxng.hitsFor(query).map((hit) => ({
    type: 'web_search_result',
    url: hit.url,
    title: hit.title,
    encrypted_content: '',
    page_age: hit.date ?? null,
  }));
}

/** The documented block shapes, key for key (Anthropic SDK 1.14 `ServerToolUseBlock`, `WebSearchToolResultBlock`). */
function expectSearchBlocks(content: Anthropic.ContentBlock[], query: string): void {
  expect(content.map((b) => b.type)).toEqual(['server_tool_use', 'web_search_tool_result', 'text']);
  const use = content[0] as ServerToolUseBlock;
  expect(use).toEqual({ type: 'server_tool_use', id: expect.stringMatching(/^srvtoolu_/), name: 'web_search', input: { query }, caller: { type: 'direct' } });
  const result = content[1] as WebSearchToolResultBlock;
  expect(result).toEqual({ type: 'web_search_tool_result', tool_use_id: use.id, content: expectedResults(query), caller: { type: 'direct' } });
  const text = content[2] as TextBlock;
  expect(text.text).toContain(FakeSearxng.hitsFor(query)[0].url);
  // Each place the answer gives a result's URL cites that result.
  expect(text.citations!.length).toBeGreaterThan(0);
  const urls = new Set(FakeSearxng.hitsFor(query).map((h) => h.url));
  for (const citation of text.citations!) {
    expect(citation).toEqual({ type: 'web_search_result_location', url: expect.any(String), title: expect.any(String), cited_text: expect.any(String), encrypted_index: '' });
    if (citation.type !== 'web_search_result_location') throw new Error('not a web search citation');
    expect(urls.has(citation.url)).toBe(true);
    expect(citation.cited_text).toBe(citation.url);
    expect(text.text).toContain(citation.cited_text);
  }
}

describe.each(['responses', 'chat'] as const)('Anthropic server web search on /v1/messages (%s upstream dialect, SearXNG provider)', (dialect) => {
  let searxng: FakeSearxng;
  let stack: GatewayStack;
  let client: Anthropic;

  beforeAll(async () => {
    searxng = await FakeSearxng.start();
    stack = await startStack({ dialect, config: { webSearch: { provider: 'searxng', searxng: { baseUrl: searxng.baseUrl } } } });
    client = anthropicClient(stack);
  });
  afterAll(async () => {
    await stack.close();
    await searxng.close();
  });
  beforeEach(() => searxng.api.reset());

  it('runs a declared web_search_20250305 on the provider and answers with server_tool_use, web_search_tool_result and citations', async () => {
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 512,
      messages: [{ role: 'user', content: `What is new in Node 22? ${search('node 22 release')}` }],
      tools: [WEB_SEARCH_TOOL],
    });
    expectSearchBlocks(message.content, 'node 22 release');
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage.server_tool_use).toEqual({ web_search_requests: 1 });
    expect(searxng.queries).toEqual(['node 22 release']);
    // The model was offered the module's search function and read the results as its output.
    const upstream = stack.simulator.requests.slice(-2).map((r) => r.body as any);
    const names = upstream[0].tools.map((t: any) => t.name ?? t.function?.name);
    expect(names).toEqual(['web_search']);
    expect(JSON.stringify(upstream[1])).toContain('node-22-release.example/page-1');
  });

  it('streams the same blocks with content_block_start/delta/stop in order, the SDK accumulating them alike', async () => {
    const params = { model: MODEL, max_tokens: 512, messages: [{ role: 'user' as const, content: `Search. ${search('rust editions')}` }], tools: [WEB_SEARCH_TOOL] };
    const streamed = await client.messages.stream(params).finalMessage();
    expectSearchBlocks(streamed.content, 'rust editions');
    expect(streamed.usage.server_tool_use).toEqual({ web_search_requests: 1 });

    const events = parseSse(await (await postMessages(stack, { ...params, stream: true })).text()).map((e) => e.data);
    const blockEvents = events.filter((e) => e.type.startsWith('content_block_'));
    expect(blockEvents.slice(0, 6).map((e) => [e.type, e.index, e.content_block?.type ?? e.delta?.type])).toEqual([
      ['content_block_start', 0, 'server_tool_use'],
      ['content_block_delta', 0, 'input_json_delta'],
      ['content_block_stop', 0, undefined],
      ['content_block_start', 1, 'web_search_tool_result'],
      ['content_block_stop', 1, undefined],
      ['content_block_start', 2, 'text'],
    ]);
    expect(blockEvents[0].content_block).toEqual({ type: 'server_tool_use', id: expect.stringMatching(/^srvtoolu_/), name: 'web_search', input: {}, caller: { type: 'direct' } });
    expect(JSON.parse(blockEvents[1].delta.partial_json)).toEqual({ query: 'rust editions' });
    expect(blockEvents[3].content_block.content).toEqual(expectedResults('rust editions'));
    const textEvents = blockEvents.filter((e) => e.index === 2);
    expect(textEvents.some((e) => e.delta?.type === 'citations_delta')).toBe(true);
    // Citations follow the text they cite, before the block stops.
    expect(textEvents.at(-1).type).toBe('content_block_stop');
  });

  it('reports a failed search as web_search_tool_result_error, and the model still answers', async () => {
    searxng.failing.add('broken query');
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 512,
      messages: [{ role: 'user', content: `Search. ${search('broken query')}` }],
      tools: [WEB_SEARCH_TOOL],
    });
    expect(message.content.map((b) => b.type)).toEqual(['server_tool_use', 'web_search_tool_result', 'text']);
    expect(message.content[1]).toEqual({
      type: 'web_search_tool_result',
      tool_use_id: (message.content[0] as ServerToolUseBlock).id,
      content: { type: 'web_search_tool_result_error', error_code: 'unavailable' },
      caller: { type: 'direct' },
    });
    expect(message.stop_reason).toBe('end_turn');
  });

  it('takes the blocks back in the next turn: the model sees the earlier search and its sources', async () => {
    const first = await client.messages.create({
      model: MODEL,
      max_tokens: 512,
      messages: [{ role: 'user', content: `Search. ${search('go generics')}` }],
      tools: [WEB_SEARCH_TOOL],
    });
    const before = stack.simulator.requests.length;
    const second = await client.messages.create({
      model: MODEL,
      max_tokens: 512,
      messages: [
        { role: 'user', content: `Search. ${search('go generics')}` },
        { role: 'assistant', content: first.content as Anthropic.ContentBlockParam[] },
        { role: 'user', content: 'Thanks, summarise.' },
      ],
      tools: [WEB_SEARCH_TOOL],
    });
    expect(second.content.map((b) => b.type)).toEqual(['text']);
    const sent = JSON.stringify(stack.simulator.requests[before].body);
    // The earlier call and a note naming its sources, not results the gateway never kept.
    expect(sent).toContain('go generics');
    expect(sent).toContain('https://go-generics.example/page-1');
    expect(sent).toContain('were not kept');
  });

  it('maps allowed_domains and max_uses, and refuses both domain lists together and a bad location by field', async () => {
    const limited = await client.messages.create({
      model: MODEL,
      max_tokens: 512,
      messages: [{ role: 'user', content: `Search. ${search('deno news')}` }],
      tools: [{ ...WEB_SEARCH_TOOL, allowed_domains: ['deno-news.example'], max_uses: 1 }],
    });
    expect(limited.content.map((b) => b.type)).toEqual(['server_tool_use', 'web_search_tool_result', 'text']);
    expect(searxng.queries).toEqual(['deno news site:deno-news.example']);

    for (const [tool, param] of [
      // Anthropic: "Cannot be used alongside allowed_domains".
      [{ ...WEB_SEARCH_TOOL, allowed_domains: ['ok.example'], blocked_domains: ['spam.example'] }, 'tools.0.blocked_domains'],
      [{ ...WEB_SEARCH_TOOL, blocked_domains: ['spam.example', 'not a domain'] }, 'tools.0.blocked_domains.1'],
      [{ ...WEB_SEARCH_TOOL, allowed_domains: ['ok.example', 'not a domain'] }, 'tools.0.allowed_domains.1'],
      [{ ...WEB_SEARCH_TOOL, user_location: { type: 'approximate', country: 'United States' } }, 'tools.0.user_location.country'],
      [{ ...WEB_SEARCH_TOOL, max_uses: 0 }, 'tools.0.max_uses'],
    ] as const) {
      const res = await postMessages(stack, { model: MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], tools: [tool] });
      expect(res.status).toBe(400);
      const body = (await res.json()) as any;
      expect(body.type).toBe('error');
      expect(body.error.type).toBe('invalid_request_error');
      // The message opens with the field in the body's own terms.
      expect(body.error.message).toMatch(new RegExp(`^${param.replace(/\./g, '\\.')}[: ]`));
    }
  });

  it('blocked_domains: results from those domains and their subdomains never reach the model or the reply, blocking and streaming', async () => {
    searxng.hits.set('mixed news', [
      { title: 'News', url: 'https://news.example/today', snippet: 'Kept.' },
      { title: 'Ad', url: 'https://ads.spam.example/buy', snippet: 'A subdomain of a blocked domain.' },
      { title: 'Spam', url: 'https://spam.example/page', snippet: 'A blocked domain.' },
      { title: 'Look-alike', url: 'https://notspam.example/page', snippet: 'Not a subdomain: kept.' },
    ]);
    try {
      const params = {
        model: MODEL,
        max_tokens: 512,
        messages: [{ role: 'user' as const, content: `Search. ${search('mixed news')}` }],
        tools: [{ ...WEB_SEARCH_TOOL, blocked_domains: ['spam.example'] }],
      };
      const message = await client.messages.create(params);
      expect(searxng.api.last.query.q).toBe('mixed news -site:spam.example');
      expect(message.content.map((b) => b.type)).toEqual(['server_tool_use', 'web_search_tool_result', 'text']);
      const kept = ['https://news.example/today', 'https://notspam.example/page'];
      expect(((message.content[1] as WebSearchToolResultBlock).content as WebSearchResultBlock[]).map((r) => r.url)).toEqual(kept);
      const text = message.content[2] as TextBlock;
      expect(text.text).toContain(kept[0]);
      expect(text.text).not.toMatch(/\/\/(ads\.)?spam\.example/);
      const modelRead = JSON.stringify(stack.simulator.requests.at(-1)!.body);
      expect(modelRead).toContain(kept[1]);
      expect(modelRead).not.toMatch(/\/\/(ads\.)?spam\.example/);

      const streamed = await client.messages.stream(params).finalMessage();
      expect(((streamed.content[1] as WebSearchToolResultBlock).content as WebSearchResultBlock[]).map((r) => r.url)).toEqual(kept);
      expect((streamed.content[2] as TextBlock).text).not.toMatch(/\/\/(ads\.)?spam\.example/);
    } finally {
      searxng.hits.clear();
    }
  });

  it('runs at most max_uses searches of the ones the model asks for at once', async () => {
    const ask = (maxUses: number) =>
      client.messages.create({
        model: MODEL,
        max_tokens: 512,
        messages: [{ role: 'user', content: `Search twice. ${search('first topic')} ${search('second topic')}` }],
        tools: [{ ...WEB_SEARCH_TOOL, max_uses: maxUses }],
      });
    const both = await ask(8);
    expect(both.content.map((b) => b.type)).toEqual(['server_tool_use', 'server_tool_use', 'web_search_tool_result', 'web_search_tool_result', 'text']);
    expect(both.usage.server_tool_use).toEqual({ web_search_requests: 2 });
    expect(searxng.queries.sort()).toEqual(['first topic', 'second topic']);

    searxng.api.reset();
    const one = await ask(1);
    expect(one.content.map((b) => b.type)).toEqual(['server_tool_use', 'web_search_tool_result', 'text']);
    expect(one.content[0]).toMatchObject({ input: { query: 'first topic' } });
    expect(one.usage.server_tool_use).toEqual({ web_search_requests: 1 });
    expect(searxng.queries).toEqual(['first topic']);
  });

  it('accepts later dated versions of the tool', async () => {
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 512,
      messages: [{ role: 'user', content: `Search. ${search('zig release')}` }],
      tools: [{ type: 'web_search_20260209', name: 'web_search' }],
    });
    expectSearchBlocks(message.content, 'zig release');
  });
});

describe('Anthropic server web search without a search provider', () => {
  let stack: GatewayStack;

  beforeAll(async () => {
    stack = await startStack({});
  });
  afterAll(() => stack.close());

  it('refuses the declaration with a 400 naming the tool, before calling the model', async () => {
    const before = stack.simulator.requests.length;
    const res = await postMessages(stack, { model: MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], tools: [WEB_SEARCH_TOOL] });
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toMatch(/^tools\.0\.type: .*"web_search_20250305".*no search provider is configured/);
    expect(stack.simulator.requests.length).toBe(before);
  });
});
