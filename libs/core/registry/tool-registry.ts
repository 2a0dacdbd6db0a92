import type { FunctionToolDef, PublicItem } from '#tool-sdk/items.js';
import type { ClientCallShape } from '#tool-sdk/contract/declaration.js';
import type { ToolEntry } from '#tool-sdk/contract/entry.js';

export type { GatewayBinding, ToolEntry, ToolOwnership } from '#tool-sdk/contract/entry.js';

/**
 * Request-scoped routing table: model-visible name → entry. Built once per
 * request by `ToolPreparationService`; read by the accumulator and the loop.
 */
export class ToolRegistry {
  private readonly entries = new Map<string, ToolEntry>();
  private readonly byIdentity = new Map<string, ToolEntry>();
  private readonly byClientShape = new Map<string, ToolEntry>();
  private readonly takenNames = new Set<string>();
  readonly functions: FunctionToolDef[] = [];
  /** Public declarations echoed in `response.tools` (secrets stripped). */
  readonly publicTools: Record<string, unknown>[] = [];
  /** Declarations stored for continuations that inherit the tools (secrets stripped). */
  readonly continuationTools: Record<string, unknown>[] = [];
  /** Items produced by discovery, emitted before the first round. */
  readonly discoveryItems: PublicItem[] = [];

  add(entry: ToolEntry, fn?: FunctionToolDef): void {
    this.entries.set(entry.modelName, entry);
    this.takenNames.add(entry.modelName);
    this.byIdentity.set(identityKey(entry.toolType, entry.toolName, entry.scope), entry);
    if (entry.ownership.kind === 'client') {
      const { shape } = entry.ownership;
      this.byClientShape.set(identityKey(shape.kind, shape.name, shape.scope), entry);
    }
    if (fn && entry.offered) this.functions.push(fn);
  }

  has(modelName: string): boolean {
    return this.entries.has(modelName);
  }

  lookup(modelName: string): ToolEntry | undefined {
    return this.entries.get(modelName);
  }

  /**
   * The client-owned entry whose calls come back as `kind` under this name
   * and scope: what a public call item in the history refers to.
   */
  findClientCall(kind: ClientCallShape['kind'], name: string, scope?: string): ToolEntry | undefined {
    return this.byClientShape.get(identityKey(kind, name, scope));
  }

  /** Finds an entry by what the public side calls it (tool type, own name, the scope that qualifies it). */
  findByIdentity(toolType: string, toolName: string, scope?: string): ToolEntry | undefined {
    return this.byIdentity.get(identityKey(toolType, toolName, scope));
  }

  /**
   * The names taken so far, as a live read-only view: handlers consult it
   * once per tool they name, so copying it here would make registering N
   * tools cost O(N²).
   */
  names(): ReadonlySet<string> {
    return this.takenNames;
  }

  all(): IterableIterator<ToolEntry> {
    return this.entries.values();
  }

  get size(): number {
    return this.entries.size;
  }
}

function identityKey(toolType: string, toolName: string, scope?: string): string {
  return `${toolType}\u0000${scope ?? ''}\u0000${toolName}`;
}
