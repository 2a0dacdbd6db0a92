import type OpenAI from 'openai';
import { OpenResponsesValidator } from './support/openresponses-validator.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { FakeSearxng } from './support/web-search/fake-searxng.js';
import { collect, weatherTool } from './support/fixtures.js';

const validator = new OpenResponsesValidator();
const MODEL = 'switchyard-sim';

const search = (query: string) => `[[call web_search ${JSON.stringify({ query })}]]`;

describe('web_search over the openai client (SearXNG provider)', () => {
  let searxng: FakeSearxng;
  let stack: GatewayStack;
  let client: OpenAI;

  beforeAll(async () => {
    searxng = await FakeSearxng.start();
    stack = await startStack({ config: { webSearch: { provider: 'searxng', searxng: { baseUrl: searxng.baseUrl } } } });
    client = stack.openai;
  });
  afterAll(async () => {
    await stack.close();
    await searxng.close();
  });
  beforeEach(() => searxng.api.reset());

  it('searches and answers from the results, blocking', async () => {
    const response = await client.responses.create({
      model: MODEL,
      input: `What is new in Node 22? ${search('node 22 release')}`,
      tools: [{ type: 'web_search' }],
    });
    validator.assertResponse(response);
    expect(response.status).toBe('completed');
    expect(response.output.map((i) => i.type)).toEqual(['web_search_call', 'message']);
    const call = response.output[0] as any;
    expect(call).toEqual({ id: expect.stringMatching(/^ws_/), type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'node 22 release' } });
    expect(response.output_text).toMatch(/^Based on the tool result: /);
    expect(response.output_text).toContain('https://node-22-release.example/page-1');
    expect(response.output_text).toContain('"date":"2025-01-15T00:00:00"');
    expect(response.tools).toEqual([{ type: 'web_search', search_context_size: 'medium', user_location: null }]);
    expect(searxng.queries).toEqual(['node 22 release']);
    // The model saw one synthetic function, and the search results as its output.
    const upstream = stack.simulator.requests.slice(-2).map((r) => r.body as any);
    expect(upstream[0].tools.map((t: any) => t.name)).toEqual(['web_search']);
    expect(upstream[1].input.some((i: any) => i.type === 'function_call_output' && i.output.includes('node-22-release.example'))).toBe(true);
  });

  it('cites the pages it answers from: url_citation annotations, the AI SDK sources built from them', async () => {
    const response = await client.responses.create({ model: MODEL, input: `What is new? ${search('node 22 release')}`, tools: [{ type: 'web_search' }] });
    const message = response.output.find((i) => i.type === 'message') as any;
    const text = message.content[0].text as string;
    const citations = message.content[0].annotations.filter((a: any) => a.type === 'url_citation');
    expect(citations.length).toBeGreaterThan(0);
    for (const c of citations) {
      expect(c).toEqual({
        type: 'url_citation',
        url: expect.stringMatching(/^https:\/\/node-22-release\.example\//),
        title: expect.any(String),
        start_index: expect.any(Number),
        end_index: expect.any(Number),
      });
      expect(text.slice(c.start_index, c.end_index)).toBe(c.url);
    }

    const { createOpenAI } = await import('@ai-sdk/openai');
    const { generateText } = await import('ai');
    const openai = createOpenAI({ baseURL: stack.url, apiKey: 'sk-test' });
    const result = await generateText({
      model: openai.responses(MODEL),
      prompt: `What is new? ${search('node 22 release')}`,
      tools: { web_search: openai.tools.webSearch({}) as any },
    });
    expect(result.sources.map((s: any) => s.url)).toContain('https://node-22-release.example/page-1');
  });

  it('streams the web_search_call lifecycle before the answer, each event valid', async () => {
    const events = await collect(
      await client.responses.create({ model: MODEL, input: `Search please. ${search('rust editions')}`, tools: [{ type: 'web_search_preview' }], stream: true }),
    );
    events.forEach((e) => validator.assertEvent(e));
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const types = events.map((e) => e.type);
    const head = [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.web_search_call.in_progress',
      'response.web_search_call.searching',
      'response.web_search_call.completed',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
    ];
    expect(types.slice(0, head.length)).toEqual(head);
    expect(types.slice(types.indexOf('response.output_text.done'))).toEqual([
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const added = events[2];
    expect(added.item).toEqual({ id: expect.stringMatching(/^ws_/), type: 'web_search_call', status: 'in_progress', action: { type: 'search', query: 'rust editions' } });
    for (const e of events.slice(3, 6)) {
      expect(e.item_id).toBe(added.item.id);
      expect(e.output_index).toBe(0);
    }
    expect(events[6].item).toMatchObject({ id: added.item.id, status: 'completed', action: { type: 'search', query: 'rust editions' } });
    const final = events[events.length - 1].response;
    validator.assertResponse(final);
    expect(final.output.map((i: any) => i.type)).toEqual(['web_search_call', 'message']);
    expect(final.output[0]).toEqual(events[6].item);
    expect(final.tools).toEqual([{ type: 'web_search_preview', search_context_size: 'medium', user_location: null }]);
  });

  it('adds action.sources when include asks for them', async () => {
    const response = await client.responses.create({
      model: MODEL,
      input: search('typescript 6'),
      tools: [{ type: 'web_search' }],
      include: ['web_search_call.action.sources'],
    });
    validator.assertResponse(response);
    expect((response.output[0] as any).action).toEqual({
      type: 'search',
      query: 'typescript 6',
      sources: FakeSearxng.hitsFor('typescript 6').map((h) => ({ type: 'url', url: h.url })),
    });
  });

  it('runs the search and hands back a client function call in the same mixed turn', async () => {
    const prompt = `Weather and news for Paris. ${search('paris news')} [[call get_weather {"city": "Paris"}]]`;
    const before = stack.simulator.requests.length;
    const response = await client.responses.create({ model: MODEL, input: prompt, tools: [{ type: 'web_search' }, weatherTool] });
    validator.assertResponse(response);
    expect(response.status).toBe('completed');
    expect(response.output.map((i) => i.type)).toEqual(['web_search_call', 'function_call']);
    expect(response.output[0]).toMatchObject({ status: 'completed', action: { type: 'search', query: 'paris news' } });
    expect(response.output[1]).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '{"city": "Paris"}' });
    expect(searxng.queries).toEqual(['paris news']);
    expect(stack.simulator.requests.length - before).toBe(1);

    // The client answers its call, sending the turn back statelessly: the
    // web_search_call reaches the model again as a call whose results are gone.
    const second = await client.responses.create({
      model: MODEL,
      input: [
        { role: 'user', content: prompt },
        ...(response.output as any[]),
        { type: 'function_call_output', call_id: (response.output[1] as any).call_id, output: '{"temp_c": 21}' },
      ],
      tools: [{ type: 'web_search' }, weatherTool],
    });
    validator.assertResponse(second);
    expect(second.output.map((i) => i.type)).toEqual(['message']);
    expect(second.output_text).toBe('Based on the tool result: {"temp_c": 21}');
    const replayed = (stack.simulator.requests[stack.simulator.requests.length - 1].body as any).input;
    expect(replayed.map((i: any) => [i.type, i.name ?? null])).toEqual([
      ['message', null],
      ['function_call', 'web_search'],
      ['function_call_output', null],
      ['function_call', 'get_weather'],
      ['function_call_output', null],
    ]);
    expect(searxng.queries).toEqual(['paris news']);
  });

  it('turns a provider failure mid-loop into a failed web_search_call and still answers, streaming', async () => {
    searxng.failing.add('second search');
    const events = await collect(
      await client.responses.create({
        model: MODEL,
        input: `${search('first search')} [[call@2 web_search {"query": "second search"}]]`,
        tools: [{ type: 'web_search' }],
        stream: true,
      }),
    );
    events.forEach((e) => validator.assertEvent(e));
    const final = events[events.length - 1];
    expect(final.type).toBe('response.completed');
    validator.assertResponse(final.response);
    expect(final.response.output.map((i: any) => [i.type, i.status])).toEqual([
      ['web_search_call', 'completed'],
      ['web_search_call', 'failed'],
      ['message', 'completed'],
    ]);
    const failedId = final.response.output[1].id;
    const lifecycle = events.filter((e) => e.item_id === failedId || e.item?.id === failedId).map((e) => e.type);
    expect(lifecycle).toEqual([
      'response.output_item.added',
      'response.web_search_call.in_progress',
      'response.web_search_call.searching',
      'response.web_search_call.completed',
      'response.output_item.done',
    ]);
    const answer = final.response.output[2].content[0].text as string;
    expect(answer).toMatch(/^Based on the tool result: /);
    expect(answer).toContain('searxng failed (HTTP 500): all engines failed');
    expect(searxng.queries).toEqual(['first search', 'second search']);
    searxng.failing.clear();
  });

  it.each(['web_search', 'web_search_preview', 'web_search_preview_2025_03_11', 'web_search_2025_08_26'])('accepts the %s wire tag', async (type) => {
    const response = await client.responses.create({ model: MODEL, input: search(`tag ${type}`), tools: [{ type } as any] });
    validator.assertResponse(response);
    expect(response.output.map((i) => i.type)).toEqual(['web_search_call', 'message']);
    expect(response.output[0]).toMatchObject({ status: 'completed' });
    expect((response.tools[0] as any).type).toBe(type.startsWith('web_search_preview') ? 'web_search_preview' : 'web_search');
  });

  it('passes user_location, search_context_size and allowed domains to the provider', async () => {
    const response = await client.responses.create({
      model: MODEL,
      input: search('berlin events'),
      tools: [
        {
          type: 'web_search',
          search_context_size: 'low',
          user_location: { type: 'approximate', country: 'DE', city: 'Berlin' },
          filters: { allowed_domains: ['berlin-events.example'] },
        },
      ],
    });
    validator.assertResponse(response);
    expect(searxng.api.last.query).toEqual({ q: 'berlin events site:berlin-events.example', format: 'json', pageno: '1', language: 'de-DE' });
    expect(response.output_text).toContain('berlin-events.example/page-1');
  });

  describe('filters.blocked_domains', () => {
    // An engine that ignores `-site:`: the gateway's own filter is what keeps these out.
    const MIXED = [
      { title: 'News', url: 'https://news.example/today', snippet: 'Kept.' },
      { title: 'Ad', url: 'https://ads.spam.example/buy', snippet: 'A subdomain of a blocked domain.' },
      { title: 'Spam', url: 'https://spam.example/page', snippet: 'A blocked domain.' },
      { title: 'Look-alike', url: 'https://notspam.example/page', snippet: 'Not a subdomain: kept.' },
    ];
    beforeEach(() => searxng.hits.set('mixed news', MIXED));
    afterEach(() => searxng.hits.clear());

    it('drops results from blocked domains and their subdomains, passes them to the provider as -site:, and echoes the filter', async () => {
      const response = await client.responses.create({
        model: MODEL,
        input: `What happened? ${search('mixed news')}`,
        // openai 6.49 types only allowed_domains; the field is OpenAI's all the same.
        tools: [{ type: 'web_search', filters: { blocked_domains: ['https://Spam.example/'] } } as any],
        include: ['web_search_call.action.sources'],
      });
      validator.assertResponse(response);
      expect(searxng.api.last.query.q).toBe('mixed news -site:spam.example');
      expect((response.output[0] as any).action.sources).toEqual([
        { type: 'url', url: 'https://news.example/today' },
        { type: 'url', url: 'https://notspam.example/page' },
      ]);
      expect(response.output_text).toContain('https://news.example/today');
      expect(response.output_text).not.toMatch(/\/\/(ads\.)?spam\.example/);
      expect(response.tools).toEqual([{ type: 'web_search', search_context_size: 'medium', user_location: null, filters: { blocked_domains: ['spam.example'] } }]);
      // What the model read is filtered too, not only what the client sees.
      const output = (stack.simulator.requests.at(-1)!.body as any).input.find((i: any) => i.type === 'function_call_output').output as string;
      expect(output).toContain('https://notspam.example/page');
      expect(output).not.toMatch(/\/\/(ads\.)?spam\.example/);
    });

    it('streams the same filtered search', async () => {
      const events = await collect(
        await client.responses.create({
          model: MODEL,
          input: `What happened? ${search('mixed news')}`,
          tools: [{ type: 'web_search', filters: { blocked_domains: ['spam.example'] } } as any],
          include: ['web_search_call.action.sources'],
          stream: true,
        }),
      );
      const done = events.find((e: any) => e.type === 'response.output_item.done' && e.item.type === 'web_search_call') as any;
      expect(done.item.action.sources.map((s: any) => s.url)).toEqual(['https://news.example/today', 'https://notspam.example/page']);
      expect((events.at(-1) as any).type).toBe('response.completed');
      const text = events.flatMap((e: any) => (e.type === 'response.output_text.done' ? [e.text] : [])).join('');
      expect(text).toContain('https://news.example/today');
      expect(text).not.toMatch(/\/\/(ads\.)?spam\.example/);
    });

    it('takes allowed and blocked domains together: a blocked subdomain of an allowed domain is still dropped', async () => {
      searxng.hits.set('mixed news', [
        { title: 'Docs', url: 'https://docs.example.org/a', snippet: 'Kept.' },
        { title: 'Ads', url: 'https://ads.example.org/b', snippet: 'Blocked subdomain.' },
        { title: 'Other', url: 'https://other.example/c', snippet: 'Not allowed.' },
      ]);
      const response = await client.responses.create({
        model: MODEL,
        input: search('mixed news'),
        tools: [{ type: 'web_search', filters: { allowed_domains: ['example.org'], blocked_domains: ['ads.example.org'] } } as any],
        include: ['web_search_call.action.sources'],
      });
      expect(searxng.api.last.query.q).toBe('mixed news site:example.org -site:ads.example.org');
      expect((response.output[0] as any).action.sources).toEqual([{ type: 'url', url: 'https://docs.example.org/a' }]);
    });

    it('answers 400 naming the entry that is not a domain', async () => {
      await expect(
        client.responses.create({ model: MODEL, input: 'hi', tools: [{ type: 'web_search', filters: { blocked_domains: ['ok.example', 'not a domain'] } } as any] }),
      ).rejects.toMatchObject({ status: 400, param: 'tools[0].filters.blocked_domains[1]' });
    });
  });

  it('answers 400 naming the field of a bad declaration', async () => {
    await expect(client.responses.create({ model: MODEL, input: 'hi', tools: [{ type: 'web_search', search_context_size: 'huge' } as any] })).rejects.toMatchObject({
      status: 400,
      param: 'tools[0].search_context_size',
    });
  });

  it('accepts web_search_call items in the input and shows them to the model as a call without results', async () => {
    const response = await client.responses.create({
      model: MODEL,
      input: [
        { role: 'user', content: 'Find it.' },
        { type: 'web_search_call', id: 'ws_earlier', status: 'completed', action: { type: 'search', query: 'old query' } } as any,
        { role: 'user', content: '[[say Done.]]' },
      ],
      tools: [{ type: 'web_search' }],
    });
    validator.assertResponse(response);
    expect(response.output_text).toBe('Done.');
    const input = (stack.simulator.requests[stack.simulator.requests.length - 1].body as any).input;
    expect(input).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'function_call', call_id: 'ws_earlier', name: 'web_search', arguments: '{"query":"old query"}' }),
        expect.objectContaining({ type: 'function_call_output', call_id: 'ws_earlier' }),
      ]),
    );
  });
});

describe('web_search without a configured provider', () => {
  let stack: GatewayStack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.close());

  it('accepts the tool, fails each call with an explanation, and still answers', async () => {
    const response = await stack.openai.responses.create({ model: MODEL, input: search('anything'), tools: [{ type: 'web_search_preview' }] });
    validator.assertResponse(response);
    expect(response.output.map((i: any) => [i.type, i.status])).toEqual([
      ['web_search_call', 'failed'],
      ['message', 'completed'],
    ]);
    expect(response.output_text).toContain('web search is not configured');
  });
});
