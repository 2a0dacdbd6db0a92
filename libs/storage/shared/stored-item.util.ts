import { newId } from '../../core/ids.js';
import type { PublicItem } from '../../core/protocol/items.js';

export type IdentifiedItem = PublicItem & { id: string };

/** A copy of `item` that carries an id: its own when it has a non-empty string one, else a fresh `msg_`/`item_` id. */
export function withItemId(item: PublicItem): IdentifiedItem {
  if (typeof item.id === 'string' && item.id !== '') return item as IdentifiedItem;
  return { ...item, id: newId(item.type === 'message' ? 'msg' : 'item') };
}

/**
 * Serializes one JSON column value. `JSON.stringify(undefined)` yields
 * `undefined`, which both drivers would store as SQL NULL in a NOT NULL
 * column, so it is turned into JSON `null` here.
 */
export function toJson(value: unknown): string {
  return JSON.stringify(value ?? null);
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
