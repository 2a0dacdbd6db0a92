import { createHash, randomBytes } from 'node:crypto';
import type { McpTarget } from './mcp-target.js';

/**
 * An `mcp_approval_request` id carries its binding: `mcpr_` + 24 hex of
 * nonce + 24 hex of tag, the tag a digest of the nonce, the server label, the
 * tool, the arguments and the server's declaration (URL and credentials,
 * `McpTarget.declarationDigest`). 48 hex digits, as OpenAI's ids have. The
 * answer is checked against the declaration the answering request carries,
 * on both continuation paths, without storing anything beside the item: an
 * approval holds only for the call, the server and the credentials the user
 * was shown. The nonce keeps equal declarations from giving equal tags, and
 * nothing secret is stored, only a digest of it.
 */
const BOUND_ID = /^mcpr_([0-9a-f]{24})([0-9a-f]{24})$/;

export interface ApprovedCall {
  serverLabel: string;
  toolName: string;
  arguments: string;
}

function tag(nonce: string, call: ApprovedCall, target: McpTarget): string {
  return createHash('sha256')
    .update(JSON.stringify([nonce, call.serverLabel, call.toolName, call.arguments, target.declarationDigest()]))
    .digest('hex')
    .slice(0, 24);
}

export function boundApprovalRequestId(call: ApprovedCall, target: McpTarget): string {
  const nonce = randomBytes(12).toString('hex');
  return `mcpr_${nonce}${tag(nonce, call, target)}`;
}

/** True when `id` was issued for exactly this call on this declaration. */
export function approvalBindingHolds(id: string, call: ApprovedCall, target: McpTarget): boolean {
  const m = BOUND_ID.exec(id);
  return m !== null && tag(m[1], call, target) === m[2];
}
