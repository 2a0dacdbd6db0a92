import { createServer } from 'node:net';
import OpenAI from 'openai';
import { OpenResponsesValidator } from './support/openresponses-validator.js';
import { parseSse, startStack, type GatewayStack } from './support/gateway-harness.js';

const validator = new OpenResponsesValidator();

async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

async function post(stack: GatewayStack, body: unknown, raw?: string) {
  const res = await fetch(`${stack.url}/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: raw ?? JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', retryAfter: res.headers.get('retry-after'), text, json: () => JSON.parse(text) };
}

describe('error mapping (simulated upstream fault injection)', () => {
  let stack: GatewayStack;
  beforeAll(async () => {
    stack = await startStack({ config: { timeouts: { firstByteMs: 300, idleMs: 300, totalMs: 5000 } } });
  });
  afterAll(() => stack.close());

  it.each([false, true])('upstream 500 → 502 with a clear message (stream=%s)', async (stream) => {
    const r = await post(stack, { model: 'm', input: '[[fault status=500 message="engine exploded"]]', stream });
    expect(r.status).toBe(502);
    expect(r.json().error).toMatchObject({ type: 'upstream_error' });
    expect(r.json().error.message).toMatch(/engine exploded|500/);
  });

  it('upstream 4xx → same status with the upstream message', async () => {
    const r = await post(stack, { model: 'm', input: '[[fault status=400 message="context length exceeded"]]' });
    expect(r.status).toBe(400);
    expect(r.json().error.message).toContain('context length exceeded');
    const limited = await post(stack, { model: 'm', input: '[[fault status=429 retry_after=2]]' });
    expect(limited.status).toBe(429);
    // The upstream's hint reaches the client, so SDK retries wait as the model server asked.
    expect(limited.retryAfter).toBe('2');
  });

  it('stall before the first byte → 504', async () => {
    // 100x the first-byte timeout: only the gateway's own timeout can answer while the upstream stalls.
    const r = await post(stack, { model: 'm', input: '[[fault stall=30000]]', stream: true });
    expect(r.status).toBe(504);
    expect(r.json().error).toMatchObject({ type: 'timeout_error' });
  });

  it.each([
    ['stall mid-stream', '[[fault stall_after=4 ms=3000]]', /timeout|idle/i],
    ['reset mid-stream', '[[fault reset_after=4]]', /.+/],
    ['malformed chunk', '[[fault malformed_after=4]]', /.+/],
  ])('%s → response.failed event, then the stream closes', async (_name, input, message) => {
    const r = await post(stack, { model: 'm', input: `${input} [[tokens 40]]`, stream: true });
    expect(r.status).toBe(200);
    const events = parseSse(r.text);
    events.forEach((e) => validator.assertEvent(e.data));
    const last = events[events.length - 1].data;
    expect(last.type).toBe('response.failed');
    expect(last.response.status).toBe('failed');
    expect(last.response.error.message).toMatch(message);
    validator.assertResponse(last.response);
  });

  it('truncated JSON body (blocking) → 502', async () => {
    const r = await post(stack, { model: 'm', input: '[[fault truncate]]' });
    expect(r.status).toBe(502);
  });

  it('client disconnect aborts the upstream request at once', async () => {
    const before = stack.simulator.stats.aborted;
    const controller = new AbortController();
    const res = await fetch(`${stack.url}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', input: '[[delay token=50]] [[tokens 400]]', stream: true }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    const deadline = Date.now() + 10_000;
    while (stack.simulator.stats.aborted === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    expect(stack.simulator.stats.aborted).toBe(before + 1);
    expect(stack.simulator.stats.active).toBe(0);
  });
});

describe('unreachable upstream', () => {
  let stack: GatewayStack;
  beforeAll(async () => {
    stack = await startStack({ upstreamUrl: `http://127.0.0.1:${await deadPort()}/v1` });
  });
  afterAll(() => stack.close());

  it.each([false, true])('connection refused → 502 saying the model server is unreachable, naming no address (stream=%s)', async (stream) => {
    const r = await post(stack, { model: 'm', input: 'hi', stream });
    expect(r.status).toBe(502);
    expect(r.json().error.message).toBe('The model server is unreachable.');
  });

  it('/ready reports the upstream down without failing (the replica stays in the load balancer), /health stays up', async () => {
    expect((await fetch(`${stack.url.replace('/v1', '')}/health`)).status).toBe(200);
    const ready = await fetch(`${stack.url.replace('/v1', '')}/ready`);
    expect(ready.status).toBe(200);
    const body = (await ready.json()) as any;
    expect(body).toMatchObject({ status: 'ready', upstream: 'unavailable', state: 'ok' });
    expect(body.upstream_error.message).toBe('The model server is unreachable.');
    expect(JSON.stringify(body)).not.toMatch(/127\.0\.0\.1/);
  });
});

describe('invalid requests: a 4xx naming the field, never a 5xx', () => {
  let stack: GatewayStack;
  let client: OpenAI;
  beforeAll(async () => {
    stack = await startStack();
    client = stack.openai;
  });
  afterAll(() => stack.close());

  const cases: Array<[string, unknown, string | null]> = [
    ['missing model', { input: 'hi' }, 'model'],
    ['missing input', { model: 'm' }, 'input'],
    ['input of wrong type', { model: 'm', input: 42 }, 'input'],
    ['unknown input item type', { model: 'm', input: [{ type: 'message', role: 'user', content: 'x' }, { type: 'teleport' }] }, 'input[1].type'],
    ['bad role', { model: 'm', input: [{ type: 'message', role: 'robot', content: 'x' }] }, 'input[0].role'],
    ['bad content part', { model: 'm', input: [{ role: 'user', content: [{ type: 'input_audio' }] }] }, 'input[0].content[0].type'],
    ['function_call without call_id', { model: 'm', input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }, 'input[0].call_id'],
    ['temperature out of range', { model: 'm', input: 'x', temperature: 3 }, 'temperature'],
    ['top_p wrong type', { model: 'm', input: 'x', top_p: 'high' }, 'top_p'],
    ['max_output_tokens zero', { model: 'm', input: 'x', max_output_tokens: 0 }, 'max_output_tokens'],
    ['tools not an array', { model: 'm', input: 'x', tools: {} }, 'tools'],
    ['tool without type', { model: 'm', input: 'x', tools: [{ name: 'f' }] }, 'tools[0].type'],
    ['function without name', { model: 'm', input: 'x', tools: [{ type: 'function' }] }, 'tools[0].name'],
    ['function bad name', { model: 'm', input: 'x', tools: [{ type: 'function', name: 'has space' }] }, 'tools[0].name'],
    [
      'custom bad grammar syntax',
      { model: 'm', input: 'x', tools: [{ type: 'custom', name: 'c', format: { type: 'grammar', syntax: 'ebnf', definition: 'x' } }] },
      'tools[0].format.syntax',
    ],
    ['namespace member without name', { model: 'm', input: 'x', tools: [{ type: 'namespace', name: 'ns', tools: [{ type: 'function' }] }] }, 'tools[0].tools[0].name'],
    ['file_search without stores', { model: 'm', input: 'x', tools: [{ type: 'file_search' }] }, 'tools[0].vector_store_ids'],
    [
      'duplicate tool names',
      {
        model: 'm',
        input: 'x',
        tools: [
          { type: 'function', name: 'f' },
          { type: 'function', name: 'f' },
        ],
      },
      'tools[1].name',
    ],
    [
      'tool_choice names an undeclared tool',
      { model: 'm', input: 'x', tools: [{ type: 'function', name: 'f' }], tool_choice: { type: 'function', name: 'g' } },
      'tool_choice.name',
    ],
    ['tool_choice required without tools', { model: 'm', input: 'x', tool_choice: 'required' }, 'tool_choice'],
    ['tool_choice bad string', { model: 'm', input: 'x', tool_choice: 'sometimes' }, 'tool_choice'],
    ['text.format json_schema without schema', { model: 'm', input: 'x', text: { format: { type: 'json_schema', name: 's' } } }, 'text.format.schema'],
    ['reasoning effort unknown', { model: 'm', input: 'x', reasoning: { effort: 'extreme' } }, 'reasoning.effort'],
    ['include unknown value', { model: 'm', input: 'x', include: ['everything'] }, 'include'],
    ['metadata value not a string', { model: 'm', input: 'x', metadata: { a: 1 } }, 'metadata.a'],
    ['background without store', { model: 'm', input: 'x', background: true, store: false }, 'background'],
    ['truncation unknown', { model: 'm', input: 'x', truncation: 'sometimes' }, 'truncation'],
    ['prompt templates unsupported', { model: 'm', input: 'x', prompt: { id: 'pmpt_1' } }, 'prompt'],
    ['service tier unknown', { model: 'm', input: 'x', service_tier: 'platinum' }, 'service_tier'],
    [
      'image detail unknown',
      { model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://x/a.png', detail: 'max' }] }] },
      'input[0].content[0].detail',
    ],
    ['stream_options without stream', { model: 'm', input: 'x', stream_options: { include_obfuscation: false } }, 'stream_options'],
    ['both conversation and previous_response_id', { model: 'm', input: 'x', conversation: 'conv_1', previous_response_id: 'resp_1' }, 'conversation'],
    [
      'input_file by URL (not fetched)',
      { model: 'm', input: [{ role: 'user', content: [{ type: 'input_file', file_url: 'https://example.com/a.pdf' }] }] },
      'input[0].content[0].file_url',
    ],
    ['input_file unknown id', { model: 'm', input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-missing' }] }] }, 'input[0].content[0].file_id'],
    ['input_file_data without filename', { model: 'm', input: [{ role: 'user', content: [{ type: 'input_file', file_data: 'aGk=' }] }] }, 'input[0].content[0].filename'],
  ];

  it.each(cases)('%s', async (_name, body, param) => {
    const r = await post(stack, body);
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    const { error } = r.json();
    expect(error).toMatchObject({ type: 'invalid_request_error', param });
    expect(typeof error.message).toBe('string');
  });

  it('malformed JSON and a non-object body get the envelope', async () => {
    const bad = await post(stack, undefined, '{"model": "m", "input": ');
    expect(bad.status).toBe(400);
    expect(bad.json().error.code).toBe('invalid_json');
    const arr = await post(stack, [1, 2]);
    expect(arr.status).toBe(400);
  });

  it('an oversized body is a 413 with the envelope', async () => {
    const small = await startStack({ config: { server: { bodyLimitBytes: 2048 } } });
    try {
      const r = await post(small, { model: 'm', input: 'x'.repeat(10_000) });
      expect(r.status).toBe(413);
      expect(r.json().error.code).toBe('request_too_large');
    } finally {
      await small.close();
    }
  });

  it('an unknown tool type is a 400 naming it and the loaded types (tools.unhandledTypes: refuse, the default), and never reaches the model', async () => {
    const before = stack.simulator.requests.length;
    const err = await client.responses
      .create({
        model: 'm',
        input: '[[say fine]]',
        tools: [{ type: 'computer_use_preview_9000', display: 1 } as any, { type: 'function', name: 'f', parameters: {} } as any],
      })
      .catch((e: unknown) => e as { status: number; error: { param: string; code: string; message: string } });
    expect(err).toMatchObject({ status: 400, error: { param: 'tools[0].type', code: 'unsupported_tool_type' } });
    expect((err as { error: { message: string } }).error.message).toMatch(
      /"computer_use_preview_9000" is not available on this gateway: no loaded tool module handles it \(loaded: .*function/,
    );
    expect(stack.simulator.requests.length).toBe(before);
  });

  it.each([[{ type: 'image_generation' }]])('an OpenAI tool type no module runs here is a 400 naming it, not silently dropped: %j', async (tool) => {
    const before = stack.simulator.requests.length;
    const refused = await client.responses
      .create({ model: 'm', input: 'x', tools: [{ type: 'function', name: 'f', parameters: {} } as any, tool as any] })
      .catch((err: unknown) => err as any);
    expect(refused.status).toBe(400);
    expect(refused.param).toBe('tools[1].type');
    expect(refused.code).toBe('unsupported_tool_type');
    expect(refused.message).toContain(`"${tool.type}"`);
    expect(stack.simulator.requests.length).toBe(before);
  });

  it('an unknown route answers 404 in the envelope', async () => {
    const r = await fetch(`${stack.url}/nothing-here`);
    expect(r.status).toBe(404);
    expect(((await r.json()) as any).error.code).toBe('not_found');
  });

  it('the openai client surfaces the param', async () => {
    await expect(client.responses.create({ model: 'm', input: 'x', temperature: 9 })).rejects.toMatchObject({ status: 400, param: 'temperature' });
  });
});
