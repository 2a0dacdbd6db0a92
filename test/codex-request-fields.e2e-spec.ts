import { startStack, type GatewayStack } from './support/gateway-harness.js';

/**
 * What Codex sends with the newer models of its catalog, through the official
 * `openai` SDK: `detail: "original"` images (also inside tool outputs, which
 * `resume` replays), `service_tier: "priority"` (fast mode) or `"flex"`,
 * `reasoning.effort` past `high`, and `truncation: "auto"`. Each is accepted,
 * asked of the model server as the nearest it has, and echoed as served.
 */
const MODEL = 'switchyard-sim';
const PIXEL = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

describe.each(['responses', 'chat'] as const)('Codex request fields (%s dialect)', (dialect) => {
  let stack: GatewayStack;
  const lastUpstream = (): any => stack.simulator.requests.at(-1)!.body;

  beforeAll(async () => {
    stack = await startStack({ dialect, simulator: { maxModelLen: 3_000 } });
  });
  afterAll(() => stack.close());

  it('accepts detail "original" on images, in messages and in a replayed tool output, sending the nearest ("high")', async () => {
    const response = await stack.openai.responses.create({
      model: MODEL,
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Look.' },
            { type: 'input_image', image_url: PIXEL, detail: 'original' as any },
          ],
        },
        { type: 'function_call', call_id: 'call_1', name: 'view_image', arguments: '{"path":"a.png"}' },
        { type: 'function_call_output', call_id: 'call_1', output: [{ type: 'input_image', image_url: PIXEL, detail: 'original' as any }] },
        { role: 'user', content: '[[say seen]]' },
      ],
    });
    expect(response.output_text).toBe('seen');
    const sent = JSON.stringify(lastUpstream());
    expect(sent).not.toContain('"original"');
    // Both images go as `high`: the message's, and the tool output's, which reaches the model server whole
    // (an output list on the responses dialect, a user message after the tool's on the chat dialect).
    expect(sent.split('"detail":"high"').length - 1).toBe(2);
  });

  it.each([
    ['priority', 'xhigh'],
    ['flex', 'max'],
    ['scale', 'ultra'],
    ['default', 'minimal'],
  ])('accepts service_tier %s and reasoning.effort %s, echoing what served them', async (tier, effort) => {
    const response = await stack.openai.responses.create({ model: MODEL, input: '[[say fast]]', service_tier: tier as any, reasoning: { effort: effort as any } });
    expect(response.output_text).toBe('fast');
    expect(response.service_tier).toBe('default');
    const nearest = effort === 'minimal' ? 'low' : 'high';
    expect(response.reasoning?.effort).toBe(nearest);
    expect(dialect === 'responses' ? lastUpstream().reasoning.effort : lastUpstream().reasoning_effort).toBe(nearest);
    expect(lastUpstream().service_tier).toBeUndefined();
  });

  it('truncation "auto" drops the oldest turns that no longer fit, keeping calls with their outputs; "disabled" is refused as too long', async () => {
    const long = (n: number) => `turn ${n}: ${'lorem '.repeat(700)}`;
    let previous: string | undefined;
    for (let n = 0; n < 5; n++) {
      const r = await stack.openai.responses.create({ model: MODEL, input: `${long(n)} [[say ok ${n}]]`, previous_response_id: previous, truncation: 'auto' });
      expect(r.output_text).toBe(`ok ${n}`);
      expect(r.truncation).toBe('auto');
      previous = r.id;
    }
    const sent = JSON.stringify(lastUpstream());
    expect(sent).toContain('turn 4:');
    expect(sent).not.toContain('turn 0:');
    // The whole conversation is still stored: the same chain without truncation is too long for the model.
    const refused = await stack.openai.responses.create({ model: MODEL, input: 'And now?', previous_response_id: previous }).catch((err: unknown) => err as any);
    expect(refused.status).toBe(400);
    expect(refused.code).toBe('context_length_exceeded');

    // A tool round trip among the old turns goes in one piece.
    const withCall = await stack.openai.responses.create({
      model: MODEL,
      truncation: 'auto',
      input: [
        { role: 'user', content: long(10) },
        { type: 'function_call', call_id: 'call_a', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_a', output: long(11) },
        { role: 'user', content: `${long(12)} [[say fine]]` },
      ],
      tools: [{ type: 'function', name: 'f', parameters: { type: 'object', properties: {} }, strict: false }],
    });
    expect(withCall.output_text).toBe('fine');
    const kept = JSON.stringify(lastUpstream());
    expect(kept).toContain('turn 12:');
    expect(kept).not.toContain('turn 11:');
    expect(kept).not.toContain('call_a');
  });
});

describe.each(['responses', 'chat'] as const)('responses.inputTokens.count, official openai client (%s dialect)', (dialect) => {
  let stack: GatewayStack;
  beforeAll(async () => {
    stack = await startStack({ dialect });
  });
  afterAll(() => stack.close());

  it("counts with the upstream's tokenizer what a create call with the same prompt reads", async () => {
    const params = {
      model: MODEL,
      instructions: 'Be brief.',
      input: 'How many tokens is this sentence here?',
      tools: [
        { type: 'function' as const, name: 'lookup', description: 'Look a word up', parameters: { type: 'object', properties: { word: { type: 'string' } } }, strict: false },
      ],
    };
    const before = stack.simulator.tokenizeRequests.length;
    const counted = await stack.openai.responses.inputTokens.count(params);
    expect(counted).toEqual({ object: 'response.input_tokens', input_tokens: expect.any(Number) });
    expect(stack.simulator.tokenizeRequests.length).toBe(before + 1);
    const answered = await stack.openai.responses.create({ ...params, input: `${params.input}` });
    if (dialect === 'chat') expect(answered.usage?.input_tokens).toBe(counted.input_tokens);
    else expect(Math.abs(answered.usage!.input_tokens - counted.input_tokens)).toBeLessThanOrEqual(8);
    const plain = await stack.openai.responses.inputTokens.count({ model: MODEL, input: params.input });
    expect(plain.input_tokens).toBeLessThan(counted.input_tokens);
  });

  it('refuses what it cannot count, naming the field', async () => {
    const refused = await stack.openai.responses.inputTokens.count({ model: MODEL, input: 'x', previous_response_id: 'resp_1' }).catch((err: unknown) => err as any);
    expect(refused.status).toBe(400);
    expect(refused.param).toBe('previous_response_id');
  });
});
