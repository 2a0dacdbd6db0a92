import type { FunctionToolDef, JsonObject } from '../items.js';

/**
 * How a client-owned call is handed back: the public item the client
 * expects. A module that gives none gets a plain `function_call`.
 */
export interface ClientCallShape {
  /** The public item type the call is handed back as (`function_call` by default). */
  kind: string;
  /** The name the client declared (a group member's own name). */
  name: string;
  /** What qualifies `name` (the group the tool belongs to); it becomes the entry's scope. */
  scope?: string;
  /** How the model's arguments reach the public item; default `{kind: "arguments"}`. */
  relay?: ClientCallRelay;
  /** Public item id prefix; default `fc`. */
  idPrefix?: string;
  /** The item names no tool (its type says what it is). */
  omitName?: boolean;
  /** Fixed fields placed before the relayed field. */
  leadingFields?: JsonObject;
  /** Fixed fields placed after the relayed field (a group member's group). */
  trailingFields?: JsonObject;
}

/** How a client call's arguments are relayed onto its public item while the model writes them. */
export type ClientCallRelay =
  /** `arguments` as the model's string, streamed as `response.function_call_arguments.delta` / `.done`. */
  | { kind: 'arguments' }
  /**
   * The model writes `{"<field>": "..."}`; the item carries the decoded string
   * as `<field>`, streamed as `response.<item type>_<field>.delta` / `.done`.
   */
  | { kind: 'string-field'; field: string }
  /** `arguments` as the parsed JSON value, with no deltas (text that is not JSON is kept as a string). */
  | { kind: 'json' }
  /**
   * The handler's `clientCalls.restore` builds the item's fields from the
   * complete arguments, and may refuse the call: the item is announced only
   * then, with the events `restore` plans.
   */
  | { kind: 'restored' };

/** One model-visible function produced by a handler's normalize stage. */
export interface NormalizedTool<E = unknown> {
  /** What the model sees. `fn.name` is the model-visible name. */
  fn: FunctionToolDef;
  /** Client-owned tools: how calls are restored to public shape. */
  clientShape?: ClientCallShape;
  /** What qualifies `toolName` within its type (the server it belongs to), matched by `findByIdentity` and `modelNameFor`. */
  scope?: string;
  /** The tool's own name (before any flattening or prefixing). */
  toolName: string;
  /** Gateway-owned tools: parameters the executor receives with each call. */
  executionParams?: E;
  /** Route calls to this name but do not offer it to the model (types without a model-facing form). */
  hidden?: boolean;
}
