import OpenAI from 'openai';
import { startStack, type GatewayStack } from './support/gateway-harness.js';

/**
 * An agent declares the same tools on every turn, and the gateway prepares
 * such a list once per owner (`tools.declarationCacheEntries`). Through real
 * HTTP and the official client: turns that repeat 100 tools are each routed
 * by those tools (a namespace member comes back under its own name and
 * namespace, a function as a function), a changed list is what the next turn
 * runs on, a streamed turn echoes the same tools, and another key's requests
 * with the same list are served alike; on either upstream dialect.
 */
const MODEL = 'sim-model';
const KEYS = ['sk-cache-a', 'sk-cache-b'];

const lookup = (i: number) => ({
  type: 'function' as const,
  name: `tool_${i}`,
  description: `Tool number ${i}: looks a thing up by its key.`,
  parameters: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
  strict: false,
});

/** 99 functions and a namespace of one: 100 model-visible tools. */
function hundredTools(): any[] {
  return [
    ...Array.from({ length: 99 }, (_, i) => lookup(i)),
    { type: 'namespace', name: 'crm', description: 'The CRM', tools: [{ type: 'function', name: 'find', parameters: { type: 'object', properties: { q: { type: 'string' } } } }] },
  ];
}

describe.each(['responses', 'chat'] as const)('the same 100 tools on every turn, %s dialect upstream', (dialect) => {
  let stack: GatewayStack;
  let a: OpenAI;
  let b: OpenAI;
  beforeAll(async () => {
    stack = await startStack({ dialect, config: { auth: { apiKeys: KEYS } } });
    a = new OpenAI({ baseURL: stack.url, apiKey: KEYS[0], maxRetries: 0, timeout: 20_000 });
    b = new OpenAI({ baseURL: stack.url, apiKey: KEYS[1], maxRetries: 0, timeout: 20_000 });
  });
  afterAll(() => stack.close());

  /** The tools the model was offered last, whichever dialect carried them. */
  const upstreamTools = () =>
    (stack.simulator.requests.at(-1)!.body as { tools: any[] }).tools.map((t) => (dialect === 'chat' ? t.function : t) as { name: string; description?: string });
  const calls = (response: OpenAI.Responses.Response) => response.output.filter((item) => item.type === 'function_call' || item.type === 'custom_tool_call') as any[];

  it('routes the calls of two turns that declare the same 100 tools', async () => {
    const prompt = 'Find acme, then look it up. [[call crm__find {"q": "acme"}]] [[call@2 tool_42 {"key": "acme"}]]';
    const first = await a.responses.create({ model: MODEL, input: prompt, tools: hundredTools(), store: false });
    expect(calls(first)).toEqual([expect.objectContaining({ type: 'function_call', name: 'find', namespace: 'crm', arguments: '{"q": "acme"}' })]);
    expect(first.tools).toHaveLength(100);
    expect(upstreamTools()).toHaveLength(100);
    expect(upstreamTools().at(-1)?.name).toBe('crm__find');

    const [call] = calls(first);
    const second = await a.responses.create({
      model: MODEL,
      input: [
        { role: 'user', content: prompt },
        { type: 'function_call', call_id: call.call_id, name: 'find', namespace: 'crm', arguments: call.arguments } as any,
        { type: 'function_call_output', call_id: call.call_id, output: '{"id": "acme-1"}' },
      ],
      tools: hundredTools(),
      store: false,
    });
    expect(calls(second)).toEqual([expect.objectContaining({ type: 'function_call', name: 'tool_42', arguments: '{"key": "acme"}' })]);
    expect(calls(second)[0]).not.toHaveProperty('namespace');
    expect(second.tools).toEqual(first.tools);
    expect(upstreamTools()).toHaveLength(100);
  });

  it('runs a turn whose list changed on the new list, and the old list again after it', async () => {
    const prompt = 'Patch it. [[call tool_7 {"input": "*** Begin Patch"}]]';
    const before = await a.responses.create({ model: MODEL, input: prompt, tools: hundredTools(), store: false });
    expect(calls(before)).toEqual([expect.objectContaining({ type: 'function_call', name: 'tool_7' })]);

    const changed = hundredTools();
    changed[7] = { type: 'custom', name: 'tool_7', description: 'Applies a patch.' };
    const after = await a.responses.create({ model: MODEL, input: prompt, tools: changed, store: false });
    expect(calls(after)).toEqual([expect.objectContaining({ type: 'custom_tool_call', name: 'tool_7', input: '*** Begin Patch' })]);
    expect(upstreamTools()[7].description).toContain('Applies a patch.');
    expect(after.tools[7]).toMatchObject({ type: 'custom', name: 'tool_7' });

    const again = await a.responses.create({ model: MODEL, input: prompt, tools: hundredTools(), store: false });
    expect(calls(again)).toEqual([expect.objectContaining({ type: 'function_call', name: 'tool_7' })]);
    expect(upstreamTools()[7].description).toBe('Tool number 7: looks a thing up by its key.');
  });

  it('streams a turn on a kept list as it answers one', async () => {
    const prompt = 'Find it. [[call crm__find {"q": "initech"}]]';
    await a.responses.create({ model: MODEL, input: prompt, tools: hundredTools(), store: false });
    const stream = await a.responses.create({ model: MODEL, input: prompt, tools: hundredTools(), store: false, stream: true });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const created = events.find((e) => e.type === 'response.created') as OpenAI.Responses.ResponseCreatedEvent;
    const completed = events.find((e) => e.type === 'response.completed') as OpenAI.Responses.ResponseCompletedEvent;
    expect(created.response.tools).toHaveLength(100);
    expect(completed.response.tools).toEqual(created.response.tools);
    expect(calls(completed.response)).toEqual([expect.objectContaining({ type: 'function_call', name: 'find', namespace: 'crm', arguments: '{"q": "initech"}' })]);
  });

  it("serves another key's requests with the same list the same way", async () => {
    const prompt = 'Find it. [[call crm__find {"q": "globex"}]]';
    for (const client of [a, b, b]) {
      const response = await client.responses.create({ model: MODEL, input: prompt, tools: hundredTools(), store: false });
      expect(calls(response)).toEqual([expect.objectContaining({ type: 'function_call', name: 'find', namespace: 'crm', arguments: '{"q": "globex"}' })]);
      expect(response.tools).toHaveLength(100);
    }
  });
});

describe("a coding agent's client-owned tools, declared on every turn", () => {
  let stack: GatewayStack;
  let client: OpenAI;
  beforeAll(async () => {
    stack = await startStack({ config: { auth: { apiKeys: KEYS } } });
    client = new OpenAI({ baseURL: stack.url, apiKey: KEYS[0], maxRetries: 0, timeout: 20_000 });
  });
  afterAll(() => stack.close());

  /** What Codex-style agents send each turn: shell, apply_patch, local_shell and a computer beside their functions. */
  const agentTools = (): any[] => [
    ...Array.from({ length: 20 }, (_, i) => lookup(i)),
    { type: 'shell', environment: { type: 'local' } },
    { type: 'apply_patch' },
    { type: 'local_shell' },
    { type: 'computer_use_preview', display_width: 1024, display_height: 768, environment: 'linux' },
  ];

  it('hands back each type as its own item on turns that repeat the list', async () => {
    const turns = [
      { input: '[[call shell {"commands": ["ls"]}]]', item: { type: 'shell_call', action: expect.objectContaining({ commands: ['ls'] }), environment: { type: 'local' } } },
      {
        input: '[[call apply_patch {"operation": {"type": "delete_file", "path": "old.txt"}}]]',
        item: { type: 'apply_patch_call', operation: { type: 'delete_file', path: 'old.txt' } },
      },
      {
        input: '[[call local_shell {"command": ["git", "status"]}]]',
        item: { type: 'local_shell_call', action: expect.objectContaining({ type: 'exec', command: ['git', 'status'] }) },
      },
      { input: '[[call computer {"action": {"type": "screenshot"}}]]', item: { type: 'computer_call', action: { type: 'screenshot' } } },
      { input: '[[call shell {"commands": ["pwd"]}]]', item: { type: 'shell_call', action: expect.objectContaining({ commands: ['pwd'] }), environment: { type: 'local' } } },
    ];
    let echoed: unknown;
    for (const turn of turns) {
      const response = await client.responses.create({ model: MODEL, input: turn.input, tools: agentTools(), store: false });
      expect(response.output.filter((i) => i.type !== 'reasoning' && i.type !== 'message')).toEqual([expect.objectContaining(turn.item)]);
      echoed ??= response.tools;
      expect(response.tools).toEqual(echoed);
      expect((stack.simulator.requests.at(-1)!.body as { tools: any[] }).tools.map((t) => t.name)).toEqual([
        ...Array.from({ length: 20 }, (_, i) => `tool_${i}`),
        'shell',
        'apply_patch',
        'local_shell',
        'computer',
      ]);
    }
  });
});
