import type { ModelEvent, ModelRequest } from '#core/protocol/model-events.js';
import type { InferOptions } from '#core/upstream/upstream-client.interface.js';
import { ChatDialectClient } from './chat-dialect.client.js';
import { DialectClient } from './dialect-client.base.js';
import { ResponsesDialectClient } from './responses-dialect.client.js';
import { deadPort, ScriptedUpstream, sendJson, SHORT_MS, sleep, testTimeouts, upstreamConfig } from './testing/scripted-upstream.server.js';
import { modelRequest } from './testing/upstream-test.helpers.js';
import { answerOf } from '#edge/testing/answered.js';

describe.each([
  ['responses', ResponsesDialectClient],
  ['chat', ChatDialectClient],
] as const)('%s client: models and probe', (dialect, Client) => {
  let upstream: ScriptedUpstream;
  let client: ResponsesDialectClient | ChatDialectClient;

  beforeEach(async () => {
    upstream = await ScriptedUpstream.start();
    client = new Client(upstreamConfig(upstream.baseUrl, { dialect, apiKey: 'sk-up' }), testTimeouts());
  });

  afterEach(async () => {
    client.close();
    await upstream.close();
  });

  it('reports its dialect', () => {
    expect(client.dialect).toBe(dialect);
  });

  it('ends the upstream request when the exchange is unsubscribed, and emits nothing after', async () => {
    upstream.handler = () => undefined;
    const events: ModelEvent[] = [];
    const subscription = client.infer(modelRequest()).subscribe({ next: (event) => events.push(event) });
    while (upstream.requests.length === 0) await sleep(2);
    subscription.unsubscribe();
    await upstream.nextDisconnect();
    expect(upstream.disconnects).toHaveLength(1);
    expect(events).toEqual([]);
  });

  it('lists models from GET /models, keeping server extras', async () => {
    upstream.handler = (_req, res) =>
      sendJson(res, 200, {
        object: 'list',
        data: [
          { id: 'Qwen/Qwen3-30B-A3B-FP8', object: 'model', created: 1781677887, owned_by: 'vllm', max_model_len: 40960, root: 'Qwen/Qwen3-30B-A3B-FP8' },
          { id: 'llama3.1:latest' },
        ],
      });

    const models = await client.listModels();

    expect(upstream.requests[0]).toMatchObject({ method: 'GET', url: '/v1/models' });
    expect(upstream.requests[0].headers.authorization).toBe('Bearer sk-up');
    expect(models).toEqual([
      { id: 'Qwen/Qwen3-30B-A3B-FP8', object: 'model', created: 1781677887, owned_by: 'vllm', max_model_len: 40960, root: 'Qwen/Qwen3-30B-A3B-FP8' },
      { id: 'llama3.1:latest', object: 'model', created: 0, owned_by: '' },
    ]);
  });

  it('rejects a model list without data[] as upstream_bad_response', async () => {
    upstream.handler = (_req, res) => sendJson(res, 200, { models: [] });
    await expect(answerOf(client.listModels())).resolves.toMatchObject({ status: 502, code: 'upstream_bad_response' });
  });

  it('probe resolves when the upstream answers', async () => {
    upstream.handler = (_req, res) => sendJson(res, 200, { object: 'list', data: [] });
    await expect(client.probe()).resolves.toBeUndefined();
  });

  it('probe passes an auth failure on', async () => {
    upstream.handler = (_req, res) => sendJson(res, 401, { error: { message: 'Invalid API key' } });
    await expect(answerOf(client.probe())).resolves.toMatchObject({ status: 401, message: 'Invalid API key' });
  });

  it('probe fails with 502 on a closed port', async () => {
    const port = await deadPort();
    const dead = new Client(upstreamConfig(`http://127.0.0.1:${port}/v1`, { dialect }), testTimeouts());
    await expect(answerOf(dead.probe())).resolves.toMatchObject({ status: 502, code: 'upstream_unavailable' });
    dead.close();
  });

  it('probe gives up after the first-byte budget, not the generation deadlines', async () => {
    client.close();
    client = new Client(upstreamConfig(upstream.baseUrl, { dialect }), testTimeouts({ firstByteMs: SHORT_MS, idleMs: 60_000, totalMs: 60_000 }));
    upstream.handler = () => undefined;
    // The upstream never answers and the other deadlines are a minute: the message names which one fired.
    await expect(answerOf(client.probe())).resolves.toMatchObject({ status: 504, message: expect.stringContaining('first-byte') });
  });

  it('probe honours an abort signal', async () => {
    const ac = new AbortController();
    // Aborted once the request has reached the upstream: a timer could fire before the
    // connection is made on a loaded machine, and then no disconnect would ever come.
    upstream.handler = () => void ac.abort();
    const probing = client.probe(ac.signal);
    await expect(probing).rejects.toMatchObject({ name: 'AbortError' });
    await upstream.nextDisconnect();
  });
});

describe.each([
  ['responses', ResponsesDialectClient],
  ['chat', ChatDialectClient],
] as const)('%s client: tokenize', (dialect, Client) => {
  let upstream: ScriptedUpstream;
  let client: ResponsesDialectClient | ChatDialectClient;
  const prompt = {
    model: 'm',
    instructions: 'Be brief.',
    input: [{ type: 'message' as const, role: 'user' as const, content: [{ type: 'input_text' as const, text: 'hi' }] }],
    tools: [{ type: 'function' as const, name: 'f', parameters: { type: 'object', properties: {} } }],
  };

  beforeEach(async () => {
    upstream = await ScriptedUpstream.start();
  });
  afterEach(async () => {
    client.close();
    await upstream.close();
  });

  it("posts vLLM's chat form to /tokenize at the server root, keeping a proxy prefix, and reads count", async () => {
    client = new Client(upstreamConfig(`${upstream.baseUrl.replace(/\/v1$/, '')}/vllm/v1`, { dialect }), testTimeouts());
    upstream.handler = (_req, res) => sendJson(res, 200, { count: 17, max_model_len: 4096, tokens: [] });
    await expect(client.tokenize(prompt)).resolves.toBe(17);
    expect(upstream.requests[0]).toMatchObject({ method: 'POST', url: '/vllm/tokenize' });
    expect(upstream.requests[0].body).toEqual({
      model: 'm',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
      ],
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }],
    });
  });

  it('answers null for a server without the route or with an odd body, and passes real failures on', async () => {
    client = new Client(upstreamConfig(upstream.baseUrl, { dialect }), testTimeouts());
    for (const status of [404, 405, 501]) {
      upstream.handler = (_req, res) => sendJson(res, status, { detail: 'Not Found' });
      await expect(client.tokenize(prompt)).resolves.toBeNull();
    }
    upstream.handler = (_req, res) => sendJson(res, 200, { tokens: [1, 2] });
    await expect(client.tokenize(prompt)).resolves.toBeNull();
    upstream.handler = (_req, res) => sendJson(res, 500, { error: { message: 'tokenizer crashed' } });
    await expect(answerOf(client.tokenize(prompt))).resolves.toMatchObject({ status: 502 });
    expect(upstream.requests.every((r) => r.url === '/tokenize')).toBe(true);
  });
});

/** A dialect of a host's own, written against `run` alone, as before cancellations existed. */
class OwnDialectClient extends DialectClient {
  readonly dialect = 'responses' as const;
  readonly seen: AbortSignal[] = [];

  protected run(_request: ModelRequest, signal: AbortSignal, _emit: (event: ModelEvent) => void, _options: InferOptions): Promise<void> {
    this.seen.push(signal);
    return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
  }
}

describe('a dialect that overrides only run', () => {
  it('gets a real AbortSignal, aborted when the subscriber leaves', () => {
    const client = new OwnDialectClient(upstreamConfig('http://127.0.0.1:9/v1'), testTimeouts());
    const subscription = client.infer(modelRequest()).subscribe({ error: () => undefined });
    expect(client.seen).toHaveLength(1);
    expect(client.seen[0]).toBeInstanceOf(AbortSignal);
    expect(client.seen[0].aborted).toBe(false);
    subscription.unsubscribe();
    expect(client.seen[0].aborted).toBe(true);
    expect((client.seen[0].reason as DOMException).name).toBe('AbortError');
    client.close();
  });
});
