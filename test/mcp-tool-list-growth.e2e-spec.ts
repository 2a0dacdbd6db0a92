import { SharedToolList, StreamableTestServer } from './support/mcp/mcp-test-servers.js';
import { OpenResponsesValidator } from './support/openresponses-validator.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { until } from './support/until.js';

const validator = new OpenResponsesValidator();
const MODEL = 'switchyard-sim';
/** The server's tool list at 1×, 10× and 100×, listed 100 per page. */
const SIZES = [40, 400, 4_000];
const PAGE = 100;

/**
 * A server's tool list as it grows, through the `openai` client: every tool is
 * offered in the server's order and the last one can be called; the listing is
 * kept per connection until the server announces a change (it declares
 * `tools.listChanged`), then listed again; plain requests sent meanwhile are
 * answered as usual.
 */
describe('An MCP tool list grown 10x and 100x (openai client)', () => {
  const lists = SIZES.map((size) => new SharedToolList(size));
  let servers: StreamableTestServer[];
  let stack: GatewayStack;

  beforeAll(async () => {
    servers = await Promise.all(lists.map((list) => StreamableTestServer.start(list.server(PAGE))));
    stack = await startStack({
      config: {
        mcp: { allowedHosts: servers.map((s) => `127.0.0.1:${s.port}`), maxToolsPerServer: 10_000, discoveryTimeoutMs: 30_000 },
        tools: { maxToolsPerRequest: 10_000 },
      },
    });
  });

  afterAll(async () => {
    await stack?.close();
    await Promise.all((servers ?? []).map((s) => s.close()));
  });

  const declaration = (i: number) => ({ type: 'mcp', server_label: `grown${i}`, server_url: servers[i].url, require_approval: 'never' }) as const;
  const listings = (i: number) => servers[i].log.calls.filter((c) => c.name === 'tools/list').length;

  it.each(SIZES.map((size, i) => [size, i]))('offers all %i tools in the server order and calls the last one', async (size, i) => {
    const last = lists[i].names[size - 1];
    const response = await stack.openai.responses.create({
      model: MODEL,
      input: `Use the last tool. [[call grown${i}__${last} {}]]`,
      tools: [declaration(i) as never],
      store: false,
    });
    validator.assertResponse(response);
    expect(response.status).toBe('completed');
    const [list, call] = response.output as any[];
    expect(list.type).toBe('mcp_list_tools');
    expect(list.tools.map((t: { name: string }) => t.name)).toEqual(lists[i].names);
    expect(call).toMatchObject({ type: 'mcp_call', name: last, output: `ran ${last}` });
    // Every page was asked for once, in order.
    const cursors = servers[i].log.calls.filter((c) => c.name === 'tools/list').map((c) => c.args.cursor);
    expect(cursors).toEqual(Array.from({ length: Math.ceil(size / PAGE) }, (_, page) => (page === 0 ? null : String(page * PAGE))));
  });

  it('answers plain requests while the 100x list is listed, and all of them complete', async () => {
    const big = SIZES.length - 1;
    const fresh = new SharedToolList(SIZES[big]);
    const server = await StreamableTestServer.start(fresh.server(PAGE));
    const local = await startStack({
      config: { mcp: { allowedHosts: [`127.0.0.1:${server.port}`], maxToolsPerServer: 10_000, discoveryTimeoutMs: 30_000 }, tools: { maxToolsPerRequest: 10_000 } },
    });
    try {
      const listing = local.openai.responses.create({
        model: MODEL,
        input: 'hello',
        tools: [{ type: 'mcp', server_label: 'big', server_url: server.url, require_approval: 'never' } as never],
        store: false,
      });
      await until(
        () => server.log.calls.some((c) => c.name === 'tools/list'),
        (started) => started,
        'the first tools/list page',
      );
      const plain = await Promise.all(Array.from({ length: 5 }, (_, n) => local.openai.responses.create({ model: MODEL, input: `plain ${n}`, store: false })));
      const listed = await listing;
      expect(plain.map((r) => r.status)).toEqual(Array(5).fill('completed'));
      expect(plain.map((r) => r.output.map((item) => item.type))).toEqual(Array(5).fill(['message']));
      expect(listed.status).toBe('completed');
      expect((listed.output[0] as any).tools).toHaveLength(SIZES[big]);
    } finally {
      await local.close();
      await server.close();
    }
  });

  it('keeps the 10x listing until the server announces a change, then lists again and offers the new tool', async () => {
    const i = 1;
    const ask = (input: string) => stack.openai.responses.create({ model: MODEL, input, tools: [declaration(i) as never], store: false });
    // A listing is kept only if it started with the server's GET stream open: the connection's first
    // one ran right after initialize, before the stream opened, so the list is asked for until kept.
    await until(
      async () => {
        const before = listings(i);
        const response = await ask('hello again');
        expect((response.output[0] as any).tools).toHaveLength(SIZES[i]);
        return listings(i) === before;
      },
      (kept) => kept,
      'a request answered from the kept listing',
    );
    const before = listings(i);
    await ask('once more');
    expect(listings(i)).toBe(before);

    await lists[i].add('tool_added');
    // The announcement reaches the gateway on its GET stream; the next request lists again.
    const names = await until(
      async () => {
        const response = await ask('after the change');
        return ((response.output[0] as any).tools as Array<{ name: string }>).map((t) => t.name);
      },
      (listed) => listed.includes('tool_added'),
      'a listing with the added tool',
    );
    expect(names).toEqual([...lists[i].names]);
    expect(listings(i)).toBeGreaterThan(before);
  });
});
