import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { FlowGate } from '#core/protocol/flow-gate.js';
import { freezeJson, rememberJson } from '#tool-sdk/helpers/frozen-json.js';
import { HttpTransport, upstreamErrorMessage } from './http-transport.js';
import { deadPort, ScriptedUpstream, sendJson, sleep, SHORT_MS, startSse, testTimeouts, upstreamConfig } from './testing/scripted-upstream.server.js';
import { answered, answerOf } from '#edge/testing/answered.js';

/**
 * Tracks the timers the transport arms while `run` executes: every one must
 * have fired or been cleared once the call has settled.
 */
async function transportTimersLeftBy(run: () => Promise<unknown>): Promise<number> {
  const live = new Set<NodeJS.Timeout>();
  const realSet = globalThis.setTimeout;
  const realClear = globalThis.clearTimeout;
  globalThis.setTimeout = ((callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    const mine = new Error().stack?.includes('http-transport.ts') ?? false;
    const timer: NodeJS.Timeout = realSet(() => {
      live.delete(timer);
      callback(...args);
    }, ms);
    if (mine) live.add(timer);
    return timer;
  }) as typeof setTimeout;
  globalThis.clearTimeout = ((timer: NodeJS.Timeout | undefined) => {
    if (timer) live.delete(timer);
    realClear(timer);
  }) as typeof clearTimeout;
  try {
    await run().catch(() => undefined);
    await sleep(5);
  } finally {
    globalThis.setTimeout = realSet;
    globalThis.clearTimeout = realClear;
  }
  return live.size;
}

/** Runs a failing call and checks that it left no deadline armed behind it. */
async function expectCleanFailure(run: () => Promise<unknown>, expected: object): Promise<void> {
  let failure: unknown;
  const left = await transportTimersLeftBy(() =>
    run().then(
      () => undefined,
      (error: unknown) => {
        failure = error;
      },
    ),
  );
  const { detail, ...answer } = expected as { detail?: unknown };
  expect(answered(failure)).toMatchObject(answer);
  if (detail !== undefined) expect(failure).toMatchObject({ detail });
  expect(left).toBe(0);
}

describe('HttpTransport', () => {
  let upstream: ScriptedUpstream;
  let transport: HttpTransport;

  beforeEach(async () => {
    upstream = await ScriptedUpstream.start();
    transport = new HttpTransport(upstreamConfig(upstream.baseUrl), testTimeouts());
  });

  afterEach(async () => {
    transport.close();
    await upstream.close();
  });

  it('sends JSON with the bearer key and reads JSON back', async () => {
    transport.close();
    transport = new HttpTransport(upstreamConfig(upstream.baseUrl, { apiKey: 'sk-test' }), testTimeouts());
    upstream.handler = (_req, res) => sendJson(res, 200, { ok: true });

    const answer = await transport.json({ method: 'POST', path: '/responses', body: { a: 1 } });

    expect(answer).toEqual({ ok: true });
    const [request] = upstream.requests;
    expect(request.method).toBe('POST');
    expect(request.url).toBe('/v1/responses');
    expect(request.body).toEqual({ a: 1 });
    expect(request.headers.authorization).toBe('Bearer sk-test');
    expect(request.headers['content-type']).toBe('application/json');
  });

  it('sends context headers, but never lets them replace its framing, content type or key', async () => {
    transport.close();
    transport = new HttpTransport(upstreamConfig(upstream.baseUrl, { apiKey: 'sk-test' }), testTimeouts());
    upstream.handler = (_req, res) => sendJson(res, 200, { ok: true });
    await transport.json({
      method: 'POST',
      path: '/responses',
      body: { a: 1 },
      headers: { 'X-Tenant': 'acme', 'content-length': '1', 'transfer-encoding': 'chunked', 'content-type': 'text/plain', authorization: 'Bearer other', 'x-bad': 'a\r\nb' },
    });
    const [request] = upstream.requests;
    expect(request.headers['x-tenant']).toBe('acme');
    expect(request.body).toEqual({ a: 1 });
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers.authorization).toBe('Bearer sk-test');
    expect(request.headers['transfer-encoding']).toBeUndefined();
    expect(request.headers['x-bad']).toBeUndefined();
  });

  it("sends a base URL's credentials as Basic auth, and its path with the call's and a query kept", async () => {
    transport.close();
    const withCredentials = upstream.baseUrl.replace('http://', 'http://vllm:s%40cret@');
    transport = new HttpTransport(upstreamConfig(`${withCredentials}`), testTimeouts());
    upstream.handler = (_req, res) => sendJson(res, 200, { ok: true });
    await transport.json({ method: 'GET', path: '/models?limit=2' });
    expect(upstream.requests[0].url).toBe('/v1/models?limit=2');
    expect(upstream.requests[0].headers.authorization).toBe(`Basic ${Buffer.from('vllm:s@cret').toString('base64')}`);
  });

  it("writes the request head Node writes for the same headers as an object: order, Host, and the URL's credentials", async () => {
    // The transport hands Node its headers as a name/value list; Node's own object path is the reference.
    const heads: string[][] = [];
    const server = http.createServer((req, res) => {
      heads.push(req.rawHeaders);
      req.resume();
      req.on('end', () => sendJson(res, 200, {}));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const reference = (headers: http.OutgoingHttpHeaders, auth?: string) =>
      new Promise<void>((resolve, reject) => {
        const agent = new http.Agent({ keepAlive: true });
        const req = http.request({ hostname: '127.0.0.1', port, path: '/v1/responses', method: 'POST', headers, auth, agent }, (res) => {
          res.resume();
          res.on('end', () => {
            agent.destroy();
            resolve();
          });
        });
        req.on('error', reject);
        req.end(Buffer.from('{"a":1}'));
      });
    const framing = { accept: 'application/json', 'content-type': 'application/json', 'content-length': 7 };
    const cases: Array<{ apiKey?: string; credentials: boolean; context: Record<string, string>; node: http.OutgoingHttpHeaders }> = [
      { credentials: false, context: { 'X-Tenant': 'acme' }, node: { 'x-tenant': 'acme', ...framing } },
      { credentials: true, context: { 'X-Tenant': 'acme' }, node: { 'x-tenant': 'acme', ...framing } },
      { apiKey: 'sk-test', credentials: true, context: { authorization: 'Bearer other' }, node: { authorization: 'Bearer sk-test', ...framing } },
      // An empty authorization header: Node puts the credentials in its place.
      { credentials: true, context: { authorization: '' }, node: { authorization: '', ...framing } },
    ];
    try {
      for (const c of cases) {
        const base = `http://${c.credentials ? 'vllm:s%40cret@' : ''}127.0.0.1:${port}/v1`;
        const sending = new HttpTransport(upstreamConfig(base, c.apiKey ? { apiKey: c.apiKey } : {}), testTimeouts());
        await sending.json({ method: 'POST', path: '/responses', body: { a: 1 }, headers: c.context });
        sending.close();
        await reference(c.node, c.credentials ? 'vllm:s@cret' : undefined);
        const [sent, node] = heads.splice(0, 2);
        expect(sent).toEqual(node);
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('sends no authorization header without an API key', async () => {
    await transport.json({ method: 'GET', path: '/models' });
    expect(upstream.requests[0].headers.authorization).toBeUndefined();
  });

  it('reuses one keep-alive socket across calls, also after an error body', async () => {
    let calls = 0;
    upstream.handler = (_req, res) => (++calls === 2 ? sendJson(res, 400, { error: { message: 'bad' } }) : sendJson(res, 200, {}));

    await transport.json({ method: 'GET', path: '/models' });
    await expect(answerOf(transport.json({ method: 'GET', path: '/models' }))).resolves.toMatchObject({ status: 400 });
    await transport.json({ method: 'GET', path: '/models' });

    const ports = new Set(upstream.requests.map((request) => request.remotePort));
    expect(ports.size).toBe(1);
  });

  it('retries once on a fresh socket when a pooled socket turns out to be dead', async () => {
    let calls = 0;
    upstream.handler = (req, res) => {
      // The second request arrives on the pooled socket: drop it unanswered,
      // as a server does that closed the idle connection at that moment.
      if (++calls === 2) req.socket.destroy();
      else sendJson(res, 200, { call: calls });
    };

    await transport.json({ method: 'GET', path: '/models' });
    const answer = await transport.json({ method: 'POST', path: '/responses', body: {} });

    expect(answer).toEqual({ call: 3 });
    expect(upstream.requests[1].remotePort).toBe(upstream.requests[0].remotePort);
    expect(upstream.requests[2].remotePort).not.toBe(upstream.requests[0].remotePort);
  });

  it('sends a body carrying a kept list as its chunks, whole, and again whole on the retry', async () => {
    const tools = freezeJson([{ type: 'function', name: 'météo', parameters: { type: 'object', properties: {} } }]);
    rememberJson(tools);
    let calls = 0;
    upstream.handler = (req, res) => {
      if (++calls === 2) req.socket.destroy();
      else sendJson(res, 200, { call: calls });
    };
    await transport.json({ method: 'GET', path: '/models' });
    const answer = await transport.json({ method: 'POST', path: '/responses', body: { model: 'm', tools, stream: false } });
    expect(answer).toEqual({ call: 3 });
    const sent = upstream.requests[2];
    expect(sent.body).toEqual({ model: 'm', tools: [{ type: 'function', name: 'météo', parameters: { type: 'object', properties: {} } }], stream: false });
    expect(Number(sent.headers['content-length'])).toBe(Buffer.byteLength(JSON.stringify({ model: 'm', tools, stream: false })));
  });

  it('maps a request that cannot be built (bad header value) to 502 without sending', async () => {
    transport.close();
    transport = new HttpTransport(upstreamConfig(upstream.baseUrl, { apiKey: 'sk-\nbroken' }), testTimeouts());
    await expectCleanFailure(() => transport.json({ method: 'GET', path: '/models' }), {
      status: 502,
      message: expect.stringContaining('could not be called'),
    });
    expect(upstream.requests).toHaveLength(0);
  });

  it('maps a refused connection to 502 that names no address; the URL and the socket error are the detail', async () => {
    const port = await deadPort();
    const dead = new HttpTransport(upstreamConfig(`http://127.0.0.1:${port}/v1`), testTimeouts());
    try {
      const failure = dead.json({ method: 'GET', path: '/models' });
      await expect(answerOf(failure)).resolves.toMatchObject({
        status: 502,
        code: 'upstream_unavailable',
        type: 'upstream_error',
        message: 'The model server is unreachable.',
      });
      await expect(failure).rejects.toMatchObject({ detail: `upstream http://127.0.0.1:${port}/v1/models is unreachable: connection refused (ECONNREFUSED)` });
    } finally {
      dead.close();
    }
  });

  it('maps a DNS failure to 502', async () => {
    const nowhere = new HttpTransport(upstreamConfig('http://upstream.invalid:8000/v1'), testTimeouts({ connectMs: 2_000 }));
    try {
      await expect(answerOf(nowhere.json({ method: 'GET', path: '/models' }))).resolves.toMatchObject({
        status: 502,
        code: 'upstream_unavailable',
        message: 'The model server is unreachable.',
      });
      await expect(nowhere.json({ method: 'GET', path: '/models' })).rejects.toMatchObject({
        detail: expect.stringContaining('http://upstream.invalid:8000/v1/models is unreachable'),
      });
    } finally {
      nowhere.close();
    }
  });

  it('maps a reset before the response to 502', async () => {
    upstream.handler = (req) => {
      req.socket.destroy();
    };
    await expectCleanFailure(() => transport.json({ method: 'GET', path: '/models' }), {
      status: 502,
      code: 'upstream_unavailable',
      message: 'The model server is unreachable.',
      detail: expect.stringContaining('connection reset'),
    });
  });

  it.each([
    [400, 400, { error: { message: 'max_tokens is too large', type: 'BadRequestError', code: 400 } }, 'max_tokens is too large'],
    [404, 404, { object: 'error', message: 'The model `nope` does not exist.', type: 'NotFoundError', code: 404 }, 'The model `nope` does not exist.'],
    [429, 429, { detail: 'Too many requests' }, 'Too many requests'],
    [422, 422, { detail: [{ loc: ['body', 'model'], msg: 'Field required', type: 'missing' }] }, 'Field required'],
    [404, 404, { error: 'model "llama9" not found, try pulling it first' }, 'model "llama9" not found, try pulling it first'],
    [400, 400, { message: 'Input validation error' }, 'Input validation error'],
    [500, 502, 'Traceback (most recent call last): ...', 'Internal Server Error'],
    [503, 502, '', 'Service Unavailable'],
  ])('passes HTTP %i on as %i with the upstream message', async (status, expected, body, message) => {
    upstream.handler = (_req, res) => sendJson(res, status, body);
    await expectCleanFailure(() => transport.json({ method: 'POST', path: '/responses', body: {} }), {
      name: 'UpstreamHttpError',
      status: expected,
      upstreamStatus: status,
      code: `upstream_${status}`,
      message,
    });
  });

  it('times out with 504 when headers never come (first-byte timeout)', async () => {
    transport.close();
    transport = new HttpTransport(upstreamConfig(upstream.baseUrl), testTimeouts({ firstByteMs: SHORT_MS }));
    upstream.handler = () => undefined;
    await expectCleanFailure(() => transport.json({ method: 'GET', path: '/models' }), {
      status: 504,
      type: 'timeout_error',
      message: expect.stringContaining('first-byte timeout'),
    });
    await upstream.nextDisconnect();
  });

  it('times out with 504 when the body goes silent (idle timeout)', async () => {
    transport.close();
    transport = new HttpTransport(upstreamConfig(upstream.baseUrl), testTimeouts({ idleMs: SHORT_MS }));
    upstream.handler = (_req, res) => {
      startSse(res);
      res.write('data: {}\n\n');
    };
    const body = await transport.open({ method: 'POST', path: '/responses', body: {} });
    const chunks: string[] = [];
    await expectCleanFailure(() => body.text((chunk) => chunks.push(chunk)), {
      status: 504,
      message: expect.stringContaining('idle timeout'),
    });
    expect(chunks.join('')).toBe('data: {}\n\n');
    await upstream.nextDisconnect();
  });

  it('does not count a pause the consumer asked for as the upstream going idle', async () => {
    transport.close();
    transport = new HttpTransport(upstreamConfig(upstream.baseUrl), testTimeouts({ idleMs: 4 * SHORT_MS }));
    let sendRest!: () => void;
    const restSent = new Promise<void>((resolve) => (sendRest = resolve));
    upstream.handler = async (_req, res) => {
      startSse(res);
      res.write('data: 1\n\n');
      // Silent for as long as the test holds the gate shut, then the rest.
      await restSent;
      res.end('data: 2\n\n');
    };
    const flow = new FlowGate();
    const body = await transport.open({ method: 'POST', path: '/responses', body: {}, flow });
    const chunks: string[] = [];
    const reading = body.text((chunk) => {
      chunks.push(chunk);
      // The consumer falls behind on the first chunk, as a slow client's SSE writer does.
      if (chunks.length === 1) flow.pause();
    });
    // Five idle timeouts of silence while paused: only the gate may explain it.
    await sleep(20 * SHORT_MS);
    expect(chunks).toEqual(['data: 1\n\n']);
    flow.resume();
    sendRest();
    await expect(reading).resolves.toBeUndefined();
    expect(chunks.join('')).toBe('data: 1\n\ndata: 2\n\n');
  });

  it('times out with 504 when a trickling body exceeds the total deadline', async () => {
    transport.close();
    // The idle deadline well past the total one: on a loaded machine a 20 ms trickle can pause for
    // over 100 ms, and an idle timeout then fired first (seen with both cores busy).
    transport = new HttpTransport(upstreamConfig(upstream.baseUrl), testTimeouts({ idleMs: 1_000, totalMs: 4 * SHORT_MS }));
    upstream.handler = async (_req, res) => {
      startSse(res);
      while (!res.destroyed) {
        res.write(': keep-alive\n\n');
        await sleep(20);
      }
    };
    const body = await transport.open({ method: 'GET', path: '/models' });
    await expect(answerOf(body.text(() => undefined))).resolves.toMatchObject({
      status: 504,
      message: expect.stringContaining('total timeout'),
    });
  });

  it('maps a reset in the middle of the body to 502 upstream_stream_error', async () => {
    upstream.handler = async (_req, res) => {
      startSse(res);
      res.write('data: {"a":1}\n\n');
      await sleep(20);
      res.socket?.resetAndDestroy();
    };
    const body = await transport.open({ method: 'GET', path: '/models' });
    await expectCleanFailure(() => body.text(() => undefined), { status: 502, code: 'upstream_stream_error' });
  });

  it('maps a body shorter than its content-length to 502 upstream_stream_error', async () => {
    upstream.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 100 });
      res.write('{"id":"resp_1",');
      setTimeout(() => res.socket?.destroy(), 10);
    };
    await expect(answerOf(transport.json({ method: 'GET', path: '/models' }))).resolves.toMatchObject({
      status: 502,
      code: 'upstream_stream_error',
    });
  });

  it('maps a non-JSON body to 502 upstream_bad_response', async () => {
    upstream.handler = (_req, res) => sendJson(res, 200, '{"id":"resp_1","output":[');
    await expectCleanFailure(() => transport.json({ method: 'GET', path: '/models' }), {
      status: 502,
      code: 'upstream_bad_response',
    });
  });

  it('aborting destroys the request: the upstream sees the disconnect', async () => {
    upstream.handler = () => undefined;
    const ac = new AbortController();
    let failure: unknown;
    const left = await transportTimersLeftBy(async () => {
      const pending = transport.open({ method: 'POST', path: '/responses', body: {}, signal: ac.signal });
      while (upstream.requests.length === 0) await sleep(2);
      ac.abort();
      failure = await pending.catch((error: unknown) => error);
    });
    expect(failure).toMatchObject({ name: 'AbortError' });
    expect(left).toBe(0);
    await upstream.nextDisconnect();
    expect(upstream.disconnects).toHaveLength(1);
  });

  it('does not send anything when the signal is already aborted', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(transport.open({ method: 'GET', path: '/models', signal: ac.signal })).rejects.toMatchObject({ name: 'AbortError' });
    await sleep(10);
    expect(upstream.requests).toHaveLength(0);
  });

  it('keeps a multi-byte character intact when it is split across chunks', async () => {
    const bytes = Buffer.from('data: "Grüße €"\n\n', 'utf8');
    const cut = bytes.indexOf(0xe2) + 1; // inside the three bytes of the euro sign
    upstream.handler = async (_req, res) => {
      startSse(res);
      res.write(bytes.subarray(0, cut));
      await sleep(10);
      res.end(bytes.subarray(cut));
    };
    const body = await transport.open({ method: 'GET', path: '/models' });
    let text = '';
    await body.text((chunk) => {
      text += chunk;
    });
    expect(text).toBe('data: "Grüße €"\n\n');
  });

  it('release() resolves at once and lets the rest of the body drain onto the pooled socket', async () => {
    upstream.handler = async (_req, res) => {
      startSse(res);
      res.write('data: 1\n\n');
      await sleep(30);
      res.end('data: 2\n\n');
    };
    const body = await transport.open({ method: 'GET', path: '/models' });
    const seen: string[] = [];
    await body.text((chunk) => {
      seen.push(chunk);
      body.release();
    });
    expect(seen).toEqual(['data: 1\n\n']);
    // The drained socket goes back to the pool once the body has ended: wait for that, not for a fixed time.
    for (let i = 0; i < 500 && transport.poolStats().idle === 0; i++) await sleep(10);
    expect(transport.poolStats()).toMatchObject({ active: 0, idle: 1 });
    await transport.json({ method: 'GET', path: '/models' }).catch(() => undefined);
    expect(upstream.disconnects).toHaveLength(0);
    expect(upstream.requests[1].remotePort).toBe(upstream.requests[0].remotePort);
  });
});

describe('upstreamErrorMessage', () => {
  it('reads every known error shape and ignores the rest', () => {
    expect(upstreamErrorMessage('{"error":{"message":"a"}}')).toBe('a');
    expect(upstreamErrorMessage('{"error":"b"}')).toBe('b');
    expect(upstreamErrorMessage('{"object":"error","message":"c"}')).toBe('c');
    expect(upstreamErrorMessage('{"detail":"d"}')).toBe('d');
    expect(upstreamErrorMessage('{"foo":1}')).toBeUndefined();
    expect(upstreamErrorMessage('<html>')).toBeUndefined();
  });
});
