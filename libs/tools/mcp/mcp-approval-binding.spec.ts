import { approvalBindingHolds, boundApprovalRequestId } from './mcp-approval-binding.js';
import { McpTarget } from './mcp-target.js';

describe('approval request ids bound to their declaration', () => {
  const url = new URL('https://mcp.example.com/mcp');
  const target = McpTarget.remote('demo', url, { Authorization: 'Bearer one', 'X-Team': 'a' });
  const call = { serverLabel: 'demo', toolName: 'delete_item', arguments: '{"id":"7"}' };

  it('holds for the same call on the same server with the same credentials, whoever the owner', () => {
    const id = boundApprovalRequestId(call, target);
    expect(id).toMatch(/^mcpr_[0-9a-f]{48}$/);
    expect(approvalBindingHolds(id, call, target)).toBe(true);
    // Header names are case-insensitive and unordered; pooling per owner does not change what was approved.
    expect(approvalBindingHolds(id, call, McpTarget.remote('demo', url, { 'x-team': 'a', authorization: 'Bearer one' }).forOwner('tenant-b'))).toBe(true);
    // Two requests for the same call get different ids.
    expect(boundApprovalRequestId(call, target)).not.toBe(id);
  });

  it('fails for other credentials, another server_url or label, an edited call, and ids it did not issue', () => {
    const id = boundApprovalRequestId(call, target);
    expect(approvalBindingHolds(id, call, McpTarget.remote('demo', url, { Authorization: 'Bearer two', 'X-Team': 'a' }))).toBe(false);
    expect(approvalBindingHolds(id, call, McpTarget.remote('demo', url, { Authorization: 'Bearer one' }))).toBe(false);
    expect(approvalBindingHolds(id, call, McpTarget.remote('demo', new URL('https://evil.example.com/mcp'), { Authorization: 'Bearer one', 'X-Team': 'a' }))).toBe(false);
    expect(approvalBindingHolds(id, call, McpTarget.remote('demo', new URL('https://mcp.example.com/mcp?tenant=2'), { Authorization: 'Bearer one', 'X-Team': 'a' }))).toBe(false);
    expect(approvalBindingHolds(id, { ...call, arguments: '{"id":"8"}' }, target)).toBe(false);
    expect(approvalBindingHolds(id, { ...call, toolName: 'drop_all' }, target)).toBe(false);
    expect(approvalBindingHolds('mcpr_1', call, target)).toBe(false);
    expect(approvalBindingHolds(id.slice(0, -1) + (id.endsWith('0') ? '1' : '0'), call, target)).toBe(false);
  });

  it('keeps the credentials out of the id', () => {
    const secret = McpTarget.remote('demo', url, { Authorization: 'Bearer sk-very-secret-token' });
    expect(boundApprovalRequestId(call, secret)).not.toContain('secret');
    expect(secret.declarationDigest()).toMatch(/^[0-9a-f]{64}$/);
  });
});
