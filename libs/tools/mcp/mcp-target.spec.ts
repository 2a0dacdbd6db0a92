import { McpTarget } from './mcp-target.js';

describe('McpTarget', () => {
  const url = new URL('http://mcp.example/mcp?token=tok-secret-123');

  it('pools request-declared servers apart per owner, and operator servers not', () => {
    const target = McpTarget.remote('s', url, {});
    expect(target.forOwner('owner-a').key).not.toBe(target.forOwner('owner-b').key);
    expect(target.forOwner('owner-a').key).toBe(target.forOwner('owner-a').key);
    expect(target.forOwner(null)).toBe(target);
    const operator = McpTarget.operator({ label: 'op', transport: 'streamable-http', url: 'http://op.example/mcp' } as any);
    expect(operator.forOwner('owner-a')).toBe(operator);
  });

  it('keeps credentials and says it carries them; a query string counts', () => {
    const withHeader = McpTarget.remote('s', new URL('http://mcp.example/mcp'), { Authorization: 'Bearer sk-abc-123' }).forOwner('o');
    expect(withHeader.carriesCredentials()).toBe(true);
    expect(withHeader.headers()).toEqual({ Authorization: 'Bearer sk-abc-123' });
    expect(McpTarget.remote('s', url, {}).carriesCredentials()).toBe(true);
    expect(McpTarget.remote('s', new URL('http://mcp.example/mcp'), {}).carriesCredentials()).toBe(false);
  });

  it('scrubs query values of its URL out of messages', () => {
    const target = McpTarget.remote('s', url, {});
    expect(target.redact(`GET ${url.href} failed`)).not.toContain('tok-secret-123');
    expect(target.describe()).toBe('"s" (http://mcp.example)');
  });
});
