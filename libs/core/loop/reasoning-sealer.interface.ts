import type { ReasoningItem } from '#tool-sdk/items.js';

export const REASONING_SEALER = Symbol('REASONING_SEALER');

/**
 * Turns the model's reasoning into the opaque `encrypted_content` of a
 * reasoning item (`include: ["reasoning.encrypted_content"]`) and back. A
 * client that stores nothing (`store: false`) sends the item back on its next
 * turn, and the model must then see its reasoning as it wrote it, not the
 * summary the client was shown. Provided by the state module, which owns the
 * key; without a provider reasoning items keep the upstream's own value.
 */
export interface ReasoningSealer {
  /** The token for one reasoning item, as the model would see it again. */
  seal(reasoning: ReasoningItem): string;
  /** Whether `token` is in this gateway's format (anything else may be the upstream's own value). */
  recognizes(token: string): boolean;
  /** The reasoning a token carries; throws a 400 naming `param` for a token this gateway did not produce. */
  open(token: unknown, param: string): ReasoningItem;
}
