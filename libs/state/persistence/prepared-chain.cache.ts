import type { ModelItem, PublicItem, JsonObject } from '#tool-sdk/items.js';
import type { StoredResponse } from '#storage/index.js';

/**
 * `extra` key of a response whose run continued from a compacted transcript:
 * those model items stand in for everything before the response in its chain.
 */
export const BASE_MODEL_ITEMS = 'baseModelItems';

/**
 * A `previous_response_id` chain as the loop needs it: every response's model
 * items and public items, oldest first, and the head's tools. What a
 * continuation used to rebuild from the stored JSON of every earlier response,
 * on each turn.
 */
export interface PreparedChain {
  owner: string | null;
  /** The chain's response ids, oldest first: what must still be stored for it to hold. */
  ids: readonly string[];
  /** The oldest response continues nothing: the chain is whole, not cut short by the store's walk. */
  whole: boolean;
  modelItems: readonly ModelItem[];
  publicItems: readonly PublicItem[];
  tools: JsonObject[];
  toolChoice: unknown;
}

function outputOf(response: JsonObject): PublicItem[] {
  return Array.isArray(response.output) ? (response.output as PublicItem[]) : [];
}

/** The chain `start` (possibly none) followed by `stored`: a left fold, so extending a prepared chain equals preparing it whole. */
export function extendChain(start: PreparedChain | undefined, stored: StoredResponse): PreparedChain {
  const base = stored.extra?.[BASE_MODEL_ITEMS];
  const earlier = Array.isArray(base) ? (base as ModelItem[]) : (start?.modelItems ?? []);
  return {
    owner: stored.owner,
    ids: [...(start?.ids ?? []), stored.id],
    // Absent or null: a record written by another store may carry either.
    whole: start ? start.whole : !stored.previousResponseId,
    modelItems: [...earlier, ...stored.modelItems],
    // Input and output both: MCP discovery is not repeated and approval requests are found.
    publicItems: [...(start?.publicItems ?? []), ...stored.inputItems, ...outputOf(stored.response)],
    tools: stored.tools,
    toolChoice: stored.toolChoice,
  };
}

export function prepareChain(chain: readonly StoredResponse[]): PreparedChain {
  let prepared: PreparedChain | undefined;
  for (const stored of chain) prepared = extendChain(prepared, stored);
  return prepared!;
}

/** About how much memory an item holds (characters of its strings, a few words per slot), reckoned once as it is frozen. */
const itemSizes = new WeakMap<object, number>();

/**
 * Freezes a kept item all the way down and reckons its size: requests share
 * it from now on, so a run that changed one in place fails loudly instead of
 * altering another request's history.
 */
function freezeItem(item: object): number {
  let size = itemSizes.get(item);
  if (size !== undefined) return size;
  size = 0;
  const stack: unknown[] = [item];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') size += v.length + 16;
    else if (v !== null && typeof v === 'object') {
      size += 16;
      Object.freeze(v);
      for (const child of Object.values(v)) stack.push(child);
    } else size += 8;
  }
  itemSizes.set(item, size);
  return size;
}

/** Freezes a chain and its items; gives its size (items a chain shares with another are counted in both). */
function freezeChain(chain: PreparedChain): number {
  let size = 0;
  for (const item of chain.modelItems) size += freezeItem(item);
  for (const item of chain.publicItems) size += freezeItem(item);
  for (const tool of chain.tools) freezeItem(tool);
  Object.freeze(chain.modelItems);
  Object.freeze(chain.publicItems);
  Object.freeze(chain.tools);
  Object.freeze(chain.ids);
  Object.freeze(chain);
  return size;
}

/**
 * Prepared chains of this process by head response id, least recently used
 * dropped first, bounded by the items they hold. A cache only: the store stays
 * the record, and an entry is used only after the store confirms that every
 * response of the chain is still there for the same owner (stored responses
 * never change, they can only be deleted or moved to another key), so a chain
 * continued on another worker or replica reads the same history from the
 * store. Chains the store's walk cut short (an ancestor gone, or the depth
 * bound) are not kept: their extension would differ from a fresh walk.
 * Bounded by the approximate memory of the items (`maxSize`, characters).
 */
export class PreparedChainCache {
  private readonly entries = new Map<string, { chain: PreparedChain; size: number }>();
  private size = 0;

  constructor(
    private readonly maxSize: number,
    private readonly maxDepth: number,
  ) {}

  /** The reckoned size of the chains kept (tests read it). */
  get heldSize(): number {
    return this.size;
  }

  get(id: string, owner: string | null): PreparedChain | undefined {
    const entry = this.entries.get(id);
    if (!entry || entry.chain.owner !== owner) return undefined;
    // Most recently used last.
    this.entries.delete(id);
    this.entries.set(id, entry);
    return entry.chain;
  }

  /** Whether `chain` made `by` responses longer may still be kept (the store would walk it whole). */
  canExtend(chain: PreparedChain, by: number): boolean {
    return chain.whole && chain.ids.length + by <= this.maxDepth;
  }

  set(chain: PreparedChain): void {
    if (!chain.whole || chain.ids.length > this.maxDepth) return;
    const size = freezeChain(chain);
    if (size > this.maxSize) return;
    const head = chain.ids[chain.ids.length - 1];
    this.delete(head);
    this.entries.set(head, { chain, size });
    this.size += size;
    for (const id of this.entries.keys()) {
      if (this.size <= this.maxSize) break;
      this.delete(id);
    }
  }

  delete(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    this.size -= entry.size;
  }
}
