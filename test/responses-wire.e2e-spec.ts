import { OpenResponsesValidator } from './support/openresponses-validator.js';
import { parseSse, startStack, type GatewayStack } from './support/gateway-harness.js';

const validator = new OpenResponsesValidator();
const specValidator = new OpenResponsesValidator({ reasoningEventStyle: 'openresponses' });

async function postRaw(stack: GatewayStack, body: unknown): Promise<{ status: number; text: string; headers: Headers }> {
  const res = await fetch(`${stack.url}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

describe('wire details of the Responses surface', () => {
  let stack: GatewayStack;
  beforeAll(async () => {
    stack = await startStack({ simulator: { reasoning: true, sseEventLines: false }, config: { server: { keepAliveMs: 150 } } });
  });
  afterAll(() => stack.close());

  it('frames SSE as event + data lines with \\n endings and never leaks vLLM vendor events or fields', async () => {
    const r = await postRaw(stack, { model: 'm', input: '[[reason thinking hard]] [[say done]]', stream: true });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(r.text).not.toContain('\r');
    const events = parseSse(r.text);
    for (const { event, data } of events) {
      expect(event).toBe(data.type);
      validator.assertEvent(data);
    }
    expect(r.text).not.toContain('reasoning_part');
    expect(r.text).not.toContain('kv_transfer_params');
    expect(r.text).not.toContain('input_messages');
    // A client that is no OpenAI SDK gets the spec's reasoning event names by default.
    const reasoning = events
      .filter((e) => e.data.type === 'response.reasoning.delta')
      .map((e) => e.data.delta)
      .join('');
    expect(reasoning).toBe('thinking hard');
  });

  it('sends keep-alive comments while the upstream is slow to answer', async () => {
    const r = await postRaw(stack, { model: 'm', input: '[[delay ttft=700]] [[say late]]', stream: true });
    expect(r.text).toMatch(/^: keep-alive$/m);
    const events = parseSse(r.text);
    expect(events[0].data.type).toBe('response.created');
    expect(events[events.length - 1].data.response.output.at(-1).content[0].text).toBe('late');
  });

  it('passes image parts, assistant phase and reasoning input items through to the model', async () => {
    const image = 'data:image/png;base64,iVBORw0KGgo=';
    const r = await postRaw(stack, {
      model: 'm',
      input: [
        { type: 'message', role: 'developer', content: 'Be brief.' },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is this?' },
            { type: 'input_image', image_url: image, detail: 'low' },
          ],
        },
        { type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'earlier thought' }] },
        { type: 'message', role: 'assistant', phase: 'commentary', content: [{ type: 'output_text', text: 'Looking.' }] },
        { type: 'message', role: 'user', content: '[[say A tiny PNG.]]' },
      ],
    });
    expect(r.status).toBe(200);
    const body = JSON.parse(r.text);
    validator.assertResponse(body);
    const upstream = stack.simulator.requests.at(-1)!.body as any;
    expect(upstream.store).toBe(false);
    expect(upstream.input[1].content[1]).toMatchObject({ type: 'input_image', image_url: image });
    expect(upstream.input.some((i: any) => i.type === 'reasoning')).toBe(true);
    expect(body.output_text ?? body.output.at(-1).content[0].text).toBe('A tiny PNG.');
  });

  it('echoes every response field with spec defaults instead of nulls', async () => {
    const body = JSON.parse((await postRaw(stack, { model: 'm', input: '[[say x]]', metadata: { team: 'infra' }, user: 'u1' })).text);
    validator.assertResponse(body);
    expect(body).toMatchObject({
      object: 'response',
      temperature: 1,
      top_p: 1,
      presence_penalty: 0,
      frequency_penalty: 0,
      top_logprobs: 0,
      truncation: 'disabled',
      parallel_tool_calls: true,
      tool_choice: 'auto',
      tools: [],
      store: true,
      background: false,
      service_tier: 'auto',
      metadata: { team: 'infra' },
      text: { format: { type: 'text' } },
    });
    expect(body.completed_at).toEqual(expect.any(Number));
    for (const key of [
      'previous_response_id',
      'instructions',
      'error',
      'incomplete_details',
      'max_output_tokens',
      'max_tool_calls',
      'reasoning',
      'safety_identifier',
      'prompt_cache_key',
    ]) {
      expect(body).toHaveProperty(key);
    }
  });

  it('names reasoning events per the Open Responses spec when configured to', async () => {
    const specStack = await startStack({ simulator: { reasoning: true }, config: { server: { reasoningEvents: 'openresponses' } } });
    try {
      const r = await postRaw(specStack, { model: 'm', input: '[[say ok]]', stream: true });
      const events = parseSse(r.text);
      events.forEach((e) => specValidator.assertEvent(e.data));
      expect(events.some((e) => e.data.type === 'response.reasoning.delta')).toBe(true);
      expect(events.some((e) => e.data.type === 'response.reasoning_text.delta')).toBe(false);
    } finally {
      await specStack.close();
    }
  });

  it('accepts vLLM streams that carry event: lines too', async () => {
    const withLines = await startStack({ simulator: { sseEventLines: true } });
    try {
      const r = await postRaw(withLines, { model: 'm', input: '[[say lines]]', stream: true });
      const events = parseSse(r.text);
      expect(events.at(-1)!.data.type).toBe('response.completed');
      expect(events.at(-1)!.data.response.output.at(-1).content[0].text).toBe('lines');
    } finally {
      await withLines.close();
    }
  });
});
