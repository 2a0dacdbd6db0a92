import { ApplyPatchToolHandler } from '#tools/apply-patch/apply-patch.tool-handler.js';
import { ComputerToolHandler, ComputerUseToolHandler } from '#tools/computer-use/computer-use.tool-handler.js';
import { CustomToolHandler } from '#tools/custom/custom.tool-handler.js';
import { FileSearchToolHandler } from '#tools/file-search/file-search.tool-handler.js';
import { FunctionToolHandler, type FunctionToolParams } from '#tools/function/function.tool-handler.js';
import { LocalShellToolHandler } from '#tools/local-shell/local-shell.tool-handler.js';
import { NamespaceToolHandler } from '#tools/namespace/namespace.tool-handler.js';
import { ShellToolHandler } from '#tools/shell/shell.tool-handler.js';
import { ToolSearchToolHandler } from '#tools/tool-search/tool-search.tool-handler.js';
import { WebSearchToolHandler } from '#tools/web-search/web-search.tool-handler.js';
import { InvalidRequestError } from '#tool-sdk/errors.js';
import type { FunctionToolDef, JsonObject, PublicItem } from '#tool-sdk/items.js';
import { contentDigest, type JsonSource } from '../protocol/json-source.js';
import { explorerWith, testConfig } from '../testing/fixtures.js';
import { ToolPreparationService } from './tool-preparation.service.js';
import type { ToolRegistry } from './tool-registry.js';

/** The function handler, counting what it validates: a cache hit validates nothing. */
class CountingFunctionHandler extends FunctionToolHandler {
  validated = 0;
  override validate(decl: JsonObject, path: string): FunctionToolParams {
    this.validated++;
    return super.validate(decl, path);
  }
}

const ctx = { history: [] as PublicItem[], signal: new AbortController().signal, requestId: 'resp_test' };
const fn = (name: string, extra: JsonObject = {}): JsonObject => ({ type: 'function', name, parameters: { type: 'object', properties: { q: { type: 'string' } } }, ...extra });
const tools = (): JsonObject[] => [fn('lookup', { description: 'finds a thing' }), fn('save'), { type: 'custom', name: 'patch' }];

function service(config: Record<string, unknown> = {}) {
  const functions = new CountingFunctionHandler();
  const explorer = explorerWith([
    functions,
    new CustomToolHandler(),
    new NamespaceToolHandler(),
    new FileSearchToolHandler(),
    new ToolSearchToolHandler(),
    new ShellToolHandler(),
    new ApplyPatchToolHandler(),
    new LocalShellToolHandler(),
    new ComputerUseToolHandler(),
    new ComputerToolHandler(),
    new WebSearchToolHandler(),
  ]);
  return { prep: new ToolPreparationService(explorer, testConfig(config)), functions };
}

async function refusal(run: () => Promise<unknown>): Promise<InvalidRequestError> {
  const err = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InvalidRequestError);
  return err as InvalidRequestError;
}

const shape = (registry: ToolRegistry) => ({
  functions: registry.functions.map((f) => f.name),
  publicTools: registry.publicTools,
  entries: [...registry.all()].map((e) => [e.modelName, e.toolType, e.declarationIndex]),
});

describe('ToolPreparationService: the prepared-tools cache', () => {
  it('prepares a list once and reuses it for the same owner and content, each request with a registry of its own', async () => {
    const { prep, functions } = service();
    const first = await prep.prepare(tools(), { ...ctx, owner: 'key_a' });
    const second = await prep.prepare(tools(), { ...ctx, owner: 'key_a' });
    expect(functions.validated).toBe(2);
    expect(second).not.toBe(first);
    expect(second.lookup('lookup')).toBe(first.lookup('lookup'));
    expect(shape(second)).toEqual(shape(first));
    expect(shape(second)).toEqual({
      functions: ['lookup', 'save', 'patch'],
      publicTools: [
        { type: 'function', name: 'lookup', description: 'finds a thing', parameters: { type: 'object', properties: { q: { type: 'string' } } }, strict: null },
        { type: 'function', name: 'save', description: null, parameters: { type: 'object', properties: { q: { type: 'string' } } }, strict: null },
        { type: 'custom', name: 'patch', description: null, format: { type: 'text' } },
      ],
      entries: [
        ['lookup', 'function', 0],
        ['save', 'function', 1],
        ['patch', 'custom', 2],
      ],
    });
  });

  it("never serves one owner's list to another, nor an authenticated owner's to requests without one", async () => {
    const { prep, functions } = service();
    const a = await prep.prepare(tools(), { ...ctx, owner: 'key_a' });
    const b = await prep.prepare(tools(), { ...ctx, owner: 'key_b' });
    const anonymous = await prep.prepare(tools(), ctx);
    expect(functions.validated).toBe(6);
    expect(b.lookup('lookup')).not.toBe(a.lookup('lookup'));
    expect(anonymous.lookup('lookup')).not.toBe(a.lookup('lookup'));
    expect(shape(b)).toEqual(shape(a));
  });

  it('prepares a changed list afresh', async () => {
    const { prep, functions } = service();
    await prep.prepare(tools(), ctx);
    const changed = tools();
    changed[1] = fn('save', { description: 'now described' });
    const registry = await prep.prepare(changed, ctx);
    expect(functions.validated).toBe(4);
    expect(registry.functions[1].description).toBe('now described');
  });

  it('keys a list the body parser read on its bytes, and prepares it from them', async () => {
    const { prep, functions } = service();
    const bytes = Buffer.from(JSON.stringify(tools(), null, 2));
    const parsed = (): { list: JsonObject[]; toolsSource: JsonSource } => {
      const list = JSON.parse(bytes.toString('utf8')) as JsonObject[];
      return { list, toolsSource: { value: list, bytes, digest: contentDigest(bytes) } };
    };
    const read = [parsed(), parsed(), parsed()];
    const first = await prep.prepare(read[0].list, { ...ctx, toolsSource: read[0].toolsSource });
    const second = await prep.prepare(read[1].list, { ...ctx, toolsSource: read[1].toolsSource });
    expect(functions.validated).toBe(2);
    expect(second.lookup('lookup')).toBe(first.lookup('lookup'));
    expect(shape(first)).toEqual(shape(await service().prep.prepare(tools(), ctx)));
    // Another owner, the same bytes: prepared for that owner.
    await prep.prepare(read[2].list, { ...ctx, owner: 'key_b', toolsSource: read[2].toolsSource });
    expect(functions.validated).toBe(4);
  });

  it("keys a list on its source's digest, not hashed again, and ignores a source that describes another list", async () => {
    const { prep, functions } = service();
    const bytes = Buffer.from(JSON.stringify(tools()));
    // A digest no hash gives: a hit under it shows the given digest was the key, the list not hashed again.
    const source = (value: JsonObject[]): JsonSource => ({ value, bytes, digest: 'given-digest' });
    const first = tools();
    await prep.prepare(first, { ...ctx, toolsSource: source(first) });
    const again = tools();
    const hit = await prep.prepare(again, { ...ctx, toolsSource: source(again) });
    expect(functions.validated).toBe(2);
    expect(prep.keptList(null, 'given-digest')).toEqual(tools());
    expect(prep.keptList(null, contentDigest(bytes))).toBeUndefined();
    expect(hit.functions.map((f) => f.name)).toEqual(['lookup', 'save', 'patch']);
    // A source whose value is another array (the request's tools replaced since) is not the list's: it is serialized.
    const replaced = [fn('other')];
    const own = await prep.prepare(replaced, { ...ctx, toolsSource: source(tools()) });
    expect(own.functions.map((f) => f.name)).toEqual(['other']);
    expect(prep.keptList(null, contentDigest(JSON.stringify(replaced)))).toEqual(replaced);
  });

  it('keeps the client-owned types a coding agent declares every turn (shell, apply_patch, local_shell, computer)', async () => {
    const { prep, functions } = service();
    const list = (): JsonObject[] => [
      ...tools(),
      { type: 'shell', environment: { type: 'local' } },
      { type: 'apply_patch' },
      { type: 'local_shell' },
      { type: 'computer_use_preview', display_width: 1024, display_height: 768, environment: 'linux' },
      { type: 'web_search', search_context_size: 'low' },
    ];
    const first = await prep.prepare(list(), { ...ctx, owner: 'key_a' });
    const second = await prep.prepare(list(), { ...ctx, owner: 'key_a' });
    expect(functions.validated).toBe(2);
    expect(second.lookup('shell')).toBe(first.lookup('shell'));
    expect(shape(second).functions).toEqual(['lookup', 'save', 'patch', 'shell', 'apply_patch', 'local_shell', 'computer', 'web_search']);
    expect(shape(second).publicTools.slice(3)).toEqual([
      { type: 'shell', environment: { type: 'local' } },
      { type: 'apply_patch' },
      { type: 'local_shell' },
      { type: 'computer_use_preview', display_width: 1024, display_height: 768, environment: 'linux' },
      { type: 'web_search', search_context_size: 'low', user_location: null },
    ]);
  });

  it('does not keep a list with a type that is not cacheable', async () => {
    const { prep, functions } = service();
    const list = [...tools(), { type: 'file_search', vector_store_ids: ['vs_1'] }];
    const first = await prep.prepare(list, ctx);
    const second = await prep.prepare(list, ctx);
    expect(functions.validated).toBe(4);
    expect(second.lookup('lookup')).not.toBe(first.lookup('lookup'));
    expect(first.isSealed || second.isSealed).toBe(false);
  });

  it("gives the parsed declarations of a list kept for an owner by content digest, frozen, and none of another owner's", async () => {
    const { prep, functions } = service();
    const text = JSON.stringify(tools());
    const digest = contentDigest(text);
    expect(prep.keptList('key_a', digest)).toBeUndefined();
    await prep.prepare(tools(), { ...ctx, owner: 'key_a' });
    const kept = prep.keptList('key_a', digest)!;
    expect(kept).toEqual(tools());
    expect(Object.isFrozen(kept) && Object.isFrozen(kept[0]) && Object.isFrozen(kept[0].parameters)).toBe(true);
    // Another tenant learns nothing from it: the same bytes are not kept for them, nor for requests without an owner.
    expect(prep.keptList('key_b', digest)).toBeUndefined();
    expect(prep.keptList(null, digest)).toBeUndefined();
    // Handed to the owner's next request as its own list (what the body parser does): its registry, parsed never again.
    const registry = await prep.prepare(kept as JsonObject[], { ...ctx, owner: 'key_a', toolsSource: { value: kept, bytes: Buffer.from(text), digest } });
    expect(shape(registry)).toEqual(shape(await service().prep.prepare(tools(), ctx)));
    expect(functions.validated).toBe(2);
    // Not cacheable, or nothing kept at all: no list.
    const withFileSearch = [...tools(), { type: 'file_search', vector_store_ids: ['vs_1'] }];
    await prep.prepare(withFileSearch, ctx);
    expect(prep.keptList(null, contentDigest(JSON.stringify(withFileSearch)))).toBeUndefined();
    const off = service({ tools: { declarationCacheEntries: 0 } }).prep;
    await off.prepare(tools(), ctx);
    expect(off.keptList(null, digest)).toBeUndefined();
  });

  it("names an owner's lately used lists read from bodies, most recent first, at most four, and none of another owner's", async () => {
    const { prep } = service();
    const bodies: Buffer[] = [];
    /** The arguments of `prepare` for `list` read from a body of `owner`'s. */
    const fromBody = (list: JsonObject[], owner: string): Parameters<ToolPreparationService['prepare']> => {
      const body = Buffer.from(`{"tools":${JSON.stringify(list)}}`);
      bodies.push(body);
      // A view into the body, as the body guard reads it: the kept bytes must be a copy of their own.
      const bytes = body.subarray(9, body.length - 1);
      const parsed = JSON.parse(bytes.toString('utf8')) as JsonObject[];
      return [parsed, { ...ctx, owner, toolsSource: { value: parsed, bytes, digest: contentDigest(bytes) } }];
    };
    const lists = ['a', 'b', 'c', 'd', 'e'].map((name) => [fn(name)]);
    expect(prep.recentLists('key_a')).toEqual([]);
    for (const list of lists) await prep.prepare(...fromBody(list, 'key_a'));
    // Used again: first.
    await prep.prepare(...fromBody(lists[2], 'key_a'));
    // The bodies are reused (the guard blanks kept lists in them): what is kept does not change with them.
    for (const body of bodies) body.fill(0x20);
    const recent = prep.recentLists('key_a');
    expect(recent.map((r) => Buffer.from(r.bytes).toString('utf8'))).toEqual(['c', 'e', 'd', 'b'].map((name) => JSON.stringify([fn(name)])));
    expect(recent.map((r) => r.digest)).toEqual(recent.map((r) => contentDigest(r.bytes)));
    expect(prep.recentLists('key_b')).toEqual([]);
    expect(prep.recentLists(null)).toEqual([]);
    // A list serialized by the gateway (no body bytes) is kept but has no bytes to compare.
    await prep.prepare([fn('z')], { ...ctx, owner: 'key_c' });
    expect(prep.recentLists('key_c')).toEqual([]);
    // A list that left the cache is no longer named.
    const small = service({ tools: { declarationCacheEntries: 1 } }).prep;
    await small.prepare(...fromBody(lists[0], 'key_a'));
    await small.prepare(...fromBody(lists[1], 'key_b'));
    expect(small.recentLists('key_a')).toEqual([]);
    expect(small.recentLists('key_b')).toHaveLength(1);
  });

  it('keeps nothing with either bound at 0', async () => {
    for (const config of [{ tools: { declarationCacheEntries: 0 } }, { tools: { declarationCacheBytes: 0 } }]) {
      const { prep, functions } = service(config);
      await prep.prepare(tools(), ctx);
      await prep.prepare(tools(), ctx);
      expect(functions.validated).toBe(4);
    }
  });

  it('drops the least recently used list past tools.declarationCacheEntries', async () => {
    const { prep, functions } = service({ tools: { declarationCacheEntries: 1 } });
    await prep.prepare([fn('a')], ctx);
    await prep.prepare([fn('b')], ctx);
    await prep.prepare([fn('b')], ctx);
    expect(functions.validated).toBe(2);
    await prep.prepare([fn('a')], ctx);
    expect(functions.validated).toBe(3);
  });

  it('shares frozen data: a request cannot change what the next one is given', async () => {
    const { prep } = service();
    const first = await prep.prepare(tools(), ctx);
    expect(() => (first.functions as FunctionToolDef[]).push({ type: 'function', name: 'evil', parameters: {} })).toThrow(TypeError);
    expect(() => {
      (first.publicTools[0] as JsonObject).name = 'renamed';
    }).toThrow(TypeError);
    expect(() => {
      (first.functions[0].parameters as JsonObject).type = 'array';
    }).toThrow(TypeError);
    expect(() => {
      (first.lookup('save') as { offered: boolean }).offered = false;
    }).toThrow(TypeError);
    // What a request adds to its own registry stays there.
    first.add({ ...first.lookup('save')!, modelName: 'extra', toolName: 'extra' });
    expect(first.has('extra')).toBe(true);
    const second = await prep.prepare(tools(), ctx);
    expect(second.has('extra')).toBe(false);
    expect(second.functions.map((f) => f.name)).toEqual(['lookup', 'save', 'patch']);
  });

  it("keeps a private copy: changing the request's own declarations afterwards changes nothing kept", async () => {
    const { prep } = service();
    const list = tools();
    const first = await prep.prepare(list, ctx);
    list[0].description = 'changed after the request';
    (list[0].parameters as { properties: JsonObject }).properties.extra = { type: 'number' };
    expect(first.functions[0].description).toBe('finds a thing');
    const again = await prep.prepare(tools(), ctx);
    expect(again.functions[0]).toEqual({
      type: 'function',
      name: 'lookup',
      description: 'finds a thing',
      parameters: { type: 'object', properties: { q: { type: 'string' } } },
      strict: null,
    });
  });

  it('layers the tools a tool search loaded on the kept list, per request', async () => {
    const { prep } = service();
    const declared = [{ type: 'tool_search', execution: 'client' }, fn('shell')];
    const loaded = (names: string[]): PublicItem => ({ type: 'tool_search_output', id: 'tso_1', call_id: 'c1', execution: 'client', tools: names.map((n) => fn(n)) }) as PublicItem;
    const plain = await prep.prepare(declared, ctx);
    const withTicket = await prep.prepare(declared, { ...ctx, history: [loaded(['open_ticket', 'shell'])], inputStart: 0 });
    const withOther = await prep.prepare(declared, { ...ctx, history: [loaded(['close_ticket'])], inputStart: 0 });
    const plainAgain = await prep.prepare(declared, ctx);
    expect(withTicket.lookup('shell')).toBe(plain.lookup('shell'));
    expect(withTicket.functions.map((f) => f.name)).toEqual(['tool_search', 'shell', 'open_ticket']);
    expect(withTicket.lookup('open_ticket')?.ownership).toEqual({ kind: 'client', shape: { kind: 'function_call', name: 'open_ticket' } });
    expect(withTicket.findClientCall('function_call', 'open_ticket')?.modelName).toBe('open_ticket');
    expect(withOther.functions.map((f) => f.name)).toEqual(['tool_search', 'shell', 'close_ticket']);
    expect(withOther.has('open_ticket')).toBe(false);
    expect(plainAgain.functions.map((f) => f.name)).toEqual(['tool_search', 'shell']);
    // Loaded tools are not the request's declarations.
    expect(withTicket.publicTools.map((t) => t.type)).toEqual(['tool_search', 'function']);
  });

  it('refuses the same lists with the same errors, the first time and every time after', async () => {
    const { prep } = service({ tools: { maxToolsPerRequest: 3 } });
    await prep.prepare(tools(), ctx);
    const cases: Array<[JsonObject[], string, string | undefined]> = [
      [[...tools(), fn('fourth')], 'tools', 'too_many_tools'],
      [[fn('a'), { type: 'namespace', name: 'ns', tools: [fn('x'), fn('y'), fn('z')] }], 'tools[1]', 'too_many_tools'],
      [[fn('a'), fn('a')], 'tools[1].name', 'duplicate_tool_name'],
      [[fn('a'), { type: 'function', name: 'bad name!' }], 'tools[1].name', undefined],
      [[fn('a'), { type: 'custom' }], 'tools[1].name', undefined],
    ];
    for (const [list, param, code] of cases) {
      for (let attempt = 0; attempt < 2; attempt++) {
        const err = await refusal(() => prep.prepare(list, ctx));
        expect([err.param, attempt]).toEqual([param, attempt]);
        if (code) expect(err.code).toBe(code);
      }
    }
    // The list that passed is still served.
    expect((await prep.prepare(tools(), ctx)).functions).toHaveLength(3);
  });
});
