import type { Observable } from 'rxjs';
import type { FunctionToolDef, JsonObject, JsonSchema, ModelItem, PublicItem } from '../protocol/items.js';
import type { ToolEntry } from '../registry/tool-registry.js';
import type { ToolTypeName } from '../tool-types/tool-type.enum.js';

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
  | { kind: 'json' };

/** One model-visible function produced by a handler's normalize stage. */
export interface NormalizedTool {
  /** What the model sees. `fn.name` is the model-visible name. */
  fn: FunctionToolDef;
  /** Client-owned tools: how calls are restored to public shape. */
  clientShape?: ClientCallShape;
  /** What qualifies `toolName` within its type (the server it belongs to), matched by `findByIdentity` and `modelNameFor`. */
  scope?: string;
  /** The tool's own name (before any flattening or prefixing). */
  toolName: string;
  /** Gateway-owned tools: parameters the executor receives with each call. */
  executionParams?: unknown;
  /** Route calls to this name but do not offer it to the model (types without a model-facing form). */
  hidden?: boolean;
}

/** What a handler's discover stage returns: private state for normalize plus public items to emit. */
export interface DiscoveryResult<D = unknown> {
  state: D;
  /** Public output items emitted before the first round (MCP: `mcp_list_tools`). */
  items?: PublicItem[];
}

export interface DiscoveryContext {
  signal: AbortSignal;
  /** Items already in the conversation (history + input), to suppress repeated discovery output. */
  history: readonly PublicItem[];
  requestId: string;
  /** Who the request runs for (the API key's hash), null without authentication. */
  owner?: string | null;
}

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

/** One client answer to an approval request, as its answer item says it. */
export interface ApprovalAnswer {
  /** The id of the approval request item being answered. */
  requestId: string;
  approve: boolean;
  reason: string | null;
}

/** What an answer does to the turn it arrives in. */
export type ApprovalVerdict =
  /** The conversation already shows the approved call carried out: running it again would repeat its side effects. */
  | { kind: 'settled' }
  /** The model reads `output` as the call's result. */
  | { kind: 'denied'; output: string }
  /** The gateway runs the call now, as `entry` with these raw JSON arguments. */
  | { kind: 'approved'; entry: ToolEntry; arguments: string };

/**
 * The approval sub-contract of a gateway-owned type whose calls can wait for
 * the client. Which calls wait, and the request item they become, are the
 * executor's `requiresApproval` / `approvalRequestItem`; this part reads the
 * client's answers (the MCP module's `mcp_approval_response`) and decides
 * how each one resumes or denies its call. Core only calls it.
 */
export interface ApprovalContract {
  /** Input item types that answer this type's approval requests; they are claimed like history item types. */
  readonly answerItemTypes: readonly string[];
  readAnswer(item: PublicItem): ApprovalAnswer;
  /**
   * One verdict per answer, in order, before the first round. Throws
   * `InvalidRequestError` for an answer to a request the conversation does
   * not hold, or to a tool the request no longer declares.
   */
  resolve(answers: readonly ApprovalAnswer[], ctx: { conversation: readonly PublicItem[]; entries: readonly ToolEntry[] }): ApprovalVerdict[];
}

/**
 * Every tool type implements this: validate, discover, normalize, and know
 * its own public items. Client-owned types implement only this contract.
 */
export interface ToolHandler<P = unknown, D = unknown> {
  /** Canonical type tag (what `response.tools[].type` routes on internally). */
  readonly type: ToolTypeName;
  /** Other wire tags accepted for the same type (web_search's dated aliases). */
  readonly aliases?: readonly string[];
  /** Declaration-level ownership default; registry entries carry it explicitly. */
  readonly gatewayOwned: boolean;
  /** Prefix of the public item ids the gateway assigns to this type's calls (`ws` gives `ws_…`); default `gw`. */
  readonly itemIdPrefix?: string;
  /**
   * True when model-visible names come from discovery rather than from the
   * declaration's `name` field: a duplicate name is then reported at the
   * declaration (`tools[2]`) instead of at `tools[2].name`.
   */
  readonly namesFromDiscovery?: boolean;
  /** The `tool_choice` object types this handler answers (`{type: "function", name}`, `{type: "<hosted type>"}`...). */
  readonly toolChoice?: ToolChoiceContract;
  /** Gateway-owned types whose calls may wait for the client's approval. */
  readonly approvals?: ApprovalContract;
  /**
   * Validate one declaration from `tools[]`. Throw `InvalidRequestError` with
   * `param` set to the field path (`path` is e.g. `tools[2]`).
   */
  validate(declaration: JsonObject, path: string): P;
  /** Optional discovery (MCP `tools/list`). */
  discover?(params: P, ctx: DiscoveryContext): Promise<DiscoveryResult<D>>;
  /** Model-visible functions for this declaration. May return none (type not modelled). */
  normalize(params: P, discovered: D | undefined, ctx: { takenNames: ReadonlySet<string> }): NormalizedTool[];
  /** The declaration as echoed in `response.tools` and stored: secrets removed. */
  publicDeclaration?(params: P, declaration: JsonObject): JsonObject;
  /**
   * The declaration kept for continuations (`previous_response_id` without
   * `tools`): stored, so secrets removed too; defaults to the public one. A
   * handler whose declaration cannot work without its secrets marks it here,
   * and refuses the mark in `validate`, so that no continuation calls a
   * server under another identity than the one declared.
   */
  continuationDeclaration?(params: P, declaration: JsonObject): JsonObject;
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
  /**
   * Gateway-owned types without an executor: the failed public item for a
   * call the model made anyway. Defaults to `{type: "<type>_call", status: "failed"}`.
   */
  unboundCallItem?(call: GatewayCall, error: { code: string; message: string }): PublicItem;
}

/** One gateway-owned call as the scheduler hands it to an executor. */
export interface GatewayCall {
  /** The model's call id. */
  callId: string;
  /** The public item id the gateway assigned. */
  itemId: string;
  /** The model-visible function name. */
  modelName: string;
  /** Set when the call runs because the client approved it. */
  approvalRequestId?: string;
  /** The tool's own name, as its module named it. */
  toolName: string;
  /** The entry's scope (`NormalizedTool.scope`). */
  scope?: string;
  /** Raw JSON arguments string, as the model produced it. */
  arguments: string;
}

/** What an executor produced for one call. */
export interface ToolOutput {
  /** What the model reads in the next round. */
  text: string;
  /** Type-specific detail for the public item (search sources, MCP output...). */
  data?: unknown;
  /** True when the tool itself reported failure; the call's public item is then `failed`. */
  isError?: boolean;
}

export type GatewayCallStatus = 'completed' | 'failed' | 'incomplete';

export interface GatewayCallResult {
  call: GatewayCall;
  status: GatewayCallStatus;
  output: ToolOutput;
  /** Set when the call failed outside the tool (timeout, exception, no executor). */
  error?: { code: string; message: string };
}

/** An event the executor asks to emit; the gateway adds item_id, output_index and sequence_number. */
export interface PlannedEvent {
  type: string;
  [field: string]: unknown;
}

/** The public lifecycle of one gateway call, as the executor shapes it. */
export interface GatewayEventPlan {
  /** Item as sent in `response.output_item.added` (status `in_progress`). */
  startedItem: PublicItem;
  /** Events between `output_item.added` and execution. */
  beforeExecute: PlannedEvent[];
  /** Events between execution and `output_item.done`. */
  afterExecute(result: GatewayCallResult): PlannedEvent[];
}

export interface ExecutionContext {
  /** Aborted on client disconnect or deadline; executors must stop work when it fires. */
  signal: AbortSignal;
  /** Epoch milliseconds after which the call counts as timed out. */
  deadline: number;
  requestId: string;
  /** The request's `include[]`, for items that add detail on request. */
  include: readonly string[];
}

/**
 * Gateway-owned tool types implement this as well as `ToolHandler`.
 * `P` is the executor's per-entry execution parameters (`NormalizedTool.executionParams`).
 */
export interface GatewayExecutor<P = unknown> {
  readonly type: ToolTypeName;
  execute(call: GatewayCall, params: P, ctx: ExecutionContext): Promise<ToolOutput> | Observable<ToolOutput>;
  /** May two calls to the same model-visible tool run at once? Default false: serialized. */
  supportsParallelExecution?(params: P): boolean;
  /** Per-type deadline in ms; else the configured default for the type, else the global one. */
  timeoutMs?(params: P): number | undefined;
  planEvents(call: GatewayCall, params: P, ctx: { include: readonly string[] }): GatewayEventPlan;
  /** The completed or failed public item. */
  publicOutput(result: GatewayCallResult, params: P, ctx: { include: readonly string[] }): PublicItem;
  /** Does this call need the client's approval before it runs? (MCP `require_approval`.) */
  requiresApproval?(call: GatewayCall, params: P): boolean;
  /**
   * The public item asking for approval (MCP: `mcp_approval_request` with
   * `server_label`, `name` and `arguments`). It must carry what the handler's
   * `ApprovalContract` needs to match a later answer to the declaration that
   * made it, whether the history comes from storage or from the client. The
   * model's call is keyed by this item's `id` from then on.
   */
  approvalRequestItem?(call: GatewayCall, params: P): PublicItem;
  /**
   * Annotations for an answer's text from this response's completed calls of
   * this type (file_search: `file_citation` where the text names a result's
   * file). Called once per finished message; `index`-style positions refer
   * to `text`.
   */
  annotateText?(text: string, results: readonly GatewayCallResult[]): Array<Record<string, unknown>>;
}

export type AnyToolHandler = ToolHandler<any, any>;
export type AnyGatewayExecutor = GatewayExecutor<any>;
export type { JsonSchema };
