import { readFileSync } from 'node:fs';
import type OpenAI from 'openai';
import { OpenResponsesValidator } from './support/openresponses-validator.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { FakeSearxng } from './support/web-search/fake-searxng.js';

const MODEL = 'switchyard-sim';
const validator = new OpenResponsesValidator();

/** Recorded from a real Codex CLI 0.171.0 run (gpt-5.5, one MCP server): see the file's `source`. */
const codex = JSON.parse(readFileSync(new URL('./support/codex/codex-0.171-tool-search.json', import.meta.url), 'utf8')) as {
  toolDeclarations: any[];
  toolSearchCall: any;
  toolSearchOutput: any;
};

/** Exactly what Codex declares for models that load tools on demand. */
const TOOL_SEARCH = { type: 'tool_search', execution: 'client' } as const;
const shell = {
  type: 'function' as const,
  name: 'shell',
  description: 'Run a shell command',
  parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
  strict: false,
};
const ticketTool = (name = 'open_ticket') => ({
  type: 'function' as const,
  name,
  description: `Open a ticket in the tracker (${name})`,
  parameters: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
  strict: false,
});

const upstreamTools = (stack: GatewayStack): string[] => {
  const body = stack.simulator.requests.at(-1)?.body as any;
  return (body.tools ?? []).map((t: any) => t.name ?? t.function?.name);
};
const upstreamInput = (stack: GatewayStack): any[] => {
  const body = stack.simulator.requests.at(-1)?.body as any;
  return body.input ?? body.messages;
};

async function post(stack: GatewayStack, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${stack.url}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

describe.each(['responses', 'chat'] as const)('Codex tool types over the openai client (%s upstream dialect)', (dialect) => {
  let stack: GatewayStack;
  let client: OpenAI;

  beforeAll(async () => {
    stack = await startStack({ dialect });
    client = stack.openai;
  });
  afterAll(() => stack.close());

  describe('tool_search (execution: client)', () => {
    it('hands the search back as a tool_search_call, then lets the model call what the tool_search_output loaded', async () => {
      const first = await client.responses.create({
        model: MODEL,
        input: 'File a bug. [[call tool_search {"query":"ticket tracker","limit":3}]]',
        tools: [shell, TOOL_SEARCH as any],
      });
      expect(first.status).toBe('completed');
      validator.assertResponse(first);
      expect(first.output).toEqual([
        {
          id: expect.stringMatching(/^tsc_/),
          type: 'tool_search_call',
          status: 'completed',
          call_id: expect.any(String),
          execution: 'client',
          arguments: { query: 'ticket tracker', limit: 3 },
        },
      ]);
      expect(first.tools).toEqual([expect.objectContaining({ name: 'shell' }), { type: 'tool_search', execution: 'client', description: null, parameters: null }]);
      // The model saw one search function beside the declared tools, and nothing it may not call yet.
      expect(upstreamTools(stack)).toEqual(['shell', 'tool_search']);
      const call = first.output[0] as any;

      const second = await client.responses.create({
        model: MODEL,
        previous_response_id: first.id,
        input: [
          { type: 'tool_search_output', call_id: call.call_id, execution: 'client', status: 'completed', tools: [ticketTool()] },
          { role: 'user', content: 'Now file it. [[call open_ticket {"title":"crash on start"}]]' },
        ] as any,
        tools: [shell, TOOL_SEARCH as any],
      });
      expect(upstreamTools(stack)).toEqual(['shell', 'tool_search', 'open_ticket']);
      expect(second.output).toEqual([expect.objectContaining({ type: 'function_call', name: 'open_ticket', arguments: '{"title": "crash on start"}', status: 'completed' })]);
      // Loaded tools are not echoed as declared ones.
      expect(second.tools.map((t: any) => t.type)).toEqual(['function', 'tool_search']);
      // The model read its own search and its result as a function call and output.
      const input = upstreamInput(stack);
      const text = JSON.stringify(input);
      expect(text).toContain('tool_search');
      expect(text).toContain('loaded_tools');
      expect(text).toContain('open_ticket');

      // A later turn still has the loaded tool: the stored history carries the tool_search_output.
      const third = await client.responses.create({
        model: MODEL,
        previous_response_id: second.id,
        input: [
          { type: 'function_call_output', call_id: (second.output[0] as any).call_id, output: 'ticket #1' },
          { role: 'user', content: 'And one more. [[call open_ticket {"title":"second"}]]' },
        ],
        tools: [shell, TOOL_SEARCH as any],
      });
      expect(upstreamTools(stack)).toEqual(['shell', 'tool_search', 'open_ticket']);
      expect(third.output).toEqual([expect.objectContaining({ type: 'function_call', name: 'open_ticket' })]);
    });

    it('keeps loaded tools across the turns of a conversation', async () => {
      const conversation = await client.conversations.create({});
      const first = await client.responses.create({
        model: MODEL,
        conversation: conversation.id,
        input: 'Find a tool. [[call tool_search {"query":"tickets"}]]',
        tools: [TOOL_SEARCH as any],
      });
      const call = first.output[0] as any;
      await client.responses.create({
        model: MODEL,
        conversation: conversation.id,
        input: [{ type: 'tool_search_output', call_id: call.call_id, execution: 'client', status: 'completed', tools: [ticketTool('conv_ticket')] }] as any,
        tools: [TOOL_SEARCH as any],
      });
      const later = await client.responses.create({
        model: MODEL,
        conversation: conversation.id,
        input: 'File it. [[call conv_ticket {"title":"x"}]]',
        tools: [TOOL_SEARCH as any],
      });
      expect(upstreamTools(stack)).toEqual(['tool_search', 'conv_ticket']);
      expect(later.output).toEqual([expect.objectContaining({ type: 'function_call', name: 'conv_ticket' })]);
      const items = await client.conversations.items.list(conversation.id);
      expect(items.data.map((i: any) => i.type)).toEqual(expect.arrayContaining(['tool_search_call', 'tool_search_output']));
    });

    it('replays tool_search items sent back statelessly, in order, and streams the call through responses.stream()', async () => {
      const stream = client.responses.stream({
        model: MODEL,
        store: false,
        input: 'Find it. [[call tool_search {"query":"tickets"}]]',
        tools: [TOOL_SEARCH as any],
      });
      const types: string[] = [];
      stream.on('event', (e) => {
        validator.assertEvent(e as unknown as Record<string, unknown>);
        types.push(e.type);
      });
      const streamed = await stream.finalResponse();
      validator.assertResponse(streamed);
      expect(streamed.output.map((i) => i.type)).toEqual(['tool_search_call']);
      expect(types.filter((t) => t.startsWith('response.output_item'))).toEqual(['response.output_item.added', 'response.output_item.done']);
      const call = streamed.output[0] as any;
      expect(call.arguments).toEqual({ query: 'tickets' });

      const replay = await client.responses.create({
        model: MODEL,
        store: false,
        input: [
          { role: 'user', content: 'Find it.' },
          call,
          { type: 'tool_search_output', call_id: call.call_id, execution: 'client', status: 'completed', tools: [ticketTool('file_ticket')] },
        ] as any,
        tools: [TOOL_SEARCH as any],
      });
      expect(replay.status).toBe('completed');
      expect(upstreamTools(stack)).toEqual(['tool_search', 'file_ticket']);
      const input = upstreamInput(stack);
      if (dialect === 'responses') {
        expect(input.slice(1).map((i: any) => [i.type, i.name ?? null])).toEqual([
          ['function_call', 'tool_search'],
          ['function_call_output', null],
        ]);
        expect(input[1]).toMatchObject({ call_id: call.call_id, arguments: '{"query":"tickets"}' });
        expect(JSON.parse(input[2].output)).toEqual({
          loaded_tools: [{ type: 'function', name: 'file_ticket', description: 'Open a ticket in the tracker (file_ticket)' }],
          note: 'These tools are loaded and can be called now.',
        });
      } else {
        expect(input.map((m: any) => m.role)).toEqual(['user', 'assistant', 'tool']);
        expect(input[1].tool_calls[0]).toMatchObject({ id: call.call_id, function: { name: 'tool_search', arguments: '{"query":"tickets"}' } });
      }
      // The model answered from the search's output.
      expect(replay.output_text).toContain('loaded_tools');
    });

    it("continues Codex's recorded round trip: its tool_search_output loads an MCP namespace the model then calls", async () => {
      const response = await client.responses.create({
        model: MODEL,
        store: false,
        input: [{ role: 'user', content: 'Echo hi with the MCP tool. [[call@2 mcp__everything__echo {"message":"hi there"}]]' }, codex.toolSearchCall, codex.toolSearchOutput],
        tools: [shell, ...codex.toolDeclarations],
      });
      // Codex's web_search declaration (external_web_access: false) is not offered; the loaded namespace member is.
      expect(upstreamTools(stack)).toEqual(['shell', 'tool_search', 'mcp__everything__echo']);
      expect(response.output).toEqual([expect.objectContaining({ type: 'function_call', name: 'echo', namespace: 'mcp__everything', call_id: expect.any(String) })]);
      expect(JSON.parse((response.output[0] as any).arguments)).toEqual({ message: 'hi there' });
      expect(response.tools.map((t: any) => t.type)).toEqual(['function', 'tool_search', 'web_search']);
    });

    it('loads 10x and 100x as many tools, every one offered, while other requests are served', async () => {
      for (const count of [5, 50, 500]) {
        const tools = Array.from({ length: count }, (_, i) => ticketTool(`tool_${i}`));
        const [loaded, other] = await Promise.all([
          client.responses.create({
            model: MODEL,
            store: false,
            input: [
              { type: 'tool_search_call', call_id: 'call_ts', execution: 'client', status: 'completed', arguments: { query: 'x' } },
              { type: 'tool_search_output', call_id: 'call_ts', execution: 'client', status: 'completed', tools },
              { role: 'user', content: `[[call tool_${count - 1} {"title":"last"}]]` },
            ] as any,
            tools: [TOOL_SEARCH as any],
          }),
          client.responses.create({ model: MODEL, input: '[[say still here]]' }),
        ]);
        expect(other.output_text).toBe('still here');
        expect(loaded.output).toEqual([expect.objectContaining({ type: 'function_call', name: `tool_${count - 1}` })]);
        const request = stack.simulator.requests.find((r) => JSON.stringify(r.body).includes(`tool_${count - 1}`) && (r.body as any).tools?.length > count);
        expect((request?.body as any).tools).toHaveLength(count + 1);
      }
    });

    it('refuses what it cannot honour, naming the field', async () => {
      const server = await post(stack, { model: MODEL, input: 'x', tools: [{ type: 'tool_search' }] });
      expect(server.status).toBe(400);
      expect(server.body.error).toMatchObject({ type: 'invalid_request_error', param: 'tools[0].execution' });

      const notList = await post(stack, {
        model: MODEL,
        input: [{ type: 'tool_search_output', call_id: 'c', execution: 'client', tools: 'all of them' }],
        tools: [TOOL_SEARCH],
      });
      expect(notList.status).toBe(400);
      expect(notList.body.error.param).toBe('input[0].tools');

      const gatewayTool = await post(stack, {
        model: MODEL,
        input: [
          { role: 'user', content: 'hi' },
          { type: 'tool_search_output', call_id: 'c', execution: 'client', tools: [{ type: 'mcp', server_label: 'x', server_url: 'http://127.0.0.1:9/mcp' }] },
        ],
        tools: [TOOL_SEARCH],
      });
      expect(gatewayTool.status).toBe(400);
      expect(gatewayTool.body.error.param).toBe('input[1].tools[0].type');

      const badLoaded = await post(stack, {
        model: MODEL,
        input: [{ type: 'tool_search_output', call_id: 'c', execution: 'client', tools: [{ type: 'function' }] }],
        tools: [TOOL_SEARCH],
      });
      expect(badLoaded.status).toBe(400);
      expect(badLoaded.body.error.param).toBe('input[0].tools[0].name');
    });
  });

  describe('web_search without a provider (Codex always declares it)', () => {
    it('is accepted and echoed but not offered to the model, which answers without it', async () => {
      const response = await client.responses.create({
        model: MODEL,
        input: 'Hello there. [[say Hi without searching]]',
        tools: [shell, { type: 'web_search', external_web_access: true } as any],
      });
      expect(response.status).toBe('completed');
      expect(response.output_text).toBe('Hi without searching');
      expect(upstreamTools(stack)).toEqual(['shell']);
      expect(response.tools.map((t: any) => t.type)).toEqual(['function', 'web_search']);
      // Forcing a tool that cannot run is refused by name rather than forced into a failure.
      const forced = await post(stack, { model: MODEL, input: 'x', tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search' } });
      expect(forced.status).toBe(400);
      expect(forced.body.error).toMatchObject({ param: 'tool_choice.type', message: expect.stringContaining('not offered to the model') });
    });
  });
});

describe('web_search with external_web_access: false (a provider configured)', () => {
  let searxng: FakeSearxng;
  let stack: GatewayStack;

  beforeAll(async () => {
    searxng = await FakeSearxng.start();
    stack = await startStack({ config: { webSearch: { provider: 'searxng', searxng: { baseUrl: searxng.baseUrl } } } });
  });
  afterAll(async () => {
    await stack.close();
    await searxng.close();
  });
  beforeEach(() => searxng.api.reset());

  it('is not offered, and a call the model makes anyway fails without reaching the provider', async () => {
    const offered = await stack.openai.responses.create({ model: MODEL, input: '[[say plain]]', tools: [{ type: 'web_search' }] });
    expect(offered.output_text).toBe('plain');
    expect(upstreamTools(stack)).toEqual(['web_search']);

    const cached = await stack.openai.responses.create({
      model: MODEL,
      input: 'Look it up. [[call web_search {"query":"node 22"}]]',
      tools: [{ type: 'web_search', external_web_access: false } as any],
    });
    expect(stack.simulator.requests.at(-2)?.body).not.toHaveProperty('tools');
    expect(cached.output.map((i: any) => [i.type, i.status])).toEqual([
      ['web_search_call', 'failed'],
      ['message', 'completed'],
    ]);
    expect(cached.output_text).toContain('external_web_access');
    expect(cached.tools).toEqual([expect.objectContaining({ type: 'web_search', external_web_access: false })]);
    expect(searxng.queries).toEqual([]);
  });
});
