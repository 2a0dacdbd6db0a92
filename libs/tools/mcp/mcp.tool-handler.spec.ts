import { Logger } from '@nestjs/common';
import { Server as SdkServer, type Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CancelledNotificationSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { type HistoryContext, InvalidRequestError, type JsonObject, type PublicItem } from '#tool-sdk/index.js';
import { RequestToolContext } from '#tool-sdk/index.js';
import {
  SseTestServer,
  StreamableTestServer,
  buildDemoServer,
  buildPagedServer,
  type ServerLog,
  startRedirectServer,
  startSilentServer,
} from '../../../test/support/mcp/mcp-test-servers.js';
import { parseMcpSettings, type McpSettings } from './mcp.config.js';
import { McpConnectionPool } from './mcp-connection-pool.service.js';
import type { McpDeclaration } from './mcp-declaration.parser.js';
import { McpToolHandler, type McpExecutionParams } from './mcp.tool-handler.js';
import { until } from '../../../test/support/until.js';

const SECRET = 'sk-very-secret-token-123';

function errorOf(fn: () => unknown): InvalidRequestError {
  try {
    fn();
  } catch (err) {
    if (err instanceof InvalidRequestError) return err;
    throw err;
  }
  throw new Error('expected an InvalidRequestError');
}

beforeAll(() => Logger.overrideLogger(false));

async function rejectionOf(promise: Promise<unknown>): Promise<InvalidRequestError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof InvalidRequestError) return err;
    throw err;
  }
  throw new Error('expected an InvalidRequestError');
}

describe('McpToolHandler', () => {
  let streamable: StreamableTestServer;
  let sse: SseTestServer;
  let paged: StreamableTestServer;
  let silent: Awaited<ReturnType<typeof startSilentServer>>;
  let redirect: Awaited<ReturnType<typeof startRedirectServer>>;
  let settings: McpSettings;
  let pool: McpConnectionPool;
  let handler: McpToolHandler;

  beforeAll(async () => {
    [streamable, sse, paged, silent] = await Promise.all([
      StreamableTestServer.start(),
      SseTestServer.start(),
      StreamableTestServer.start(buildPagedServer(25, 10)),
      startSilentServer(),
    ]);
    // Redirects to the streamable server's port, which the policy below does not list.
    const forbidden = await StreamableTestServer.start();
    redirect = await startRedirectServer(forbidden.url);
    await forbidden.close();
    const ports = [streamable.port, sse.port, paged.port, new URL(silent.url).port, new URL(redirect.url).port];
    settings = parseMcpSettings({
      allowedHosts: [...ports.map((p) => `127.0.0.1:${p}`), 'mcp.example.com', '*.tools.example.com'],
      discoveryTimeoutMs: 5_000,
      maxServersPerRequest: 3,
      maxToolsPerServer: 12,
      servers: [{ label: 'ops', transport: 'streamable-http', url: streamable.url, headers: { 'X-Operator-Key': SECRET }, description: 'The operator tools' }],
    });
    pool = new McpConnectionPool(settings);
    handler = new McpToolHandler(pool, settings);
  });

  afterAll(async () => {
    await pool.onModuleDestroy();
    await Promise.all([streamable.close(), sse.close(), paged.close(), silent.close(), redirect.close()]);
  });

  const validate = (decl: JsonObject, path = 'tools[0]') => handler.validate({ type: 'mcp', ...decl }, path);

  /** One request's discovery of one declaration; declarations of one request share its `request`. */
  async function discover(params: McpDeclaration, history: PublicItem[] = [], request = new RequestToolContext('resp_test')) {
    return handler.discover(params, { request, signal: new AbortController().signal, history, requestId: request.requestId });
  }

  describe('validate', () => {
    it('refuses connector_id, naming the field', () => {
      const err = errorOf(() => validate({ server_label: 'drive', connector_id: 'connector_googledrive' }, 'tools[2]'));
      expect(err).toBeInstanceOf(InvalidRequestError);
      expect(err.param).toBe('tools[2].connector_id');
      expect(err.message).toMatch(/connectors are not supported/);
    });

    it.each([
      [{}, 'tools[0].server_label'],
      [{ server_label: 'bad label' }, 'tools[0].server_label'],
      [{ server_label: 'nowhere' }, 'tools[0].server_url'],
      [{ server_label: 'x', server_url: 'not a url' }, 'tools[0].server_url'],
      [{ server_label: 'x', server_url: 'ftp://mcp.example.com/' }, 'tools[0].server_url'],
      [{ server_label: 'x', server_url: 'https://user:pw@mcp.example.com/' }, 'tools[0].server_url'],
      [{ server_label: 'x', server_url: 'https://mcp.example.com/', headers: { 'X-K': 1 } }, 'tools[0].headers.X-K'],
      [{ server_label: 'x', server_url: 'https://mcp.example.com/', headers: { 'X-K': 'a\r\nInjected: 1' } }, 'tools[0].headers.X-K'],
      [{ server_label: 'x', server_url: 'https://mcp.example.com/', headers: { Host: 'internal' } }, 'tools[0].headers.Host'],
      [{ server_label: 'x', server_url: 'https://mcp.example.com/', authorization: 5 }, 'tools[0].authorization'],
      [{ server_label: 'x', server_url: 'https://mcp.example.com/', allowed_tools: 'echo' }, 'tools[0].allowed_tools'],
      [{ server_label: 'x', server_url: 'https://mcp.example.com/', allowed_tools: { tool_names: [1] } }, 'tools[0].allowed_tools.tool_names'],
      [{ server_label: 'x', server_url: 'https://mcp.example.com/', require_approval: 'sometimes' }, 'tools[0].require_approval'],
      [{ server_label: 'x', server_url: 'https://mcp.example.com/', require_approval: { maybe: {} } }, 'tools[0].require_approval.maybe'],
      [{ server_label: 'ops', server_url: 'https://mcp.example.com/' }, 'tools[0].server_url'],
      [{ server_label: 'ops', headers: { 'X-K': 'v' } }, 'tools[0].headers'],
    ])('rejects %j at %s', (decl, param) => {
      expect(errorOf(() => validate(decl as JsonObject)).param).toBe(param);
    });

    it.each([
      ['a host not in allowedHosts', 'https://evil.example.org/mcp', /not in the gateway's allowed MCP hosts/],
      ['loopback on an unlisted port', 'http://127.0.0.1:1/mcp', /not in the gateway's allowed MCP hosts/],
      ['a private address', 'http://10.0.0.8/mcp', /not in the gateway's allowed MCP hosts/],
      ['link-local metadata', 'http://169.254.169.254/latest/meta-data', /not in the gateway's allowed MCP hosts/],
      ['IPv6 loopback', 'http://[::1]:8080/mcp', /not in the gateway's allowed MCP hosts/],
    ])('refuses %s with a 400 naming server_url', (_what, url, message) => {
      const err = errorOf(() => validate({ server_label: 'x', server_url: url }, 'tools[1]'));
      expect(err).toBeInstanceOf(InvalidRequestError);
      expect(err.param).toBe('tools[1].server_url');
      expect(err.code).toBe('mcp_server_url_refused');
      expect(err.message).toMatch(message);
    });

    it('never quotes header or token values in its errors', () => {
      const err = errorOf(() => validate({ server_label: 'x', server_url: 'https://mcp.example.com/', headers: { 'X-Key': `${SECRET}\n` } }));
      expect(err.message).not.toContain(SECRET);
    });

    it('strips headers and authorization from the public declaration', () => {
      const declaration = {
        type: 'mcp',
        server_label: 'x',
        server_url: 'https://mcp.example.com/mcp',
        headers: { 'X-Key': SECRET },
        authorization: SECRET,
        require_approval: 'never',
      };
      const params = handler.validate(declaration, 'tools[0]');
      const pub = handler.publicDeclaration(params, declaration);
      expect(pub).toEqual({ type: 'mcp', server_label: 'x', server_url: 'https://mcp.example.com/mcp', require_approval: 'never' });
      expect(JSON.stringify(params)).not.toContain(SECRET);
      expect(JSON.stringify(params.target)).not.toContain(SECRET);
    });

    it('pools by URL and credentials: the same pair shares a key, other credentials do not', () => {
      const a = validate({ server_label: 'a', server_url: 'https://mcp.example.com/mcp', authorization: 'one' });
      const b = validate({ server_label: 'b', server_url: 'https://mcp.example.com/mcp', headers: { authorization: 'Bearer one' } });
      const c = validate({ server_label: 'c', server_url: 'https://mcp.example.com/mcp', authorization: 'two' });
      expect(a.target.key).toBe(b.target.key);
      expect(a.target.key).not.toBe(c.target.key);
      expect(a.target.key).not.toContain('one');
    });
  });

  describe('discover', () => {
    it('lists tools over streamable HTTP and emits one mcp_list_tools item', async () => {
      const params = validate({ server_label: 'demo', server_url: streamable.url });
      const result = await discover(params);
      expect(result.state.error).toBeNull();
      expect(result.state.tools.map((t) => t.name)).toEqual(['echo', 'add', 'delete_item', 'fail', 'explode', 'hang']);
      expect(result.items).toHaveLength(1);
      const item = result.items![0] as JsonObject;
      expect(item).toMatchObject({ type: 'mcp_list_tools', server_label: 'demo' });
      // Absent means omitted, as OpenAI sends it (the AI SDK refuses `error: null`).
      expect(item).not.toHaveProperty('error');
      expect(item.id).toMatch(/^mcpl_/);
      const echo = (item.tools as JsonObject[])[0];
      expect(echo).toEqual({
        name: 'echo',
        description: 'Echo the text back',
        input_schema: expect.objectContaining({ type: 'object', properties: { text: { type: 'string' } } }),
        annotations: { read_only: true },
      });
    });

    it('falls back to the legacy SSE transport', async () => {
      const result = await discover(validate({ server_label: 'legacy', server_url: sse.url }));
      expect(result.state.error).toBeNull();
      expect(result.state.tools.map((t) => t.name)).toContain('echo');
      expect(sse.log.httpRequests.map((r) => `${r.method} ${r.path.split('?')[0]}`)).toEqual(expect.arrayContaining(['POST /sse', 'GET /sse', 'POST /messages']));
    });

    it('reads every page of tools/list and caps the total at maxToolsPerServer', async () => {
      const result = await discover(validate({ server_label: 'paged', server_url: paged.url }));
      expect(result.state.tools.map((t) => t.name)).toEqual(Array.from({ length: 12 }, (_, i) => `tool_${String(i).padStart(3, '0')}`));
      expect(paged.log.calls.filter((c) => c.name === 'tools/list').map((c) => c.args.cursor)).toEqual([null, '10']);
    });

    it('cancels only the page in flight when a paged listing is aborted, not the pages already answered', async () => {
      // Pages of one tool each; the third hangs until the test lets it go. The server notes every cancellation.
      const cancelled: Array<string | number> = [];
      let hungId: string | number | undefined;
      let letGo!: () => void;
      const hung = new Promise<void>((resolve) => (letGo = resolve));
      const server = await StreamableTestServer.start((log) => {
        const s = new SdkServer({ name: 'slow-pages', version: '1.0.0' }, { capabilities: { tools: {} } });
        s.setRequestHandler(ListToolsRequestSchema, async (request, extra) => {
          const page = Number(request.params?.cursor ?? 0);
          log.record('tools/list', { cursor: request.params?.cursor ?? null });
          if (page === 2) {
            hungId = extra.requestId;
            await hung;
          }
          return { tools: [{ name: `tool_${page}`, inputSchema: { type: 'object' as const } }], nextCursor: String(page + 1) };
        });
        s.setNotificationHandler(CancelledNotificationSchema, (n) => void cancelled.push(n.params.requestId!));
        return s;
      });
      const own = parseMcpSettings({ allowedHosts: [`127.0.0.1:${server.port}`], discoveryTimeoutMs: 30_000 });
      const ownPool = new McpConnectionPool(own);
      const leave = new AbortController();
      try {
        const request = new RequestToolContext('resp_abort');
        const params = new McpToolHandler(ownPool, own).validate({ type: 'mcp', server_label: 'slow', server_url: server.url }, 'tools[0]');
        const discovery = new McpToolHandler(ownPool, own).discover(params, { request, signal: leave.signal, history: [], requestId: request.requestId });
        await until(
          () => server.log.calls.filter((c) => c.name === 'tools/list').length,
          (n) => n === 3,
          'the third page to be asked for',
        );
        leave.abort(new Error('client went away'));
        await expect(discovery).rejects.toThrow('client went away');
        // Cancellations are sent in the order the requests were made: the answered pages' (if any) come first.
        await until(
          () => cancelled,
          (ids) => ids.includes(hungId!),
          "the hung page's cancellation",
        );
        expect(cancelled).toEqual([hungId]);
      } finally {
        letGo();
        await ownPool.onModuleDestroy();
        await server.close();
      }
    });

    it('filters with allowed_tools: a list, tool_names, and read_only across pages', async () => {
      const byList = await discover(validate({ server_label: 'p1', server_url: paged.url, allowed_tools: ['tool_003', 'tool_021', 'nope'] }));
      expect(byList.state.tools.map((t) => t.name)).toEqual(['tool_003', 'tool_021']);
      const readOnly = await discover(validate({ server_label: 'p2', server_url: paged.url, allowed_tools: { read_only: true } }));
      expect(readOnly.state.tools.map((t) => t.name)).toEqual(Array.from({ length: 12 }, (_, i) => `tool_${String(2 * i + 1).padStart(3, '0')}`));
      const both = await discover(validate({ server_label: 'p3', server_url: streamable.url, allowed_tools: { tool_names: ['echo', 'delete_item'], read_only: true } }));
      expect(both.state.tools.map((t) => t.name)).toEqual(['echo']);
    });

    it('emits no listing when the conversation already has one for the label, but still registers the tools', async () => {
      const params = validate({ server_label: 'demo', server_url: streamable.url });
      const history = [{ type: 'mcp_list_tools', id: 'mcpl_1', server_label: 'demo', tools: [], error: null }] as PublicItem[];
      const result = await discover(params, history);
      expect(result.items).toEqual([]);
      expect(handler.normalize(params, result.state, { takenNames: new Set() })).toHaveLength(6);
      // A listing for another label, or a failed one, does not count.
      const other = [{ type: 'mcp_list_tools', id: 'mcpl_2', server_label: 'demo', tools: [], error: 'down' }] as PublicItem[];
      expect((await discover(params, other)).items).toHaveLength(1);
    });

    it('reports an unreachable server as a failed listing, not a failed request', async () => {
      const closed = await StreamableTestServer.start();
      const url = closed.url;
      await closed.close();
      const local = parseMcpSettings({ allowedHosts: [new URL(url).host], discoveryTimeoutMs: 500 });
      const localPool = new McpConnectionPool(local);
      try {
        const result = await new McpToolHandler(localPool, local).discover(
          new McpToolHandler(localPool, local).validate({ type: 'mcp', server_label: 'gone', server_url: url, authorization: SECRET }, 'tools[0]'),
          { request: new RequestToolContext('r'), signal: new AbortController().signal, history: [], requestId: 'r' },
        );
        expect(result.state.tools).toEqual([]);
        expect(result.items).toEqual([expect.objectContaining({ type: 'mcp_list_tools', server_label: 'gone', tools: [], error: 'MCP server "gone" is unreachable.' })]);
        expect(JSON.stringify(result.items)).not.toContain(SECRET);
      } finally {
        await localPool.onModuleDestroy();
      }
    });

    it('gives up on a server that never answers after discoveryTimeoutMs', async () => {
      const local = parseMcpSettings({ allowedHosts: [new URL(silent.url).host], discoveryTimeoutMs: 300 });
      const localPool = new McpConnectionPool(local);
      try {
        const localHandler = new McpToolHandler(localPool, local);
        // The server never answers: discovery returning at all is the timeout's doing.
        const result = await localHandler.discover(localHandler.validate({ type: 'mcp', server_label: 'silent', server_url: silent.url }, 'tools[0]'), {
          request: new RequestToolContext('r'),
          signal: new AbortController().signal,
          history: [],
          requestId: 'r',
        });
        expect(result.items![0]).toMatchObject({ type: 'mcp_list_tools', tools: [], error: 'MCP server "silent" is unreachable.' });
      } finally {
        await localPool.onModuleDestroy();
      }
    });

    it('refuses a redirect to an address the policy does not allow, as a 400 naming server_url', async () => {
      const params = validate({ server_label: 'bounce', server_url: redirect.url }, 'tools[3]');
      const err = await rejectionOf(discover(params));
      expect(err).toBeInstanceOf(InvalidRequestError);
      expect(err.param).toBe('tools[3].server_url');
      expect(err.message).toMatch(/redirect target host "127\.0\.0\.1:\d+" is not in the gateway's allowed MCP hosts/);
      expect(redirect.hits()).toBeGreaterThan(0);
    });

    it('enforces maxServersPerRequest and unique labels across one request', async () => {
      const request = new RequestToolContext('resp_many');
      const labels = ['s1', 's2', 's3', 's4'];
      const runs = labels.map((label, i) => discover(validate({ server_label: label, server_url: streamable.url }, `tools[${i}]`), [], request));
      const results = await Promise.allSettled(runs);
      const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(rejected.length).toBe(4);
      expect(rejected[0].reason).toBeInstanceOf(InvalidRequestError);
      expect(rejected[0].reason.param).toBe('tools');
      expect(rejected[0].reason.message).toMatch(/at most 3/);

      const again = new RequestToolContext('resp_twins');
      const [first, second] = await Promise.allSettled([
        discover(validate({ server_label: 'twin', server_url: streamable.url }, 'tools[0]'), [], again),
        discover(validate({ server_label: 'twin', server_url: sse.url }, 'tools[1]'), [], again),
      ]);
      expect(first.status).toBe('fulfilled');
      expect(second.status === 'rejected' && second.reason.param).toBe('tools[1].server_label');
    });

    it('uses operator-configured servers by label with the operator credentials', async () => {
      const params = validate({ server_label: 'ops' });
      const result = await discover(params);
      expect(result.state.error).toBeNull();
      const seen = streamable.log.httpRequests.filter((r) => r.headers['x-operator-key'] === SECRET);
      expect(seen.length).toBeGreaterThan(0);
      const [echo] = handler.normalize(params, result.state, { takenNames: new Set() });
      expect(echo.fn.description).toBe('[MCP server ops: The operator tools] Echo the text back');
    });
  });

  describe('normalize', () => {
    it('names tools <label>__<tool>, unique and at most 64 characters, the same in every request', async () => {
      const label = 'a_very_long_server_label_that_goes_on_and_on_for_quite_a_while';
      const params = validate({ server_label: label, server_url: streamable.url, server_description: 'Demo server' });
      const { state } = await discover(params);
      const first = handler.normalize(params, state, { takenNames: new Set() });
      const second = handler.normalize(params, state, { takenNames: new Set() });
      expect(first.map((t) => t.fn.name)).toEqual(second.map((t) => t.fn.name));
      expect(new Set(first.map((t) => t.fn.name)).size).toBe(first.length);
      for (const tool of first) {
        expect(tool.fn.name.length).toBeLessThanOrEqual(64);
        expect(tool.fn.name).toMatch(/^[a-zA-Z0-9_-]+$/);
      }
      const short = validate({ server_label: 'demo', server_url: streamable.url });
      const named = handler.normalize(short, state, { takenNames: new Set(['demo__add']) });
      expect(named[0].fn.name).toBe('demo__echo');
      expect(named[1].fn.name).toMatch(/^demo__add_[0-9a-f]{8}$/);
      expect(named[0]).toMatchObject({
        scope: 'demo',
        toolName: 'echo',
        fn: { type: 'function', parameters: expect.objectContaining({ type: 'object' }) },
      });
      expect(first[0].fn.description).toBe(`[MCP server ${label}: Demo server] Echo the text back`);
      const exec = named[0].executionParams as McpExecutionParams;
      expect(exec).toMatchObject({ serverLabel: 'demo', toolName: 'echo', readOnlyHint: true, approval: { fallback: 'always' } });
    });
  });

  describe('toModelItems', () => {
    const ctx: HistoryContext = { modelNameFor: (name, label) => (label === 'demo' ? `demo__${name}` : undefined), clientCallName: () => undefined };

    it('turns an mcp_call into a function call and its output', () => {
      const done = { type: 'mcp_call', id: 'mcp_1', server_label: 'demo', name: 'echo', arguments: '{"text":"hi"}', output: 'echo: hi', error: null, status: 'completed' };
      expect(handler.toModelItems(done as PublicItem, ctx)).toEqual([
        { type: 'function_call', call_id: 'mcp_1', name: 'demo__echo', arguments: '{"text":"hi"}' },
        { type: 'function_call_output', call_id: 'mcp_1', output: 'echo: hi' },
      ]);
      const failed = { ...done, id: 'mcp_2', server_label: 'gone', output: null, error: 'boom', status: 'failed' };
      expect(handler.toModelItems(failed as PublicItem, ctx)).toEqual([
        { type: 'function_call', call_id: 'mcp_2', name: 'gone__echo', arguments: '{"text":"hi"}' },
        { type: 'function_call_output', call_id: 'mcp_2', output: 'Error: boom' },
      ]);
    });

    it("turns an approved mcp_call into the output of its approval request's call", () => {
      const approved = {
        type: 'mcp_call',
        id: 'mcp_3',
        server_label: 'demo',
        name: 'echo',
        arguments: '{}',
        output: 'ok',
        error: null,
        status: 'completed',
        approval_request_id: 'mcpr_1',
      };
      expect(handler.toModelItems(approved as PublicItem, ctx)).toEqual([{ type: 'function_call_output', call_id: 'mcpr_1', output: 'ok' }]);
    });

    it('turns an approval request into the call alone, and a listing into nothing', () => {
      const request = { type: 'mcp_approval_request', id: 'mcpr_1', server_label: 'demo', name: 'delete_item', arguments: '{"id":"7"}' };
      expect(handler.toModelItems(request as PublicItem, ctx)).toEqual([{ type: 'function_call', call_id: 'mcpr_1', name: 'demo__delete_item', arguments: '{"id":"7"}' }]);
      expect(handler.toModelItems({ type: 'mcp_list_tools', id: 'mcpl_1', server_label: 'demo', tools: [] } as PublicItem, ctx)).toEqual([]);
    });
  });

  describe('tools/list kept until the server announces a change (mcp.toolsListUntilChanged, the default)', () => {
    const servers: McpServer[] = [];
    const factory = (log: ServerLog) => {
      const server = buildDemoServer(log);
      servers.push(server);
      return server;
    };
    const posts = (server: StreamableTestServer) => server.log.httpRequests.filter((r) => r.method === 'POST').length;
    const withPool = async <T>(server: StreamableTestServer, extra: Record<string, unknown>, body: (discover: () => Promise<string[]>) => Promise<T>) => {
      const local = parseMcpSettings({ allowedHosts: [`127.0.0.1:${server.port}`], ...extra });
      const localPool = new McpConnectionPool(local);
      const localHandler = new McpToolHandler(localPool, local);
      const discover = async () =>
        (
          await localHandler.discover(localHandler.validate({ type: 'mcp', server_label: 'kept', server_url: server.url }, 'tools[0]'), {
            request: new RequestToolContext('r', 'alice'),
            signal: new AbortController().signal,
            history: [],
            requestId: 'r',
            owner: 'alice',
          })
        ).state.tools.map((t) => t.name);
      try {
        return await body(discover);
      } finally {
        await localPool.onModuleDestroy();
      }
    };
    /** POSTs one discovery made (a listing is one; a kept answer none). */
    const postsOf = async (server: StreamableTestServer, discover: () => Promise<string[]>) => {
      const before = posts(server);
      const names = await discover();
      return { names, posts: posts(server) - before };
    };

    it('lists once while the notification stream is open, again after tools/list_changed, and again once the stream ended', async () => {
      let server = await StreamableTestServer.start(factory);
      const port = server.port;
      try {
        await withPool(server, {}, async (discover) => {
          await discover();
          // The GET stream opens just after the handshake; from then on the answer is kept.
          await until(
            () => postsOf(server, discover),
            (d) => d.posts === 0,
            'a discovery answered without listing',
          );
          expect((await postsOf(server, discover)).posts).toBe(0);

          servers.at(-1)!.registerTool('late', { description: 'added later' }, async () => ({ content: [] }));
          const after = await until(
            () => discover(),
            (names) => names.includes('late'),
            'the new tool after tools/list_changed',
          );
          expect(after).toContain('late');

          // The server restarts: its notification stream ends, so the next request lists (on a new session).
          await server.kill();
          server = await StreamableTestServer.start(factory, port);
          const relisted = await until(
            () => postsOf(server, discover),
            (d) => d.posts > 0,
            'a listing after the restart',
          );
          expect(relisted.names).not.toContain('late');
        });
      } finally {
        await server.close();
      }
    });

    it('lists on every request when the server keeps no notification stream, or with the setting off', async () => {
      const noStream = await StreamableTestServer.start(factory, 0, { standaloneStream: false });
      const withStream = await StreamableTestServer.start(factory);
      try {
        await withPool(noStream, {}, async (discover) => {
          await discover();
          await new Promise((r) => setTimeout(r, 100));
          expect((await postsOf(noStream, discover)).posts).toBe(1);
          expect((await postsOf(noStream, discover)).posts).toBe(1);
        });
        await withPool(withStream, { toolsListUntilChanged: false }, async (discover) => {
          await discover();
          await until(() => withStream.log.httpRequests.some((r) => r.method === 'GET'), Boolean, 'the GET stream');
          await new Promise((r) => setTimeout(r, 100));
          expect((await postsOf(withStream, discover)).posts).toBe(1);
          expect((await postsOf(withStream, discover)).posts).toBe(1);
        });
      } finally {
        await Promise.all([noStream.close(), withStream.close()]);
      }
    });
  });

  describe('tools/list cache (mcp.toolsListCacheMs)', () => {
    // One SDK server per session: kept so that a test can make one announce a change.
    const sessions: Server[] = [];
    let server: StreamableTestServer;
    let cached: McpToolHandler;
    let cachedPool: McpConnectionPool;
    const listings = () => server.log.calls.filter((c) => c.name === 'tools/list').length;
    const discoverAs = (owner: string | null, decl: JsonObject = {}) =>
      cached.discover(cached.validate({ type: 'mcp', server_label: 'cached', server_url: server.url, ...decl }, 'tools[0]'), {
        request: new RequestToolContext('r', owner),
        signal: new AbortController().signal,
        history: [],
        requestId: 'r',
        owner,
      });

    beforeAll(async () => {
      server = await StreamableTestServer.start((log: ServerLog) => {
        const session = buildPagedServer(4, 10)(log) as unknown as Server;
        sessions.push(session);
        return session;
      });
      // Long enough that only an invalidation, never the clock, explains a second listing.
      const local = parseMcpSettings({ allowedHosts: [`127.0.0.1:${server.port}`], toolsListCacheMs: 600_000 });
      cachedPool = new McpConnectionPool(local);
      cached = new McpToolHandler(cachedPool, local);
    });

    afterAll(async () => {
      await cachedPool.onModuleDestroy();
      await server.close();
    });

    it("answers a repeated discovery from the connection's listing, items unchanged", async () => {
      const before = listings();
      const first = await discoverAs('alice');
      const second = await discoverAs('alice');
      expect(listings() - before).toBe(1);
      // The same listing, now the connection's kept one.
      expect(second.state).toEqual({ ...first.state, kept: true });
      expect(second.items).toEqual([expect.objectContaining({ type: 'mcp_list_tools', server_label: 'cached', tools: (first.items![0] as JsonObject).tools })]);
    });

    it("never hands one owner's or one credential's listing to another", async () => {
      await discoverAs('alice');
      const before = listings();
      await discoverAs('bob');
      expect(listings() - before).toBe(1);
      await discoverAs('alice', { authorization: 'another-token' });
      expect(listings() - before).toBe(2);
      await discoverAs('bob');
      expect(listings() - before).toBe(2);
    });

    it('lists again for another allowed_tools filter, and filters as without the cache', async () => {
      await discoverAs('carol');
      const before = listings();
      const filtered = await discoverAs('carol', { allowed_tools: ['tool_001', 'tool_003'] });
      expect(listings() - before).toBe(1);
      expect(filtered.state.tools.map((t) => t.name)).toEqual(['tool_001', 'tool_003']);
      expect((await discoverAs('carol')).state.tools.map((t) => t.name)).toEqual(['tool_000', 'tool_001', 'tool_002', 'tool_003']);
    });

    it('lists again once the server announces notifications/tools/list_changed', async () => {
      const sessionsBefore = sessions.length;
      await discoverAs('dave');
      const announcing = sessions[sessionsBefore];
      expect(announcing).toBeDefined();
      const before = listings();
      await announcing.sendToolListChanged();
      await until(
        async () => (await discoverAs('dave'), listings() - before),
        (n) => n > 0,
        'a listing after tools/list_changed',
      );
      expect(listings() - before).toBe(1);
    });

    it("names a kept listing's identity, the same array while it is kept, and none for a listing made for the request", async () => {
      const params = cached.validate({ type: 'mcp', server_label: 'cached', server_url: server.url, allowed_tools: ['tool_002'] }, 'tools[0]');
      const ctx = (owner: string) => ({ request: new RequestToolContext('r', owner), signal: new AbortController().signal, history: [], requestId: 'r', owner });
      const fresh = await cached.discover(params, ctx('frida'));
      const kept = await cached.discover(params, ctx('frida'));
      const again = await cached.discover(params, ctx('frida'));
      expect(cached.keptDiscovery(fresh.state)).toBeUndefined();
      expect(cached.keptDiscovery(kept.state)).toBe(kept.state.tools);
      expect(cached.keptDiscovery(again.state)).toBe(cached.keptDiscovery(kept.state));
      // The params serve every request of a kept list: discovery leaves them as they were, the owner's target in its state.
      expect(params.target.key).not.toContain('@');
      expect(again.state.target.key).toBe(`${params.target.key}@frida`);
      const [tool] = cached.normalize(params, again.state, { takenNames: new Set() });
      expect(tool.executionParams?.target).toBe(again.state.target);
      cachedPool.discard(again.state.target, 'test');
      const relisted = await cached.discover(params, ctx('frida'));
      expect(cached.keptDiscovery(relisted.state)).toBeUndefined();
      const keptAnew = await cached.discover(params, ctx('frida'));
      expect(cached.keptDiscovery(keptAnew.state)).toBeDefined();
      expect(cached.keptDiscovery(keptAnew.state)).not.toBe(cached.keptDiscovery(kept.state));
    });

    it('lists again on a new connection once the old one is retired', async () => {
      const params = cached.validate({ type: 'mcp', server_label: 'cached', server_url: server.url }, 'tools[0]');
      await discoverAs('erin');
      const before = listings();
      cachedPool.discard(params.target.forOwner('erin'), 'test');
      await discoverAs('erin');
      expect(listings() - before).toBe(1);
    });

    it('is off by default: a server that announces no changes is listed on every discovery', async () => {
      const before = paged.log.calls.filter((c) => c.name === 'tools/list').length;
      await discover(validate({ server_label: 'again', server_url: paged.url, allowed_tools: ['tool_000'] }));
      await discover(validate({ server_label: 'again', server_url: paged.url, allowed_tools: ['tool_000'] }));
      expect(settings.toolsListCacheMs).toBe(0);
      // Three pages of 25 tools in pages of 10, twice.
      expect(paged.log.calls.filter((c) => c.name === 'tools/list').length - before).toBe(6);
    });
  });
});
