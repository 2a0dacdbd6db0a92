import type OpenAI from 'openai';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { NapToolModule, napLedger } from '#core/testing/nap-tool.module.js';
import { collect } from './support/fixtures.js';

const nap = (name: string, extra: Record<string, unknown> = {}) => ({ type: 'nap', name, ...extra }) as any;
const fn = (name: string) => ({ type: 'function', name, description: `client tool ${name}`, parameters: { type: 'object', properties: { x: { type: 'string' } } } }) as const;

describe('the tool loop (test-only "nap" gateway tool type, openai client, simulated upstream)', () => {
  let stack: GatewayStack;
  let client: OpenAI;

  beforeAll(async () => {
    stack = await startStack({
      imports: [NapToolModule],
      config: { tools: { maxRounds: 3, maxConcurrentGatewayCalls: 2, timeoutMsByType: { nap: 400 } } },
    });
    client = stack.openai;
  });
  afterAll(() => stack.close());
  beforeEach(() => napLedger.reset());

  it('runs a tool type from a module core never names, and answers with its output', async () => {
    const response = await client.responses.create({
      model: 'm',
      input: 'Take a nap. [[call nap_a {"ms": 5, "tag": "one"}]]',
      tools: [nap('nap_a')],
    });
    expect(response.status).toBe('completed');
    expect((response.output as any[]).map((i) => i.type)).toEqual(['nap_call', 'message']);
    expect(response.output[0]).toMatchObject({ type: 'nap_call', status: 'completed', output: 'slept 5ms one' });
    expect(response.output_text).toContain('slept 5ms one');
    expect(napLedger.records).toHaveLength(1);
    // The gateway-owned call never reaches the client as a function_call.
    expect(JSON.stringify(response.output)).not.toContain('"function_call"');
  });

  it('a mixed turn executes the gateway call and hands back the client call in the same round', async () => {
    const response = await client.responses.create({
      model: 'm',
      input: 'Mixed. [[call nap_a {"ms": 5, "tag": "gw"}]] [[call run_shell {"x": "ls"}]]',
      tools: [nap('nap_a'), fn('run_shell')],
    });
    expect(response.status).toBe('completed');
    expect((response.output as any[]).map((i) => i.type)).toEqual(['nap_call', 'function_call']);
    expect(response.output[0]).toMatchObject({ status: 'completed', output: 'slept 5ms gw' });
    expect(response.output[1]).toMatchObject({ name: 'run_shell', arguments: '{"x": "ls"}' });
    const inferences = stack.simulator.requests.filter((r) => r.path === '/v1/responses');
    expect(inferences).toHaveLength(1 + 0 + (inferences.length - 1)); // sanity: log exists
    expect(napLedger.records).toHaveLength(1);
  });

  it('ends incomplete at the round cap instead of erroring', async () => {
    const before = stack.simulator.stats.requests;
    const response = await client.responses.create({
      model: 'm',
      input: 'Forever. [[always nap_a {"ms": 1}]]',
      tools: [nap('nap_a')],
    });
    expect(response.status).toBe('incomplete');
    expect(response.incomplete_details).toEqual({ reason: 'max_rounds' });
    expect(stack.simulator.stats.requests - before).toBe(3);
    expect((response.output as any[]).filter((i) => i.type === 'nap_call')).toHaveLength(3);
  });

  it('runs parallel gateway calls under the window and returns them in model order', async () => {
    const response = await client.responses.create({
      model: 'm',
      input: 'Parallel. [[call nap_a {"ms": 150, "tag": "1"}]] [[call nap_b {"ms": 10, "tag": "2"}]] [[call nap_c {"ms": 80, "tag": "3"}]] [[call nap_d {"ms": 10, "tag": "4"}]]',
      tools: [nap('nap_a'), nap('nap_b'), nap('nap_c'), nap('nap_d')],
    });
    const calls = (response.output as any[]).filter((i) => i.type === 'nap_call') as any[];
    expect(calls.map((c) => c.output)).toEqual(['slept 150ms 1', 'slept 10ms 2', 'slept 80ms 3', 'slept 10ms 4']);
    expect(napLedger.peak).toBe(2); // the window (maxConcurrentGatewayCalls = 2), measured
    // Completion order differed from model order, so ordering was really restored.
    const finishOrder = [...napLedger.records].sort((a, b) => a.end! - b.end!).map((r) => r.tag);
    expect(finishOrder).not.toEqual(['1', '2', '3', '4']);
  });

  it('serializes calls to one tool but overlaps different tools (measured)', async () => {
    await client.responses.create({
      model: 'm',
      input: '[[call nap_a {"ms": 60, "tag": "a1"}]] [[call nap_a {"ms": 60, "tag": "a2"}]] [[call nap_b {"ms": 60, "tag": "b1"}]]',
      tools: [nap('nap_a'), nap('nap_b')],
    });
    const byTag = Object.fromEntries(napLedger.records.map((r) => [r.tag, r]));
    expect(napLedger.peakByName.get('nap_a')).toBe(1);
    expect(byTag.a2.start).toBeGreaterThanOrEqual(byTag.a1.end!);
    // b1 overlapped a1 instead of queueing behind it.
    expect(byTag.b1.start).toBeLessThan(byTag.a1.end!);
    expect(napLedger.peak).toBe(2);
  });

  it('lets same-tool calls overlap when the executor declares it safe', async () => {
    await client.responses.create({
      model: 'm',
      input: '[[call nap_p {"ms": 60, "tag": "p1"}]] [[call nap_p {"ms": 60, "tag": "p2"}]]',
      tools: [nap('nap_p', { parallel: true })],
    });
    expect(napLedger.peakByName.get('nap_p')).toBe(2);
  });

  it("turns a timed-out call into that call's error output without failing its siblings", async () => {
    const response = await client.responses.create({
      model: 'm',
      input: '[[call nap_a {"ms": 5000, "tag": "slow"}]] [[call nap_b {"ms": 5, "tag": "fast"}]]',
      tools: [nap('nap_a'), nap('nap_b')],
    });
    expect(response.status).toBe('completed');
    const [slow, fast] = (response.output as any[]).filter((i) => i.type === 'nap_call') as any[];
    expect(slow.status).toBe('failed');
    expect(slow.error).toMatch(/did not finish within 400 ms/);
    expect(fast).toMatchObject({ status: 'completed', output: 'slept 5ms fast' });
    expect(napLedger.records.find((r) => r.tag === 'slow')!.aborted).toBe(true);
    expect(response.output_text).toContain('tool_timeout');
    expect(response.output_text).toContain('slept 5ms fast');
  });

  it('applies a forcing tool_choice to the first round only', async () => {
    const response = await client.responses.create({
      model: 'm',
      input: 'Please rest a bit.',
      tools: [nap('nap_a')],
      tool_choice: { type: 'function', name: 'nap_a' },
    });
    expect((response.output as any[]).map((i) => i.type)).toEqual(['nap_call', 'message']);
    const bodies = stack.simulator.requests.slice(-2).map((r) => r.body as any);
    expect(bodies[0].tool_choice).toEqual({ type: 'function', name: 'nap_a' });
    expect(bodies[1].tool_choice).toBe('auto');
  });

  it('honours max_tool_calls: calls past the limit are not run and the model is told', async () => {
    const response = (await client.responses.create({
      model: 'm',
      input: '[[call nap_a {"ms": 1, "tag": "x"}]] [[call nap_b {"ms": 1, "tag": "y"}]]',
      tools: [nap('nap_a'), nap('nap_b')],
      max_tool_calls: 1,
    } as any)) as OpenAI.Responses.Response;
    expect(napLedger.records.map((r) => r.tag)).toEqual(['x']);
    expect((response.output as any[]).filter((i) => i.type === 'nap_call')).toHaveLength(1);
    expect(response.output_text).toContain('max_tool_calls');
    const last = stack.simulator.requests[stack.simulator.requests.length - 1].body as any;
    expect(last.tool_choice).toBe('none');
  });

  it('streams and blocks to the same items', async () => {
    const body = {
      model: 'm',
      input: '[[call nap_a {"ms": 5, "tag": "s"}]] [[call run_shell {"x": "pwd"}]]',
      tools: [nap('nap_a'), fn('run_shell')],
    };
    const blocking = await client.responses.create(body);
    const events = await collect(await client.responses.create({ ...body, stream: true }));
    const streamed = events[events.length - 1].response;
    const strip = (items: any[]) => items.map(({ id, call_id, ...rest }) => rest);
    expect(strip(streamed.output)).toEqual(strip(blocking.output));
    const napEvents = events.filter((e) => e.type.startsWith('response.nap_call') || (e.item && e.item.type === 'nap_call')).map((e) => e.type);
    expect(napEvents).toEqual(['response.output_item.added', 'response.nap_call.in_progress', 'response.nap_call.completed', 'response.output_item.done']);
    expect(events.some((e) => e.item?.type === 'function_call' && e.item.name === 'nap_a')).toBe(false);
  });

  it('cancels in-flight gateway calls when the client disconnects', async () => {
    const controller = new AbortController();
    const stream = await client.responses.create(
      { model: 'm', input: '[[call nap_a {"ms": 3000, "tag": "long"}]]', tools: [nap('nap_a')], stream: true },
      { signal: controller.signal },
    );
    let sawStart = false;
    try {
      for await (const event of stream) {
        if (event.type === ('response.nap_call.in_progress' as any)) {
          sawStart = true;
          controller.abort();
        }
      }
    } catch {
      // the SDK may surface the abort as an error; either way the client is gone
    }
    expect(sawStart).toBe(true);
    const deadline = Date.now() + 2000;
    while (!napLedger.records[0]?.aborted && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(napLedger.records[0].aborted).toBe(true);
    expect(napLedger.records[0].end! - napLedger.records[0].start).toBeLessThan(2000);
  });

  it('rejects a bad declaration of the new type with a 400 naming the field', async () => {
    await expect(client.responses.create({ model: 'm', input: 'x', tools: [nap('forbidden_x')] })).rejects.toMatchObject({
      status: 400,
      error: { param: 'tools[0].name' },
    });
  });
});
