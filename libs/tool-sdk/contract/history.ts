import type { JsonObject, ModelItem, PublicItem } from '../items.js';
import type { ClientCallShape } from './declaration.js';

/** Context for converting a tool's public history item back into model items. */
export interface HistoryContext {
  /** Model-visible name for a tool of this type, if the current request declares it. */
  modelNameFor(toolName: string, scope?: string): string | undefined;
  /**
   * Model-visible name of a client-owned tool of any type whose calls come
   * back in this public shape, if the current request declares it (a
   * grouping type's member is found under its group's `scope`).
   */
  clientCallName(kind: ClientCallShape['kind'], name: string, scope?: string): string | undefined;
}

/** A tool type's share of the conversation history: the public items it owns and what the model sees of them. */
export interface HistoryCapability {
  /** Public item types this tool contributes, accepted as input items. */
  readonly historyItemTypes?: readonly string[];
  /** Those of the history item types that answer a call by `call_id`, as `function_call_output` does. */
  readonly callOutputItemTypes?: readonly string[];
  /** Turn one of those items, found in conversation history, into what the model sees. */
  toModelItems?(item: PublicItem, ctx: HistoryContext): ModelItem[];
  /**
   * Tool declarations one of those items brings into the conversation
   * (`tool_search_output.tools`): from that item on the model may call them,
   * so they are registered like the request's own `tools[]`, which win on a
   * name both declare. `path` names the item (`input[3]`) for errors.
   */
  historyDeclarations?(item: PublicItem, path: string): JsonObject[];
}
