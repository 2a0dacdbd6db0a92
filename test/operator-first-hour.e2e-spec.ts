import { type AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { UPSTREAM_CLIENT, type UpstreamClient } from '#core/upstream/upstream-client.interface.js';
import { type GatewayStack, startStack } from './support/gateway-harness.js';

/**
 * What an operator meets in the first hour, over real sockets: each error says what was called and the
 * fix, to the operator (the log's detail); the caller reads what it may know.
 */
describe("the operator's first hour", () => {
  let stack: GatewayStack;
  let gateway: string;

  let vllm: SimulatedUpstream;

  beforeAll(async () => {
    // The usual mistake: the model server's origin without /v1.
    vllm = new SimulatedUpstream({});
    const { url } = await vllm.listen(0, '127.0.0.1');
    stack = await startStack({ upstreamUrl: new URL(url).origin });
    gateway = stack.url.replace(/\/v1$/, '');
  });

  afterAll(async () => {
    await stack?.close();
    await vllm?.close();
  });

  const post = (path: string, body: unknown) => fetch(`${gateway}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('an upstream 404 from a base URL without /v1: the caller reads a 404 naming no URL, the log names the URL called and suggests /v1', async () => {
    const origin = stack.config.upstream.baseUrl.replace(/\/+$/, '');
    const res = await post('/v1/responses', { model: 'm', input: 'hi' });
    expect(res.status).toBe(404);
    const { error } = (await res.json()) as { error: { message: string; code: string } };
    expect(error.code).toBe('upstream_404');
    expect(error.message).toBe('The model server answered 404 Not Found.');
    // The operator's detail (the request log's error_detail) keeps the URL and the fix.
    const failure = await stack.app
      .get<UpstreamClient>(UPSTREAM_CLIENT)
      .probe(AbortSignal.timeout(5_000))
      .then(
        () => null,
        (e: unknown) => e as { detail?: string },
      );
    expect(failure?.detail).toContain(`Upstream GET ${origin}/models answered 404 Not Found.`);
    expect(failure?.detail).toContain(`set UPSTREAM_URL (upstream.baseUrl) to e.g. ${origin}/v1`);
  });

  it('a chat-only server (a 404 to /v1/responses) is answered with the dialect setting that fixes it', async () => {
    // What Ollama answers for a route it does not have; it serves /v1/chat/completions only.
    const chatOnly = createServer((req, res) => res.writeHead(404, { 'content-type': 'text/plain' }).end('404 page not found'));
    await new Promise<void>((resolve) => chatOnly.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(chatOnly.address() as AddressInfo).port}/v1`;
    const other = await startStack({ upstreamUrl: url });
    try {
      const res = await fetch(`${other.url}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'hi' }) });
      expect(res.status).toBe(404);
      const { error } = (await res.json()) as { error: { message: string } };
      expect(error.message).toBe(
        'The model server answered 404 Not Found. A server that serves only chat completions (Ollama, llama.cpp, TGI) answers so to /responses: set UPSTREAM_DIALECT=chat (upstream.dialect) for it.',
      );
      expect(error.message).not.toContain('127.0.0.1');
    } finally {
      await other.close();
      chatOnly.close();
    }
  });

  it('/ready says the upstream is unavailable, without its address', async () => {
    const origin = stack.config.upstream.baseUrl.replace(/\/+$/, '');
    const body = (await (await fetch(`${gateway}/ready`)).json()) as { upstream: string; upstream_error: { message: string } };
    expect(body.upstream).toBe('unavailable');
    expect(body.upstream_error.message).toBe('The model server answered 404 Not Found.');
    expect(JSON.stringify(body)).not.toContain(origin);
  });

  it('GET /v1/responses says how the Responses API is called', async () => {
    const res = await fetch(`${gateway}/v1/responses`);
    expect(res.status).toBe(404);
    const { error } = (await res.json()) as { error: { message: string } };
    expect(error.message).toBe(
      'GET /v1/responses without a WebSocket upgrade (with one it is the WebSocket mode) is not a route: create a response with POST /v1/responses, and read a stored one with GET /v1/responses/{response_id}.',
    );
  });

  it('a request field of the wrong type is one message saying what it takes and what came', async () => {
    const res = await post('/v1/responses', { model: 'm', input: 'hi', temperature: 'hot' });
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: { message: string; param: string } };
    expect(error).toMatchObject({ param: 'temperature', message: `Invalid value for 'temperature': must be a number from 0 to 2 (got "hot").` });
  });
});
