import { jest } from '@jest/globals';
import { OWNER_IDS, type OwnerIds } from '#config/owner-ids.js';
import { contentDigest } from '#core/protocol/json-source.js';
import { ToolPreparationService } from '#core/registry/tool-preparation.service.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';

/**
 * An agent sends the same tool list on every turn. From the second request
 * on, the gateway hands the HTTP body parser the list it already prepared
 * instead of parsing the same bytes again (see `hostileJsonShapeGuard`'s
 * `keptTools`). Through the official client, turn after turn and for two
 * tenants, everything the list reaches must be what the first turn gave:
 * the declarations sent upstream, the `tools` the response echoes, the stored
 * response, a continuation that inherits them, and a changed list.
 */
describe('a tool list sent again is the same list', () => {
  let stack: GatewayStack;

  beforeAll(async () => {
    stack = await startStack({
      // The growth test declares up to 4 000 tools: a model whose context holds them, and a cap above them.
      simulator: { maxModelLen: 1_000_000 },
      config: {
        auth: { apiKeys: ['sk-tenant-a', 'sk-tenant-b'] },
        tools: { maxToolsPerRequest: 5_000 },
      },
    });
  });
  afterAll(() => stack?.close());

  const toolsOf = (count: number) =>
    Array.from({ length: count }, (_, i) => ({
      type: 'function' as const,
      name: `tool_${i}`,
      description: `Tool ${i}: finds a thing by its key. Ünïcödé and "quotes" \\ stay as sent.`,
      parameters: { type: 'object', properties: { key: { type: 'string', enum: ['a', 'b'] }, n: { type: 'integer', minimum: i } }, required: ['key'] },
      strict: false,
    }));
  const declarations = toolsOf(40);
  const client = (key: string) => stack.openai.withOptions({ apiKey: key });
  /** The owner an API key stands for (its keyed id), and whether the list is kept for it. */
  const keptFor = (key: string, list: unknown[] = declarations) =>
    stack.app.get(ToolPreparationService).keptList(stack.app.get<OwnerIds>(OWNER_IDS).of(key), contentDigest(JSON.stringify(list)));
  const lastUpstreamTools = () => (stack.simulator.requests.at(-1)!.body as { tools: unknown[] }).tools;

  it('sends upstream, echoes and stores the same declarations on every turn, for each tenant', async () => {
    const upstream: unknown[] = [];
    const echoed: unknown[] = [];
    // Kept per tenant: the first tenant's turns say nothing to the second, whose first turn parses its own.
    const turns: Array<[string, boolean]> = [
      ['sk-tenant-a', false],
      ['sk-tenant-a', true],
      ['sk-tenant-a', true],
      ['sk-tenant-b', false],
      ['sk-tenant-b', true],
    ];
    for (const [key, keptBefore] of turns) {
      expect(keptFor(key) !== undefined).toBe(keptBefore);
      const response = await client(key).responses.create({ model: 'm', input: '[[say done]]', tools: declarations, store: true });
      expect(response.output_text).toBe('done');
      upstream.push(lastUpstreamTools());
      // From its first turn on, the list is kept by the bytes the client sends, so later turns are handed it.
      expect(keptFor(key)).toHaveLength(40);
      echoed.push(response.tools);
      const stored = await client(key).responses.retrieve(response.id);
      expect(stored.tools).toEqual(response.tools);
    }
    expect(upstream[0]).toHaveLength(40);
    for (const list of upstream) expect(list).toEqual(upstream[0]);
    expect(echoed[0]).toEqual(declarations.map((d) => expect.objectContaining(d)));
    for (const list of echoed) expect(list).toEqual(echoed[0]);
  });

  it("compares a tenant's next turn with the bytes of its own lists lately kept, never another tenant's", async () => {
    const preparation = stack.app.get(ToolPreparationService);
    const owner = (key: string) => stack.app.get<OwnerIds>(OWNER_IDS).of(key);
    const list = toolsOf(12);
    const consulted = jest.spyOn(preparation, 'recentLists');
    try {
      const first = await client('sk-tenant-a').responses.create({ model: 'm', input: '[[say one]]', tools: list, store: false });
      // The bytes the client sent are now the tenant's most recent list; the other tenant has not sent it.
      const [recent] = preparation.recentLists(owner('sk-tenant-a'));
      expect(JSON.parse(Buffer.from(recent.bytes).toString('utf8'))).toEqual(list);
      expect(recent.digest).toBe(contentDigest(recent.bytes));
      expect(preparation.recentLists(owner('sk-tenant-b')).map((r) => r.digest)).not.toContain(recent.digest);
      consulted.mockClear();
      const second = await client('sk-tenant-a').responses.create({ model: 'm', input: '[[say two]]', tools: list, store: false });
      expect(consulted.mock.calls).toEqual([[owner('sk-tenant-a')]]);
      expect((consulted.mock.results[0].value as ReturnType<ToolPreparationService['recentLists']>)[0]).toBe(recent);
      expect(second.tools).toEqual(first.tools);
      expect(lastUpstreamTools()).toHaveLength(12);
    } finally {
      consulted.mockRestore();
    }
  });

  it('lets a continuation inherit the kept list, and serves a changed list as changed', async () => {
    const api = client('sk-tenant-a');
    const first = await api.responses.create({ model: 'm', input: '[[say one]]', tools: declarations, store: true });
    const second = await api.responses.create({ model: 'm', input: '[[say two]]', tools: declarations, store: true, previous_response_id: first.id });
    const inherited = await api.responses.create({ model: 'm', input: '[[say three]]', store: true, previous_response_id: second.id });
    expect(inherited.tools).toEqual(second.tools);
    expect(lastUpstreamTools()).toHaveLength(40);

    const changed = declarations.map((d, i) => (i === 7 ? { ...d, description: 'changed' } : d));
    const answer = await api.responses.create({ model: 'm', input: '[[say four]]', tools: changed });
    expect((answer.tools[7] as { description: string }).description).toBe('changed');
    expect((lastUpstreamTools()[7] as { description?: string; function?: { description: string } }).description ?? '').toBe('changed');
    // And the kept list is untouched by the changed one.
    const again = await api.responses.create({ model: 'm', input: '[[say five]]', tools: declarations });
    expect((again.tools[7] as { description: string }).description).toBe(declarations[7].description);
  });

  it('hands the kept list to the next turn at 1x, 10x and 100x the tools (40, 400, 4 000), sending the same declarations', async () => {
    const api = client('sk-tenant-a');
    for (const count of [40, 400, 4_000]) {
      const list = toolsOf(count).map((d) => ({ ...d, description: `${d.description} (${count})` }));
      const first = await api.responses.create({ model: 'm', input: '[[say one]]', tools: list, store: false });
      const sentFirst = lastUpstreamTools();
      expect(keptFor('sk-tenant-a', list)).toHaveLength(count);
      const second = await api.responses.create({ model: 'm', input: '[[say two]]', tools: list, store: false });
      expect(sentFirst).toHaveLength(count);
      expect(lastUpstreamTools()).toEqual(sentFirst);
      expect(second.tools).toHaveLength(count);
      expect(second.tools).toEqual(first.tools);
      expect(second.tools.at(-1)).toMatchObject({ name: `tool_${count - 1}` });
    }
  }, 120_000);
});
