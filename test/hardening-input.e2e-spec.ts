import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { rawPost } from './support/robustness/raw-http.js';
import { cpuMs, sendHeadOnly } from './support/hardening/growth.js';
import { FrameSocket } from './support/hardening/socket-frames.js';

/**
 * Hostile request bodies: many tools, many keys, keys named like Object.prototype
 * members. Each is answered (200 or a 400 naming the field), and a hostile body
 * is refused from its first bad bytes, with other requests answered while it
 * arrives.
 *
 * These tests assert what is answered and in which order, never how fast: the
 * time to answer and the longest event-loop block per hostile body are in
 * `bench/hostile-input.ts`, and the growth of the cost with the input and the
 * block of the bodies that are handled in one piece in
 * `bench/hostile-growth.bench.ts`.
 */
const fnTool = (i: number) => ({ type: 'function', name: `tool_${i}`, description: `tool number ${i}`, parameters: { type: 'object', properties: { q: { type: 'string' } } } });

describe('hostile request bodies', () => {
  let stack: GatewayStack;
  let url: string;
  let base: string;

  beforeAll(async () => {
    // A raised tool cap, so that 10,000 tools are registered and not refused.
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

  /** The model request the simulator received last, as the gateway sent it. */
  const lastModelRequest = () => stack.simulator.requests.at(-1)!.body as Record<string, any>;

  /** POSTs a body built beforehand; the CPU time this process spent until the answer (gateway and simulator run in it) goes to the log only. */
  async function postCounted(text: string): Promise<{ status: number; json: any; cpuMs: number }> {
    const start = cpuMs();
    const res = await rawPost(url, text, { timeoutMs: 120_000 });
    return { status: res.status, json: JSON.parse(res.text), cpuMs: cpuMs() - start };
  }

  // How the cost grows with 10x the tools or keys is a speed: bench/hostile-growth.bench.ts measures it.
  // These tests keep what the 10x body must get: the same answer as the small one.
  describe('function tools (finding 1)', () => {
    it('registers 1,000 and 10,000 function tools: the model is given every one and may call the last', async () => {
      const cpu: string[] = [];
      for (const n of [1_000, 10_000]) {
        const { status, json, cpuMs } = await postCounted(JSON.stringify({ ...manyTools(n), input: `[[call tool_${n - 1} {"q":"last"}]]` }));
        expect(status).toBe(200);
        expect(lastModelRequest().tools).toHaveLength(n);
        expect(json.output).toContainEqual(expect.objectContaining({ type: 'function_call', name: `tool_${n - 1}` }));
        cpu.push(`${n} tools ${cpuMs.toFixed(0)} ms`);
      }
      console.log(`CPU per request: ${cpu.join(', ')}`);
    }, 120_000);
  });

  describe('object keys (finding 2)', () => {
    it('ignores 900 and 9,000 unknown top-level keys: answered as without them, none passed to the model', async () => {
      const cpu: string[] = [];
      for (const n of [900, 9_000]) {
        const { status, json, cpuMs } = await postCounted(JSON.stringify(manyKeys(n)));
        expect(status).toBe(200);
        expect(json.output).toEqual([expect.objectContaining({ type: 'message', content: [expect.objectContaining({ text: 'ok' })] })]);
        expect(Object.keys(lastModelRequest()).filter((key) => key.startsWith('unknown_field_'))).toEqual([]);
        cpu.push(`${n} keys ${cpuMs.toFixed(0)} ms`);
      }
      console.log(`CPU per request: ${cpu.join(', ')}`);
    }, 120_000);

    it('refuses a body announcing 300,000 keys in one object at its first bad bytes, answering /health while it arrives', async () => {
      const text = JSON.stringify(manyKeys(300_000));
      // Up to the object's 10,004th key (the limit is 10,000); the 8.5 MB after it are never sent.
      const head = Buffer.from(text.slice(0, text.indexOf('"unknown_field_10001"')));
      const { answer, health, slices } = await sendHeadOnly(base, '/v1/responses', { head, contentLength: Buffer.byteLength(text) });
      console.log(`head of ${head.length} bytes in ${slices} slices; /health answered ${health.length} times`);
      // The 400 comes while 8.5 MB are still owed: the body is never taken whole. Before the fix
      // it was parsed whole, and no other request was answered for minutes.
      expect(answer?.status).toBe(400);
      expect(answer!.head.toLowerCase()).toContain('connection: close');
      expect(JSON.parse(answer!.body).error).toMatchObject({ type: 'invalid_request_error', code: 'too_many_keys', param: null });
      // /health was answered between the slices, as the head arrived.
      expect(health.length).toBeGreaterThanOrEqual(slices);
      expect(health.every((status) => status === 200)).toBe(true);
    }, 60_000);

    it('WebSocket: a frame with 300,000 keys is an error frame, read no further than its bad key, and the socket keeps serving', async () => {
      const frame = JSON.stringify({ type: 'response.create', ...manyKeys(300_000) });
      const socket = await FrameSocket.open(base);
      try {
        socket.send(frame);
        expect(await socket.next()).toMatchObject({ type: 'error', status: 400, error: { code: 'too_many_keys' } });
        // A frame is handled in one piece, so no request can be answered in the middle of it:
        // what keeps that piece short is that the gateway stops at the first key over the limit
        // and parses nothing. The same frame cut before its closing brace, which is not JSON,
        // gets the same answer; a gateway that parsed frames before checking them would call it
        // invalid_json, after holding the event loop for the whole 8.8 MB.
        socket.send(frame.slice(0, -1));
        expect(await socket.next()).toMatchObject({ type: 'error', status: 400, error: { code: 'too_many_keys' } });
        // A socket that sent such frames is still served.
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
      const { answer } = await sendHeadOnly(base, '/v1/responses', { head: Buffer.from(head), contentLength: 15 * 1024 * 1024 });
      expect(answer?.status).toBe(400);
      expect(answer!.head.toLowerCase()).toContain('connection: close');
      expect(JSON.parse(answer!.body).error).toMatchObject({ code: 'too_many_keys', param: null });
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

  it('refuses the 20,000-tool body of the finding (2.8 MB) at its 513th tool, answering /health while it arrives', async () => {
    const base = stack.url.replace(/\/v1$/, '');
    const text = JSON.stringify({ model: 'm', input: 'hi', tools: Array.from({ length: 20_000 }, (_, i) => fnTool(i)) });
    // Up to its 600th tool, past the 512 allowed; the 2.7 MB after it are never sent.
    const head = Buffer.from(text.slice(0, text.indexOf('{"type":"function","name":"tool_600"')));
    const { answer, health, slices } = await sendHeadOnly(base, '/v1/responses', { head, contentLength: Buffer.byteLength(text) });
    console.log(`head of ${head.length} bytes in ${slices} slices; /health answered ${health.length} times`);
    // The 400 comes while the body is still owed: the tools were counted on the bytes as they came.
    expect(answer?.status).toBe(400);
    expect(JSON.parse(answer!.body).error).toMatchObject({ type: 'invalid_request_error', code: 'too_many_tools', param: 'tools' });
    expect(health.length).toBeGreaterThanOrEqual(slices);
    expect(health.every((status) => status === 200)).toBe(true);
  }, 60_000);

  it('serves a request with the most tools allowed (512): the model is given every one', async () => {
    // Such a body is parsed and its tools registered in one piece, so no other request can be
    // answered in the middle of that: how long it holds the event loop is a speed, measured in
    // bench/hostile-growth.bench.ts.
    const body = JSON.stringify({ model: 'm', input: '[[call tool_511 {"q":"last"}]]', store: false, tools: Array.from({ length: 512 }, (_, i) => fnTool(i)) });
    const res = await rawPost(`${stack.url}/responses`, body);
    expect(res.status).toBe(200);
    expect((stack.simulator.requests.at(-1)!.body as { tools: unknown[] }).tools).toHaveLength(512);
    expect(JSON.parse(res.text).output).toContainEqual(expect.objectContaining({ type: 'function_call', name: 'tool_511' }));
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
