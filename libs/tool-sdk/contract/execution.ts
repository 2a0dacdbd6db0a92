import type { Observable } from 'rxjs';
import type { PublicItem } from '../items.js';
import type { ToolTypeKey } from '../tool-type.js';
import type { ToolRequestContext } from './discovery.js';
import type { GatewayEventPlan, PlannedEvent } from './events.js';

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

export interface ExecutionContext {
  /** The request, as `discover` saw it: the module's per-request state is `request.local(...)`. */
  request: ToolRequestContext;
  /** Aborted on client disconnect or deadline; executors must stop work when it fires. */
  signal: AbortSignal;
  /**
   * Aborts `signal` with `reason`. The signal is this call's alone, so an
   * executor whose call must also stop when something under it fails (a
   * pooled connection that is lost) can abort it instead of making and
   * linking a signal of its own (an `AbortController` and a listener per
   * call). Only the executor's own work reads the signal: the call still
   * ends with what the executor returns or throws.
   */
  abort?(reason: unknown): void;
  /** Epoch milliseconds after which the call counts as timed out. */
  deadline: number;
  requestId: string;
  /** The request's `include[]`, for items that add detail on request. */
  include: readonly string[];
}

/**
 * Gateway-owned tool types implement this as well as `ToolHandler`. Two
 * members make it work: `type` and `execute`. The call's public item
 * (`publicOutput`) and its events (`planEvents`) default to the simple
 * `<type>_call` item (`simpleCallOutput`, `simpleCallPlan`); the rest is optional.
 * `P` is the executor's per-entry execution parameters (`NormalizedTool.executionParams`);
 * a `ToolTypeKey<P>` shared with the handler makes the compiler hold both to it.
 */
export interface GatewayExecutor<P = unknown> {
  readonly type: ToolTypeKey<P>;
  execute(call: GatewayCall, params: P, ctx: ExecutionContext): Promise<ToolOutput> | Observable<ToolOutput>;
  /** May two calls to the same model-visible tool run at once? Default false: serialized. */
  supportsParallelExecution?(params: P): boolean;
  /** Per-type deadline in ms; else the configured default for the type, else the global one. */
  timeoutMs?(params: P): number | undefined;
  /**
   * `streamed` is true when the call's start already streamed while the
   * model wrote it (`streamArguments`): the plan then leaves out the
   * opening events and the argument deltas that were sent.
   */
  planEvents?(call: GatewayCall, params: P, ctx: { include: readonly string[]; streamed?: boolean }): GatewayEventPlan;
  /**
   * Show the call while the model writes it, as OpenAI streams a code
   * interpreter's code: the item opens at the call's first token and the
   * decoded string `field` of the arguments streams as `delta` events. The
   * plan's `startedItem` must then not depend on the arguments. Types whose
   * calls can wait for approval are never streamed (the call may not run).
   */
  streamArguments?(params: P): ArgumentStream | undefined;
  /** The completed or failed public item. Default: `simpleCallOutput('<type>_call', result)`. */
  publicOutput?(result: GatewayCallResult, params: P, ctx: { include: readonly string[] }): PublicItem;
  /**
   * Annotations for an answer's text from this response's completed calls of
   * this type (file_search: `file_citation` where the text names a result's
   * file). Called once per finished message; `index`-style positions refer
   * to `text`.
   */
  annotateText?(text: string, results: readonly GatewayCallResult[]): Array<Record<string, unknown>>;
}

/** An executor as the gateway holds it once registered, its defaults filled in at start-up. */
export type RegisteredGatewayExecutor<P = unknown> = GatewayExecutor<P> & Required<Pick<GatewayExecutor<P>, 'planEvents' | 'publicOutput'>>;

export type AnyGatewayExecutor = RegisteredGatewayExecutor<any>;

/** How a gateway call's arguments stream into its public events (`GatewayExecutor.streamArguments`). */
export interface ArgumentStream {
  /** The string field of the JSON arguments whose text streams (`code`). */
  field: string;
  /** Events right after `output_item.added`, at the call's first token (`response.code_interpreter_call.in_progress`). */
  opening: PlannedEvent[];
  /** The type of the event each decoded piece is sent in, with its `delta` (`response.code_interpreter_call_code.delta`). */
  delta: string;
  /**
   * The type of the event the gateway sends once the model's arguments are
   * complete, carrying the whole decoded string as `field`
   * (`response.code_interpreter_call_code.done` with `code`): the plan's
   * `beforeExecute` follows it.
   */
  done: string;
}
