import { Logger } from '@nestjs/common';
import { FunctionToolHandler } from '#tools/function/function.tool-handler.js';
import { parseMcpSettings } from '#tools/mcp/mcp.config.js';
import { McpConnectionPool } from '#tools/mcp/mcp-connection-pool.service.js';
import type { McpDeclaration } from '#tools/mcp/mcp-declaration.parser.js';
import { McpGatewayExecutor } from '#tools/mcp/mcp.gateway-executor.js';
import { McpToolHandler, type McpDiscovery, type McpExecutionParams } from '#tools/mcp/mcp.tool-handler.js';
import { InvalidRequestError } from '#tool-sdk/errors.js';
import type { JsonObject, PublicItem } from '#tool-sdk/items.js';
import type { NormalizedTool } from '#tool-sdk/contract/index.js';
import { SharedToolList, StreamableTestServer } from '../../../test/support/mcp/mcp-test-servers.js';
import { until } from '../../../test/support/until.js';
import { contentDigest } from '../protocol/json-source.js';
import { explorerWith, testConfig } from '../testing/fixtures.js';
import { ToolPreparationService } from './tool-preparation.service.js';
import type { ToolRegistry } from './tool-registry.js';

/** The server handler, counting what it validates and normalizes: a kept list does neither again. */
class CountingMcpHandler extends McpToolHandler {
  validated = 0;
  normalized = 0;
  override validate(declaration: JsonObject, path: string): McpDeclaration {
    this.validated++;
    return super.validate(declaration, path);
  }
  override normalize(params: McpDeclaration, discovered: McpDiscovery | undefined, ctx: { takenNames: ReadonlySet<string> }): NormalizedTool<McpExecutionParams>[] {
    this.normalized++;
    return super.normalize(params, discovered, ctx);
  }
}

beforeAll(() => Logger.overrideLogger(false));

/**
 * Tool lists that discover: a list whose server listing is kept is prepared
 * once per owner, content and kept listing, against a real server (the SDK's,
 * over HTTP) whose tool list changes and is announced as the spec asks.
 */
describe('ToolPreparationService: lists whose discovery is kept', () => {
  const list = new SharedToolList(3);
  let server: StreamableTestServer;
  let down: string;
  let pool: McpConnectionPool;
  let mcp: CountingMcpHandler;
  let prep: ToolPreparationService;

  beforeAll(async () => {
    server = await StreamableTestServer.start(list.server(10));
    // A port nothing listens on any more: discovery fails there, with an error item rather than a throw.
    const gone = await StreamableTestServer.start();
    down = gone.url;
    await gone.close();
    // Kept for long enough that only a change or a retired connection explains a new listing.
    const settings = parseMcpSettings({ allowedHosts: [`127.0.0.1:${server.port}`, `127.0.0.1:${new URL(down).port}`], toolsListCacheMs: 600_000, discoveryTimeoutMs: 5_000 });
    pool = new McpConnectionPool(settings);
    mcp = new CountingMcpHandler(pool, settings);
    const explorer = explorerWith([new FunctionToolHandler(), mcp], [new McpGatewayExecutor(pool)]);
    prep = new ToolPreparationService(explorer, testConfig());
  });

  afterAll(async () => {
    await pool.onModuleDestroy();
    await server.close();
  });

  const declaration = (label: string, extra: JsonObject = {}): JsonObject => ({ type: 'mcp', server_label: label, server_url: server.url, require_approval: 'never', ...extra });
  const prepare = (tools: JsonObject[], owner: string | null, history: PublicItem[] = []) =>
    prep.prepare(tools, { history, signal: new AbortController().signal, requestId: 'resp_test', owner });
  const listings = () => server.log.calls.filter((c) => c.name === 'tools/list').length;
  const counts = () => ({ validated: mcp.validated, normalized: mcp.normalized });
  const since = (before: { validated: number; normalized: number }) => ({ validated: mcp.validated - before.validated, normalized: mcp.normalized - before.normalized });
  const names = (registry: ToolRegistry) => registry.functions.map((f) => f.name);
  const targetKey = (registry: ToolRegistry, name: string) => {
    const ownership = registry.lookup(name)!.ownership;
    return ((ownership.kind === 'gateway' ? ownership.binding?.params : undefined) as McpExecutionParams).target.key;
  };
  /** A listing item as it reads apart from its id, which every request's item has of its own. */
  const withoutId = (items: readonly PublicItem[]) => items.map(({ id: _id, ...rest }) => rest);
  /** The answer's parts a client and the model see, to compare a kept preparation with a fresh one. */
  const shape = (registry: ToolRegistry) => ({
    functions: registry.functions,
    publicTools: registry.publicTools,
    continuationTools: registry.continuationTools,
    discoveryItems: withoutId(registry.discoveryItems),
    entries: [...registry.all()].map((e) => [e.modelName, e.toolType, e.toolName, e.scope, e.declarationIndex, e.offered]),
  });

  it('prepares a list again only until its listing is kept, then reuses it, each request answered the same', async () => {
    const tools = () => [declaration('kept'), { type: 'function', name: 'local', parameters: { type: 'object', properties: {} } }];
    const before = counts();
    const fresh = await prepare(tools(), 'alice');
    const first = await prepare(tools(), 'alice');
    const second = await prepare(tools(), 'alice');
    const third = await prepare(tools(), 'alice');
    // Validated once; normalized for the fresh listing and for the first kept one, then never again.
    expect(since(before)).toEqual({ validated: 1, normalized: 2 });
    expect(third).not.toBe(second);
    expect(third.lookup('kept__tool_00000')).toBe(second.lookup('kept__tool_00000'));
    expect(second.lookup('kept__tool_00000')).toBe(first.lookup('kept__tool_00000'));
    for (const registry of [first, second, third]) expect(shape(registry)).toEqual(shape(fresh));
    expect(names(third)).toEqual(['kept__tool_00000', 'kept__tool_00001', 'kept__tool_00002', 'local']);
    // Calls go over the owner's own connection.
    expect(targetKey(third, 'kept__tool_00001')).toMatch(/@alice$/);
  });

  it("never serves one owner's prepared list to another, nor one declared with other credentials", async () => {
    await prepare([declaration('owned')], 'alice');
    const alice = await prepare([declaration('owned')], 'alice');
    let before = counts();
    const bob = await prepare([declaration('owned')], 'bob');
    const anonymous = await prepare([declaration('owned')], null);
    expect(since(before)).toEqual({ validated: 2, normalized: 2 });
    expect(bob.lookup('owned__tool_00000')).not.toBe(alice.lookup('owned__tool_00000'));
    expect(targetKey(bob, 'owned__tool_00000')).toMatch(/@bob$/);
    expect(targetKey(anonymous, 'owned__tool_00000')).not.toMatch(/@/);
    expect(targetKey(alice, 'owned__tool_00000')).toMatch(/@alice$/);

    before = counts();
    const withToken = await prepare([declaration('owned', { authorization: 'token-one' })], 'alice');
    expect(since(before)).toEqual({ validated: 1, normalized: 1 });
    expect(withToken.lookup('owned__tool_00000')).not.toBe(alice.lookup('owned__tool_00000'));
    expect(targetKey(withToken, 'owned__tool_00000')).not.toBe(targetKey(alice, 'owned__tool_00000'));
    // Each owner's list stays kept for that owner.
    before = counts();
    expect((await prepare([declaration('owned')], 'alice')).lookup('owned__tool_00000')).toBe(alice.lookup('owned__tool_00000'));
    expect(since(before)).toEqual({ validated: 0, normalized: 0 });
  });

  it('prepares afresh once the server announces a changed list, and the model is offered the new tool', async () => {
    const tools = () => [declaration('changing')];
    await prepare(tools(), 'carol');
    const kept = await prepare(tools(), 'carol');
    const before = counts();
    expect(names(await prepare(tools(), 'carol'))).toEqual(names(kept));
    expect(since(before)).toEqual({ validated: 0, normalized: 0 });

    await list.add('tool_added');
    const changed = await until(
      () => prepare(tools(), 'carol'),
      (registry) => registry.functions.length === 4,
      'a preparation with the added tool',
    );
    expect(names(changed)).toContain('changing__tool_added');
    // The new listing is kept again: prepared once more, then reused.
    const settled = await prepare(tools(), 'carol');
    const after = counts();
    expect((await prepare(tools(), 'carol')).lookup('changing__tool_added')).toBe(settled.lookup('changing__tool_added'));
    expect(since(after)).toEqual({ validated: 0, normalized: 0 });
    expect(mcp.normalized - before.normalized).toBeGreaterThan(0);
  });

  it('prepares afresh, and lists again, once the connection is retired', async () => {
    const tools = () => [declaration('retired')];
    await prepare(tools(), 'dave');
    const kept = await prepare(tools(), 'dave');
    const before = { ...counts(), listings: listings() };
    pool.discard(mcp.validate(declaration('retired'), 'tools[0]').target.forOwner('dave'), 'test');
    const after = await prepare(tools(), 'dave');
    expect(listings() - before.listings).toBe(1);
    expect(mcp.normalized - before.normalized).toBe(1);
    expect(after.lookup('retired__tool_00000')).not.toBe(kept.lookup('retired__tool_00000'));
    expect(names(after)).toEqual(names(kept));
  });

  it('keeps no registry for a declaration whose listing failed, and reports the failure on every request', async () => {
    const tools = () => [{ type: 'mcp', server_label: 'unreachable', server_url: down, require_approval: 'never' }];
    const before = counts();
    for (let i = 0; i < 3; i++) {
      const registry = await prepare(tools(), 'erin');
      expect(registry.functions).toEqual([]);
      expect(registry.discoveryItems).toEqual([expect.objectContaining({ type: 'mcp_list_tools', server_label: 'unreachable', error: expect.any(String) })]);
    }
    expect(since(before).normalized).toBe(3);
  });

  it('keeps nothing of a list whose preparation throws, and throws the same error every time', async () => {
    const tools = () => [declaration('twice'), declaration('twice')];
    const before = counts();
    const errors: InvalidRequestError[] = [];
    for (let i = 0; i < 2; i++) {
      const error = await prepare(tools(), 'frank').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(InvalidRequestError);
      errors.push(error as InvalidRequestError);
    }
    expect(errors.map((e) => [e.message, e.param, e.code])).toEqual([
      ['tools[1].server_label "twice" is already used by tools[0]; each MCP server in a request needs its own label.', 'tools[1].server_label', 'duplicate_server_label'],
      ['tools[1].server_label "twice" is already used by tools[0]; each MCP server in a request needs its own label.', 'tools[1].server_label', 'duplicate_server_label'],
    ]);
    // Validated again for the second request: nothing of the failed list was kept.
    expect(since(before)).toEqual({ validated: 4, normalized: 0 });
  });

  it('adds the listing item per request: when the history has none for the server, never when it has one', async () => {
    const tools = () => [declaration('listed')];
    await prepare(tools(), 'gina');
    const kept = await prepare(tools(), 'gina');
    const listing = kept.discoveryItems[0];
    expect(listing).toMatchObject({ type: 'mcp_list_tools', server_label: 'listed' });
    const before = counts();
    const withHistory = await prepare(tools(), 'gina', [listing as PublicItem]);
    const withOtherServer = await prepare(tools(), 'gina', [{ ...listing, server_label: 'elsewhere' } as PublicItem]);
    const again = await prepare(tools(), 'gina');
    expect(since(before)).toEqual({ validated: 0, normalized: 0 });
    expect(withHistory.discoveryItems).toEqual([]);
    expect(withHistory.lookup('listed__tool_00000')).toBe(kept.lookup('listed__tool_00000'));
    expect(withoutId(withOtherServer.discoveryItems)).toEqual(withoutId([listing]));
    expect(withoutId(again.discoveryItems)).toEqual(withoutId([listing]));
    // Items of their own: the kept registry carries none of another request's.
    expect(again.discoveryItems[0].id).not.toBe(listing.id);
  });

  it("keys a list the body parser read on the parser's digest, and never gives it to the body guard as a kept list", async () => {
    const tools = [declaration('read')];
    const bytes = Buffer.from(JSON.stringify(tools));
    const digest = contentDigest(bytes);
    const read = () => {
      const value = JSON.parse(bytes.toString('utf8')) as JsonObject[];
      return { value, ctx: { history: [], signal: new AbortController().signal, requestId: 'resp_test', owner: 'hank', toolsSource: { value, bytes, digest } } };
    };
    const before = counts();
    for (let i = 0; i < 3; i++) {
      const { value, ctx } = read();
      await prep.prepare(value, ctx);
    }
    expect(since(before)).toEqual({ validated: 1, normalized: 2 });
    expect(prep.keptList('hank', digest)).toBeUndefined();
    expect(prep.recentLists('hank')).toEqual([]);
  });
});
