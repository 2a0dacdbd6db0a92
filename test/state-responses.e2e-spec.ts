import type OpenAI from 'openai';
import { OpenResponsesValidator } from './support/openresponses-validator.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { collect, weatherTool } from './support/fixtures.js';

const validator = new OpenResponsesValidator();

/** The inference requests the simulated upstream received since `from`. */
function upstreamBodies(stack: GatewayStack, from: number): any[] {
  return stack.simulator.requests.slice(from).map((r) => r.body as any);
}

function texts(input: any[]): string[] {
  return input.map((item) =>
    item.type === 'message'
      ? `${item.role}:${typeof item.content === 'string' ? item.content : item.content.map((p: any) => p.text).join('')}`
      : item.type === 'function_call_output'
        ? `output:${item.output}`
        : `${item.type}:${item.name ?? ''}`,
  );
}

describe('stored responses and previous_response_id (openai client, memory store)', () => {
  let stack: GatewayStack;
  let client: OpenAI;

  beforeAll(async () => {
    stack = await startStack();
    client = stack.openai;
  });
  afterAll(() => stack.close());

  it('continues a function-call chain through previous_response_id, sending the upstream the whole rehydrated input, statelessly', async () => {
    const from = stack.simulator.requests.length;
    const first = await client.responses.create({
      model: 'switchyard-sim',
      input: 'Weather in Paris? [[call get_weather {"city": "Paris"}]]',
      tools: [weatherTool],
    });
    const call = first.output.find((i) => i.type === 'function_call') as any;
    expect(call).toMatchObject({ name: 'get_weather' });

    // Tools are omitted: the continuation inherits the previous response's.
    const second = await client.responses.create({
      model: 'switchyard-sim',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"temp_c": 18}' }],
    });
    expect(second.previous_response_id).toBe(first.id);
    expect(second.tools.map((t: any) => t.name)).toEqual(['get_weather']);
    expect(second.output_text).toContain('{"temp_c": 18}');

    const third = await client.responses.create({
      model: 'switchyard-sim',
      previous_response_id: second.id,
      input: [{ role: 'user', content: 'And Rome? [[call get_weather {"city": "Rome"}]]' }],
    });
    const call3 = third.output.find((i) => i.type === 'function_call') as any;
    const fourth = await client.responses.create({
      model: 'switchyard-sim',
      previous_response_id: third.id,
      input: [{ type: 'function_call_output', call_id: call3.call_id, output: '{"temp_c": 24}' }],
    });
    expect(fourth.output_text).toContain('{"temp_c": 24}');

    const bodies = upstreamBodies(stack, from);
    expect(bodies).toHaveLength(4);
    for (const body of bodies) {
      // The gateway owns the state: the upstream never stores nor chains.
      expect(body.store).toBe(false);
      expect(body.previous_response_id).toBeUndefined();
      expect(body.conversation).toBeUndefined();
    }
    expect(texts(bodies[3].input)).toEqual([
      'user:Weather in Paris? [[call get_weather {"city": "Paris"}]]',
      'function_call:get_weather',
      'output:{"temp_c": 18}',
      `assistant:${second.output_text}`,
      'user:And Rome? [[call get_weather {"city": "Rome"}]]',
      'function_call:get_weather',
      'output:{"temp_c": 24}',
    ]);
    expect(bodies[3].input[1].call_id).toBe(call.call_id);
  });

  it('streams a continuation, and the streamed final response is what retrieve returns', async () => {
    const first = await client.responses.create({ model: 'm', input: '[[call get_weather {"city": "Oslo"}]]', tools: [weatherTool], stream: true });
    const firstEvents = await collect(first);
    const firstResponse = firstEvents.at(-1).response;
    expect(firstEvents.at(-1).type).toBe('response.completed');
    const call = firstResponse.output.find((i: any) => i.type === 'function_call');

    const events = await collect(
      await client.responses.create({
        model: 'm',
        previous_response_id: firstResponse.id,
        input: [{ type: 'function_call_output', call_id: call.call_id, output: 'snowing' }],
        stream: true,
      }),
    );
    const done = events.at(-1);
    expect(done.type).toBe('response.completed');
    expect(done.response.output_text ?? done.response.output.at(-1).content[0].text).toContain('snowing');
    // Persisted before the terminal event: readable the moment the stream ends.
    const retrieved = await client.responses.retrieve(done.response.id);
    validator.assertResponse(retrieved);
    expect(retrieved).toEqual(expect.objectContaining({ id: done.response.id, status: 'completed', previous_response_id: firstResponse.id }));
    expect(retrieved.output).toEqual(done.response.output);
  });

  it('retrieves, lists input items with cursors, and deletes', async () => {
    const response = await client.responses.create({
      model: 'm',
      input: [
        { role: 'user', content: 'one' },
        { role: 'user', content: 'two' },
        { role: 'user', content: 'three [[say ok]]' },
      ],
      metadata: { k: 'v' },
    });
    const got = await client.responses.retrieve(response.id);
    expect(got.metadata).toEqual({ k: 'v' });
    expect(got.output_text).toBe('ok');

    const all = await client.responses.inputItems.list(response.id, { order: 'asc' });
    // Stored canonically: the shorthand `content: "one"` comes back as a typed part list, with a status.
    expect(all.data.map((i: any) => i.content)).toEqual(['one', 'two', 'three [[say ok]]'].map((text) => [{ type: 'input_text', text }]));
    expect(all.data.every((i: any) => typeof i.id === 'string' && i.status === 'completed' && i.type === 'message')).toBe(true);

    const page1 = await client.responses.inputItems.list(response.id, { limit: 2 });
    expect(page1.data.map((i: any) => i.content[0].text)).toEqual(['three [[say ok]]', 'two']);
    expect(page1.has_more).toBe(true);
    const page2 = await client.responses.inputItems.list(response.id, { limit: 2, after: page1.data[1].id });
    expect(page2.data.map((i: any) => i.content[0].text)).toEqual(['one']);
    expect(page2.has_more).toBe(false);

    const deleted = await client.delete(`/responses/${response.id}`);
    expect(deleted).toEqual({ id: response.id, object: 'response.deleted', deleted: true });
    await expect(client.responses.retrieve(response.id)).rejects.toMatchObject({ status: 404, code: 'response_not_found' });
    await expect(client.responses.delete(response.id)).rejects.toMatchObject({ status: 404 });
  });

  it.each([
    ['limit=abc', 'limit'],
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['order=sideways', 'order'],
    ['after=msg_nope', 'after'],
  ])('input_items?%s is a 400 naming %s', async (query, param) => {
    const response = await client.responses.create({ model: 'm', input: '[[say ok]]' });
    const res = await fetch(`${stack.url}/responses/${response.id}/input_items?${query}`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error).toMatchObject({ param, type: 'invalid_request_error' });
  });

  it('answers 404 previous_response_not_found for an unknown id, over JSON and before a stream starts', async () => {
    const err = await client.responses.create({ model: 'm', input: 'hi', previous_response_id: 'resp_doesnotexist' }).catch((e) => e);
    expect(err.status).toBe(404);
    expect(err.error).toMatchObject({ code: 'previous_response_not_found', param: 'previous_response_id' });
    const streamed = await client.responses.create({ model: 'm', input: 'hi', previous_response_id: 'resp_nope', stream: true }).catch((e) => e);
    expect(streamed.status).toBe(404);
    expect(streamed.code).toBe('previous_response_not_found');
  });

  it('does not persist store:false responses', async () => {
    const response = await client.responses.create({ model: 'm', input: '[[say not kept]]', store: false });
    expect((response as any).store).toBe(false);
    await expect(client.responses.retrieve(response.id)).rejects.toMatchObject({ status: 404 });
    const err = await client.responses.create({ model: 'm', input: 'more', previous_response_id: response.id }).catch((e) => e);
    expect(err.status).toBe(404);
    expect(err.code).toBe('previous_response_not_found');
  });

  it('uses the tools a continuation sends instead of inheriting, and tools: [] means none', async () => {
    const first = await client.responses.create({ model: 'm', input: '[[say hi]]', tools: [weatherTool], tool_choice: 'required' });
    const inherited = await client.responses.create({ model: 'm', input: '[[say again]]', previous_response_id: first.id });
    expect(inherited.tool_choice).toBe('required');
    expect(inherited.tools).toHaveLength(1);
    const none = await client.responses.create({ model: 'm', input: '[[say bare]]', previous_response_id: first.id, tools: [] });
    expect(none.tools).toEqual([]);
    expect(none.tool_choice).toBe('auto');
    const other = { ...weatherTool, name: 'get_time', description: 'Get the time' };
    const replaced = await client.responses.create({ model: 'm', input: '[[say new]]', previous_response_id: first.id, tools: [other] });
    expect(replaced.tools.map((t: any) => t.name)).toEqual(['get_time']);
    expect(replaced.tool_choice).toBe('auto');
  });
});
