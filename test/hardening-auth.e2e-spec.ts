import http from 'node:http';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { FrameSocket } from './support/hardening/socket-frames.js';
import { sendHeadOnly } from './support/hardening/growth.js';
import { rawPost } from './support/robustness/raw-http.js';

const KEY_A = 'sk-alpha-0123456789';
const KEY_B = 'sk-bravo-9876543210';

/** Sends only the headers of a POST announcing `length` bytes, and resolves with the answer that arrives without the body. */
function headersOnly(url: string, length: number, headers: Record<string, string> = {}): Promise<{ status: number; text: string; headers: http.IncomingHttpHeaders }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': length, ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, text, headers: res.headers });
          req.destroy();
        });
      },
    );
    req.setTimeout(5_000, () => req.destroy(new Error('no answer before the body was sent')));
    req.on('error', reject);
    req.flushHeaders();
  });
}

describe('authentication before the body (finding 9)', () => {
  let stack: GatewayStack;
  let origin: string;
  beforeAll(async () => {
    stack = await startStack({ config: { auth: { apiKeys: [KEY_A, KEY_B] } } });
    origin = stack.url.replace(/\/v1$/, '');
  });
  afterAll(() => stack.close());

  it('answers 401 without waiting for the body, and closes the connection', async () => {
    for (const path of ['/v1/responses', '/v1/conversations', '/v1/messages', '/v1/responses/compact']) {
      const res = await headersOnly(`${origin}${path}`, 15 * 1024 * 1024);
      expect({ path, status: res.status }).toEqual({ path, status: 401 });
      expect(res.headers.connection).toBe('close');
    }
    const bad = await headersOnly(`${origin}/v1/responses`, 1_000_000, { authorization: 'Bearer nope' });
    expect(JSON.parse(bad.text).error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
  });

  it('never parses an unauthenticated body: malformed JSON without a key is a 401, not a 400', async () => {
    const res = await rawPost(`${stack.url}/responses`, '{"model": not json');
    expect(res.status).toBe(401);
    const ok = await rawPost(`${stack.url}/responses`, '{"model": not json', { headers: { authorization: `Bearer ${KEY_A}` } });
    expect(ok.status).toBe(400);
  });

  it('answers 20 unauthenticated 15 MB bodies with 401 while they are still owed, answering /health meanwhile', async () => {
    // Each sends its opening 64 KB and owes the rest. The 401s come on those bytes alone: a
    // gateway that read the bodies before checking the key (2.6 s of blocked loop here before
    // the fix) would wait for them, and answer none of these.
    const head = Buffer.alloc(64 * 1024, 'a');
    head.write('{"model":"m","input":"', 0);
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => sendHeadOnly(origin, '/v1/responses', { head, contentLength: 15 * 1024 * 1024 })));
    for (const { answer, health } of outcomes) {
      expect(answer?.status).toBe(401);
      expect(answer!.head.toLowerCase()).toContain('connection: close');
      expect(JSON.parse(answer!.body).error).toMatchObject({ type: 'authentication_error' });
      expect(health.length).toBeGreaterThanOrEqual(1);
      expect(health.every((status) => status === 200)).toBe(true);
    }
  }, 60_000);
});

describe('WebSocket authentication and connection cap (finding 10)', () => {
  let stack: GatewayStack;
  let origin: string;
  beforeAll(async () => {
    stack = await startStack({ config: { auth: { apiKeys: [KEY_A, KEY_B], maxSocketsPerOwner: 2 } } });
    origin = stack.url.replace(/\/v1$/, '');
  });
  afterAll(() => stack.close());

  it('accepts the key in x-api-key, as the 401 suggests', async () => {
    await expect(FrameSocket.open(origin)).rejects.toMatchObject({ status: 401 });
    const socket = await FrameSocket.open(origin, { 'x-api-key': KEY_A });
    socket.send({ type: 'response.create', model: 'm', input: '[[say via x-api-key]]' });
    const frames = await socket.untilTerminal();
    expect(frames.at(-1)).toMatchObject({ type: 'response.completed', response: { output: [{ content: [{ text: 'via x-api-key' }] }] } });
    await socket.close();
    await expect(FrameSocket.open(origin, { 'x-api-key': 'wrong' })).rejects.toMatchObject({ status: 401 });
  });

  it('caps open sockets per key (auth.maxSocketsPerOwner) with a 429, per key, and frees a slot on close', async () => {
    const a1 = await FrameSocket.open(origin, { authorization: `Bearer ${KEY_A}` });
    const a2 = await FrameSocket.open(origin, { 'x-api-key': KEY_A });
    const refused = await FrameSocket.open(origin, { authorization: `Bearer ${KEY_A}` }).catch((e) => e);
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body).error).toMatchObject({ code: 'too_many_connections', type: 'invalid_request_error' });
    // Another key is not affected.
    const b1 = await FrameSocket.open(origin, { authorization: `Bearer ${KEY_B}` });
    await a1.close();
    // The slot is free once the server saw the close.
    let a3: FrameSocket | undefined;
    for (let i = 0; i < 50 && !a3; i++) {
      a3 = await FrameSocket.open(origin, { authorization: `Bearer ${KEY_A}` }).catch(() => undefined);
      if (!a3) await new Promise((r) => setTimeout(r, 20));
    }
    expect(a3).toBeDefined();
    a3!.send({ type: 'response.create', model: 'm', input: '[[say still here]]' });
    expect((await a3!.untilTerminal()).at(-1).type).toBe('response.completed');
    await Promise.all([a2.close(), a3!.close(), b1.close()]);
  });
});
