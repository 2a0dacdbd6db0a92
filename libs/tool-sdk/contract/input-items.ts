import type { JsonObject, ModelItem, PublicItem } from '../items.js';

/**
 * An input item type owned by a module that is not a tool: it is accepted in
 * `input`, checked at parse time, and shown to the model as `toModelItems`
 * returns. Register it with `@InputItemProvider({ type })`.
 */
export interface InputItemHandler {
  /** The item type, equal to the decorator's `type`. */
  readonly itemType: string;
  /** Throws an `InvalidRequestError` naming `path` (e.g. `input[2]`) to refuse an item before anything runs. */
  validate?(item: JsonObject, path: string): void;
  /** What the model reads for the item. Throws a `GatewayError` to refuse it. */
  toModelItems(item: PublicItem): ModelItem[];
}
