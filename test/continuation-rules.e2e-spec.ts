import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { OpenResponsesValidator } from './support/openresponses-validator.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { SocketClient } from './support/socket-client.js';
import { STATE_STORE, type StateStore } from '#storage/index.js';
import { weatherTool } from './support/fixtures.js';

/**
 * What a continuation may carry and what it leaves behind, over HTTP and
 * the WebSocket mode, on both persistent stores: tool outputs must answer a
 * call, `generate: false` prepares without a model call, stored input comes
 * back canonical, and `item_reference` resolves against stored items.
 */

const validator = new OpenResponsesValidator();
const pgUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const pgSchema = `sy_cont_${randomBytes(4).toString('hex')}`;
const sqliteDir = mkdtempSync(join(tmpdir(), 'sy-cont-'));

let admin: pg.Pool;
beforeAll(async () => {
  admin = new pg.Pool({ connectionString: pgUrl, max: 1 });
  await admin.query(`CREATE SCHEMA ${pgSchema}`);
});
afterAll(async () => {
  await admin.query(`DROP SCHEMA IF EXISTS ${pgSchema} CASCADE`);
  await admin.end();
  rmSync(sqliteDir, { recursive: true, force: true });
});

const STORES = {
  sqlite: () => ({ driver: 'sqlite', sqlitePath: join(sqliteDir, 'state.sqlite') }),
  postgres: () => ({ driver: 'postgres', postgresUrl: `${pgUrl}?options=-c%20search_path%3D${pgSchema}` }),
};

async function post(stack: GatewayStack, body: Record<string, unknown>): Promise<{ status: number; body: any }> {
  const response = await fetch(`${stack.url}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

describe.each(Object.keys(STORES) as Array<keyof typeof STORES>)('continuation rules (%s store)', (store) => {
  let stack: GatewayStack;
  const sockets: SocketClient[] = [];
  const open = async () => {
    const socket = await SocketClient.open(stack);
    sockets.push(socket);
    return socket;
  };
  const upstreamCalls = () => stack.simulator.stats.requests;

  beforeAll(async () => {
    stack = await startStack({ config: { storage: STORES[store]() } });
  });
  afterEach(async () => {
    await Promise.all(sockets.splice(0).map((s) => s.close()));
  });
  afterAll(() => stack.close());

  describe('tool outputs must answer a call', () => {
    it('refuses a function_call_output and a custom_tool_call_output that answer nothing, before any model call', async () => {
      const before = upstreamCalls();
      const bare = await post(stack, { model: 'm', input: [{ type: 'function_call_output', call_id: 'call_nowhere', output: 'x' }] });
      expect(bare.status).toBe(400);
      expect(bare.body.error).toMatchObject({ type: 'invalid_request_error', param: 'input[0].call_id', code: 'tool_call_not_found' });
      expect(bare.body.error.message).toContain('call_nowhere');

      const custom = await post(stack, {
        model: 'm',
        input: [
          { role: 'user', content: 'hi' },
          { type: 'function_call', call_id: 'call_known', name: 'get_weather', arguments: '{}' },
          { type: 'function_call_output', call_id: 'call_known', output: 'ok' },
          { type: 'custom_tool_call_output', call_id: 'call_other', output: 'x' },
        ],
      });
      expect(custom.status).toBe(400);
      expect(custom.body.error.param).toBe('input[3].call_id');
      expect(upstreamCalls()).toBe(before);
    });

    it('accepts outputs answering calls in the input, in a previous response, or in a conversation', async () => {
      const inline = await stack.openai.responses.create({
        model: 'm',
        input: [
          { role: 'user', content: 'weather?' },
          { type: 'function_call', call_id: 'call_inline', name: 'get_weather', arguments: '{"city":"Oslo"}' },
          { type: 'function_call_output', call_id: 'call_inline', output: 'cold' },
        ],
        tools: [weatherTool],
      });
      expect(inline.output_text).toContain('cold');

      const first = await stack.openai.responses.create({ model: 'm', input: 'Weather? [[call get_weather {"city":"Turku"}]]', tools: [weatherTool] });
      const call = first.output.find((i) => i.type === 'function_call') as any;
      const next = await stack.openai.responses.create({
        model: 'm',
        previous_response_id: first.id,
        input: [{ type: 'function_call_output', call_id: call.call_id, output: 'foggy' }],
      });
      expect(next.output_text).toContain('foggy');
      const wrong = await post(stack, { model: 'm', previous_response_id: next.id, input: [{ type: 'function_call_output', call_id: 'call_invented', output: 'x' }] });
      expect(wrong.status).toBe(400);
      expect(wrong.body.error.param).toBe('input[0].call_id');

      const conversation = await stack.openai.conversations.create({});
      const inConversation = await stack.openai.responses.create({
        model: 'm',
        conversation: conversation.id,
        input: 'Weather? [[call get_weather {"city":"Pori"}]]',
        tools: [weatherTool],
      });
      const conversationCall = inConversation.output.find((i) => i.type === 'function_call') as any;
      const answered = await stack.openai.responses.create({
        model: 'm',
        conversation: conversation.id,
        input: [{ type: 'function_call_output', call_id: conversationCall.call_id, output: 'windy' }],
        tools: [weatherTool],
      });
      expect(answered.output_text).toContain('windy');
    });

    it('checks a thousand call/output pairs in one request and names an orphan at the end', async () => {
      const pairs = Array.from({ length: 1000 }, (_, i) => [
        { type: 'function_call', call_id: `call_${i}`, name: 'get_weather', arguments: '{}' },
        { type: 'function_call_output', call_id: `call_${i}`, output: `result ${i}` },
      ]).flat();
      const ok = await post(stack, { model: 'm', input: [{ role: 'user', content: 'many' }, ...pairs, { role: 'user', content: '[[say fine]]' }], tools: [weatherTool] });
      expect(ok.status).toBe(200);
      expect(ok.body.output.at(-1).content[0].text).toBe('fine');
      const orphan = await post(stack, { model: 'm', input: [...pairs, { type: 'function_call_output', call_id: 'call_1000', output: 'x' }] });
      expect(orphan.status).toBe(400);
      expect(orphan.body.error.param).toBe('input[2000].call_id');
    });

    it('over WebSocket: the failed continuation evicts the cached response, which then answers previous_response_not_found', async () => {
      const socket = await open();
      socket.create({ model: 'm', store: false, input: 'Weather? [[call get_weather {"city":"Vaasa"}]]', tools: [weatherTool] });
      const first = (await socket.untilDone()).at(-1).response;
      expect(first.output[0].type).toBe('function_call');
      const before = upstreamCalls();

      socket.create({ model: 'm', store: false, previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: 'call_wrong', output: 'x' }] });
      expect(await socket.next()).toMatchObject({ type: 'error', status: 400, error: { param: 'input[0].call_id', code: 'tool_call_not_found' } });

      socket.create({ model: 'm', store: false, previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: first.output[0].call_id, output: 'x' }] });
      expect(await socket.next()).toMatchObject({ type: 'error', status: 404, error: { code: 'previous_response_not_found' } });
      expect(upstreamCalls()).toBe(before);
    });

    it('over WebSocket: a right answer continues from the cache', async () => {
      const socket = await open();
      socket.create({ model: 'm', store: false, input: 'Weather? [[call get_weather {"city":"Kemi"}]]', tools: [weatherTool] });
      const first = (await socket.untilDone()).at(-1).response;
      socket.create({ model: 'm', store: false, previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: first.output[0].call_id, output: 'snow' }] });
      const done = (await socket.untilDone()).at(-1);
      expect(done.type).toBe('response.completed');
      expect(done.response.output.at(-1).content[0].text).toContain('snow');
    });
  });

  describe('generate: false', () => {
    it("Codex's WebSocket prewarm: no model call, an empty completed response at once, then a turn that continues from it", async () => {
      const socket = await open();
      const before = upstreamCalls();
      const prewarm = {
        model: 'm',
        instructions: 'You are a coding agent.',
        input: [
          { type: 'message', role: 'developer', content: [{ type: 'input_text', text: '<permissions>workspace-write</permissions>' }] },
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: '<environment_context>cwd=/repo</environment_context>' }] },
        ],
        tools: [weatherTool],
        tool_choice: 'auto',
        parallel_tool_calls: false,
        store: false,
        include: ['reasoning.encrypted_content'],
        prompt_cache_key: 'codex-session-1',
        generate: false,
      };
      socket.create(prewarm);
      const frames = await socket.untilDone();
      expect(frames.map((f) => f.type)).toEqual(['response.created', 'response.in_progress', 'response.completed']);
      const warmed = frames.at(-1).response;
      validator.assertResponse(warmed);
      expect(warmed).toMatchObject({ status: 'completed', output: [], usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 } });
      expect(warmed.tools.map((t: any) => t.name)).toEqual(['get_weather']);
      expect(upstreamCalls()).toBe(before);

      socket.create({
        model: 'm',
        instructions: 'You are a coding agent.',
        previous_response_id: warmed.id,
        input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'What is the weather in "Kotka"?' }] }],
        tools: [weatherTool],
        store: false,
      });
      const turn = (await socket.untilDone()).at(-1).response;
      expect(turn.status).toBe('completed');
      expect(turn.output[0]).toMatchObject({ type: 'function_call', name: 'get_weather' });
      expect(upstreamCalls()).toBe(before + 1);
      const sent = stack.simulator.requests.at(-1)!.body as any;
      expect(sent.input.map((i: any) => i.content?.[0]?.text)).toEqual([
        '<permissions>workspace-write</permissions>',
        '<environment_context>cwd=/repo</environment_context>',
        'What is the weather in "Kotka"?',
      ]);
    });

    it("the same prewarm through the openai SDK's own WebSocket client", async () => {
      const { ResponsesWS } = await import('openai/resources/responses/ws');
      const rws = new ResponsesWS(stack.openai);
      const before = upstreamCalls();
      const completed: any[] = [];
      let wake: () => void = () => undefined;
      rws.on('event', (event: any) => {
        if (event.type === 'response.completed') {
          completed.push(event.response);
          wake();
        }
      });
      const nextCompleted = (count: number) =>
        new Promise<void>((resolve) => {
          wake = () => completed.length >= count && resolve();
          wake();
        });
      try {
        rws.send({ type: 'response.create', model: 'm', store: false, input: 'warm up', generate: false } as any);
        await nextCompleted(1);
        expect(completed[0].output).toEqual([]);
        expect(upstreamCalls()).toBe(before);
        rws.send({ type: 'response.create', model: 'm', store: false, previous_response_id: completed[0].id, input: '[[say warmed]]' } as any);
        await nextCompleted(2);
        expect(completed[1].output.at(-1).content[0].text).toBe('warmed');
        expect(upstreamCalls()).toBe(before + 1);
      } finally {
        rws.close();
      }
    });

    it('over HTTP: stored like any response, continued by previous_response_id, tools inherited', async () => {
      const before = upstreamCalls();
      const warmed = await stack.openai.responses.create({ model: 'm', input: 'Context: the user lives in "Hanko".', tools: [weatherTool], generate: false } as any);
      validator.assertResponse(warmed);
      expect(warmed.output).toEqual([]);
      expect(upstreamCalls()).toBe(before);
      expect((await stack.openai.responses.retrieve(warmed.id)).status).toBe('completed');
      const input = await stack.openai.responses.inputItems.list(warmed.id);
      expect(input.data).toHaveLength(1);

      const streamed = await stack.openai.responses.create({ model: 'm', input: 'Warm stream.', generate: false, stream: true } as any);
      const events: any[] = [];
      for await (const event of streamed as unknown as AsyncIterable<any>) events.push(event);
      expect(events.map((e) => e.type)).toEqual(['response.created', 'response.in_progress', 'response.completed']);
      expect(upstreamCalls()).toBe(before);

      const turn = await stack.openai.responses.create({ model: 'm', previous_response_id: warmed.id, input: '[[say ready]]' });
      expect(turn.output_text).toBe('ready');
      expect(turn.tools.map((t: any) => t.name)).toEqual(['get_weather']);
      const sent = stack.simulator.requests.at(-1)!.body as any;
      expect(JSON.stringify(sent.input)).toContain('Hanko');
    });

    it('discovers MCP tools at prewarm (the server is asked), shows the listing on the first generating turn', async () => {
      const { StreamableTestServer } = await import('./support/mcp/mcp-test-servers.js');
      const server = await StreamableTestServer.start();
      const mcpStack = await startStack({ config: { storage: { driver: 'memory' }, mcp: { allowedHosts: [`127.0.0.1:${server.port}`] } } });
      try {
        const tools = [{ type: 'mcp', server_label: 'demo', server_url: server.url, require_approval: 'never' }] as any;
        const asked = server.log.httpRequests.length;
        const warmed = await mcpStack.openai.responses.create({ model: 'm', input: 'warm', tools, generate: false } as any);
        expect(warmed.output).toEqual([]);
        expect(server.log.httpRequests.length).toBeGreaterThan(asked);
        expect(mcpStack.simulator.stats.requests).toBe(0);
        const turn = await mcpStack.openai.responses.create({ model: 'm', previous_response_id: warmed.id, input: '[[call demo__echo {"text":"hi"}]]', tools });
        expect(turn.output.map((i) => i.type)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
      } finally {
        await mcpStack.close();
        await server.close();
      }
    });

    it('refuses a generate that is not a boolean', async () => {
      const refused = await post(stack, { model: 'm', input: 'x', generate: 'no' });
      expect(refused.status).toBe(400);
      expect(refused.body.error.param).toBe('generate');
    });

    it('refuses approval answers with generate:false, naming the field', async () => {
      const refused = await post(stack, {
        model: 'm',
        generate: false,
        input: [{ type: 'mcp_approval_response', approval_request_id: 'mcpr_x', approve: true }],
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error.param).toBe('generate');
    });
  });

  describe('canonical stored items', () => {
    it('input_items: shorthand input comes back with ids, status and typed content parts', async () => {
      const response = await stack.openai.responses.create({
        model: 'm',
        input: [
          { role: 'developer', content: 'Be terse.' },
          { role: 'assistant', content: 'Earlier answer.' },
          { role: 'user', content: '[[say ok]]' },
        ],
      });
      const items = await stack.openai.responses.inputItems.list(response.id, { order: 'asc' });
      expect(items.data).toEqual([
        { id: expect.stringMatching(/^msg_/), type: 'message', role: 'developer', status: 'completed', content: [{ type: 'input_text', text: 'Be terse.' }] },
        {
          id: expect.stringMatching(/^msg_/),
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Earlier answer.', annotations: [] }],
        },
        { id: expect.stringMatching(/^msg_/), type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: '[[say ok]]' }] },
      ]);
      const plain = await stack.openai.responses.create({ model: 'm', input: '[[say plain]]' });
      expect((await stack.openai.responses.inputItems.list(plain.id)).data[0]).toMatchObject({ status: 'completed', content: [{ type: 'input_text', text: '[[say plain]]' }] });
    });

    it('over WebSocket: a stored response keeps its input canonical too', async () => {
      const socket = await open();
      socket.create({ model: 'm', input: [{ role: 'user', content: '[[say over the socket]]' }] });
      const done = (await socket.untilDone()).at(-1).response;
      const items = await stack.openai.responses.inputItems.list(done.id);
      expect(items.data).toEqual([
        { id: expect.stringMatching(/^msg_/), type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: '[[say over the socket]]' }] },
      ]);
    });

    it('reads items stored in shorthand (before canonical storage) back canonical', async () => {
      const store = stack.app.get<StateStore>(STATE_STORE);
      const id = `resp_legacy${randomBytes(6).toString('hex')}`;
      await store.saveResponse({
        id,
        owner: null,
        createdAt: 1,
        previousResponseId: null,
        conversationId: null,
        status: 'completed',
        response: { id, object: 'response', status: 'completed', output: [] },
        inputItems: [{ type: 'message', id: `msg_legacy${id.slice(-6)}`, role: 'user', content: 'old shorthand' }],
        modelItems: [],
        tools: [],
        toolChoice: 'auto',
      });
      const conversation = await store.createConversation({ id: `conv_legacy${id.slice(-6)}`, owner: null, createdAt: 1, metadata: {} }, [
        { type: 'message', id: `msg_legacyc${id.slice(-6)}`, role: 'assistant', content: 'old answer' },
      ]);
      expect((await stack.openai.responses.inputItems.list(id)).data[0]).toMatchObject({ status: 'completed', content: [{ type: 'input_text', text: 'old shorthand' }] });
      const items = await stack.openai.conversations.items.list(conversation.id);
      expect(items.data[0]).toMatchObject({ status: 'completed', content: [{ type: 'output_text', text: 'old answer', annotations: [] }] });
      const one = await stack.openai.conversations.items.retrieve(items.data[0].id!, { conversation_id: conversation.id });
      expect(one).toMatchObject({ content: [{ type: 'output_text', text: 'old answer' }] });
    });

    it('conversation items: created items and response turns alike', async () => {
      const conversation = await stack.openai.conversations.create({ items: [{ type: 'message', role: 'user', content: 'seeded' }] as any });
      await stack.openai.conversations.items.create(conversation.id, {
        items: [
          { type: 'function_call', call_id: 'call_seed', name: 'get_weather', arguments: '{}' } as any,
          { type: 'function_call_output', call_id: 'call_seed', output: 'mild' } as any,
        ],
      });
      await stack.openai.responses.create({ model: 'm', conversation: conversation.id, input: '[[say stored]]' });
      const items = (await stack.openai.conversations.items.list(conversation.id, { order: 'asc' })).data as any[];
      expect(items.map((i) => i.type)).toEqual(['message', 'function_call', 'function_call_output', 'message', 'message']);
      expect(items.every((i) => typeof i.id === 'string' && i.status === 'completed')).toBe(true);
      expect(items.filter((i) => i.type === 'message').map((i) => i.content[0].type)).toEqual(['input_text', 'input_text', 'output_text']);
    });
  });

  describe('item_reference', () => {
    it("resolves references to another response's output and input items, and to conversation items", async () => {
      const earlier = await stack.openai.responses.create({ model: 'm', input: '[[reason Earlier thought.]] [[say Earlier answer.]]' });
      const [reasoning, message] = earlier.output as any[];
      expect(reasoning.type).toBe('reasoning');
      const earlierInput = (await stack.openai.responses.inputItems.list(earlier.id)).data[0] as any;
      const conversation = await stack.openai.conversations.create({ items: [{ type: 'message', role: 'user', content: 'From the conversation.' }] as any });
      const conversationItem = (await stack.openai.conversations.items.list(conversation.id)).data[0] as any;

      const refs = [earlierInput.id, reasoning.id, message.id, conversationItem.id].map((id) => ({ type: 'item_reference', id }));
      const response = await post(stack, { model: 'm', input: [...refs, { role: 'user', content: '[[say resolved]]' }] });
      expect(response.status).toBe(200);
      const sent = JSON.stringify((stack.simulator.requests.at(-1)!.body as any).input);
      for (const text of ['Earlier thought.', 'Earlier answer.', 'From the conversation.', '[[reason Earlier thought.]]']) expect(sent).toContain(text);
      expect(sent).not.toContain('item_reference');
      // Stored with the items themselves, not the references.
      const stored = (await stack.openai.responses.inputItems.list(response.body.id, { order: 'asc' })).data as any[];
      expect(stored.map((i) => i.type)).toEqual(['message', 'reasoning', 'message', 'message', 'message']);
    });

    it('refuses an unknown id, naming the reference, over HTTP and WebSocket', async () => {
      const before = upstreamCalls();
      const refused = await post(stack, {
        model: 'm',
        input: [
          { role: 'user', content: 'x' },
          { type: 'item_reference', id: 'msg_unknown_ref' },
        ],
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ param: 'input[1].id', code: 'item_not_found' });
      for (const bad of [{ type: 'item_reference' }, { type: 'item_reference', id: 7 }, { type: 'item_reference', id: '' }]) {
        const malformed = await post(stack, { model: 'm', input: [bad] });
        expect(malformed.status).toBe(400);
        expect(malformed.body.error.param).toBe('input[0].id');
      }
      const socket = await open();
      socket.create({ model: 'm', input: [{ type: 'item_reference', id: 'msg_unknown_ref' }] });
      expect(await socket.next()).toMatchObject({ type: 'error', status: 400, error: { param: 'input[0].id', code: 'item_not_found' } });
      expect(upstreamCalls()).toBe(before);
    });

    it('resolves references added to a conversation, naming an unknown one in items[i].id', async () => {
      const earlier = await stack.openai.responses.create({ model: 'm', input: '[[say Worth keeping.]]' });
      const conversation = await stack.openai.conversations.create({ items: [{ type: 'item_reference', id: earlier.output[0].id }] as any });
      const items = (await stack.openai.conversations.items.list(conversation.id)).data as any[];
      expect(items).toEqual([expect.objectContaining({ id: earlier.output[0].id, type: 'message', content: [expect.objectContaining({ text: 'Worth keeping.' })] })]);
      const refused = await fetch(`${stack.url}/conversations/${conversation.id}/items`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          items: [
            { role: 'user', content: 'x' },
            { type: 'item_reference', id: 'msg_nowhere' },
          ],
        }),
      });
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as any).error).toMatchObject({ param: 'items[1].id', code: 'item_not_found' });
    });

    it('resolves a hundred references in one request', async () => {
      const conversation = await stack.openai.conversations.create({});
      // The Conversations API takes at most 20 items per call.
      for (let batch = 0; batch < 5; batch++) {
        await stack.openai.conversations.items.create(conversation.id, {
          items: Array.from({ length: 20 }, (_, i) => ({ type: 'message', role: 'user', content: `item ${batch * 20 + i}` })) as any,
        });
      }
      const ids = (await stack.openai.conversations.items.list(conversation.id, { limit: 100, order: 'asc' })).data.map((i: any) => i.id);
      const response = await post(stack, { model: 'm', input: [...ids.map((id: string) => ({ type: 'item_reference', id })), { role: 'user', content: '[[say all there]]' }] });
      expect(response.status).toBe(200);
      const sent = (stack.simulator.requests.at(-1)!.body as any).input;
      expect(sent).toHaveLength(101);
      expect(sent[99].content[0].text).toBe('item 99');
    });
  });
});

describe.each(['responses', 'chat'] as const)('max_output_tokens fitted to the model context (%s dialect)', (dialect) => {
  let stack: GatewayStack;
  beforeAll(async () => {
    stack = await startStack({ dialect, simulator: { maxModelLen: 600 } });
  });
  afterAll(() => stack.close());

  // vLLM lists the served model name and refuses others; the context length is looked up by that name.
  const MODEL = 'switchyard-sim';
  const budgetSent = () => {
    const body = stack.simulator.requests.at(-1)!.body as any;
    return dialect === 'responses' ? body.max_output_tokens : body.max_tokens;
  };

  it('the simulated upstream, like vLLM, refuses a budget larger than its context', async () => {
    const path = dialect === 'responses' ? 'responses' : 'chat/completions';
    const body =
      dialect === 'responses' ? { model: 'm', input: 'hello', max_output_tokens: 32_000 } : { model: 'm', messages: [{ role: 'user', content: 'hello' }], max_tokens: 32_000 };
    const direct = await fetch(`${stack.simulator.url}/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(direct.status).toBe(400);
    expect(((await direct.json()) as any).error.message).toContain('maximum context length is 600');
  });

  it("clamps Claude Code's 32000 to what the prompt leaves; the client's value stays in the response", async () => {
    const response = await stack.openai.responses.create({ model: MODEL, input: 'A short question.', max_output_tokens: 32_000 });
    expect(response.status).toBe('completed');
    expect(response.max_output_tokens).toBe(32_000);
    expect(budgetSent()).toBeGreaterThan(400);
    expect(budgetSent()).toBeLessThan(600);
  });

  it('sends a budget that fits unchanged, and shrinks it round by round as tool results grow the prompt', async () => {
    await stack.openai.responses.create({ model: MODEL, input: 'Short.', max_output_tokens: 50 });
    expect(budgetSent()).toBe(50);

    const { StreamableTestServer } = await import('./support/mcp/mcp-test-servers.js');
    const server = await StreamableTestServer.start();
    const mcpStack = await startStack({ dialect, simulator: { maxModelLen: 4_000 }, config: { mcp: { allowedHosts: [`127.0.0.1:${server.port}`] } } });
    try {
      const long = 'word '.repeat(200);
      const response = await mcpStack.openai.responses.create({
        model: MODEL,
        input: `Echo. [[call demo__echo ${JSON.stringify({ text: long })}]]`,
        tools: [{ type: 'mcp', server_label: 'demo', server_url: server.url, require_approval: 'never' }],
        max_output_tokens: 32_000,
      });
      expect(response.status).toBe('completed');
      const budgets = mcpStack.simulator.requests.map((r) => (dialect === 'responses' ? (r.body as any).max_output_tokens : (r.body as any).max_tokens));
      expect(budgets).toHaveLength(2);
      expect(budgets[1]).toBeLessThan(budgets[0]);
    } finally {
      await mcpStack.close();
      await server.close();
    }
  });

  it('leaves the budget of a model the upstream does not list alone (the model server has the last word)', async () => {
    const refused = await post(stack, { model: 'not-listed', input: 'x', max_output_tokens: 32_000 });
    expect(budgetSent()).toBe(32_000);
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('maximum context length is 600');
  });
});
