import Anthropic from '@anthropic-ai/sdk';
import { StreamableTestServer } from './support/mcp/mcp-test-servers.js';
import { parseSse, startStack, type GatewayStack } from './support/gateway-harness.js';

const MODEL = 'switchyard-sim';
const weather = {
  name: 'get_weather',
  description: 'Get current weather for a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
};

function anthropicClient(stack: GatewayStack, apiKey = 'x'): Anthropic {
  // The SDK appends `/v1/messages` to its base URL itself.
  return new Anthropic({ baseURL: stack.url.replace(/\/v1$/, ''), apiKey, maxRetries: 0, timeout: 10_000 });
}

async function postMessages(stack: GatewayStack, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${stack.url}/messages`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

describe.each(['responses', 'chat'] as const)('POST /v1/messages, official Anthropic client (%s upstream dialect)', (dialect) => {
  let stack: GatewayStack;
  let client: Anthropic;
  let mcp: StreamableTestServer;

  beforeAll(async () => {
    mcp = await StreamableTestServer.start();
    stack = await startStack({ dialect, config: { mcp: { allowedHosts: [`127.0.0.1:${mcp.port}`] } } });
    client = anthropicClient(stack);
  });
  afterAll(async () => {
    await stack.close();
    await mcp.close();
  });

  it('answers text, blocking', async () => {
    const message = await client.messages.create({ model: MODEL, max_tokens: 256, messages: [{ role: 'user', content: 'Greet me. [[say Hello from the loop]]' }] });
    expect(message).toMatchObject({
      id: expect.stringMatching(/^msg_/),
      type: 'message',
      role: 'assistant',
      model: MODEL,
      content: [{ type: 'text', text: 'Hello from the loop' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
    });
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
  });

  it('streams text in Anthropic event order', async () => {
    const stream = client.messages.stream({ model: MODEL, max_tokens: 256, system: 'Be terse.', messages: [{ role: 'user', content: '[[say Streaming works fine]]' }] });
    const types: string[] = [];
    stream.on('streamEvent', (event) => types.push(event.type));
    const message = await stream.finalMessage();
    expect(message.content).toEqual([{ type: 'text', text: 'Streaming works fine' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    const deltas = types.filter((t) => t === 'content_block_delta').length;
    expect(deltas).toBeGreaterThan(1);
    expect(types).toEqual(['message_start', 'content_block_start', ...Array(deltas).fill('content_block_delta'), 'content_block_stop', 'message_delta', 'message_stop']);
    expect(stack.simulator.requests.at(-1)?.body).toMatchObject(dialect === 'responses' ? { instructions: 'Be terse.' } : {});
  });

  it('hands a client tool call back as tool_use and answers its tool_result', async () => {
    const question = { role: 'user' as const, content: 'Weather in Paris? [[call get_weather {"city":"Paris"}]]' };
    const first = await client.messages.create({ model: MODEL, max_tokens: 256, tools: [weather], messages: [question] });
    expect(first.stop_reason).toBe('tool_use');
    const use = first.content.find((b) => b.type === 'tool_use');
    expect(use).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } });

    const second = await client.messages.create({
      model: MODEL,
      max_tokens: 256,
      tools: [weather],
      messages: [
        question,
        { role: 'assistant', content: first.content as Anthropic.ContentBlockParam[] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use!.type === 'tool_use' ? use!.id : '', content: 'sunny, 24 C' }] },
      ],
    });
    expect(second.stop_reason).toBe('end_turn');
    expect(second.content).toEqual([{ type: 'text', text: 'Based on the tool result: sunny, 24 C' }]);
  });

  it('streams a tool_use whose input_json_delta pieces add up to its input', async () => {
    const pieces: string[] = [];
    const stream = client.messages.stream({
      model: MODEL,
      max_tokens: 256,
      tools: [weather],
      messages: [{ role: 'user', content: 'Weather? [[call get_weather {"city":"San Francisco, California"}]]' }],
    });
    stream.on('inputJson', (partial) => pieces.push(partial));
    const message = await stream.finalMessage();
    expect(message.stop_reason).toBe('tool_use');
    expect(pieces.length).toBeGreaterThan(1);
    expect(JSON.parse(pieces.join(''))).toEqual({ city: 'San Francisco, California' });
    expect(message.content).toEqual([{ type: 'tool_use', id: expect.any(String), name: 'get_weather', input: { city: 'San Francisco, California' } }]);
  });

  it('stops with max_tokens when the budget runs out', async () => {
    const message = await client.messages.create({ model: MODEL, max_tokens: 5, messages: [{ role: 'user', content: '[[tokens 40]]' }] });
    expect(message.stop_reason).toBe('max_tokens');
    const streamed = await client.messages.stream({ model: MODEL, max_tokens: 5, messages: [{ role: 'user', content: '[[tokens 40]]' }] }).finalMessage();
    expect(streamed.stop_reason).toBe('max_tokens');
  });

  it('runs mcp_servers tools inside the gateway and shows them as mcp_tool_use / mcp_tool_result', async () => {
    const params = {
      model: MODEL,
      max_tokens: 256,
      messages: [{ role: 'user' as const, content: 'Echo hello. [[call demo__echo {"text":"hello"}]]' }],
      mcp_servers: [{ type: 'url' as const, url: mcp.url, name: 'demo', authorization_token: 'sk-mcp-secret' }],
      betas: ['mcp-client-2025-04-04'],
    };
    const before = mcp.log.calls.length;
    const message = await client.beta.messages.create(params);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.content).toEqual([
      { type: 'mcp_tool_use', id: expect.stringMatching(/^mcp_/), name: 'echo', server_name: 'demo', input: { text: 'hello' } },
      {
        type: 'mcp_tool_result',
        tool_use_id: message.content[0].type === 'mcp_tool_use' ? message.content[0].id : '',
        is_error: false,
        content: [{ type: 'text', text: 'echo: hello' }],
      },
      { type: 'text', text: 'Based on the tool result: echo: hello' },
    ]);
    expect(mcp.log.calls.slice(before)).toEqual([{ name: 'echo', args: { text: 'hello' } }]);
    expect(mcp.log.httpRequests.some((r) => r.headers.authorization === 'Bearer sk-mcp-secret')).toBe(true);
    expect(JSON.stringify(message)).not.toContain('sk-mcp-secret');

    const streamed = await client.beta.messages.stream(params).finalMessage();
    expect(streamed.content.map((b) => b.type)).toEqual(['mcp_tool_use', 'mcp_tool_result', 'text']);
    expect(streamed.content[0]).toMatchObject({ input: { text: 'hello' } });
    expect(streamed.stop_reason).toBe('end_turn');
  });

  it('refuses bad input with a 4xx Anthropic envelope naming the field', async () => {
    const res = await postMessages(stack, {
      model: MODEL,
      max_tokens: 10,
      messages: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: 'b' },
        { role: 'user', content: [{ type: 'video', url: 'x' }] },
      ],
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('messages.2.content.0.type') } });

    await expect(client.messages.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] } as any)).rejects.toMatchObject({
      status: 400,
      error: { type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('max_tokens') } },
    });
    // Refused by the MCP module during preparation, named as the client's own field.
    const refused = await postMessages(stack, {
      model: MODEL,
      max_tokens: 10,
      messages: [{ role: 'user', content: 'x' }],
      mcp_servers: [{ type: 'url', name: 'far', url: 'http://elsewhere.test/mcp' }],
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as any).error.message).toMatch(/^mcp_servers\.0\.url/);
    // Even a body that never reaches the route answers in Anthropic's envelope.
    const malformed = await fetch(`${stack.url}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model": ' });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: expect.any(String) } });
  });
});

describe('POST /v1/messages: reasoning, wire format, failures, disconnects', () => {
  let stack: GatewayStack;
  let client: Anthropic;

  beforeAll(async () => {
    stack = await startStack({ simulator: { reasoning: true } });
    client = anthropicClient(stack);
  });
  afterAll(() => stack.close());

  it('returns simulated reasoning as thinking blocks, blocking and streaming', async () => {
    const params = {
      model: MODEL,
      max_tokens: 4096,
      thinking: { type: 'enabled' as const, budget_tokens: 2048 },
      messages: [{ role: 'user' as const, content: '[[reason Think it over.]] [[say Done]]' }],
    };
    const message = await client.messages.create(params);
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'Think it over.', signature: '' },
      { type: 'text', text: 'Done' },
    ]);
    expect(stack.simulator.requests.at(-1)?.body).toMatchObject({ reasoning: { effort: 'low' }, max_output_tokens: 4096 });
    const thinking: string[] = [];
    const stream = client.messages.stream(params);
    stream.on('thinking', (delta) => thinking.push(delta));
    expect((await stream.finalMessage()).content).toEqual(message.content);
    expect(thinking.join('')).toBe('Think it over.');
  });

  it('writes each SSE event with its name on the event line', async () => {
    const res = await postMessages(stack, { model: MODEL, max_tokens: 100, stream: true, messages: [{ role: 'user', content: '[[say ok]]' }] });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = parseSse(await res.text());
    for (const e of events) expect(e.event).toBe(e.data.type);
    // Runs of deltas collapse to one entry: their count depends on the simulator's chunking.
    const names = events.map((e) => e.event).filter((name, i, all) => !(name === 'content_block_delta' && all[i - 1] === name));
    expect(names).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    // The prompt was counted by the upstream's /tokenize before the run: message_start carries the real figure.
    expect(events[0].data.message).toMatchObject({ content: [], stop_reason: null, usage: { input_tokens: 5, output_tokens: 0 } });
  });

  it('answers an upstream failure before the stream as an HTTP error, and one mid-stream as an error event', async () => {
    const early = await postMessages(stack, { model: MODEL, max_tokens: 100, stream: true, messages: [{ role: 'user', content: '[[fault status=503]]' }] });
    expect(early.status).toBe(502);
    expect(await early.json()).toMatchObject({ type: 'error', error: { type: 'api_error' } });

    const late = await postMessages(stack, { model: MODEL, max_tokens: 100, stream: true, messages: [{ role: 'user', content: '[[tokens 30]] [[fault reset_after=6]]' }] });
    expect(late.status).toBe(200);
    const events = parseSse(await late.text());
    expect(events[0].event).toBe('message_start');
    expect(events.at(-1)).toEqual({ event: 'error', data: { type: 'error', error: { type: 'api_error', message: expect.any(String) } } });
    expect(events.some((e) => e.event === 'message_stop')).toBe(false);
  });

  it('aborts the upstream request when the client disconnects mid-stream', async () => {
    const before = stack.simulator.stats.aborted;
    const stream = await client.messages.create({
      model: MODEL,
      max_tokens: 2000,
      stream: true,
      messages: [{ role: 'user', content: '[[tokens 400]] [[delay token=10]]' }],
    });
    for await (const event of stream) {
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') break;
    }
    const deadline = Date.now() + 10_000;
    while (stack.simulator.stats.aborted === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(stack.simulator.stats.aborted).toBe(before + 1);
  });
});

describe('POST /v1/messages with inbound API keys', () => {
  let stack: GatewayStack;
  const KEY = 'sk-messages-0123456789';

  beforeAll(async () => {
    stack = await startStack({ config: { auth: { apiKeys: [KEY] } } });
  });
  afterAll(() => stack.close());

  it("accepts the key as x-api-key (what Anthropic clients send) and refuses others in Anthropic's envelope", async () => {
    const message = await anthropicClient(stack, KEY).messages.create({ model: MODEL, max_tokens: 50, messages: [{ role: 'user', content: '[[say in]]' }] });
    expect(message.content).toEqual([{ type: 'text', text: 'in' }]);
    await expect(anthropicClient(stack, 'wrong').messages.create({ model: MODEL, max_tokens: 50, messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({
      status: 401,
      error: { type: 'error', error: { type: 'authentication_error' } },
    });
    // Bearer keeps working, on this route and the others.
    expect((await postMessages(stack, { model: MODEL, max_tokens: 50, messages: [{ role: 'user', content: '[[say ok]]' }] }, { authorization: `Bearer ${KEY}` })).status).toBe(200);
    const models = await fetch(`${stack.url}/models`, { headers: { 'x-api-key': KEY } });
    expect(models.status).toBe(200);
  });
});
