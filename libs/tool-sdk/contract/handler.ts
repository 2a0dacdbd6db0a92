import type { JsonObject, PublicItem } from '../items.js';
import type { ToolTypeKey } from '../tool-type.js';
import type { ApprovalContract } from './approvals.js';
import type { ClientCallContract } from './client-calls.js';
import type { NormalizedTool } from './declaration.js';
import type { DiscoveryContext, DiscoveryResult } from './discovery.js';
import type { GatewayCall } from './execution.js';
import type { HistoryCapability } from './history.js';
import type { ToolChoiceContract } from './tool-choice.js';

/**
 * A tool type's declarations: what `tools[]` may say of it, checked once,
 * and the model-visible functions it becomes. `P` is the checked
 * declaration, `D` what discovery found, `E` the execution parameters each
 * function's calls carry to the type's executor.
 */
export interface DeclarationCapability<P = unknown, D = unknown, E = unknown> {
  /** Canonical type tag (what `response.tools[].type` routes on internally). */
  readonly type: ToolTypeKey<E>;
  /** Other wire tags accepted for the same type (web_search's dated aliases). */
  readonly aliases?: readonly string[];
  /**
   * Whether the gateway runs this type's calls. Default: true when a
   * `GatewayExecutor` is registered under the same key, else false (the
   * client runs them). Set it only for a gateway-owned type that may have
   * no executor in some gateways (calls then fail with `unboundCallItem`).
   */
  readonly gatewayOwned?: boolean;
  /** Prefix of the public item ids the gateway assigns to this type's calls (`ws` gives `ws_…`); default `gw`. */
  readonly itemIdPrefix?: string;
  /**
   * True when model-visible names come from discovery rather than from the
   * declaration's `name` field: a duplicate name is then reported at the
   * declaration (`tools[2]`) instead of at `tools[2].name`.
   */
  readonly namesFromDiscovery?: boolean;
  /**
   * True when what `validate`, `normalize`, `publicDeclaration` and
   * `continuationDeclaration` give depends on the declaration's content
   * alone (and this gateway's configuration): no `discover`, nothing read
   * per request or per connection, nothing the handler changes later. The
   * gateway may then prepare a tool list made only of such declarations once
   * and reuse it, frozen, for every later request of the same owner that
   * declares the same list. Absent: prepared afresh for every request.
   */
  readonly declarationsCacheable?: boolean;
  /**
   * Validate one declaration from `tools[]`. Throw `InvalidRequestError` with
   * `param` set to the field path (`path` is e.g. `tools[2]`).
   */
  validate(declaration: JsonObject, path: string): P;
  /** Optional discovery (MCP `tools/list`). */
  discover?(params: P, ctx: DiscoveryContext): Promise<DiscoveryResult<D>>;
  /**
   * The identity of a discovered state that is kept and shared: an object
   * that stays the same (`===`) for as long as the state it stands for is
   * valid (MCP: a server's listing kept until the server announces a
   * change, which is then a new array), or undefined when this discovery's
   * state is the request's own (listed afresh, failed, or shaped by anything
   * of this request but its owner). Optional; absent means always the
   * request's own.
   *
   * When every declaration of a list that discovers gives one, and every
   * other is `declarationsCacheable`, the gateway prepares the list once per
   * owner, content and kept states: later requests of the same owner that
   * declare the same list reuse its `validate` results and its normalized,
   * sealed functions while their discoveries give the same identities.
   * `discover` still runs for every request, and the `items` it returns stay
   * that request's own. Implementing this promises what
   * `declarationsCacheable` promises of everything but discovery: `validate`,
   * `normalize` (given the same state), `publicDeclaration` and
   * `continuationDeclaration` depend on the declaration's content, this
   * gateway's configuration and the discovered state alone; and `discover`
   * leaves `params` as it found them, since they then serve many requests.
   */
  keptDiscovery?(state: D): object | undefined;
  /** Model-visible functions for this declaration. May return none (type not modelled). */
  normalize(params: P, discovered: D | undefined, ctx: { takenNames: ReadonlySet<string> }): NormalizedTool<E>[];
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
}

/**
 * Every tool type implements this. Three members make a working type:
 * `type`, `validate` (the declaration check) and `normalize` (the functions
 * the model sees); a gateway-owned type adds a `GatewayExecutor`. Everything
 * else is optional, one capability per part: its
 * declarations (`DeclarationCapability`), its history items
 * (`HistoryCapability`), its `tool_choice` forms and, for a gateway-owned
 * type whose calls can wait for the client, its approvals. Client-owned
 * types implement only this contract; gateway-owned ones add a
 * `GatewayExecutor` under the same `ToolTypeKey`.
 */
export interface ToolHandler<P = unknown, D = unknown, E = unknown> extends DeclarationCapability<P, D, E>, HistoryCapability {
  /** The `tool_choice` object types this handler answers (`{type: "function", name}`, `{type: "<hosted type>"}`...). */
  readonly toolChoice?: ToolChoiceContract;
  /** Client-owned types whose call items are built from the model's arguments (`relay: {kind: "restored"}`). */
  readonly clientCalls?: ClientCallContract;
  /** Gateway-owned types whose calls may wait for the client's approval. */
  readonly approvals?: ApprovalContract<E>;
  /**
   * Gateway-owned types without an executor: the failed public item for a
   * call the model made anyway. Defaults to `{type: "<type>_call", status: "failed"}`.
   */
  unboundCallItem?(call: GatewayCall, error: { code: string; message: string }): PublicItem;
  /**
   * What this gateway does with the type, for the start-up summary: the
   * operator's first question when a model's call fails. Without it the
   * summary says only whether the type is client-owned or runs here.
   */
  describe?(): ToolStatus;
}

/** A tool type's state in this gateway, as the start-up summary prints it. */
export interface ToolStatus {
  /** False when declarations are accepted but calls cannot run (no provider configured...). */
  runs: boolean;
  /** One line an operator can act on: what runs, or why not and which setting fixes it. */
  detail: string;
}

/**
 * A handler as the gateway holds it once registered: the explorer fills in
 * the defaults (`gatewayOwned`, and for a gateway type without history of
 * its own, the `<type>_call` items' history) once at start-up.
 */
export type RegisteredToolHandler<P = unknown, D = unknown, E = unknown> = ToolHandler<P, D, E> & { readonly gatewayOwned: boolean };

export type AnyToolHandler = RegisteredToolHandler<any, any, any>;
