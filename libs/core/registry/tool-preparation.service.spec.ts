import { CustomToolHandler } from '#tools/custom/custom.tool-handler.js';
import { FileSearchToolHandler } from '#tools/file-search/file-search.tool-handler.js';
import { FunctionToolHandler } from '#tools/function/function.tool-handler.js';
import { NamespaceToolHandler } from '#tools/namespace/namespace.tool-handler.js';
import { ToolSearchToolHandler } from '#tools/tool-search/tool-search.tool-handler.js';
import { InvalidRequestError } from '#tool-sdk/errors.js';
import { requireString } from '#tool-sdk/helpers/declaration-validation.js';
import type { DiscoveryContext, DiscoveryResult, NormalizedTool, ToolHandler } from '#tool-sdk/contract/index.js';
import type { JsonObject, PublicItem } from '#tool-sdk/items.js';
import { deferred, flush, type Deferred } from '../testing/deferred.js';
import { explorerWith, testConfig } from '../testing/fixtures.js';
import { ProbeExecutor, ProbeToolHandler } from '../testing/probe-tool.js';
import { ToolPreparationService } from './tool-preparation.service.js';

/** A type with a discovery stage the test controls (what MCP `tools/list` does). */
class ListingHandler implements ToolHandler<{ label: string }, string[]> {
  readonly type = 'listing';
  readonly gatewayOwned = false;
  readonly pending = new Map<string, Deferred<DiscoveryResult<string[]>>>();
  readonly contexts: DiscoveryContext[] = [];
  inFlight = 0;
  peakInFlight = 0;

  validate(decl: JsonObject, path: string) {
    return { label: requireString(decl, 'server_label', path) };
  }

  async discover(p: { label: string }, ctx: DiscoveryContext): Promise<DiscoveryResult<string[]>> {
    this.contexts.push(ctx);
    this.inFlight++;
    this.peakInFlight = Math.max(this.peakInFlight, this.inFlight);
    const d = deferred<DiscoveryResult<string[]>>();
    this.pending.set(p.label, d);
    try {
      return await d.promise;
    } finally {
      this.inFlight--;
    }
  }

  normalize(p: { label: string }, discovered: string[] | undefined): NormalizedTool[] {
    return (discovered ?? []).map((tool) => ({
      fn: { type: 'function', name: `${p.label}_${tool}`, parameters: { type: 'object', properties: {} } },
      toolName: tool,
      scope: p.label,
    }));
  }
}

/**
 * Discovery that answers on a timer, as a server's listing does over the network, noting when each
 * one starts and ends: run one after another, the second could only start once the first had ended.
 */
class SlowListingHandler extends ListingHandler {
  readonly events: string[] = [];

  override async discover(p: { label: string }): Promise<DiscoveryResult<string[]>> {
    this.events.push(`start ${p.label}`);
    this.inFlight++;
    this.peakInFlight = Math.max(this.peakInFlight, this.inFlight);
    try {
      await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      this.inFlight--;
    }
    this.events.push(`end ${p.label}`);
    return { state: ['t'], items: [{ type: 'listing', id: p.label }] };
  }
}

const ctx = { history: [] as PublicItem[], signal: new AbortController().signal, requestId: 'resp_test' };
const fn = (name: string, extra: JsonObject = {}): JsonObject => ({ type: 'function', name, parameters: { type: 'object', properties: {} }, ...extra });

function service(options: { config?: Record<string, unknown>; listing?: ListingHandler } = {}) {
  const probe = new ProbeExecutor();
  const handlers = [new FunctionToolHandler(), new CustomToolHandler(), new NamespaceToolHandler(), new FileSearchToolHandler(), new ProbeToolHandler()];
  if (options.listing) handlers.push(options.listing as never);
  const explorer = explorerWith(handlers, [probe]);
  return { prep: new ToolPreparationService(explorer, testConfig(options.config)), probe };
}

function invalid(run: () => unknown): InvalidRequestError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidRequestError);
    return err as InvalidRequestError;
  }
  throw new Error('expected an InvalidRequestError');
}

async function invalidAsync(run: () => Promise<unknown>): Promise<InvalidRequestError> {
  const err = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InvalidRequestError);
  return err as InvalidRequestError;
}

describe('ToolPreparationService', () => {
  describe('stage 1: validation', () => {
    const { prep } = service();

    it.each<[string, unknown[], string]>([
      ['a declaration that is not an object', [fn('ok'), 'nope'], 'tools[1]'],
      ['a declaration that is an array', [[]], 'tools[0]'],
      ['a missing type', [{ name: 'x' }], 'tools[0].type'],
      ['a function name the model cannot call', [fn('ok'), fn('has space')], 'tools[1].name'],
      ['a non-object parameters schema', [fn('f', { parameters: { type: 'string' } })], 'tools[0].parameters.type'],
      ['a custom grammar without syntax', [{ type: 'custom', name: 'c', format: { type: 'grammar', definition: 'x' } }], 'tools[0].format.syntax'],
      ['a bad namespace member', [{ type: 'namespace', name: 'ns', tools: [fn('a'), fn('b c')] }], 'tools[0].tools[1].name'],
      ['a namespace member twice', [{ type: 'namespace', name: 'ns', tools: [fn('a'), fn('a')] }], 'tools[0].tools[1].name'],
      ['file_search without vector stores', [fn('f'), fn('g'), { type: 'file_search' }], 'tools[2].vector_store_ids'],
      ['a gateway type with a bad field', [{ type: 'probe', name: 'p', parallel: 'yes' }], 'tools[0].parallel'],
    ])('names the field for %s', (_what, tools, param) => {
      const err = invalid(() => prep.validate(tools as JsonObject[]));
      expect(err.param).toBe(param);
      expect(err).toBeInstanceOf(InvalidRequestError);
    });

    it('fails before any discovery starts', async () => {
      const listing = new ListingHandler();
      const { prep: withListing } = service({ listing });
      const err = await invalidAsync(() => withListing.prepare([{ type: 'listing', server_label: 'a' }, fn('bad name')], ctx));
      expect(err.param).toBe('tools[1].name');
      expect(listing.contexts).toHaveLength(0);
    });

    it('refuses a declared type no loaded module handles, naming it and what is loaded', async () => {
      const err = await invalidAsync(() => prep.prepare([fn('known'), { type: 'hologram', name: 'h' }], ctx));
      expect(err).toMatchObject({ param: 'tools[1].type', code: 'unsupported_tool_type' });
      expect(err.message).toMatch(/^tools\[1\]\.type "hologram" is not available on this gateway: no loaded tool module handles it \(loaded: .*function/);
    });

    it('with unhandledTypes: skip, skips declarations of unknown types instead of failing or registering them', async () => {
      const { prep } = service({ config: { tools: { unhandledTypes: 'skip' } } });
      const registry = await prep.prepare([{ type: 'hologram', name: 'h' }, fn('known')], ctx);
      expect([...registry.names()]).toEqual(['known']);
      expect(registry.functions.map((f) => f.name)).toEqual(['known']);
      expect(registry.publicTools.map((t) => t.type)).toEqual(['function']);
      expect(registry.lookup('known')?.declarationIndex).toBe(1);
    });
  });

  describe('stages 3–4: normalize and register', () => {
    it('registers client ownership with the public shape of function, custom and namespace tools', async () => {
      const { prep } = service();
      const registry = await prep.prepare(
        [fn('run_shell'), { type: 'custom', name: 'apply_patch' }, { type: 'namespace', name: 'files', tools: [fn('read'), { type: 'custom', name: 'write' }] }],
        ctx,
      );

      expect(registry.functions.map((f) => f.name)).toEqual(['run_shell', 'apply_patch', 'files__read', 'files__write']);
      expect(registry.lookup('run_shell')).toMatchObject({
        toolType: 'function',
        toolName: 'run_shell',
        offered: true,
        declarationIndex: 0,
        ownership: { kind: 'client', shape: { kind: 'function_call', name: 'run_shell' } },
      });
      expect(registry.lookup('apply_patch')?.ownership).toEqual({
        kind: 'client',
        shape: { kind: 'custom_tool_call', name: 'apply_patch', relay: { kind: 'string-field', field: 'input' }, idPrefix: 'ctc' },
      });
      expect(registry.lookup('files__read')?.ownership).toEqual({
        kind: 'client',
        shape: { kind: 'function_call', name: 'read', scope: 'files', trailingFields: { namespace: 'files' } },
      });
      expect(registry.lookup('files__write')?.ownership).toEqual({
        kind: 'client',
        shape: {
          kind: 'custom_tool_call',
          name: 'write',
          relay: { kind: 'string-field', field: 'input' },
          idPrefix: 'ctc',
          scope: 'files',
          trailingFields: { namespace: 'files' },
        },
      });
      expect(registry.findByIdentity('namespace', 'read', 'files')?.modelName).toBe('files__read');
      expect(registry.findByIdentity('custom', 'apply_patch')?.modelName).toBe('apply_patch');
      // The custom tool reaches the model as a function taking one string.
      expect(registry.functions[1].parameters).toMatchObject({ required: ['input'], properties: { input: { type: 'string' } } });
    });

    it('binds gateway-owned tools to their executor with parameters and same-tool policy', async () => {
      const { prep, probe } = service();
      const registry = await prep.prepare(
        [
          { type: 'probe', name: 'serial' },
          { type: 'probe', name: 'overlap', parallel: true, server_label: 'srv' },
        ],
        ctx,
      );

      const serial = registry.lookup('serial')!;
      expect(serial.ownership.kind).toBe('gateway');
      const binding = serial.ownership.kind === 'gateway' ? serial.ownership.binding : undefined;
      expect(binding?.executor).toBe(probe);
      expect(binding?.params).toMatchObject({ name: 'serial', parallel: false });
      expect(binding?.parallelSafe).toBe(false);

      // Behind a server label the model sees a qualified name; the entry keeps the tool's own.
      const overlap = registry.lookup('srv__overlap')!;
      expect(overlap.ownership.kind === 'gateway' && overlap.ownership.binding?.parallelSafe).toBe(true);
      expect(overlap).toMatchObject({ toolName: 'overlap', scope: 'srv', offered: true });
      expect(registry.findByIdentity('probe', 'overlap', 'srv')).toBe(overlap);
    });

    it("takes the executor's own timeout first, then the per-type setting, then the default", async () => {
      const timeout = async (config: Record<string, unknown>, decl: JsonObject) => {
        const registry = await service({ config }).prep.prepare([decl], ctx);
        const entry = registry.lookup(String(decl.name))!;
        return entry.ownership.kind === 'gateway' ? entry.ownership.binding?.timeoutMs : undefined;
      };
      const probe = { type: 'probe', name: 'p' };
      expect(await timeout({ tools: { defaultTimeoutMs: 9_000 } }, probe)).toBe(9_000);
      expect(await timeout({ tools: { defaultTimeoutMs: 9_000, timeoutMsByType: { probe: 1_234 } } }, probe)).toBe(1_234);
      expect(await timeout({ tools: { defaultTimeoutMs: 9_000, timeoutMsByType: { other: 1_234 } } }, probe)).toBe(9_000);
      expect(await timeout({ tools: { defaultTimeoutMs: 9_000, timeoutMsByType: { probe: 1_234 } } }, { ...probe, timeout_ms: 55 })).toBe(55);
    });

    it('routes a gateway type whose executor is not registered, without a binding', async () => {
      const { prep } = service();
      const registry = await prep.prepare([{ type: 'file_search', vector_store_ids: ['vs_1'] }, fn('visible')], ctx);

      // file_search is modelled (one function taking queries); no executor is registered in this test.
      const fileSearch = registry.lookup('file_search')!;
      expect(fileSearch.ownership).toEqual({ kind: 'gateway' });
      expect(fileSearch.offered).toBe(true);
      expect(registry.functions.map((f) => f.name)).toEqual(['file_search', 'visible']);
      expect(registry.publicTools.map((t) => t.type)).toEqual(['file_search', 'function']);
    });

    it('rejects two declarations of one name with duplicate_tool_name', async () => {
      const { prep } = service();
      const err = await invalidAsync(() => prep.prepare([fn('same'), fn('other'), fn('same')], ctx));
      expect(err).toMatchObject({ name: 'InvalidRequestError', code: 'duplicate_tool_name', param: 'tools[2].name' });
    });

    it('rejects a namespace member whose flattened name meets a declared function', async () => {
      const { prep } = service();
      const err = await invalidAsync(() => prep.prepare([fn('ns__run'), { type: 'namespace', name: 'ns', tools: [fn('run')] }], ctx));
      expect(err).toMatchObject({ code: 'duplicate_tool_name', param: 'tools[1].name' });
    });

    it('rejects a client tool named like a gateway tool', async () => {
      const { prep } = service();
      const err = await invalidAsync(() =>
        prep.prepare(
          [
            { type: 'probe', name: 'lookup' },
            { type: 'custom', name: 'lookup' },
          ],
          ctx,
        ),
      );
      expect(err.code).toBe('duplicate_tool_name');
    });

    it('echoes public declarations as the handler shapes them', async () => {
      const { prep } = service();
      const registry = await prep.prepare([fn('f', { description: 'd', extra_field: 1 })], ctx);
      expect(registry.publicTools).toEqual([{ type: 'function', name: 'f', description: 'd', parameters: { type: 'object', properties: {} }, strict: null }]);
    });
  });

  describe('stage 2: discovery', () => {
    it('passes the request context, feeds the state to normalize and collects items in declaration order', async () => {
      const listing = new ListingHandler();
      const { prep } = service({ listing });
      const history: PublicItem[] = [{ type: 'message', role: 'user', content: 'hi' }];
      const signal = new AbortController().signal;
      const prepared = prep.prepare([{ type: 'listing', server_label: 'a' }, fn('plain'), { type: 'listing', server_label: 'b' }], { history, signal, requestId: 'resp_1' });
      await flush();
      // Finish in reverse order: collection must still follow declaration order.
      listing.pending.get('b')!.resolve({ state: ['y'], items: [{ type: 'listing', id: 'list_b' }] });
      listing.pending.get('a')!.resolve({ state: ['x', 'z'], items: [{ type: 'listing', id: 'list_a' }] });
      const registry = await prepared;

      expect(registry.discoveryItems.map((i) => i.id)).toEqual(['list_a', 'list_b']);
      expect(registry.functions.map((f) => f.name)).toEqual(['a_x', 'a_z', 'plain', 'b_y']);
      expect(registry.lookup('b_y')).toMatchObject({ scope: 'b', toolName: 'y', declarationIndex: 2 });
      expect(listing.contexts[0]).toMatchObject({ signal, history, requestId: 'resp_1' });
    });

    it('runs discoveries concurrently', async () => {
      const listing = new ListingHandler();
      const { prep } = service({ listing });
      const prepared = prep.prepare(
        [
          { type: 'listing', server_label: 'a' },
          { type: 'listing', server_label: 'b' },
        ],
        ctx,
      );
      await flush();
      // Both are in flight before either is answered.
      expect(listing.peakInFlight).toBe(2);
      listing.pending.get('a')!.resolve({ state: [] });
      listing.pending.get('b')!.resolve({ state: [] });
      await prepared;
    });

    it('waits for the slowest discovery, not the sum: all three are under way before the first answers', async () => {
      const listing = new SlowListingHandler();
      const { prep } = service({ listing });
      const registry = await prep.prepare(
        [
          { type: 'listing', server_label: 'a' },
          { type: 'listing', server_label: 'b' },
          { type: 'listing', server_label: 'c' },
        ],
        ctx,
      );
      // An order, not a duration: a timer cannot fire before the discoveries started in the same turn,
      // however fast or loaded the machine, and awaited one by one each would end before the next began.
      expect(listing.peakInFlight).toBe(3);
      expect(listing.events.slice(0, 3)).toEqual(['start a', 'start b', 'start c']);
      expect(registry.discoveryItems.map((i) => i.id)).toEqual(['a', 'b', 'c']);
    });

    it("reads the run's signal only when a discovery asks for it", async () => {
      const listing = new ListingHandler();
      const { prep } = service({ listing });
      const signal = new AbortController().signal;
      let reads = 0;
      const lazy = {
        history: [] as PublicItem[],
        requestId: 'resp_lazy',
        get signal() {
          reads++;
          return signal;
        },
      };
      const prepared = prep.prepare(
        [
          { type: 'listing', server_label: 'a' },
          { type: 'listing', server_label: 'b' },
        ],
        lazy,
      );
      await flush();
      // Both discoveries started (a kept listing answers without asking for the signal): none made it.
      expect(listing.contexts).toHaveLength(2);
      expect(reads).toBe(0);
      // A discovery that goes to its server asks, and gets the run's own signal.
      expect(listing.contexts[1].signal).toBe(signal);
      expect(reads).toBe(1);
      listing.pending.get('a')!.resolve({ state: [] });
      listing.pending.get('b')!.resolve({ state: [] });
      await prepared;
    });

    it('fails the preparation when a discovery fails', async () => {
      const listing = new ListingHandler();
      const { prep } = service({ listing });
      const prepared = prep.prepare([{ type: 'listing', server_label: 'a' }], ctx);
      await flush();
      listing.pending.get('a')!.reject(new InvalidRequestError('server a unreachable', 'tools[0].server_url', 'mcp_unreachable'));
      await expect(prepared).rejects.toMatchObject({ code: 'mcp_unreachable' });
    });
  });
});

describe('ToolPreparationService: tools loaded by history items', () => {
  const toolSearch = new ToolSearchToolHandler();
  const prep = new ToolPreparationService(explorerWith([new FunctionToolHandler(), new NamespaceToolHandler(), new FileSearchToolHandler(), toolSearch]), testConfig());
  const output = (tools: unknown, id = 'tso_1'): PublicItem => ({ type: 'tool_search_output', id, call_id: 'c1', execution: 'client', tools }) as PublicItem;
  const declared = [{ type: 'tool_search', execution: 'client' }, fn('shell')];

  it('registers loaded tools after the declared ones, as client-owned, the request winning on a shared name', async () => {
    const loaded = output([fn('open_ticket'), fn('shell', { description: 'loaded copy' }), { type: 'namespace', name: 'jira', description: 'Jira', tools: [fn('search')] }]);
    const registry = await prep.prepare(declared, { ...ctx, history: [loaded], inputStart: 0 });
    expect(registry.functions.map((f) => f.name)).toEqual(['tool_search', 'shell', 'open_ticket', 'jira__search']);
    expect(registry.lookup('shell')?.toolType).toBe('function');
    expect(registry.functions.find((f) => f.name === 'shell')?.description ?? null).toBeNull();
    expect(registry.lookup('open_ticket')?.ownership).toEqual({ kind: 'client', shape: { kind: 'function_call', name: 'open_ticket' } });
    expect(registry.lookup('jira__search')?.ownership).toEqual({
      kind: 'client',
      shape: { kind: 'function_call', name: 'search', scope: 'jira', trailingFields: { namespace: 'jira' } },
    });
    expect(registry.lookup('tool_search')?.ownership).toEqual({
      kind: 'client',
      shape: { kind: 'tool_search_call', name: 'tool_search', relay: { kind: 'json' }, idPrefix: 'tsc', omitName: true, leadingFields: { execution: 'client' } },
    });
    // Loaded tools are not the request's declarations.
    expect(registry.publicTools.map((t) => t.type)).toEqual(['tool_search', 'function']);
  });

  it('loads from stored items too, and an earlier load keeps its entry', async () => {
    const registry = await prep.prepare(declared, {
      ...ctx,
      history: [output([fn('a', { description: 'first' })], 'tso_1'), output([fn('a', { description: 'second' }), fn('b')], 'tso_2')],
      inputStart: 1,
    });
    expect(registry.functions.map((f) => [f.name, f.description ?? null])).toEqual([
      ['tool_search', expect.any(String)],
      ['shell', null],
      ['a', 'first'],
      ['b', null],
    ]);
  });

  it('names bad loaded declarations by their place in the input, and refuses gateway-owned types', async () => {
    const param = async (history: PublicItem[], inputStart = 0) => {
      try {
        await prep.prepare(declared, { ...ctx, history, inputStart });
      } catch (err) {
        expect(err).toBeInstanceOf(InvalidRequestError);
        return (err as InvalidRequestError).param;
      }
      throw new Error('expected a refusal');
    };
    expect(await param([{ type: 'message', id: 'm' } as PublicItem, output('all')], 0)).toBe('input[1].tools');
    expect(await param([output([{ type: 'function' }])], 0)).toBe('input[0].tools[0].name');
    expect(await param([output([fn('x'), 'nope'])], 0)).toBe('input[0].tools[1]');
    expect(await param([output([{ type: 'file_search', vector_store_ids: ['v'] }])], 0)).toBe('input[0].tools[0].type');
  });
});
