import type OpenAI from 'openai';
import { accumulateResponse } from 'openai/lib/responses/ResponseAccumulator';
import { StreamableTestServer } from './support/mcp/mcp-test-servers.js';
import { OpenResponsesValidator } from './support/openresponses-validator.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { FakeSearxng } from './support/web-search/fake-searxng.js';
import { weatherTool } from './support/fixtures.js';

/**
 * The `openai` SDK's `responses.stream()` helper accumulates the events into
 * a response snapshot itself and throws on any event that does not fit its
 * model of the stream (a delta for a content part never added, an item
 * index never opened). `finalResponse()` must come out equal to the
 * gateway's own `response.completed` object, for every item type.
 */

const patchTool = { type: 'custom', name: 'apply_patch', description: 'Apply a patch to the working tree.' } as const;

/** Runs one request through the stream helper; returns the accumulated final response and the raw events. */
async function streamed(client: OpenAI, body: Record<string, unknown>) {
  const stream = client.responses.stream({ model: 'switchyard-sim', ...body } as any);
  const events: any[] = [];
  stream.on('event', (event) => events.push(event));
  const final = await stream.finalResponse();
  const completed = events.find((e) => e.type === 'response.completed');
  return { final, events, completed: completed?.response };
}

/** The SDK's own accumulation of every event before the terminal one: what a client saw as the stream went. */
function snapshotBeforeEnd(events: any[]): any {
  let snapshot: any;
  for (const event of events) {
    if (event.type === 'response.completed') break;
    snapshot = accumulateResponse(event, snapshot);
  }
  return snapshot;
}

/** The helper adds parsed forms (`parsed`, `parsed_arguments`) to what it returns. */
function withoutParsed(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (key, v) => (key === 'parsed' || key === 'parsed_arguments' ? undefined : v)));
}

/** Event types of one output item, in order. */
function itemTrace(events: any[], outputIndex: number): string[] {
  return events.filter((e) => e.output_index === outputIndex).map((e) => e.type);
}

describe.each(['responses', 'chat'] as const)('the openai SDK stream helper (%s dialect)', (dialect) => {
  // The SDK's accumulator refuses event names it does not know, so the helper needs the `openai` names.
  const reasoningEvents = 'openai';
  const validator = new OpenResponsesValidator({ reasoningEventStyle: reasoningEvents });
  let mcp: StreamableTestServer;
  let searxng: FakeSearxng;
  let stack: GatewayStack;
  let client: OpenAI;

  beforeAll(async () => {
    [mcp, searxng] = await Promise.all([StreamableTestServer.start(), FakeSearxng.start()]);
    stack = await startStack({
      dialect,
      config: {
        server: { reasoningEvents },
        mcp: { allowedHosts: [`127.0.0.1:${mcp.port}`] },
        webSearch: { provider: 'searxng', searxng: { baseUrl: searxng.baseUrl } },
      },
    });
    client = stack.openai;
  });
  afterAll(async () => {
    await stack.close();
    await Promise.all([mcp.close(), searxng.close()]);
  });

  const expectConsistent = (run: Awaited<ReturnType<typeof streamed>>) => {
    run.events.forEach((e) => validator.assertEvent(e));
    validator.assertResponse(run.completed);
    expect(run.final.status).toBe('completed');
    expect(withoutParsed(run.final.output)).toEqual(run.completed.output);
    // Built from the deltas and part events alone, the output already matches the final one.
    expect(snapshotBeforeEnd(run.events).output).toEqual(run.completed.output);
  };

  it('text', async () => {
    const run = await streamed(client, { input: '[[say Hello there, stream helper.]]' });
    expectConsistent(run);
    expect(run.final.output_text).toBe('Hello there, stream helper.');
  });

  it('reasoning then text: the reasoning text streams inside a reasoning_text part', async () => {
    const run = await streamed(client, { input: '[[reason Weighing two options first.]] [[say Option two.]]' });
    expectConsistent(run);
    expect(run.final.output.map((i) => i.type)).toEqual(['reasoning', 'message']);
    expect((run.final.output[0] as any).content).toEqual([{ type: 'reasoning_text', text: 'Weighing two options first.' }]);
    expect(run.final.output_text).toBe('Option two.');
    const textEvents = 'response.reasoning_text';
    const trace = itemTrace(run.events, 0);
    expect(trace[0]).toBe('response.output_item.added');
    expect(trace[1]).toBe('response.content_part.added');
    expect(new Set(trace.slice(2, -3))).toEqual(new Set([`${textEvents}.delta`]));
    expect(trace.slice(-3)).toEqual([`${textEvents}.done`, 'response.content_part.done', 'response.output_item.done']);
    expect(run.events.some((e) => String(e.type).includes('reasoning_part'))).toBe(false);
    const deltas = run.events
      .filter((e) => e.type === `${textEvents}.delta`)
      .map((e) => e.delta)
      .join('');
    expect(deltas).toBe('Weighing two options first.');
  });

  it('function call', async () => {
    const run = await streamed(client, { input: 'Weather? [[call get_weather {"city":"Oslo"}]]', tools: [weatherTool] });
    expectConsistent(run);
    expect(run.final.output).toEqual([expect.objectContaining({ type: 'function_call', name: 'get_weather', status: 'completed' })]);
    expect(JSON.parse((run.final.output[0] as any).arguments)).toEqual({ city: 'Oslo' });
  });

  it('custom tool call', async () => {
    const patch = '*** Begin Patch\n+hello\n*** End Patch';
    const run = await streamed(client, { input: `Patch. [[call apply_patch ${JSON.stringify({ input: patch })}]]`, tools: [patchTool] });
    expectConsistent(run);
    expect(run.final.output).toEqual([expect.objectContaining({ type: 'custom_tool_call', name: 'apply_patch', input: patch })]);
  });

  it('MCP listing, call and answer (a real in-process MCP server)', async () => {
    const run = await streamed(client, {
      input: 'Echo it. [[call demo__echo {"text":"from the helper"}]]',
      tools: [{ type: 'mcp', server_label: 'demo', server_url: mcp.url, require_approval: 'never' }],
    });
    expectConsistent(run);
    expect(run.final.output.map((i) => i.type)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
    expect((run.final.output[1] as any).output).toContain('from the helper');
    expect(mcp.log.calls.at(-1)).toEqual({ name: 'echo', args: { text: 'from the helper' } });
  });

  it('web search and answer (the fake SearXNG provider)', async () => {
    const run = await streamed(client, { input: 'News? [[call web_search {"query":"stream helper news"}]]', tools: [{ type: 'web_search' }] });
    expectConsistent(run);
    expect(run.final.output.map((i) => i.type)).toEqual(['web_search_call', 'message']);
    expect(run.final.output[0]).toMatchObject({ status: 'completed', action: { type: 'search', query: 'stream helper news' } });
    expect(searxng.queries).toContain('stream helper news');
  });

  it('namespace member calls, a function and a custom one, in parallel', async () => {
    const shell = {
      type: 'namespace',
      name: 'mcp__shell',
      description: 'Shell tools',
      tools: [
        { type: 'function', name: 'run', description: 'Run a command', parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] } },
        { type: 'custom', name: 'script', description: 'Run a script' },
      ],
    };
    const upstreamNames = async () => {
      const body = stack.simulator.requests.at(-1)!.body as any;
      return (dialect === 'chat' ? body.tools.map((t: any) => t.function) : body.tools).map((t: any) => t.name);
    };
    // The model-visible names come from the gateway's own naming; ask it through a first request.
    await client.responses.create({ model: 'm', input: '[[say names]]', tools: [shell as any] });
    const [runName, scriptName] = await upstreamNames();
    const run = await streamed(client, {
      input: `Go. [[call ${runName} {"cmd":"ls"}]] [[call ${scriptName} {"input":"echo hi"}]]`,
      tools: [shell],
    });
    expectConsistent(run);
    expect(run.final.output).toEqual([
      expect.objectContaining({ type: 'function_call', namespace: 'mcp__shell', name: 'run' }),
      expect.objectContaining({ type: 'custom_tool_call', namespace: 'mcp__shell', name: 'script', input: 'echo hi' }),
    ]);
  });

  it('an MCP approval request', async () => {
    const run = await streamed(client, {
      input: 'Delete it. [[call demo__delete_item {"id":"42"}]]',
      tools: [{ type: 'mcp', server_label: 'demo', server_url: mcp.url, require_approval: 'always' }],
    });
    expectConsistent(run);
    expect(run.final.output.map((i) => i.type)).toEqual(['mcp_list_tools', 'mcp_approval_request']);
    expect(run.final.output[1]).toMatchObject({ server_label: 'demo', name: 'delete_item' });
  });

  it('an answer cut short by max_output_tokens (response.incomplete)', async () => {
    const stream = client.responses.stream({ model: 'm', input: '[[tokens 40]]', max_output_tokens: 10 } as any);
    const events: any[] = [];
    stream.on('event', (event) => events.push(event));
    const final = await stream.finalResponse();
    const terminal = events.at(-1);
    expect(terminal.type).toBe('response.incomplete');
    validator.assertResponse(terminal.response);
    expect(final.status).toBe('incomplete');
    expect(final.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(withoutParsed(final.output)).toEqual(terminal.response.output);
    expect((final.output[0] as any).status).toBe('incomplete');
  });

  it('reasoning before a function call', async () => {
    const run = await streamed(client, {
      input: '[[reason Need the weather tool.]] [[call get_weather {"city":"Rome"}]]',
      tools: [weatherTool],
    });
    expectConsistent(run);
    expect(run.final.output.map((i) => i.type)).toEqual(['reasoning', 'function_call']);
  });
});

describe.each(['responses', 'chat'] as const)('reasoning part events with the Open Responses event names (%s dialect)', (dialect) => {
  const validator = new OpenResponsesValidator({ reasoningEventStyle: 'openresponses' });
  let stack: GatewayStack;
  beforeAll(async () => {
    stack = await startStack({ dialect, config: { server: { reasoningEvents: 'openresponses' } } });
  });
  afterAll(() => stack.close());

  it('brackets the response.reasoning.* events with the same content part events, valid against the spec', async () => {
    const stream = await stack.openai.responses.create({ model: 'm', input: '[[reason Spec-named thoughts.]] [[say Done.]]', stream: true });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    events.forEach((e) => validator.assertEvent(e));
    const trace = itemTrace(events, 0);
    expect(trace[0]).toBe('response.output_item.added');
    expect(trace[1]).toBe('response.content_part.added');
    expect(trace.slice(-3)).toEqual(['response.reasoning.done', 'response.content_part.done', 'response.output_item.done']);
    expect(events.find((e) => e.type === 'response.content_part.done' && e.output_index === 0).part).toEqual({ type: 'reasoning_text', text: 'Spec-named thoughts.' });
    const completed = events.at(-1);
    validator.assertResponse(completed.response);
    expect(completed.response.output[0].content).toEqual([{ type: 'reasoning_text', text: 'Spec-named thoughts.' }]);
  });
});

describe('reasoning event names chosen per request (x-switchyard-reasoning-events)', () => {
  const specValidator = new OpenResponsesValidator({ reasoningEventStyle: 'openresponses' });
  let stack: GatewayStack;
  beforeAll(async () => {
    // A deployment that defaults to the Open Responses names.
    stack = await startStack({ config: { server: { reasoningEvents: 'openresponses' } } });
  });
  afterAll(() => stack.close());

  it("serves the openai SDK's responses.stream() and the Open Responses names from one gateway", async () => {
    const input = '[[reason Both clients.]] [[say Done.]]';
    const sdk = stack.openai.responses.stream({ model: 'm', input }, { headers: { 'x-switchyard-reasoning-events': 'openai' } });
    const names: string[] = [];
    sdk.on('event', (e) => names.push(e.type));
    const final = await sdk.finalResponse();
    expect(final.output_text).toBe('Done.');
    expect(names).toContain('response.reasoning_text.delta');
    expect(names).not.toContain('response.reasoning.delta');

    const spec = await stack.openai.responses.create({ model: 'm', input, stream: true });
    const events: any[] = [];
    for await (const event of spec) events.push(event);
    events.forEach((e) => specValidator.assertEvent(e));
    expect(events.map((e) => e.type)).toContain('response.reasoning.delta');

    const chosen = await stack.openai.responses.create({ model: 'm', input, stream: true }, { headers: { 'x-switchyard-reasoning-events': 'openresponses' } });
    const chosenNames: string[] = [];
    for await (const event of chosen) chosenNames.push(event.type);
    expect(chosenNames).toContain('response.reasoning.delta');

    await expect(stack.openai.responses.create({ model: 'm', input }, { headers: { 'x-switchyard-reasoning-events': 'both' } })).rejects.toMatchObject({
      status: 400,
      param: 'x-switchyard-reasoning-events',
    });
  });
});
