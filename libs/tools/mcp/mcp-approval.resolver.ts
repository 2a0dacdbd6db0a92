import {
  type ApprovalAnswer,
  type ApprovalContract,
  type ApprovalVerdict,
  type GatewayCall,
  InvalidRequestError,
  type JsonObject,
  type PublicItem,
  type ToolEntry,
} from '#tool-sdk/index.js';
import { approvalBindingHolds } from './mcp-approval-binding.js';
import { needsApproval } from './mcp-declaration.parser.js';
import { approvalRequestItem } from './mcp-items.js';
import type { McpExecutionParams } from './mcp.tool-handler.js';
import { MCP } from './mcp.tool-type.js';

/**
 * MCP's side of the approval contract: `mcp_approval_response` items answer
 * the `mcp_approval_request` items an earlier turn emitted. An approved call
 * runs at the start of the answering turn, a denied one tells the model so;
 * the request item (stored or sent back by the client) says which server
 * and tool, so the answer is matched to the request's own declaration.
 */
export class McpApprovalResolver implements ApprovalContract<McpExecutionParams> {
  readonly answerItemTypes = ['mcp_approval_response'];

  requires(_call: GatewayCall, params: McpExecutionParams): boolean {
    return needsApproval(params.approval, params.toolName, params.readOnlyHint);
  }

  requestItem(call: GatewayCall, params: McpExecutionParams): PublicItem {
    return approvalRequestItem(call, params.serverLabel, params.toolName, params.target);
  }

  readAnswer(item: PublicItem): ApprovalAnswer {
    const it = item as JsonObject;
    return { requestId: String(it.approval_request_id), approve: it.approve === true, reason: typeof it.reason === 'string' ? it.reason : null };
  }

  resolve(answers: readonly ApprovalAnswer[], ctx: { conversation: readonly PublicItem[]; entries: readonly ToolEntry[] }): ApprovalVerdict[] {
    // An approval the conversation already shows carried out (an `mcp_call`
    // bearing its id) was answered in an earlier turn.
    const executed = new Set<string>();
    const requests = new Map<string, JsonObject>();
    for (const item of ctx.conversation) {
      const it = item as JsonObject;
      if (item.type === 'mcp_call' && typeof it.approval_request_id === 'string') executed.add(it.approval_request_id);
      if (item.type === 'mcp_approval_request' && typeof it.id === 'string') requests.set(it.id, it);
    }
    return answers.map((answer): ApprovalVerdict => {
      if (executed.has(answer.requestId)) return { kind: 'settled' };
      const request = requests.get(answer.requestId);
      if (!request) {
        throw new InvalidRequestError(
          `mcp_approval_response refers to approval request "${answer.requestId}", which is not in this conversation.`,
          'input',
          'approval_request_not_found',
        );
      }
      if (!answer.approve) {
        const reason = answer.reason ? ` Reason: ${answer.reason}` : '';
        return { kind: 'denied', output: JSON.stringify({ error: { code: 'approval_denied', message: `The user denied this call.${reason}` } }) };
      }
      const entry = ctx.entries.find((e) => e.toolType === MCP && e.scope === request.server_label && e.toolName === request.name && e.ownership.kind === 'gateway');
      if (!entry) {
        throw new InvalidRequestError(
          `The approved call to "${String(request.name)}" on server "${String(request.server_label)}" has no matching tool declaration in this request.`,
          'tools',
          'approval_tool_not_declared',
        );
      }
      const args = typeof request.arguments === 'string' ? request.arguments : JSON.stringify(request.arguments ?? {});
      // The approval holds for the call and declaration the user was shown: a request sent again with
      // another server_url or other credentials, or an edited call, must be approved again.
      const target = (entry.ownership.kind === 'gateway' ? (entry.ownership.binding?.params as McpExecutionParams | undefined) : undefined)?.target;
      if (!target || !approvalBindingHolds(answer.requestId, { serverLabel: String(request.server_label), toolName: String(request.name), arguments: args }, target)) {
        throw new InvalidRequestError(
          `Approval request "${answer.requestId}" was approved for another declaration of server "${String(request.server_label)}" (its server_url or credentials differ from this request's tools), or for another call; ask for approval again.`,
          'tools',
          'approval_declaration_mismatch',
        );
      }
      return { kind: 'approved', entry, arguments: args };
    });
  }
}
