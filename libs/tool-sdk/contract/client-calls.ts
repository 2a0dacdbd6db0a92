import type { JsonObject } from '../items.js';
import type { ClientCallShape } from './declaration.js';
import type { PlannedEvent } from './events.js';

/** What a client-owned call becomes once the model's arguments are complete. */
export type ClientCallRestoration =
  /** The public item's own fields (`action`, `operation`...), and events to emit between `output_item.added` and `.done`. */
  | { fields: JsonObject; events?: PlannedEvent[] }
  /**
   * The call is refused before it reaches the client: nothing public is
   * emitted, the model reads `error` as the call's result and is asked
   * again in the next round (a patch that does not parse, say).
   */
  | { error: string };

/**
 * Client-owned types whose public item is built from the model's arguments
 * rather than relaying them (`shell_call.action`, `apply_patch_call.operation`):
 * their shapes use `relay: {kind: "restored"}`, and core asks this contract
 * for the item's fields when the call is complete.
 */
export interface ClientCallContract {
  restore(args: string, shape: ClientCallShape): ClientCallRestoration;
}
