import { Subject } from 'rxjs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { Logger } from '@nestjs/common';
import type { GatewayCall, GatewayCallResult, GatewayConfig, JsonObject, ToolEntry, ToolOutput } from '#tool-sdk/index.js';
import { RequestToolContext } from '#tool-sdk/index.js';
import { GatewayScheduler, type ScheduledCall, type ScheduledResult } from '#core/loop/gateway-scheduler.service.js';
import { SseTestServer, StreamableTestServer } from '../../../test/support/mcp/mcp-test-servers.js';
import { parseMcpSettings } from './mcp.config.js';
import { McpConnectionPool } from './mcp-connection-pool.service.js';
import { McpGatewayExecutor, backstopMs } from './mcp.gateway-executor.js';
import { McpToolHandler, type McpExecutionParams } from './mcp.tool-handler.js';
import { approvalBindingHolds } from './mcp-approval-binding.js';
import { McpTarget } from './mcp-target.js';
import { loadMcpSdk } from './mcp-sdk.js';
import { jest } from '@jest/globals';

const SECRET = 'sk-executor-secret-456';
const STDIO_SERVER = resolve(process.cwd(), 'test/support/mcp/stdio-test-server.mjs');
const EVERYTHING_SERVER = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');

beforeAll(() => Logger.overrideLogger(false));

describe('McpGatewayExecutor against real MCP servers', () => {
  let streamable: StreamableTestServer;
  let sse: SseTestServer;
  let fragile: StreamableTestServer;
  let pool: McpConnectionPool;
  let handler: McpToolHandler;
  let executor: McpGatewayExecutor;

  beforeAll(async () => {
    [streamable, sse, fragile] = await Promise.all([StreamableTestServer.start(), SseTestServer.start(), StreamableTestServer.start()]);
    const settings = parseMcpSettings({
      allowedHosts: [streamable, sse, fragile].map((s) => `127.0.0.1:${s.port}`),
      // Spawning a stdio server on a busy machine can take seconds; listing must not race that.
      discoveryTimeoutMs: 60_000,
      servers: [
        { label: 'local', transport: 'stdio', command: process.execPath, args: [STDIO_SERVER] },
        { label: 'everything', transport: 'stdio', command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] },
      ],
    });
    pool = new McpConnectionPool(settings);
    handler = new McpToolHandler(pool, settings);
    executor = new McpGatewayExecutor(pool);
  });

  afterAll(async () => {
    await pool.onModuleDestroy();
    await Promise.all([streamable.close(), sse.close(), fragile.close().catch(() => undefined)]);
  });

  /** Discovers `decl` and returns the execution parameters of each tool by its own name. */
  async function toolsOf(decl: JsonObject): Promise<Map<string, McpExecutionParams>> {
    const params = handler.validate({ type: 'mcp', ...decl }, 'tools[0]');
    const { state } = await handler.discover(params, { request: new RequestToolContext('r'), signal: new AbortController().signal, history: [], requestId: 'r' });
    expect(state.error).toBeNull();
    const tools = handler.normalize(params, state, { takenNames: new Set() });
    return new Map(tools.map((t) => [t.toolName, t.executionParams as McpExecutionParams]));
  }

  function callFor(params: McpExecutionParams, args: unknown, extra: Partial<GatewayCall> = {}): GatewayCall {
    return {
      callId: 'call_1',
      itemId: 'mcp_test1',
      modelName: `${params.serverLabel}__${params.toolName}`,
      toolName: params.toolName,
      scope: params.serverLabel,
      arguments: typeof args === 'string' ? args : JSON.stringify(args),
      ...extra,
    };
  }

  function run(params: McpExecutionParams, args: unknown, timeoutMs = 5_000): Promise<ToolOutput> {
    return executor.execute(callFor(params, args), params, {
      request: new RequestToolContext('r'),
      signal: new AbortController().signal,
      deadline: Date.now() + timeoutMs,
      requestId: 'r',
      include: [],
    }) as Promise<ToolOutput>;
  }

  describe('over streamable HTTP', () => {
    let tools: Map<string, McpExecutionParams>;
    beforeAll(async () => {
      tools = await toolsOf({ server_label: 'demo', server_url: streamable.url, authorization: SECRET });
    });

    it('calls a tool and returns its text', async () => {
      await expect(run(tools.get('echo')!, { text: 'hi' })).resolves.toEqual({ text: 'echo: hi', isError: false, data: undefined });
      expect(streamable.log.calls).toContainEqual({ name: 'echo', args: { text: 'hi' } });
      const authorized = streamable.log.httpRequests.filter((r) => r.headers.authorization === `Bearer ${SECRET}`);
      expect(authorized.length).toBeGreaterThan(0);
    });

    it('gives the model structured content as JSON, and joins text blocks with newlines', async () => {
      const sum = await run(tools.get('add')!, { a: 2, b: 3 });
      expect(sum).toMatchObject({ text: '{"sum":5}', isError: false, data: { structuredContent: { sum: 5 } } });
      await expect(run(tools.get('delete_item')!, { id: '7' })).resolves.toMatchObject({ text: 'deleted 7\ndone', isError: false });
    });

    it('reports an isError result and a thrown tool error as failed output', async () => {
      await expect(run(tools.get('fail')!, {})).resolves.toMatchObject({ isError: true, text: 'the widget is broken' });
      const thrown = await run(tools.get('explode')!, {});
      expect(thrown.isError).toBe(true);
      expect(thrown.text).toContain('kaboom');
    });

    it('keeps the connection when the server itself answers with an error', async () => {
      const before = pool.size;
      const missing = { ...tools.get('echo')!, toolName: 'no_such_tool' };
      const result = await run(missing, {});
      expect(result.isError).toBe(true);
      expect(result.text).toMatch(/no_such_tool/);
      expect(pool.size).toBe(before);
      await expect(run(tools.get('echo')!, { text: 'still here' })).resolves.toMatchObject({ text: 'echo: still here' });
    });

    it('does not send a call whose arguments are not a JSON object', async () => {
      const calls = streamable.log.calls.length;
      await expect(run(tools.get('echo')!, '{"text": ')).resolves.toMatchObject({ isError: true, text: expect.stringMatching(/not valid JSON/) });
      await expect(run(tools.get('echo')!, '[1,2]')).resolves.toMatchObject({ isError: true, text: expect.stringMatching(/JSON object/) });
      expect(streamable.log.calls.length).toBe(calls);
    });

    it('runs overlapping calls to one tool at the same time', async () => {
      expect(executor.supportsParallelExecution()).toBe(true);
      streamable.log.peakHanging = 0;
      const results = await Promise.all([1, 2, 3].map(() => run(tools.get('hang')!, { ms: 300 })));
      expect(results.map((r) => r.text)).toEqual(['hang elapsed', 'hang elapsed', 'hang elapsed']);
      expect(streamable.log.peakHanging).toBe(3);
    });

    it('stops a hung call at the deadline through the scheduler, and tells the server to cancel', async () => {
      const params = tools.get('hang')!;
      const scheduler = new GatewayScheduler({ tools: { maxConcurrentGatewayCalls: 4 } } as GatewayConfig);
      const round = new Subject<ScheduledCall>();
      const results: ScheduledResult[] = [];
      const done = new Promise<void>((resolve) => round.pipe(scheduler.schedule({ requestId: 'r', include: [] })).subscribe({ next: (r) => results.push(r), complete: resolve }));
      const entry = {
        modelName: 'demo__hang',
        toolType: 'mcp',
        toolName: 'hang',
        serverLabel: 'demo',
        ownership: { kind: 'gateway', binding: { executor, params, parallelSafe: true, timeoutMs: 300 } },
        handler,
        declarationIndex: 0,
        offered: true,
      } as ToolEntry;
      const cancelledBefore = streamable.log.cancelled.length;
      // The tool never answers: the round ending at all is the deadline's doing.
      round.next({ slot: 0, call: callFor(params, {}), entry });
      round.complete();
      await done;
      expect(results[0].result).toMatchObject({ status: 'failed', error: { code: 'tool_timeout' } });
      for (let i = 0; i < 150 && streamable.log.cancelled.length === cancelledBefore; i++) await new Promise((r) => setTimeout(r, 20));
      expect(streamable.log.cancelled.length).toBe(cancelledBefore + 1);
    });
  });

  it('calls tools over the legacy SSE transport', async () => {
    const tools = await toolsOf({ server_label: 'legacy', server_url: sse.url });
    await expect(run(tools.get('echo')!, { text: 'via sse' })).resolves.toMatchObject({ text: 'echo: via sse', isError: false });
  });

  it("reads a call's answer itself over streamable HTTP, and through the SDK client over the legacy SSE transport", async () => {
    const { Client } = await loadMcpSdk();
    const callTool = jest.spyOn(Client.prototype, 'callTool');
    try {
      const direct = await toolsOf({ server_label: 'direct', server_url: streamable.url });
      await expect(run(direct.get('add')!, { a: 1, b: 2 })).resolves.toMatchObject({ text: '{"sum":3}', isError: false });
      expect(callTool).not.toHaveBeenCalled();
      const legacy = await toolsOf({ server_label: 'legacy2', server_url: sse.url });
      await expect(run(legacy.get('add')!, { a: 1, b: 2 })).resolves.toMatchObject({ text: '{"sum":3}', isError: false });
      expect(callTool).toHaveBeenCalledTimes(1);
    } finally {
      callTool.mockRestore();
    }
  });

  it('fails a call whose HTTP server dies mid-call, then reconnects to the restarted server', async () => {
    const tools = await toolsOf({ server_label: 'fragile', server_url: fragile.url, headers: { 'X-Api-Key': SECRET } });
    // A deadline past the test's own timeout: only the dead connection can end the call in time.
    const pending = run(tools.get('hang')!, {}, 600_000);
    await fragile.log.waitForCall('hang');
    const port = fragile.port;
    await fragile.kill();
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(result.text).not.toMatch(/timed out|deadline/i);
    expect(result.text).toMatch(/fragile/);
    expect(result.text).not.toContain(SECRET);

    fragile = await StreamableTestServer.start(undefined, port);
    await expect(run(tools.get('echo')!, { text: 'back' })).resolves.toMatchObject({ text: 'echo: back', isError: false });
    expect(fragile.log.calls).toEqual([{ name: 'echo', args: { text: 'back' } }]);
  });

  describe('over stdio', () => {
    it('fails a call whose server process is killed mid-call, and the next call starts a new process', async () => {
      const tools = await toolsOf({ server_label: 'local' });
      const firstPid = Number((await run(tools.get('pid')!, {})).text);
      expect(firstPid).toBeGreaterThan(0);
      // A deadline past the test's own timeout: only the dead process can end the call in time.
      const pending = run(tools.get('hang')!, {}, 600_000);
      await new Promise((r) => setTimeout(r, 100));
      process.kill(firstPid, 'SIGKILL');
      const result = await pending;
      expect(result.isError).toBe(true);
      expect(result.text).not.toMatch(/timed out/i);
      expect(result.text).toMatch(/"local"/);
      const secondPid = Number((await run(tools.get('pid')!, {})).text);
      expect(secondPid).toBeGreaterThan(0);
      expect(secondPid).not.toBe(firstPid);
    });

    it('lists and calls the published server-everything', async () => {
      const tools = await toolsOf({ server_label: 'everything' });
      expect([...tools.keys()]).toEqual(expect.arrayContaining(['echo', 'get-sum']));
      await expect(run(tools.get('echo')!, { message: 'hello everything' })).resolves.toMatchObject({ text: 'Echo: hello everything', isError: false });
    });
  });

  describe("the SDK's backstop timer", () => {
    it('runs out a grace past the deadline, in whole seconds, so that calls share a few timer durations', () => {
      const now = 1_000_000;
      // Never before the deadline, never more than a second and the grace after it.
      for (const left of [1, 999, 1_000, 1_001, 29_999, 30_000, 30_001]) {
        const ms = backstopMs(now + left, now);
        expect(ms).toBeGreaterThanOrEqual(left + 1_000);
        expect(ms).toBeLessThan(left + 2_000);
        expect(ms % 1_000).toBe(0);
      }
      // Calls started within the same second of their deadlines get one duration, not one each.
      const durations = new Set(Array.from({ length: 200 }, (_, i) => backstopMs(now + 29_001 + i * 5, now)));
      expect(durations).toEqual(new Set([31_000]));
      // A deadline already past still gives the server the grace.
      expect(backstopMs(now - 50, now)).toBe(2_000);
    });
  });

  describe('public items', () => {
    const params = {
      serverLabel: 'demo',
      toolName: 'delete_item',
      readOnlyHint: false,
      approval: { fallback: 'always' },
      target: McpTarget.remote('demo', new URL('http://127.0.0.1:9/mcp'), { authorization: 'Bearer t-1' }),
    } as McpExecutionParams;

    it('plans the mcp_call lifecycle of wire-notes', () => {
      const call = callFor(params, { id: '7' }, { approvalRequestId: 'mcpr_9' });
      const plan = executor.planEvents(call, params);
      expect(plan.startedItem).toEqual({
        id: 'mcp_test1',
        type: 'mcp_call',
        server_label: 'demo',
        name: 'delete_item',
        arguments: '',
        output: null,
        error: null,
        status: 'in_progress',
        approval_request_id: 'mcpr_9',
      });
      expect(plan.beforeExecute).toEqual([
        { type: 'response.mcp_call.in_progress' },
        { type: 'response.mcp_call_arguments.delta', delta: '{"id":"7"}' },
        { type: 'response.mcp_call_arguments.done', arguments: '{"id":"7"}' },
      ]);
      const done: GatewayCallResult = { call, status: 'completed', output: { text: 'deleted 7' } };
      const failed: GatewayCallResult = { call, status: 'failed', output: { text: 'x', isError: true }, error: { code: 'tool_timeout', message: 'too slow' } };
      expect(plan.afterExecute(done)).toEqual([{ type: 'response.mcp_call.completed' }]);
      expect(plan.afterExecute(failed)).toEqual([{ type: 'response.mcp_call.failed' }]);
      expect(executor.publicOutput(done, params)).toEqual({ ...plan.startedItem, arguments: '{"id":"7"}', output: 'deleted 7', status: 'completed' });
      expect(executor.publicOutput(failed, params)).toEqual({ ...plan.startedItem, arguments: '{"id":"7"}', error: 'too slow', status: 'failed' });
    });

    it('asks for approval per require_approval, with an mcp_approval_request naming the tool', () => {
      const call = callFor(params, { id: '7' });
      const policy = (approval: McpExecutionParams['approval'], p: Partial<McpExecutionParams> = {}) => handler.approvals.requires(call, { ...params, ...p, approval });
      expect(policy({ fallback: 'always' })).toBe(true);
      expect(policy({ fallback: 'never' })).toBe(false);
      expect(policy({ fallback: 'always', never: { names: new Set(['delete_item']) } })).toBe(false);
      expect(policy({ fallback: 'always', never: { readOnly: true } })).toBe(true);
      expect(policy({ fallback: 'always', never: { readOnly: true } }, { readOnlyHint: true })).toBe(false);
      expect(policy({ fallback: 'always', never: {} })).toBe(true);
      expect(policy({ fallback: 'always', always: { names: new Set(['delete_item']) }, never: { names: new Set(['delete_item']) } })).toBe(true);
      const item = handler.approvals.requestItem(call, params);
      expect(item).toEqual({ id: expect.stringMatching(/^mcpr_[0-9a-f]{48}$/), type: 'mcp_approval_request', server_label: 'demo', name: 'delete_item', arguments: '{"id":"7"}' });
      // Its id is bound to the call and the declaration it was asked under (mcp-approval-binding.spec.ts).
      const approved = { serverLabel: 'demo', toolName: 'delete_item', arguments: '{"id":"7"}' };
      expect(approvalBindingHolds(String(item.id), approved, params.target)).toBe(true);
      expect(approvalBindingHolds(String(item.id), approved, McpTarget.remote('demo', new URL('http://127.0.0.1:9/mcp'), { authorization: 'Bearer t-2' }))).toBe(false);
    });
  });
});
