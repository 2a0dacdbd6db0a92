import type { PublicItem } from '../items.js';
import type { ToolEntry } from './entry.js';
import type { GatewayCall } from './execution.js';

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
 * The whole approval flow of a gateway-owned type whose calls can wait for
 * the client: which calls wait and the request item they become (`requires`,
 * `requestItem`, given the entry's execution parameters `E`), and how the
 * client's answers (the MCP module's `mcp_approval_response`) resume or deny
 * each call. Core only calls it.
 */
export interface ApprovalContract<E = unknown> {
  /** Does this call need the client's approval before it runs? (MCP `require_approval`.) */
  requires(call: GatewayCall, params: E): boolean;
  /**
   * The public item asking for approval (MCP: `mcp_approval_request` with
   * `server_label`, `name` and `arguments`). It must carry what `resolve`
   * needs to match a later answer to the declaration that made it, whether
   * the history comes from storage or from the client. The model's call is
   * keyed by this item's `id` from then on.
   */
  requestItem(call: GatewayCall, params: E): PublicItem;
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
