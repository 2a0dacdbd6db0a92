import net from 'node:net';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { rawPost } from './support/robustness/raw-http.js';
import { idleHealthMs, medianMs, probeHealthDuringWideBody, stallBoundMs, withHealthProbe } from './support/hardening/growth.js';
import { FrameSocket } from './support/hardening/socket-frames.js';

/**
 * A parse that blocks the event loop stalls every probe made during it; a
 * machine busy with other suites delays one now and then. Past the bound,
 * the body is sent once more and the quicker probe counts.
 */
async function quickestProbe(first: number, idle: number, again: () => Promise<{ health: { ms: number } }>): Promise<number> {
  if (first < stallBoundMs(idle)) return first;
  return Math.min(first, (await again()).health.ms);
}

/**
 * How long /health may wait while a hostile body is handled (before the fix:
 * seconds to minutes) is a ratio to an idle probe taken in the same test
 * (`stallBoundMs`). The shape check scans the body chunk by chunk as it
 * arrives, so the event loop is never held for more than one chunk's pass;
 * `probeHealth` counts the lesser of wall and CPU time.
 */

/**
 * Hostile request bodies: many tools, many keys, keys named like Object.prototype
 * members. Each is answered (200 or a 400 naming the field) in time linear in
 * its size, and the gateway keeps answering others meanwhile.
 */
const fnTool = (i: number) => ({ type: 'function', name: `tool_${i}`, description: `tool number ${i}`, parameters: { type: 'object', properties: { q: { type: 'string' } } } });

describe('hostile request bodies', () => {
  let stack: GatewayStack;
  let url: string;
  let base: string;

  beforeAll(async () => {
    // A raised tool cap, so that the growth tests measure registration itself and not the 400.
    // The simulated model's context is widened too: the prompt of 10,000 tools is far over a real one's.
    stack = await startStack({ simulator: { maxModelLen: 10_000_000 }, config: { tools: { maxToolsPerRequest: 50_000 } } });
    url = `${stack.url}/responses`;
    base = stack.url.replace(/\/v1$/, '');
  });
  afterAll(() => stack.close());

  const post = (body: unknown) => rawPost(url, JSON.stringify(body), { timeoutMs: 120_000 });
  const manyTools = (n: number) => ({ model: 'm', input: '[[say ok]]', store: false, tools: Array.from({ length: n }, (_, i) => fnTool(i)) });
  const manyKeys = (n: number) => {
    const body: Record<string, unknown> = { model: 'm', input: '[[say ok]]', store: false };
    for (let i = 0; i < n; i++) body[`unknown_field_${i}`] = i;
    return body;
  };

  describe('function tools (finding 1)', () => {
    it('registers tools in linear time: 10x the tools take less than 20x the time', async () => {
      const small = await medianMs(async () => expect((await post(manyTools(1_000))).status).toBe(200));
      const large = await medianMs(async () => expect((await post(manyTools(10_000))).status).toBe(200));
      expect(large / small).toBeLessThan(20);
    }, 120_000);
  });

  describe('object keys (finding 2)', () => {
    it('ignores unknown top-level keys in linear time: 10x the keys take less than 20x the time', async () => {
      const small = await medianMs(async () => expect((await post(manyKeys(900))).status).toBe(200));
      const large = await medianMs(async () => expect((await post(manyKeys(9_000))).status).toBe(200));
      expect(large / small).toBeLessThan(20);
    }, 120_000);

    it('refuses 300,000 keys in one object with a 400, and /health answers within 10x an idle probe meanwhile', async () => {
      const idle = await idleHealthMs(base);
      const { answer, health } = await probeHealthDuringWideBody(base, 'http', url, 300_000);
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body).error).toMatchObject({ type: 'invalid_request_error', code: 'too_many_keys', param: null });
      expect(health.status).toBe(200);
      expect(await quickestProbe(health.ms, idle, () => probeHealthDuringWideBody(base, 'http', url, 300_000))).toBeLessThan(stallBoundMs(idle));
    }, 60_000);

    it('WebSocket: a frame with 300,000 keys is an error frame, /health stays fast, the socket keeps serving', async () => {
      const idle = await idleHealthMs(base);
      const wsUrl = `${base.replace(/^http/, 'ws')}/v1/responses`;
      const { answer, health } = await probeHealthDuringWideBody(base, 'ws', wsUrl, 300_000);
      expect(answer).toMatchObject({ type: 'error', status: 400, error: { code: 'too_many_keys' } });
      expect(health.status).toBe(200);
      expect(await quickestProbe(health.ms, idle, () => probeHealthDuringWideBody(base, 'ws', wsUrl, 300_000))).toBeLessThan(stallBoundMs(idle));
      // A socket that sent such a frame is still served.
      const socket = await FrameSocket.open(base);
      try {
        socket.send(JSON.stringify({ type: 'response.create', ...manyKeys(20_000) }));
        expect((await socket.untilTerminal())[0]).toMatchObject({ type: 'error', error: { code: 'too_many_keys' } });
        socket.send({ type: 'response.create', model: 'm', input: '[[say after]]', store: false });
        expect((await socket.untilTerminal()).at(-1).type).toBe('response.completed');
      } finally {
        await socket.close();
      }
    }, 60_000);

    it('answers a too-wide body at its first bad bytes, without waiting for the rest of it', async () => {
      // 15 MB announced, only the opening 10,001 keys sent: the 400 must come while the rest is still owed.
      const head = '{"model":"m","input":"hi",' + Array.from({ length: 10_001 }, (_, i) => `"k${i}":${i}`).join(',') + ',';
      const { hostname, port } = new URL(base);
      const socket = net.connect(Number(port), hostname);
      const answer = new Promise<string>((resolve, reject) => {
        let text = '';
        socket.on('data', (chunk) => (text += chunk.toString()));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
      socket.write(`POST /v1/responses HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${15 * 1024 * 1024}\r\n\r\n`);
      socket.write(head);
      const text = await answer;
      expect(text).toMatch(/^HTTP\/1\.1 400/);
      expect(text.toLowerCase()).toContain('connection: close');
      expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)).error).toMatchObject({ code: 'too_many_keys', param: null });
      // The gateway serves the next request as before.
      expect((await post({ model: 'm', input: '[[say next]]', store: false })).status).toBe(200);
    });

    it('names the nested object that has too many keys', async () => {
      const properties: Record<string, unknown> = {};
      for (let i = 0; i < 10_001; i++) properties[`p${i}`] = { type: 'string' };
      const res = await post({ model: 'm', input: 'hi', tools: [{ type: 'function', name: 'f', parameters: { type: 'object', properties } }] });
      expect(res.status).toBe(400);
      expect(JSON.parse(res.text).error).toMatchObject({ code: 'too_many_keys', param: 'tools[0].parameters.properties' });
    });
  });
});

describe('the tools-per-request cap (finding 1)', () => {
  let stack: GatewayStack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.close());

  it('refuses more than tools.maxToolsPerRequest (default 512) tools with a 400 naming tools', async () => {
    const tools = Array.from({ length: 513 }, (_, i) => fnTool(i));
    const res = await rawPost(`${stack.url}/responses`, JSON.stringify({ model: 'm', input: 'hi', tools }));
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).error).toMatchObject({ type: 'invalid_request_error', code: 'too_many_tools', param: 'tools' });
    const ok = await rawPost(`${stack.url}/responses`, JSON.stringify({ model: 'm', input: '[[say fine]]', store: false, tools: tools.slice(0, 512) }));
    expect(ok.status).toBe(200);
  });

  it('answers /health within 10x an idle probe while the 20,000-tool body of the finding (2 MB) is refused', async () => {
    const base = stack.url.replace(/\/v1$/, '');
    const idle = await idleHealthMs(base);
    const body = JSON.stringify({ model: 'm', input: 'hi', tools: Array.from({ length: 20_000 }, (_, i) => fnTool(i)) });
    const { res, healthMs, healthStatus } = await withHealthProbe(base, `${stack.url}/responses`, body);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).error.code).toBe('too_many_tools');
    expect(healthStatus).toBe(200);
    expect(healthMs).toBeLessThan(stallBoundMs(idle));
  });

  it('answers /health within 10x an idle probe while a request with the most tools allowed runs', async () => {
    const base = stack.url.replace(/\/v1$/, '');
    const idle = await idleHealthMs(base);
    const body = JSON.stringify({ model: 'm', input: '[[say ok]]', store: false, tools: Array.from({ length: 512 }, (_, i) => fnTool(i)) });
    const { res, healthMs, healthStatus } = await withHealthProbe(base, `${stack.url}/responses`, body);
    expect(res.status).toBe(200);
    expect(healthStatus).toBe(200);
    expect(healthMs).toBeLessThan(stallBoundMs(idle));
  });

  it('counts namespace members: a namespace past the cap is refused at its index', async () => {
    const members = Array.from({ length: 600 }, (_, i) => ({ type: 'function', name: `m_${i}` }));
    const res = await rawPost(
      `${stack.url}/responses`,
      JSON.stringify({ model: 'm', input: 'hi', tools: [fnTool(0), { type: 'namespace', name: 'big', description: 'many', tools: members }] }),
    );
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).error).toMatchObject({ code: 'too_many_tools', param: 'tools[1]' });
  });
});
