import { Logger } from '@nestjs/common';
import { StreamableTestServer } from '../../../test/support/mcp/mcp-test-servers.js';
import { parseMcpSettings } from './mcp.config.js';
import { McpConnectionPool } from './mcp-connection-pool.service.js';
import { McpTarget } from './mcp-target.js';

beforeAll(() => Logger.overrideLogger(false));

describe('McpConnectionPool', () => {
  let server: StreamableTestServer;
  beforeAll(async () => {
    server = await StreamableTestServer.start();
  });
  afterAll(() => server.close());

  const initializations = () => server.log.httpRequests.filter((r) => r.method === 'POST' && !r.headers['mcp-session-id']).length;
  const listTools = (pool: McpConnectionPool, target: McpTarget) => pool.use(target, new AbortController().signal, (client, signal) => client.listTools({}, { signal }));

  it('shares one connection between concurrent and later users of the same target', async () => {
    const pool = new McpConnectionPool(parseMcpSettings({ allowedHosts: [`127.0.0.1:${server.port}`] }));
    try {
      const target = McpTarget.remote('demo', new URL(server.url), { 'X-Key': 'a' });
      const before = initializations();
      await Promise.all([listTools(pool, target), listTools(pool, target), listTools(pool, target)]);
      await listTools(pool, McpTarget.remote('again', new URL(server.url), { 'x-key': 'a' }));
      expect(initializations() - before).toBe(1);
      await listTools(pool, McpTarget.remote('other', new URL(server.url), { 'X-Key': 'b' }));
      expect(initializations() - before).toBe(2);
      expect(pool.size).toBe(2);
    } finally {
      await pool.onModuleDestroy();
    }
  });

  it('closes request-declared connections left idle, ending their session', async () => {
    const pool = new McpConnectionPool(parseMcpSettings({ allowedHosts: [`127.0.0.1:${server.port}`], remoteIdleTimeoutMs: 100 }));
    try {
      await listTools(pool, McpTarget.remote('demo', new URL(server.url), {}));
      expect(pool.size).toBe(1);
      for (let i = 0; i < 40 && pool.size > 0; i++) await new Promise((r) => setTimeout(r, 25));
      expect(pool.size).toBe(0);
      expect(server.log.httpRequests.some((r) => r.method === 'DELETE')).toBe(true);
    } finally {
      await pool.onModuleDestroy();
    }
  });

  it('keeps at most maxRemoteConnections, dropping the least recently used idle one', async () => {
    const pool = new McpConnectionPool(parseMcpSettings({ allowedHosts: [`127.0.0.1:${server.port}`], maxRemoteConnections: 2 }));
    try {
      for (const key of ['1', '2', '3']) await listTools(pool, McpTarget.remote(`s${key}`, new URL(server.url), { 'X-Key': key }));
      expect(pool.size).toBe(2);
    } finally {
      await pool.onModuleDestroy();
    }
  });

  it('retries an idempotent request once on a fresh connection when the pooled one went stale', async () => {
    const quiet = await StreamableTestServer.start(undefined, 0, { standaloneStream: false });
    const port = quiet.port;
    const pool = new McpConnectionPool(parseMcpSettings({ allowedHosts: [`127.0.0.1:${port}`] }));
    let restarted: StreamableTestServer | undefined;
    try {
      const target = McpTarget.remote('quiet', new URL(quiet.url), {});
      await listTools(pool, target);
      // Restarted: the old session is gone, and nothing told the pool.
      await quiet.close();
      restarted = await StreamableTestServer.start(undefined, port, { standaloneStream: false });
      expect(pool.size).toBe(1);
      const listed = await pool.use(target, new AbortController().signal, (client, signal) => client.listTools({}, { signal }), { retryStale: true });
      expect(listed.tools.length).toBeGreaterThan(0);
      // Without the retry the stale session fails the call, and the pool then reconnects.
      await restarted.close();
      restarted = await StreamableTestServer.start(undefined, port, { standaloneStream: false });
      await expect(listTools(pool, target)).rejects.toThrow(/was lost|Session not found/);
      await expect(listTools(pool, target)).resolves.toMatchObject({ tools: expect.any(Array) });
    } finally {
      await pool.onModuleDestroy();
      await restarted?.close();
    }
  });

  it('fails the calls in flight when their connection is retired, and leaves finished calls alone', async () => {
    const pool = new McpConnectionPool(parseMcpSettings({ allowedHosts: [`127.0.0.1:${server.port}`] }));
    try {
      const target = McpTarget.remote('demo', new URL(server.url), { 'X-Key': 'retired' });
      const hang = () => pool.use(target, new AbortController().signal, (client, s) => client.callTool({ name: 'hang', arguments: { ms: 30_000 } }, undefined, { signal: s }));
      // A finished call's signal is detached: aborting it later sends the server nothing (no late cancellation).
      const earlier = new AbortController();
      await pool.use(target, earlier.signal, (client, s) => client.listTools({}, { signal: s }));
      const exchanges = server.log.httpRequests.length;
      earlier.abort(new Error('client went away afterwards'));
      await new Promise((r) => setTimeout(r, 100));
      expect(server.log.httpRequests.length).toBe(exchanges);
      const calls = server.log.calls.length;
      const first = hang();
      const second = hang();
      for (let i = 0; i < 200 && server.log.calls.length < calls + 2; i++) await new Promise((r) => setTimeout(r, 10));
      const started = Date.now();
      pool.discard(target, 'test');
      await expect(first).rejects.toThrow(/was lost/);
      await expect(second).rejects.toThrow(/was lost/);
      // Failed by the retirement, not by the tool's 30 s.
      expect(Date.now() - started).toBeLessThan(5_000);
      // The next use connects again.
      await expect(listTools(pool, target)).resolves.toMatchObject({ tools: expect.any(Array) });
    } finally {
      await pool.onModuleDestroy();
    }
  });

  it("uses a call's own signal as it is (ownSignal): aborts it when the connection is retired, never once the call finished", async () => {
    const pool = new McpConnectionPool(parseMcpSettings({ allowedHosts: [`127.0.0.1:${server.port}`] }));
    try {
      const target = McpTarget.remote('demo', new URL(server.url), { 'X-Key': 'own' });
      const own = (controller: AbortController) => ({ ownSignal: (reason: unknown) => controller.abort(reason) });
      const finished = new AbortController();
      let handed: AbortSignal | undefined;
      await pool.use(
        target,
        finished.signal,
        (client, s) => {
          handed = s;
          return client.listTools({}, { signal: s });
        },
        own(finished),
      );
      expect(handed).toBe(finished.signal);
      const calls = server.log.calls.length;
      const hanging = new AbortController();
      const call = pool.use(target, hanging.signal, (client, s) => client.callTool({ name: 'hang', arguments: { ms: 30_000 } }, undefined, { signal: s }), own(hanging));
      for (let i = 0; i < 200 && server.log.calls.length < calls + 1; i++) await new Promise((r) => setTimeout(r, 10));
      pool.discard(target, 'test');
      await expect(call).rejects.toThrow(/was lost/);
      expect(hanging.signal.aborted).toBe(true);
      expect(String(hanging.signal.reason)).toMatch(/was lost/);
      // The call that finished before the loss is out of the connection's set: its signal is untouched.
      expect(finished.signal.aborted).toBe(false);
      // A caller that gives up still gets its own reason.
      const leaving = new AbortController();
      const left = pool.use(target, leaving.signal, (client, s) => client.callTool({ name: 'hang', arguments: { ms: 30_000 } }, undefined, { signal: s }), own(leaving));
      leaving.abort(new Error('client went away'));
      await expect(left).rejects.toThrow('client went away');
    } finally {
      await pool.onModuleDestroy();
    }
  });

  it('lets a waiting caller give up without failing the shared connect', async () => {
    const pool = new McpConnectionPool(parseMcpSettings({ allowedHosts: [`127.0.0.1:${server.port}`] }));
    try {
      const target = McpTarget.remote('demo', new URL(server.url), { 'X-Key': 'wait' });
      const impatient = new AbortController();
      const first = pool.use(target, impatient.signal, (client, signal) => client.listTools({}, { signal }));
      impatient.abort(new Error('client went away'));
      await expect(first).rejects.toThrow('client went away');
      await expect(listTools(pool, target)).resolves.toMatchObject({ tools: expect.any(Array) });
    } finally {
      await pool.onModuleDestroy();
    }
  });
});
