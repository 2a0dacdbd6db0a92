import { Inject, Injectable, Logger } from '@nestjs/common';
import { GATEWAY_CONFIG, GatewayConfig } from '#config/gateway-config.js';
import { InvalidRequestError } from '#tool-sdk/errors.js';
import type { AnyToolHandler, DiscoveryContext, DiscoveryResult, NormalizedTool, ToolRequestContext } from '#tool-sdk/contract/index.js';
import { ToolHandlerExplorer } from '../handlers/tool-handler.explorer.js';
import { contentDigest, type JsonSource } from '../protocol/json-source.js';
import { freezeJson } from '#tool-sdk/helpers/frozen-json.js';
import type { JsonObject, PublicItem } from '#tool-sdk/items.js';
import type { RunTrace } from '../loop/run-observer.interface.js';
import { BoundedLru } from './bounded-lru.js';
import { ToolEntry, ToolOwnership, ToolRegistry } from './tool-registry.js';
import { RequestToolContext } from '#tool-sdk/request-local.js';

/** A kept list: its sealed registry, its parsed and frozen declarations, and the body bytes it was read from (if it was). */
interface PreparedList {
  registry: ToolRegistry;
  declarations: readonly JsonObject[];
  source: { bytes: Uint8Array; digest: string } | undefined;
}

/**
 * A kept list that discovers (see `ToolHandler.keptDiscovery`): its
 * declarations validated once, from a private frozen copy, and, once its
 * discoveries gave kept states, the registry prepared from those states,
 * sealed, with their identities. The registry serves a request whose
 * discoveries give the very same identities.
 */
interface DiscoveringList {
  validated: readonly ValidatedDeclaration[];
  prepared?: { registry: ToolRegistry; kept: ReadonlyArray<object | undefined> };
  /** Its declarations' weight in the cache (`HEAP_BYTES_PER_JSON_CHAR`), without its registry's. */
  bytes: number;
}

/** A discovering list found kept, or validated now and to be kept once a preparation of it succeeds. */
interface DiscoveringCandidate {
  key: string;
  list: DiscoveringList;
}

/** Lists per owner that the body guard compares a request's `tools` bytes with: an agent alternates between few. */
const RECENT_LISTS_PER_OWNER = 4;

interface ValidatedDeclaration {
  index: number;
  handler: AnyToolHandler;
  params: unknown;
  declaration: JsonObject;
}

/**
 * A prepared list's weight in the cache: its JSON text's length (in UTF-8
 * bytes when the body parser's bytes are the key) times this. The heap a
 * kept list of 100 function declarations holds (its parsed copy, the
 * functions, the tables and the declarations' kept JSON text) measured about
 * 3 bytes per character, and the body bytes it was read from are kept
 * beside it (one byte per character of ASCII JSON), and so are the UTF-8
 * bytes of its two kept wire texts (the answer's and the upstream
 * request's, frozen-json.ts), about one byte per character each once the
 * list is first written; 7 keeps the byte bound on the safe side.
 */
const HEAP_BYTES_PER_JSON_CHAR = 7;

/**
 * A discovering list's registry in the cache, per registered tool: its entry,
 * binding and execution parameters and its slots in the routing tables. The
 * functions themselves are not counted: they are made from the discovered
 * state, which its module keeps (and shares) whether or not this cache does.
 * An estimate on the generous side, not a measurement.
 */
const HEAP_BYTES_PER_DISCOVERED_TOOL = 1024;

/**
 * Pipeline stages 1–4, once per request: parse and validate each declaration
 * with its type's handler, discover (remote tool listings), normalize to function tools, and
 * register every model-visible name with explicit ownership.
 *
 * A tool list made only of types whose handler says `declarationsCacheable`
 * is prepared once per owner and content and kept sealed
 * (`tools.declarationCacheEntries` / `tools.declarationCacheBytes`): an agent
 * declares the same tools on every turn. Each request reads the sealed
 * registry through its own overlay, on which the tools its history loaded
 * are registered.
 */
@Injectable()
export class ToolPreparationService {
  /**
   * Cacheable tool lists by `cacheKey`, each one's sealed registry and its
   * parsed, frozen declarations (see `keptList`); and lists that discover
   * kept states by `discoveringKey` (see `discovering`), under the same bounds.
   */
  private readonly prepared: BoundedLru<string, PreparedList | DiscoveringList>;
  /** Per owner (as JSON), the cache keys of the lists it used lately, most recent first (see `recentLists`). */
  private readonly recentByOwner = new Map<string, string[]>();

  constructor(
    private readonly explorer: ToolHandlerExplorer,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {
    this.prepared = new BoundedLru(config.tools.declarationCacheEntries ?? 0, config.tools.declarationCacheBytes ?? 0);
  }

  /**
   * The declarations of a tool list this service has prepared and kept for
   * `owner`, by the digest of its JSON (`contentDigest`), deeply frozen;
   * undefined for a list not seen, not cacheable or no longer kept. The HTTP
   * body parser gives a request this very value instead of parsing the same
   * bytes again (an agent sends the same list every turn). Per owner, as the
   * prepared registries are: whether a list is kept says nothing about what
   * other tenants sent. Only lists whose every type's handler says
   * `declarationsCacheable` are here: those handlers already get frozen
   * declarations from the cache, so sharing them between requests is safe.
   */
  keptList(owner: string | null, digest: string): readonly JsonObject[] | undefined {
    return this.keptPrepared(cacheKey(owner, digest))?.declarations;
  }

  /** The cacheable list kept at `key`, now the most recently used (a discovering list is never under such a key). */
  private keptPrepared(key: string): PreparedList | undefined {
    const kept = this.prepared.get(key);
    return kept && 'declarations' in kept ? kept : undefined;
  }

  /**
   * The JSON bytes, and their digest, of the last few lists kept for `owner`
   * that came from a request body, most recent first. The body guard compares
   * a request's `tools` bytes with these instead of scanning and hashing
   * them: an agent's next turn sends one of them byte for byte.
   */
  recentLists(owner: string | null): ReadonlyArray<{ bytes: Uint8Array; digest: string }> {
    const keys = this.recentByOwner.get(ownerKey(owner));
    if (!keys) return [];
    const lists: Array<{ bytes: Uint8Array; digest: string }> = [];
    for (const key of keys) {
      const kept = this.prepared.peek(key);
      const source = kept && 'source' in kept ? kept.source : undefined;
      if (source) lists.push(source);
    }
    return lists;
  }

  /** Notes that `owner` used the kept list at `key`, for `recentLists`. */
  private noteUsed(owner: string | null, key: string): void {
    const owned = ownerKey(owner);
    const keys = this.recentByOwner.get(owned) ?? [];
    if (keys[0] === key) return;
    const at = keys.indexOf(key);
    if (at >= 0) keys.splice(at, 1);
    keys.unshift(key);
    if (keys.length > RECENT_LISTS_PER_OWNER) keys.length = RECENT_LISTS_PER_OWNER;
    // Oldest owner first: an owner seen again moves to the end.
    this.recentByOwner.delete(owned);
    this.recentByOwner.set(owned, keys);
    if (this.recentByOwner.size > this.prepared.maxEntries) this.recentByOwner.delete(this.recentByOwner.keys().next().value!);
  }

  /** `tools.refuseUnhandledTypes`: declared types without a module that are refused rather than skipped. */
  private get refused(): ReadonlySet<string> {
    return (this.refusedTypes ??= new Set(this.config.tools.refuseUnhandledTypes ?? []));
  }
  private refusedTypes?: ReadonlySet<string>;

  private readonly logger = new Logger('ToolPreparation');
  /** Types already logged as skipped: one line per type per process, not one per request. */
  private readonly skippedTypes = new Set<string>();

  private noteSkipped(type: string): void {
    if (this.skippedTypes.has(type) || this.skippedTypes.size >= 64) return;
    this.skippedTypes.add(type);
    this.logger.warn(`Skipping declared tool type "${type}": no loaded tool module handles it (tools.unhandledTypes: skip).`);
  }

  /** Stage 1 alone: cheap, synchronous, so bad declarations fail before any I/O. */
  validate(tools: JsonObject[]): ValidatedDeclaration[] {
    this.assertToolCount(tools);
    const validated: ValidatedDeclaration[] = [];
    tools.forEach((declaration, index) => {
      const path = `tools[${index}]`;
      if (declaration === null || typeof declaration !== 'object' || Array.isArray(declaration)) {
        throw new InvalidRequestError(`${path} must be an object.`, path);
      }
      const type = declaration.type;
      if (typeof type !== 'string' || type.length === 0) {
        throw new InvalidRequestError(`${path}.type is required and must be a string.`, `${path}.type`);
      }
      const handler = this.explorer.handlerForWireTag(type);
      // A type no loaded module handles is a 400 naming it (`tools.unhandledTypes: refuse`):
      // a module left out of `imports` or a plugin not loaded must not turn into a tool
      // silently dropped. With `skip`, newer clients' types are left out (never executed)
      // and logged, except `tools.refuseUnhandledTypes` (OpenAI's own types).
      if (!handler) {
        if (this.config.tools.unhandledTypes !== 'skip' || this.refused.has(type)) {
          throw new InvalidRequestError(
            `${path}.type "${type}" is not available on this gateway: no loaded tool module handles it (loaded: ${this.explorer.types().join(', ')}).`,
            `${path}.type`,
            'unsupported_tool_type',
          );
        }
        this.noteSkipped(type);
        return;
      }
      validated.push({ index, handler, params: handler.validate(declaration, path), declaration });
    });
    return validated;
  }

  private assertToolCount(tools: readonly unknown[]): void {
    const limit = this.config.tools.maxToolsPerRequest;
    if (tools.length > limit) {
      throw new InvalidRequestError(
        `'tools' has ${tools.length} entries; this gateway accepts at most ${limit} tools per request (tools.maxToolsPerRequest).`,
        'tools',
        'too_many_tools',
      );
    }
  }

  async prepare(
    tools: JsonObject[],
    ctx: {
      history: readonly PublicItem[];
      signal: AbortSignal;
      requestId: string;
      /** Where the request's own `input` starts in `history` (stored items come first), to name fields. */
      inputStart?: number;
      /** Who the request runs for, null without authentication (discovery may pool connections per owner). */
      owner?: string | null;
      /** The run's trace: each discovery (a server's tool listing) is traced under it. */
      trace?: RunTrace;
      /** The request's context for its tool types, shared with its calls' execution; made here when not given. */
      request?: ToolRequestContext;
      /** The bytes `tools` was read from (`ResponseRequest.toolsSource`), used when its `value` is `tools`. */
      toolsSource?: JsonSource;
    },
  ): Promise<ToolRegistry> {
    // The request's own declarations are checked first (kept or not), then those its history loaded.
    const owner = ctx.owner ?? null;
    const read = ctx.toolsSource?.value === tools ? ctx.toolsSource : undefined;
    const cached = this.fromCache(tools, owner, read);
    const discovering = cached ? undefined : this.discovering(tools, owner, read);
    const declarations = cached || discovering ? [] : this.validate(tools);
    const loaded = this.historyDeclarations(ctx.history, ctx.inputStart ?? 0);
    if (cached) return this.withLoaded(ToolRegistry.over(cached), loaded);
    if (discovering) return this.withLoaded(await this.declareDiscovering(discovering, ctx), loaded);
    const registry = new ToolRegistry();
    if (declarations.length === 0 && loaded.length === 0) return registry;
    await this.declare(registry, declarations, ctx);
    return this.withLoaded(registry, loaded);
  }

  /**
   * The sealed registry of a cacheable tool list: the one kept for this owner
   * and content, or prepared now from a private copy of the list and kept.
   * Undefined when the list is empty or not cacheable, or the cache is off.
   * The copy is what gets frozen and shared, never the request's own
   * objects, which the request may still change. Preparing it throws the
   * same errors as `validate` would on the request's list (same content,
   * same paths); a list that fails is not kept.
   */
  private fromCache(tools: JsonObject[], owner: string | null, read: JsonSource | undefined): ToolRegistry | undefined {
    const found = this.keptOrFresh(
      tools,
      read,
      (digest) => this.hit(owner, digest),
      (list) => this.cacheable(list),
    );
    if (!found || 'kept' in found) return found?.kept;
    const { copy, digest, weight } = found.fresh;
    const key = cacheKey(owner, digest);
    const registry = new ToolRegistry();
    this.normalizeAll(registry, this.validate(copy), []);
    // The copy is the sealed registry's own declarations: freezing it freezes nothing they still change.
    // Bytes from a body are copied: they are a view into the whole body, which the cache must not keep.
    const entry: PreparedList = { registry: registry.seal(), declarations: freezeJson(copy), source: read && { bytes: Buffer.from(read.bytes), digest } };
    if (this.prepared.set(key, entry, weight)) this.noteUsed(owner, key);
    return registry;
  }

  /**
   * The first steps of both kinds of kept list: what `find` keeps under the
   * digest the body reader gave (bytes kept for this owner before passed
   * the checks when they were kept, and the handlers and limits are fixed
   * for the process, so a hit skips a handler lookup per declaration); else,
   * for a list `admits`, what it keeps under the digest of the list's
   * content, or that content to prepare: a private parsed copy (the request
   * may still change its own objects), its digest and its weight in the
   * cache. Undefined when the list is empty or not admitted, or the cache is off.
   */
  private keptOrFresh<T>(
    tools: JsonObject[],
    read: JsonSource | undefined,
    find: (digest: string) => T | undefined,
    admits: (tools: readonly JsonObject[]) => boolean,
  ): { kept: T } | { fresh: { copy: JsonObject[]; digest: string; weight: number } } | undefined {
    if (!this.prepared.enabled || tools.length === 0) return undefined;
    const byRead = read && find(read.digest);
    if (byRead) return { kept: byRead };
    if (!admits(tools)) return undefined;
    this.assertToolCount(tools);
    // The bytes the body reader read the list from, else its serialization: either is its content.
    const source = read?.bytes ?? JSON.stringify(tools);
    const digest = read?.digest ?? contentDigest(source);
    const byContent = read ? undefined : find(digest);
    if (byContent) return { kept: byContent };
    const copy = JSON.parse(typeof source === 'string' ? source : Buffer.from(source.buffer, source.byteOffset, source.byteLength).toString('utf8')) as JsonObject[];
    return { fresh: { copy, digest, weight: source.length * HEAP_BYTES_PER_JSON_CHAR } };
  }

  /** The sealed registry kept for this owner and digest, now the most recently used; undefined when none is. */
  private hit(owner: string | null, digest: string): ToolRegistry | undefined {
    const key = cacheKey(owner, digest);
    const hit = this.keptPrepared(key);
    if (!hit) return undefined;
    this.noteUsed(owner, key);
    return hit.registry;
  }

  /**
   * A list whose declarations discover kept states (`keptDiscovery`) and are
   * otherwise cacheable: the one kept for this owner and content, or its
   * declarations validated now from a private copy, to be kept once a
   * preparation of it succeeds. Undefined when the list is empty or is not
   * such a list, or the cache is off. Validating throws the same errors as
   * `validate` would on the request's list (same content, same paths).
   */
  private discovering(tools: JsonObject[], owner: string | null, read: JsonSource | undefined): DiscoveringCandidate | undefined {
    const found = this.keptOrFresh(
      tools,
      read,
      (digest) => this.keptDiscovering(owner, digest),
      (list) => this.keepsDiscovery(list),
    );
    if (!found || 'kept' in found) return found?.kept;
    const { copy, digest, weight } = found.fresh;
    const validated = this.validate(copy);
    // Frozen: these declarations, and what their params hold of them, now serve every request of this list.
    freezeJson(copy);
    return { key: discoveringKey(owner, digest), list: { validated, bytes: weight } };
  }

  /** The discovering list kept for this owner and digest, now the most recently used. */
  private keptDiscovering(owner: string | null, digest: string): DiscoveringCandidate | undefined {
    const key = discoveringKey(owner, digest);
    const kept = this.prepared.get(key);
    return kept && 'validated' in kept ? { key, list: kept } : undefined;
  }

  /**
   * Every declaration an object whose type's handler either discovers a
   * state it may say is kept, or is cacheable; and at least one of the former
   * (a list of the latter alone is `fromCache`'s).
   */
  private keepsDiscovery(tools: readonly JsonObject[]): boolean {
    let discovers = false;
    for (const declaration of tools) {
      if (declaration === null || typeof declaration !== 'object' || Array.isArray(declaration)) return false;
      const type = declaration.type;
      const handler = typeof type === 'string' ? this.explorer.handlerForWireTag(type) : undefined;
      if (!handler) return false;
      if (handler.discover && handler.keptDiscovery) discovers = true;
      else if (handler.declarationsCacheable !== true) return false;
    }
    return discovers;
  }

  /**
   * Stages 2–4 for a discovering list. Discovery runs for every request; when
   * each declaration's state is the kept one the list was prepared from
   * (the same object), the sealed registry serves, read through the
   * request's overlay on which this request's discovery items are added in
   * declaration order. Otherwise the list is prepared afresh, and kept
   * sealed when every state is kept. A preparation that throws keeps
   * nothing, and drops what was kept for the list.
   */
  private async declareDiscovering(
    candidate: DiscoveringCandidate,
    ctx: { history: readonly PublicItem[]; signal: AbortSignal; requestId: string; owner?: string | null; trace?: RunTrace; request?: ToolRequestContext },
  ): Promise<ToolRegistry> {
    const { key, list } = candidate;
    const validated = list.validated;
    let discovered: ReadonlyArray<DiscoveryResult | undefined>;
    try {
      discovered = await this.discoverAll(validated, ctx);
    } catch (error) {
      this.dropDiscovering(key, list);
      throw error;
    }
    const kept = validated.map((d, i) => {
      const result = discovered[i];
      return result && d.handler.keptDiscovery ? d.handler.keptDiscovery(result.state) : undefined;
    });
    if (list.prepared && sameIdentities(list.prepared.kept, kept)) return withDiscoveryItems(ToolRegistry.over(list.prepared.registry), discovered);
    const allKept = validated.every((d, i) => !d.handler.discover || kept[i] !== undefined);
    const registry = new ToolRegistry();
    try {
      // Kept states: the registry is prepared without this request's items, which go on its overlay.
      this.normalizeAll(registry, validated, allKept ? discovered.map((result) => result && { state: result.state }) : discovered);
    } catch (error) {
      this.dropDiscovering(key, list);
      throw error;
    }
    const next: DiscoveringList = { validated, prepared: allKept ? { registry: registry.seal(), kept } : undefined, bytes: list.bytes };
    this.prepared.set(key, next, list.bytes + (allKept ? registry.size * HEAP_BYTES_PER_DISCOVERED_TOOL : 0));
    return allKept ? withDiscoveryItems(ToolRegistry.over(registry), discovered) : registry;
  }

  /** Forgets the list kept at `key`, unless another request has replaced it meanwhile. */
  private dropDiscovering(key: string, list: DiscoveringList): void {
    if (this.prepared.peek(key) === list) this.prepared.delete(key);
  }

  /** Every declaration an object whose type's handler says its prepared form depends on its content alone. */
  private cacheable(tools: readonly JsonObject[]): boolean {
    for (const declaration of tools) {
      if (declaration === null || typeof declaration !== 'object' || Array.isArray(declaration)) return false;
      const type = declaration.type;
      if (typeof type !== 'string' || this.explorer.handlerForWireTag(type)?.declarationsCacheable !== true) return false;
    }
    return true;
  }

  /** Stages 2–4 for the request's own declarations. */
  private async declare(
    registry: ToolRegistry,
    declarations: ValidatedDeclaration[],
    ctx: { history: readonly PublicItem[]; signal: AbortSignal; requestId: string; owner?: string | null; trace?: RunTrace; request?: ToolRequestContext },
  ): Promise<void> {
    this.normalizeAll(registry, declarations, await this.discoverAll(declarations, ctx));
  }

  /** Stage 2: discovery runs concurrently across declarations (each lists its own server). */
  private discoverAll(
    declarations: readonly ValidatedDeclaration[],
    ctx: { history: readonly PublicItem[]; signal: AbortSignal; requestId: string; owner?: string | null; trace?: RunTrace; request?: ToolRequestContext },
  ): Promise<Array<DiscoveryResult | undefined>> {
    const request = ctx.request ?? new RequestToolContext(ctx.requestId, ctx.owner ?? null);
    const discovery = discoveryContext(ctx, request);
    return Promise.all(
      declarations.map((d): Promise<DiscoveryResult | undefined> =>
        d.handler.discover ? this.traced(d, ctx.trace, () => d.handler.discover!(d.params, discovery)) : Promise.resolve(undefined),
      ),
    );
  }

  /** Stages 3–4: normalize in declaration order so names are stable, then register. */
  private normalizeAll(registry: ToolRegistry, declarations: readonly ValidatedDeclaration[], discovered: ReadonlyArray<DiscoveryResult | undefined>): void {
    declarations.forEach((d, i) => {
      const result = discovered[i];
      if (result?.items) registry.addDiscoveryItems(result.items);
      const normalized = d.handler.normalize(d.params, result?.state, { takenNames: registry.names() });
      if (registry.size + normalized.length > this.config.tools.maxToolsPerRequest) {
        throw new InvalidRequestError(
          `tools[${d.index}] brings the request to more than ${this.config.tools.maxToolsPerRequest} model-visible tools (tools.maxToolsPerRequest).`,
          `tools[${d.index}]`,
          'too_many_tools',
        );
      }
      for (const tool of normalized) this.register(registry, d, tool);
      const publicDeclaration = d.handler.publicDeclaration?.(d.params, d.declaration) ?? d.declaration;
      registry.addDeclaration(publicDeclaration, d.handler.continuationDeclaration?.(d.params, d.declaration) ?? publicDeclaration);
    });
  }

  /**
   * Tools the conversation loaded (a client's tool search answered with
   * their definitions) come after the request's own: a name the request
   * declares itself, or an earlier load already gave, keeps that entry.
   * They belong to this request's history, so they are registered on the
   * request's registry, never on a sealed one.
   */
  private withLoaded(registry: ToolRegistry, loaded: ValidatedDeclaration[]): ToolRegistry {
    for (const d of loaded) {
      for (const tool of d.handler.normalize(d.params, undefined, { takenNames: registry.names() })) {
        if (!registry.has(tool.fn.name)) this.register(registry, d, tool);
      }
    }
    return registry;
  }

  /** One declaration's discovery, traced from its start to its answer or failure. */
  private async traced(d: ValidatedDeclaration, trace: RunTrace | undefined, discover: () => Promise<DiscoveryResult>): Promise<DiscoveryResult> {
    const span = trace?.discovery?.(String(d.declaration.type), `tools[${d.index}]`);
    try {
      const result = await discover();
      span?.end({});
      return result;
    } catch (error) {
      span?.end({ error });
      throw error;
    }
  }

  /**
   * Declarations carried by history items (`ToolHandler.historyDeclarations`),
   * validated by their own type's handler. Only client-owned types may be
   * loaded this way: a history item must not make the gateway run anything
   * the request did not declare.
   */
  private historyDeclarations(history: readonly PublicItem[], inputStart: number): ValidatedDeclaration[] {
    const loaded: ValidatedDeclaration[] = [];
    history.forEach((item, position) => {
      const source = this.explorer.handlerForItemType(item.type);
      if (!source?.historyDeclarations) return;
      const at = position >= inputStart ? `input[${position - inputStart}]` : `stored item ${String((item as { id?: unknown }).id)}`;
      source.historyDeclarations(item, at).forEach((declaration, j) => {
        const path = `${at}.tools[${j}]`;
        if (declaration === null || typeof declaration !== 'object' || Array.isArray(declaration) || typeof declaration.type !== 'string') {
          throw new InvalidRequestError(`${path} must be a tool declaration with a type.`, path);
        }
        const handler = this.explorer.handlerForWireTag(declaration.type);
        if (!handler) return;
        if (handler.gatewayOwned) {
          throw new InvalidRequestError(`${path}.type "${declaration.type}" runs in the gateway and cannot be loaded by a tool search; declare it in tools.`, `${path}.type`);
        }
        loaded.push({ index: -1, handler, params: handler.validate(declaration, path), declaration });
      });
    });
    return loaded;
  }

  private register(registry: ToolRegistry, d: ValidatedDeclaration, tool: NormalizedTool): void {
    const name = tool.fn.name;
    if (registry.has(name)) {
      // Open question Q1 closed: a duplicate is the client's mistake, and
      // last-write-wins would route calls to a tool the client did not mean.
      throw new InvalidRequestError(
        `Duplicate tool name "${name}" in tools[${d.index}]: another declaration already provides a tool with that name.`,
        `tools[${d.index}]${d.handler.namesFromDiscovery ? '' : '.name'}`,
        'duplicate_tool_name',
      );
    }
    const entry: ToolEntry = {
      modelName: name,
      toolType: d.handler.type,
      toolName: tool.toolName,
      scope: tool.scope ?? tool.clientShape?.scope,
      ownership: this.ownershipFor(d.handler, tool),
      handler: d.handler,
      declarationIndex: d.index,
      offered: !tool.hidden,
    };
    registry.add(entry, tool.fn);
  }

  private ownershipFor(handler: AnyToolHandler, tool: NormalizedTool): ToolOwnership {
    if (!handler.gatewayOwned) {
      return { kind: 'client', shape: tool.clientShape ?? { kind: 'function_call', name: tool.toolName } };
    }
    const executor = this.explorer.executorForType(handler.type);
    if (!executor) return { kind: 'gateway' };
    const params = tool.executionParams;
    return {
      kind: 'gateway',
      binding: {
        executor,
        params,
        parallelSafe: executor.supportsParallelExecution?.(params) ?? false,
        timeoutMs: executor.timeoutMs?.(params) ?? this.config.tools.timeoutMsByType[handler.type] ?? this.config.tools.defaultTimeoutMs,
      },
    };
  }
}

/**
 * The cache key of a tool list for an owner: the owner as JSON (so that no
 * owner's name run into the list's digest can pose as another's, and `null`,
 * no authentication, is its own owner) followed by the digest of the list's
 * JSON text or of the UTF-8 bytes it was parsed from (a compact client's
 * bytes are the same text, so both kinds of request share the entry).
 */
function cacheKey(owner: string | null, digest: string): string {
  return `${ownerKey(owner)}\n${digest}`;
}

/**
 * The key of a discovering list: its own kind of key, so that a lookup of a
 * cacheable list's (`keptList`, the body guard's) never finds one.
 */
function discoveringKey(owner: string | null, digest: string): string {
  return `${cacheKey(owner, digest)}\ndiscovering`;
}

/** Whether each declaration's kept state is the very object the registry was prepared from. */
function sameIdentities(prepared: ReadonlyArray<object | undefined>, now: ReadonlyArray<object | undefined>): boolean {
  return prepared.length === now.length && prepared.every((identity, i) => identity === now[i]);
}

/** A request's overlay with its own discovery items, in declaration order as a preparation afresh would add them. */
function withDiscoveryItems(registry: ToolRegistry, discovered: ReadonlyArray<DiscoveryResult | undefined>): ToolRegistry {
  for (const result of discovered) if (result?.items?.length) registry.addDiscoveryItems(result.items);
  return registry;
}

/** An owner as the caches key it: as JSON, so that `null` (no authentication) is an owner of its own. */
function ownerKey(owner: string | null): string {
  return JSON.stringify(owner);
}

/**
 * What every declaration's discovery is given. Its `signal` is read from the
 * preparation's context when a discovery asks for it: the run's signal is
 * made on first use (`Cancellation`), and a discovery answered from what its
 * module keeps (a server listing kept until the server announces a change)
 * never asks, so a request whose tools are all kept makes none.
 */
function discoveryContext(ctx: { signal: AbortSignal; history: readonly PublicItem[]; requestId: string; owner?: string | null }, request: ToolRequestContext): DiscoveryContext {
  return {
    request,
    get signal() {
      return ctx.signal;
    },
    history: ctx.history,
    requestId: ctx.requestId,
    owner: ctx.owner ?? null,
  };
}
