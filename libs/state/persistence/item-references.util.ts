import { InvalidRequestError } from '#tool-sdk/errors.js';
import type { PublicItem } from '#tool-sdk/items.js';
import { canonicalItem } from '#responses/request/input-items.parser.js';

/** Finds stored items by id, for one owner; absent ids are missing from the map. */
export type ItemLookup = (ids: readonly string[]) => Promise<Map<string, PublicItem>>;

/**
 * `input` with every `{type: "item_reference", id}` replaced by the item it
 * names, looked up once for the whole list. Clients that store responses (the
 * Vercel AI SDK) send references instead of repeating items the gateway
 * returned; an id the caller cannot see is a 400 naming that reference.
 */
export async function resolveItemReferences(input: readonly PublicItem[], lookup: ItemLookup, root = 'input'): Promise<PublicItem[]> {
  const ids = input.filter((item) => item.type === 'item_reference').map((item) => item.id as string);
  if (ids.length === 0) return [...input];
  const found = await lookup(ids);
  return input.map((item, i) => {
    if (item.type !== 'item_reference') return item;
    const resolved = found.get(item.id as string);
    if (!resolved) {
      throw new InvalidRequestError(`Item with id '${String(item.id)}' not found.`, `${root}[${i}].id`, 'item_not_found');
    }
    // Stored again as this request's input: in canonical form, whenever the original was stored.
    return canonicalItem(resolved);
  });
}
