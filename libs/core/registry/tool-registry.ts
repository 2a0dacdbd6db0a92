import type { FunctionToolDef, PublicItem } from '#tool-sdk/items.js';
import type { ClientCallShape } from '#tool-sdk/contract/declaration.js';
import type { ToolEntry } from '#tool-sdk/contract/entry.js';
import { freezeJson, rememberJson } from '#tool-sdk/helpers/frozen-json.js';

export type { GatewayBinding, ToolEntry, ToolOwnership } from '#tool-sdk/contract/entry.js';

/** What a registry routes on and offers the model. */
interface Routes {
  readonly entries: Map<string, ToolEntry>;
  readonly byIdentity: Map<string, ToolEntry>;
  readonly byClientShape: Map<string, ToolEntry>;
  readonly takenNames: Set<string>;
  readonly functions: FunctionToolDef[];
  /** Entries the gateway runs: a round whose registry has none never starts a call, so it sets up no scheduler. */
  gatewayEntries: number;
}

/** The request's own declarations and what their discovery found. */
interface Declared {
  readonly publicTools: Record<string, unknown>[];
  readonly continuationTools: Record<string, unknown>[];
  readonly discoveryItems: PublicItem[];
}

/**
 * The tables of a registry nothing was added to, shared by every such
 * registry and copied on its first write like a sealed registry's: most
 * requests declare no tools, and a stream keeps its registry while it runs.
 */
const NO_ROUTES: Routes = { entries: new Map(), byIdentity: new Map(), byClientShape: new Map(), takenNames: new Set(), functions: [], gatewayEntries: 0 };
const NOTHING_DECLARED: Declared = { publicTools: [], continuationTools: [], discoveryItems: [] };

/**
 * Request-scoped routing table: model-visible name → entry. Built once per
 * request by `ToolPreparationService`; read by the accumulator and the loop.
 *
 * A registry can be sealed (`seal`): frozen, never added to again, and then
 * shared by many requests that declared the same tools. A request reads a
 * sealed registry through its own `ToolRegistry.over(sealed)`, which copies
 * the tables on its first `add` (the tools a conversation loaded), so no
 * request's additions reach the sealed one or another request.
 */
export class ToolRegistry {
  private routes = NO_ROUTES;
  private declared = NOTHING_DECLARED;
  /** Each part is shared (a sealed registry's, or the empty one) while set here: copied before its first write. */
  private readonly borrowed = { routes: true, declared: true };
  private sealed = false;

  /** A registry of its own that reads `sealed`'s tables until it is written to. */
  static over(sealed: ToolRegistry): ToolRegistry {
    if (!sealed.sealed) throw new Error('ToolRegistry.over needs a sealed registry.');
    const registry = new ToolRegistry();
    registry.routes = sealed.routes;
    registry.declared = sealed.declared;
    registry.borrowed.routes = registry.borrowed.declared = true;
    return registry;
  }

  /** Model-visible functions, in declaration order. */
  get functions(): readonly FunctionToolDef[] {
    return this.routes.functions;
  }

  /** Public declarations echoed in `response.tools` (secrets stripped). */
  get publicTools(): readonly Record<string, unknown>[] {
    return this.declared.publicTools;
  }

  /** Declarations stored for continuations that inherit the tools (secrets stripped). */
  get continuationTools(): readonly Record<string, unknown>[] {
    return this.declared.continuationTools;
  }

  /** Items produced by discovery, emitted before the first round. */
  get discoveryItems(): readonly PublicItem[] {
    return this.declared.discoveryItems;
  }

  get isSealed(): boolean {
    return this.sealed;
  }

  add(entry: ToolEntry, fn?: FunctionToolDef): void {
    const t = this.writableRoutes();
    if (t.entries.get(entry.modelName)?.ownership.kind === 'gateway') t.gatewayEntries--;
    if (entry.ownership.kind === 'gateway') t.gatewayEntries++;
    t.entries.set(entry.modelName, entry);
    t.takenNames.add(entry.modelName);
    t.byIdentity.set(identityKey(entry.toolType, entry.toolName, entry.scope), entry);
    if (entry.ownership.kind === 'client') {
      const { shape } = entry.ownership;
      t.byClientShape.set(identityKey(shape.kind, shape.name, shape.scope), entry);
    }
    if (fn && entry.offered) t.functions.push(fn);
  }

  /** One request declaration as it is echoed and as continuations keep it. */
  addDeclaration(publicDeclaration: Record<string, unknown>, continuationDeclaration: Record<string, unknown>): void {
    const t = this.writableDeclared();
    t.publicTools.push(publicDeclaration);
    t.continuationTools.push(continuationDeclaration);
  }

  addDiscoveryItems(items: readonly PublicItem[]): void {
    this.writableDeclared().discoveryItems.push(...items);
  }

  /**
   * Freezes the registry for sharing: its tables, and each entry, function
   * and declaration in them (never the handlers and executors they point to,
   * which are the gateway's own services). A later `add` throws; requests
   * read it through `ToolRegistry.over`. The declarations' JSON text is
   * kept with them: every answer echoes them, and writers splice it in.
   */
  seal(): this {
    if ((this.borrowed.routes && this.routes !== NO_ROUTES) || (this.borrowed.declared && this.declared !== NOTHING_DECLARED)) {
      throw new Error('A registry reading a sealed one cannot be sealed itself.');
    }
    for (const entry of this.routes.entries.values()) freezeEntry(entry);
    const { publicTools, continuationTools, discoveryItems } = this.declared;
    for (const list of [this.routes.functions, publicTools, continuationTools, discoveryItems]) freezeJson(list);
    const publicText = JSON.stringify(publicTools);
    rememberJson(publicTools, publicText);
    // Most handlers keep the public declaration for continuations too: one text serves both.
    rememberJson(continuationTools, continuationTools.every((d, i) => d === publicTools[i]) ? publicText : JSON.stringify(continuationTools));
    this.sealed = true;
    return this;
  }

  has(modelName: string): boolean {
    return this.routes.entries.has(modelName);
  }

  lookup(modelName: string): ToolEntry | undefined {
    return this.routes.entries.get(modelName);
  }

  /**
   * The client-owned entry whose calls come back as `kind` under this name
   * and scope: what a public call item in the history refers to.
   */
  findClientCall(kind: ClientCallShape['kind'], name: string, scope?: string): ToolEntry | undefined {
    return this.routes.byClientShape.get(identityKey(kind, name, scope));
  }

  /** Finds an entry by what the public side calls it (tool type, own name, the scope that qualifies it). */
  findByIdentity(toolType: string, toolName: string, scope?: string): ToolEntry | undefined {
    return this.routes.byIdentity.get(identityKey(toolType, toolName, scope));
  }

  /**
   * The names taken so far, as a live read-only view: handlers consult it
   * once per tool they name, so copying it here would make registering N
   * tools cost O(N²). A registry over a sealed one gives its own view once
   * it has copied the tables; handlers ask again for each declaration.
   */
  names(): ReadonlySet<string> {
    return this.routes.takenNames;
  }

  all(): IterableIterator<ToolEntry> {
    return this.routes.entries.values();
  }

  get size(): number {
    return this.routes.entries.size;
  }

  /**
   * Whether any entry is run by the gateway. A request that declares only
   * the client's own tools (an agent's function list) has none: its model
   * calls are handed back, never scheduled.
   */
  get runsGatewayTools(): boolean {
    return this.routes.gatewayEntries > 0;
  }

  /** The routing tables this registry may write: its own, copied from the sealed ones on the first write. */
  private writableRoutes(): Routes {
    this.assertOpen();
    if (this.borrowed.routes) {
      const t = this.routes;
      this.routes = {
        entries: new Map(t.entries),
        byIdentity: new Map(t.byIdentity),
        byClientShape: new Map(t.byClientShape),
        takenNames: new Set(t.takenNames),
        functions: [...t.functions],
        gatewayEntries: t.gatewayEntries,
      };
      this.borrowed.routes = false;
    }
    return this.routes;
  }

  /** The declaration lists this registry may write, copied the same way (tools a search loaded leave them shared). */
  private writableDeclared(): Declared {
    this.assertOpen();
    if (this.borrowed.declared) {
      const t = this.declared;
      this.declared = { publicTools: [...t.publicTools], continuationTools: [...t.continuationTools], discoveryItems: [...t.discoveryItems] };
      this.borrowed.declared = false;
    }
    return this.declared;
  }

  private assertOpen(): void {
    if (this.sealed) throw new Error('A sealed ToolRegistry is shared between requests and cannot be changed.');
  }
}

function identityKey(toolType: string, toolName: string, scope?: string): string {
  return `${toolType}\u0000${scope ?? ''}\u0000${toolName}`;
}

/** An entry's own data frozen; its handler and a binding's executor are shared services and stay as they are. */
function freezeEntry(entry: ToolEntry): void {
  if (entry.ownership.kind === 'client') freezeJson(entry.ownership.shape);
  else if (entry.ownership.binding) Object.freeze(entry.ownership.binding);
  Object.freeze(entry.ownership);
  Object.freeze(entry);
}
