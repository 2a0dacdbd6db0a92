import http from 'node:http';
import OpenAI from 'openai';
import { embedText } from '../apps/simulator/src/embeddings.js';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';

/**
 * Chat completions, completions and embeddings on the gateway's base URL,
 * passed to the simulated upstream (vLLM's wire format) and driven through
 * the official `openai` client.
 */
describe('pass-through surfaces: /v1/chat/completions, /v1/completions, /v1/embeddings', () => {
  let stack: GatewayStack;
  const bodies = (path: string) => stack.simulator.requests.filter((r) => r.path === path).map((r) => r.body as any);

  beforeAll(async () => {
    stack = await startStack({
      config: { auth: { apiKeys: ['sk-test', 'sk-limited'] }, limits: { concurrentRequests: 1 }, timeouts: { idleMs: 30_000 }, observability: { requestLog: false } },
    });
  });
  afterAll(() => stack.close());

  it('chat.completions.create answers with the upstream completion, the body passed on as written', async () => {
    const completion = await stack.openai.chat.completions.create({
      model: 'switchyard-sim',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: '[[say hello from chat]]' },
      ],
      temperature: 0.25,
      // A vLLM sampling extension the gateway does not know: it goes through untouched.
      top_k: 7,
    } as any);
    expect(completion.object).toBe('chat.completion');
    expect(completion.id).toMatch(/^chatcmpl-/);
    expect(completion.choices[0].message).toMatchObject({ role: 'assistant', content: 'hello from chat' });
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(completion.usage?.completion_tokens).toBeGreaterThan(0);
    const sent = bodies('/v1/chat/completions').at(-1);
    expect(sent).toEqual({
      model: 'switchyard-sim',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: '[[say hello from chat]]' },
      ],
      temperature: 0.25,
      top_k: 7,
    });
  });

  it('streams chat chunks in order, with the usage chunk the client asked for', async () => {
    const stream = await stack.openai.chat.completions.create({
      model: 'switchyard-sim',
      messages: [{ role: 'user', content: '[[say one two three four five six]]' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
    expect(text).toBe('one two three four five six');
    // Several content deltas: the stream arrived in pieces, not as one buffered answer.
    expect(chunks.filter((c) => c.choices[0]?.delta?.content).length).toBeGreaterThan(3);
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('stop');
    expect(chunks.at(-1)?.choices).toEqual([]);
    expect(chunks.at(-1)?.usage?.completion_tokens).toBeGreaterThan(0);
  });

  it('completions.create, streamed and not, in vLLM text_completion shape', async () => {
    const whole = await stack.openai.completions.create({ model: 'switchyard-sim', prompt: '[[say legacy text]]', max_tokens: 20 });
    expect(whole.object).toBe('text_completion');
    expect(whole.id).toMatch(/^cmpl-/);
    expect(whole.choices[0]).toMatchObject({ index: 0, text: 'legacy text', finish_reason: 'stop' });
    const stream = await stack.openai.completions.create({ model: 'switchyard-sim', prompt: '[[say streamed legacy text]]', stream: true });
    const pieces: string[] = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      pieces.push(chunk.choices[0]?.text ?? '');
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(pieces.join('')).toBe('streamed legacy text');
    expect(pieces.length).toBeGreaterThan(2);
    expect(finish).toBe('stop');
    // The usage chunk is asked for, so the stream's tokens count (the client, which did not ask, does not get it).
    expect(bodies('/v1/completions').at(-1)).toEqual({ model: 'switchyard-sim', prompt: '[[say streamed legacy text]]', stream: true, stream_options: { include_usage: true } });
  });

  it('embeddings.create returns the upstream vectors, in input order', async () => {
    const result = await stack.openai.embeddings.create({ model: 'switchyard-sim', input: ['red apples', 'green pears'], encoding_format: 'float' });
    expect(result.object).toBe('list');
    expect(result.data.map((d) => d.index)).toEqual([0, 1]);
    expect(result.data[0].embedding).toEqual(embedText('red apples'));
    expect(result.data[1].embedding).toEqual(embedText('green pears'));
    expect(result.usage.prompt_tokens).toBe(4);
  });

  it('relays the upstream error in the OpenAI envelope, with its status and param', async () => {
    const err = await stack.openai.embeddings.create({ model: 'no-such-model', input: 'x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      type: 'invalid_request_error',
      param: 'model',
      message: expect.stringContaining('no-such-model'),
    });
    const failed = await stack.openai.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: '[[fault status=503]]' }] }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(OpenAI.APIError);
    expect((failed as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((failed as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ type: 'upstream_error', code: 'upstream_503' });
  });

  it('ends a stream the upstream cut off with an error event the SDK raises', async () => {
    const stream = await stack.openai.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: '[[fault reset_after=3]] [[say a b c d e f g h]]' }],
      stream: true,
    });
    const seen: string[] = [];
    const failure = await (async () => {
      for await (const chunk of stream) seen.push(chunk.choices[0]?.delta?.content ?? '');
    })().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: 'upstream_stream_error' });
    // The chunks before the cut reached the client first.
    expect(seen.length).toBe(3);
  });

  it('aborts the upstream call when the streaming client goes away', async () => {
    const before = stack.simulator.stats.aborted;
    const ac = new AbortController();
    const stream = await stack.openai.chat.completions.create(
      { model: 'm', messages: [{ role: 'user', content: '[[tokens 2000]] [[delay token=5]]' }], stream: true },
      { signal: ac.signal },
    );
    let chunks = 0;
    await (async () => {
      for await (const _ of stream) if (++chunks === 5) ac.abort();
    })().catch(() => undefined);
    for (let i = 0; i < 500 && stack.simulator.stats.aborted === before; i++) await new Promise((r) => setTimeout(r, 10));
    expect(stack.simulator.stats.aborted).toBe(before + 1);
  });

  it('refuses a body it cannot route with a 400 naming the field, before calling the upstream', async () => {
    const before = stack.simulator.stats.requests;
    for (const [path, body, param] of [
      ['chat/completions', { model: 'm', messages: [] }, 'messages'],
      ['chat/completions', { model: 42, messages: [{ role: 'user', content: 'x' }] }, 'model'],
      ['completions', { model: 'm' }, 'prompt'],
      ['embeddings', { model: 'm', input: 'x', stream: true }, 'stream'],
      ['chat/completions', { model: 'm', messages: [{ role: 'user', content: 'x' }], stream: 'yes' }, 'stream'],
    ] as const) {
      const res = await fetch(`${stack.url}/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as any).error).toMatchObject({ type: 'invalid_request_error', param });
    }
    expect(stack.simulator.stats.requests).toBe(before);
  });

  it('asks for the gateway key, and counts against the key’s limits', async () => {
    const anonymous = await fetch(`${stack.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(anonymous.status).toBe(401);
    const limited = new OpenAI({ baseURL: stack.url, apiKey: 'sk-limited', maxRetries: 0 });
    const release = stack.simulator.holdFirstTokens();
    const running = limited.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: '[[say held]]' }], stream: true });
    const held = await running;
    // The first stream holds the key's only place: a second call is refused, whatever the route.
    const refused = await limited.embeddings.create({ model: 'switchyard-sim', input: 'x' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    release();
    let text = '';
    for await (const chunk of held) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('held');
    await expect(limited.embeddings.create({ model: 'switchyard-sim', input: 'x' })).resolves.toMatchObject({ object: 'list' });
  });

  it('counts relayed calls in the request and upstream metrics', async () => {
    const res = await fetch(`${stack.url.replace(/\/v1$/, '')}/metrics`, { headers: { authorization: 'Bearer sk-test' } });
    const text = await res.text();
    expect(text).toMatch(/switchyard_http_requests_total\{method="POST",route="\/v1\/chat\/completions",status="200"\} [1-9]/);
    expect(text).toMatch(/switchyard_http_requests_total\{method="POST",route="\/v1\/embeddings",status="400"\} [1-9]/);
    expect(text).toMatch(/switchyard_upstream_requests_total\{status="200"\} [1-9]/);
    expect(text).toMatch(/switchyard_upstream_requests_total\{status="503"\} [1-9]/);
  });

  it('holds the upstream back while a streaming client does not read, then delivers everything', async () => {
    const tokens = 200_000;
    const before = stack.simulator.stats;
    const url = new URL(`${stack.url}/chat/completions`);
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.request(
        { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' } },
        resolve,
      );
      req.on('error', reject);
      req.end(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: `[[tokens ${tokens}]]` }], stream: true }));
    });
    expect(res.statusCode).toBe(200);
    res.pause();
    await new Promise((r) => setTimeout(r, 1500));
    expect(stack.simulator.stats.completed).toBe(before.completed);
    expect(stack.simulator.stats.active).toBe(before.active + 1);
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => (text += chunk));
    res.resume();
    await new Promise((r) => res.on('end', r));
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(text.split('"content":"').length - 1).toBeGreaterThanOrEqual(tokens);
    expect(stack.simulator.stats.completed).toBe(before.completed + 1);
  }, 60_000);
});

describe('pass-through routing over two model servers', () => {
  let s1: SimulatedUpstream;
  let s2: SimulatedUpstream;
  let stack: GatewayStack;

  beforeAll(async () => {
    s1 = new SimulatedUpstream({});
    s2 = new SimulatedUpstream({});
    await Promise.all([s1.listen(0, '127.0.0.1'), s2.listen(0, '127.0.0.1')]);
    stack = await startStack({ upstreamUrl: `${s1.url},${s2.url}`, config: { upstream: { healthCheckMs: 100 } } });
  });
  afterAll(async () => {
    await stack.close();
    await Promise.all([s1.close(), s2.close()]);
  });

  const openers = (sim: SimulatedUpstream) => sim.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => (r.body as any).messages[1]?.content);

  it('keeps each chat conversation on one server (prefix cache) and spreads conversations over both', async () => {
    for (let c = 0; c < 12; c++) {
      const messages: any[] = [
        { role: 'system', content: 'sys' },
        { role: 'user', content: `conversation ${c}` },
      ];
      for (let turn = 0; turn < 3; turn++) {
        const answer = await stack.openai.chat.completions.create({ model: 'switchyard-sim', messages });
        messages.push(answer.choices[0].message, { role: 'user', content: `turn ${turn}` });
      }
    }
    const counts = [0, 0];
    for (let c = 0; c < 12; c++) {
      const where = [s1, s2].map((s) => openers(s).filter((o) => o === `conversation ${c}`).length);
      // All three turns on one server.
      expect(where.sort()).toEqual([0, 3]);
      counts[openers(s1).includes(`conversation ${c}`) ? 0 : 1]++;
    }
    expect(counts[0]).toBeGreaterThan(0);
    expect(counts[1]).toBeGreaterThan(0);
  });

  it('moves a call to the other server when the first one is down', async () => {
    await s1.close();
    for (let c = 0; c < 4; c++) {
      const answer = await stack.openai.chat.completions.create({ model: 'switchyard-sim', messages: [{ role: 'user', content: `[[say after ${c}]]` }] });
      expect(answer.choices[0].message.content).toBe(`after ${c}`);
    }
  });
});
