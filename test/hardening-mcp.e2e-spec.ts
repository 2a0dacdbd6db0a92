import { McpConnectionPool } from '#tools/mcp/mcp-connection-pool.service.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { SseTestServer, StreamableTestServer } from './support/mcp/mcp-test-servers.js';
import { openSseStream, rawPost } from './support/robustness/raw-http.js';

/**
 * A cancelled MCP call must not break anyone else's (finding 4), against real
 * MCP servers over streamable HTTP. The server here ignores
 * `notifications/cancelled` (the spec lets it), so a cancelled tool runs on
 * and its result comes late.
 */
const until = async (check: () => boolean, what: string, timeoutMs = 5_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('cancelled MCP calls stay contained (real MCP server)', () => {
  let server: StreamableTestServer;
  let stack: GatewayStack;

  beforeAll(async () => {
    server = await StreamableTestServer.start(undefined, 0, { ignoreCancellation: true });
    stack = await startStack({ config: { mcp: { allowedHosts: [`127.0.0.1:${server.port}`] } } });
  });
  afterAll(async () => {
    await stack.close();
    await server.close();
  });

  const tool = () => ({ type: 'mcp', server_label: 'demo', server_url: server.url, require_approval: 'never' });

  it('a client leaving mid-call closes that call’s HTTP request; a call sharing the connection completes', async () => {
    // Warm the pooled connection, so that both calls below share it.
    const warm = await rawPost(`${stack.url}/responses`, JSON.stringify({ model: 'm', input: '[[call demo__echo {"text":"warm"}]]', tools: [tool()] }));
    expect(warm.status).toBe(200);
    const pool = stack.app.get(McpConnectionPool);
    expect(pool.size).toBe(1);

    const leaving = openSseStream(`${stack.url}/responses`, { model: 'm', stream: true, input: '[[call demo__hang {"ms": 700}]]', tools: [tool()] });
    await leaving.waitForEvent((e) => e.data?.type === 'response.mcp_call.in_progress');
    await until(() => server.log.hanging === 1, 'the first hang call to start');
    leaving.abort();
    await until(() => server.ignoredCancellations >= 1, 'the cancellation to reach the server');
    // The server still runs the first call; its result comes back at ~700 ms, in the middle of this one.
    const staying = await rawPost(`${stack.url}/responses`, JSON.stringify({ model: 'm', input: '[[call demo__hang {"ms": 1500}]]', tools: [tool()] }), { timeoutMs: 20_000 });
    expect(staying.status).toBe(200);
    const call = JSON.parse(staying.text).output.find((i: any) => i.type === 'mcp_call');
    expect(call).toMatchObject({ status: 'completed', output: 'hang elapsed' });
    // Both calls ran to the end on the server, and the connection was never retired.
    await until(() => server.log.hanging === 0, 'both hang calls to end');
    expect(server.log.calls.filter((c) => c.name === 'hang')).toHaveLength(2);
    expect(pool.size).toBe(1);
    const sessions = new Set(server.log.httpRequests.map((r) => r.headers['mcp-session-id']).filter(Boolean));
    expect(sessions.size).toBe(1);
  }, 30_000);

  it('a call past its deadline is closed the same way: its late result does not retire the connection', async () => {
    const short = await startStack({ config: { mcp: { allowedHosts: [`127.0.0.1:${server.port}`] }, tools: { timeoutMsByType: { mcp: 400 } } } });
    try {
      const seenBefore = server.log.httpRequests.length;
      const ignoredBefore = server.ignoredCancellations;
      const timedOut = await rawPost(`${short.url}/responses`, JSON.stringify({ model: 'm', input: '[[call demo__hang {"ms": 900}]]', tools: [tool()] }), { timeoutMs: 20_000 });
      expect(JSON.parse(timedOut.text).output.find((i: any) => i.type === 'mcp_call')).toMatchObject({ status: 'failed' });
      expect(server.ignoredCancellations).toBeGreaterThan(ignoredBefore);
      // The server finishes the call anyway and answers it.
      await until(() => server.log.hanging === 0, 'the timed-out call to end at the server');
      await new Promise((r) => setTimeout(r, 100));
      const pool = short.app.get(McpConnectionPool);
      expect(pool.size).toBe(1);
      const next = await rawPost(`${short.url}/responses`, JSON.stringify({ model: 'm', input: '[[call demo__echo {"text":"after"}]]', tools: [tool()] }), { timeoutMs: 20_000 });
      expect(JSON.parse(next.text).output.find((i: any) => i.type === 'mcp_call')).toMatchObject({ status: 'completed', output: 'echo: after' });
      // Still the one session this gateway opened.
      const sessions = new Set(
        server.log.httpRequests
          .slice(seenBefore)
          .map((r) => r.headers['mcp-session-id'])
          .filter(Boolean),
      );
      expect(sessions.size).toBe(1);
    } finally {
      await short.close();
    }
  }, 30_000);
});

describe('a late result on a shared stream is harmless (legacy SSE transport, real MCP server)', () => {
  let server: SseTestServer;
  let stack: GatewayStack;
  beforeAll(async () => {
    server = await SseTestServer.start(undefined, { ignoreCancellation: true });
    stack = await startStack({ config: { mcp: { allowedHosts: [`127.0.0.1:${server.port}`] } } });
  });
  afterAll(async () => {
    await stack.close();
    await server.close();
  });

  it('the result of a call nobody waits for arrives on the shared stream; another call on the connection still completes', async () => {
    const tool = { type: 'mcp', server_label: 'demo', server_url: server.url, require_approval: 'never' };
    expect((await rawPost(`${stack.url}/responses`, JSON.stringify({ model: 'm', input: '[[call demo__echo {"text":"warm"}]]', tools: [tool] }))).status).toBe(200);
    const leaving = openSseStream(`${stack.url}/responses`, { model: 'm', stream: true, input: '[[call demo__hang {"ms": 600}]]', tools: [tool] });
    await leaving.waitForEvent((e) => e.data?.type === 'response.mcp_call.in_progress');
    await until(() => server.log.hanging === 1, 'the first hang call to start');
    leaving.abort();
    await until(() => server.ignoredCancellations >= 1, 'the cancellation to reach the server');
    // Over SSE every result shares one stream: the first call's result comes at ~600 ms, for an id the client forgot.
    const staying = await rawPost(`${stack.url}/responses`, JSON.stringify({ model: 'm', input: '[[call demo__hang {"ms": 1500}]]', tools: [tool] }), { timeoutMs: 20_000 });
    expect(JSON.parse(staying.text).output.find((i: any) => i.type === 'mcp_call')).toMatchObject({ status: 'completed', output: 'hang elapsed' });
    expect(server.log.calls.filter((c) => c.name === 'hang')).toHaveLength(2);
    expect(stack.app.get(McpConnectionPool).size).toBe(1);
  }, 30_000);
});

describe('MCP connections are kept apart per owner and per credentials (real MCP server)', () => {
  const KEY_A = 'sk-owner-a-1111';
  const KEY_B = 'sk-owner-b-2222';
  let server: StreamableTestServer;
  let stack: GatewayStack;

  beforeAll(async () => {
    server = await StreamableTestServer.start();
    stack = await startStack({ config: { auth: { apiKeys: [KEY_A, KEY_B] }, mcp: { allowedHosts: [`127.0.0.1:${server.port}`] } } });
  });
  afterAll(async () => {
    await stack.close();
    await server.close();
  });

  const call = (key: string, text: string, extra: Record<string, unknown> = {}) =>
    rawPost(
      `${stack.url}/responses`,
      JSON.stringify({
        model: 'm',
        input: `[[call demo__echo {"text":"${text}"}]]`,
        tools: [{ type: 'mcp', server_label: 'demo', server_url: server.url, require_approval: 'never', ...extra }],
      }),
      { headers: { authorization: `Bearer ${key}` } },
    );

  it('two owners declaring the same server_url get separate sessions; the same owner reuses its own', async () => {
    expect((await call(KEY_A, 'a1')).status).toBe(200);
    expect((await call(KEY_B, 'b1')).status).toBe(200);
    expect((await call(KEY_A, 'a2')).status).toBe(200);
    const pool = stack.app.get(McpConnectionPool);
    expect(pool.size).toBe(2);
    expect(server.log.calls.map((c) => c.args.text)).toEqual(['a1', 'b1', 'a2']);
    const sessions = new Set(server.log.httpRequests.map((r) => r.headers['mcp-session-id']).filter(Boolean));
    expect(sessions.size).toBe(2);
  });

  it('one owner with two different credentials gets two sessions, each carrying its own', async () => {
    const before = new Set(server.log.httpRequests.map((r) => r.headers['mcp-session-id']).filter(Boolean));
    expect((await call(KEY_A, 'c1', { authorization: 'tok-one-1234' })).status).toBe(200);
    expect((await call(KEY_A, 'c2', { authorization: 'tok-two-5678' })).status).toBe(200);
    const added = server.log.httpRequests.filter((r) => r.headers['mcp-session-id'] && !before.has(r.headers['mcp-session-id'] as string));
    const bySession = new Map<string, Set<string>>();
    for (const r of added) {
      const id = r.headers['mcp-session-id'] as string;
      if (!bySession.has(id)) bySession.set(id, new Set());
      bySession.get(id)!.add(String(r.headers.authorization));
    }
    expect(bySession.size).toBe(2);
    // Never two identities on one session.
    for (const auths of bySession.values()) expect(auths.size).toBe(1);
  });
});
