import type OpenAI from 'openai';
import { OpenResponsesValidator } from './support/openresponses-validator.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { collect, weatherTool } from './support/fixtures.js';

const validator = new OpenResponsesValidator();

describe.each(['responses', 'chat'] as const)('POST /v1/responses over the %s dialect (openai client)', (dialect) => {
  let stack: GatewayStack;
  let client: OpenAI;

  beforeAll(async () => {
    stack = await startStack({ dialect, simulator: { reasoning: true } });
    client = stack.openai;
  });
  afterAll(() => stack.close());

  it('answers a plain text request, blocking', async () => {
    const response = await client.responses.create({ model: 'switchyard-sim', input: 'Say hello. [[say Hello from the simulator.]]' });
    validator.assertResponse(response);
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe('Hello from the simulator.');
    expect(response.output.map((i) => i.type)).toEqual(['reasoning', 'message']);
    expect(response.usage!.total_tokens).toBeGreaterThan(0);
    expect(response.usage!.total_tokens).toBe(response.usage!.input_tokens + response.usage!.output_tokens);
    for (const item of response.output) {
      expect(item.id).toMatch(/^(msg|rs)_/);
      expect((item as { status?: string }).status).toBe('completed');
    }
  });

  it('gives ids that begin with the time they were made: later responses and items sort after earlier ones, and each is found by id', async () => {
    const responses = [];
    for (let i = 0; i < 3; i++) {
      responses.push(await client.responses.create({ model: 'switchyard-sim', input: `[[say turn ${i}]]` }));
      // Ids of one millisecond are ordered only by their random part: a pause puts each in a later one.
      await new Promise((r) => setTimeout(r, 3));
    }
    const ids = responses.flatMap((r) => [r.id, ...r.output.map((item) => item.id!)]);
    for (const id of ids) expect(id).toMatch(/^(resp|msg|rs)_[0-9a-f]{36}$/);
    const responseIds = responses.map((r) => r.id);
    expect([...responseIds].sort()).toEqual(responseIds);
    const messageIds = responses.map((r) => r.output.find((item) => item.type === 'message')!.id!);
    expect([...messageIds].sort()).toEqual(messageIds);
    for (const r of responses) expect((await client.responses.retrieve(r.id)).output_text).toBe(r.output_text);
  });

  it('streams the full lifecycle with monotonically increasing sequence numbers, each event valid', async () => {
    const stream = await client.responses.create({ model: 'switchyard-sim', input: '[[say Streaming works fine.]]', stream: true });
    const events = await collect(stream);
    events.forEach((e) => validator.assertEvent(e));
    const types = events.map((e) => e.type);
    expect(types.slice(0, 2)).toEqual(['response.created', 'response.in_progress']);
    expect(types[types.length - 1]).toBe('response.completed');
    const messageStart = types.lastIndexOf('response.output_item.added');
    expect(types.slice(messageStart, messageStart + 2)).toEqual(['response.output_item.added', 'response.content_part.added']);
    const tail = types.slice(types.indexOf('response.output_text.done'));
    expect(tail).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const text = events
      .filter((e) => e.type === 'response.output_text.delta')
      .map((e) => e.delta)
      .join('');
    expect(text).toBe('Streaming works fine.');
    expect(types).toContain('response.reasoning_text.delta');
    const final = events[events.length - 1].response;
    validator.assertResponse(final);
    validator.assertResponse(events[0].response);
    expect(final.output.find((i: any) => i.type === 'message').content[0].text).toBe('Streaming works fine.');
  });

  it('round-trips a function call: call returned, output sent back, final answer', async () => {
    const first = await client.responses.create({
      model: 'switchyard-sim',
      input: 'What is the weather in Paris? [[call get_weather {"city": "Paris"}]]',
      tools: [weatherTool],
    });
    validator.assertResponse(first);
    const call = first.output.find((i) => i.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', status: 'completed' });
    expect(JSON.parse((call as any).arguments)).toEqual({ city: 'Paris' });
    expect(first.tools).toEqual([{ ...weatherTool, description: 'Get current weather for a city' }]);

    const second = await client.responses.create({
      model: 'switchyard-sim',
      tools: [weatherTool],
      input: [
        { role: 'user', content: 'What is the weather in Paris? [[call get_weather {"city": "Paris"}]]' },
        ...first.output.filter((i) => i.type === 'function_call'),
        { type: 'function_call_output', call_id: (call as any).call_id, output: '{"temp_c": 18, "sky": "cloudy"}' },
      ] as any,
    });
    validator.assertResponse(second);
    expect(second.output_text).toContain('{"temp_c": 18, "sky": "cloudy"}');
    expect(second.output.some((i) => i.type === 'function_call')).toBe(false);
  });

  it('streams a function call with argument deltas that add up', async () => {
    const events = await collect(
      await client.responses.create({
        model: 'switchyard-sim',
        input: '[[call get_weather {"city": "San Francisco"}]]',
        tools: [weatherTool],
        stream: true,
      }),
    );
    events.forEach((e) => validator.assertEvent(e));
    const deltas = events
      .filter((e) => e.type === 'response.function_call_arguments.delta')
      .map((e) => e.delta)
      .join('');
    const done = events.find((e) => e.type === 'response.function_call_arguments.done');
    expect(deltas).toBe(done.arguments);
    expect(JSON.parse(done.arguments)).toEqual({ city: 'San Francisco' });
    const added = events.find((e) => e.type === 'response.output_item.added' && e.item.type === 'function_call');
    expect(added.item.arguments).toBe('');
    expect(added.item.status).toBe('in_progress');
  });

  it('honours tool_choice required without a directive (simulated model picks the tool)', async () => {
    const response = await client.responses.create({
      model: 'switchyard-sim',
      input: 'Tell me something.',
      tools: [weatherTool],
      tool_choice: 'required',
    });
    expect(response.output.find((i) => i.type === 'function_call')).toMatchObject({ name: 'get_weather' });
  });

  it('ends incomplete when max_output_tokens cuts the answer', async () => {
    const response = await client.responses.create({ model: 'switchyard-sim', input: '[[tokens 200]]', max_output_tokens: 16 });
    validator.assertResponse(response);
    expect(response.status).toBe('incomplete');
    expect(response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
  });

  it('lists the upstream models', async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toContain('switchyard-sim');
  });
});
