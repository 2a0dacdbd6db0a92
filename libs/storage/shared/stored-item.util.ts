import { newId } from '#tool-sdk/ids.js';
import type { PublicItem } from '#tool-sdk/items.js';
import type { StoredResponse } from '../state-store.interface.js';

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

/** The two item tables, both ordered by `position` within their owner's key. */
export type ItemTable = { table: 'response_input_items'; key: 'response_id' } | { table: 'conversation_items'; key: 'conversation_id' };

export const INPUT_ITEMS: ItemTable = { table: 'response_input_items', key: 'response_id' };
export const CONVERSATION_ITEMS: ItemTable = { table: 'conversation_items', key: 'conversation_id' };

/** Columns of a `responses` row, in the order `responseRowValues` gives them. */
export const RESPONSE_COLUMNS_SQL = 'id, owner, created_at, previous_response_id, conversation_id, status, response, model_items, tools, tool_choice, extra';

/** A response's row values for both drivers; JSON columns go over as text, written by the driver's `json`. */
export function responseRowValues(r: StoredResponse, json: (value: unknown) => string = toJson): unknown[] {
  return [
    r.id,
    r.owner,
    r.createdAt,
    r.previousResponseId,
    r.conversationId,
    r.status,
    json(r.response),
    json(r.modelItems),
    json(r.tools),
    json(r.toolChoice),
    r.extra === undefined ? null : json(r.extra),
  ];
}

/** A stored response's output items (kept apart too, so `item_reference` finds them by id). */
export function outputItemsOf(r: StoredResponse): PublicItem[] {
  return Array.isArray(r.response.output) ? (r.response.output as PublicItem[]) : [];
}
