import type { Observable } from 'rxjs';
import type { FunctionToolDef, JsonObject, JsonSchema, ModelItem, PublicItem } from '../protocol/items.js';
import type { ToolTypeName } from '../tool-types/tool-type.enum.js';

/** How a client-owned call is handed back: the public shape the client declared. */
export interface ClientCallShape {
  /** `tool_search_call`: a client-run tool search, its arguments handed back as parsed JSON. */
  kind: 'function_call' | 'custom_tool_call' | 'tool_search_call';
  /** The name the client declared (a namespace member's own name). */
  name: string;
  namespace?: string;
}

/** One model-visible function produced by a handler's normalize stage. */
export interface NormalizedTool {
  /** What the model sees. `fn.name` is the model-visible name. */
  fn: FunctionToolDef;
  /** Client-owned tools: how calls are restored to public shape. */
  clientShape?: ClientCallShape;
  /** MCP: which server the tool belongs to. */
  serverLabel?: string;
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
  /** Names already taken in this request, for collision-safe naming. */
  takenNames: ReadonlySet<string>;
  requestId: string;
}

/** Context for converting a tool's public history item back into model items. */
export interface HistoryContext {
  /** Model-visible name for a tool of this type, if the current request declares it. */
  modelNameFor(toolName: string, serverLabel?: string): string | undefined;
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
  /** Public item types this tool contributes, accepted as input items. */
  readonly historyItemTypes?: readonly string[];
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
  /** The tool's own name (MCP tool name, `web_search`, ...). */
  toolName: string;
  serverLabel?: string;
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
   * The public item asking for approval. It must carry `server_label`, `name`
   * and `arguments` so that a later `mcp_approval_response` can be matched to
   * the declaration that made it, whether the history comes from storage or
   * from the client.
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
