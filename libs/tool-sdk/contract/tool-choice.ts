import type { JsonObject } from '../items.js';
import type { ClientCallShape } from './declaration.js';
import type { ToolEntry } from './entry.js';

/** What a handler's `tool_choice` resolution is given: the request's registry, read-only. */
export interface ToolChoiceContext {
  /** Every registered entry, in declaration order. */
  readonly entries: readonly ToolEntry[];
  /** The entry a model-visible name routes to. */
  lookup(modelName: string): ToolEntry | undefined;
  /** The entry of a client-owned tool returned in this shape (see `HistoryContext.clientCallName`). */
  clientCall(kind: ClientCallShape['kind'], name: string, scope?: string): ToolEntry | undefined;
}

/** What a `tool_choice` object means for the model: force one function, or require one of several. */
export type ToolChoiceTarget = { force: string } | { anyOf: readonly string[] };

/** A handler's share of `tool_choice`: the object types it answers and their meaning. */
export interface ToolChoiceContract {
  /** `tool_choice.type` values this handler resolves (a type and its dated aliases). */
  readonly types: readonly string[];
  /**
   * Throws `InvalidRequestError` with `param` under `tool_choice` (e.g.
   * `tool_choice.name`) when the choice names nothing this request offers.
   */
  resolve(choice: JsonObject, ctx: ToolChoiceContext): ToolChoiceTarget;
}
