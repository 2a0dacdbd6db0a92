import { McpConfigError, parseMcpSettings } from './mcp.config.js';

describe('parseMcpSettings', () => {
  it('fills the defaults for an absent section', () => {
    expect(parseMcpSettings(undefined)).toEqual({
      servers: [],
      allowedHosts: [],
      maxServersPerRequest: 8,
      maxToolsPerServer: 128,
      discoveryTimeoutMs: 10_000,
      remoteIdleTimeoutMs: 300_000,
      maxRemoteConnections: 64,
      toolsListCacheMs: 0,
      toolsListUntilChanged: true,
    });
  });

  it('accepts each transport with its own fields', () => {
    const settings = parseMcpSettings({
      servers: [
        { label: 'docs', transport: 'streamable-http', url: 'https://mcp.example.com/mcp', headers: { 'X-Key': 'k' } },
        { label: 'legacy', transport: 'sse', url: 'http://10.0.0.2:9000/sse' },
        { label: 'local', transport: 'stdio', command: 'node', args: ['server.js'], env: { TOKEN: 't' } },
      ],
      allowedHosts: ['example.com', '*.corp.internal', '127.0.0.1:8931', '[::1]:9000'],
    });
    expect(settings.servers.map((s) => s.label)).toEqual(['docs', 'legacy', 'local']);
  });

  it.each([
    [{ servers: [{ label: 'a', transport: 'stdio' }] }, 'mcp.servers[0].command: is required for transport "stdio"'],
    [{ servers: [{ label: 'a', transport: 'sse' }] }, 'mcp.servers[0].url: is required for transport "sse"'],
    [{ servers: [{ label: 'a', transport: 'streamable-http', url: 'ftp://x' }] }, 'mcp.servers[0].url: must be an absolute http(s) URL'],
    [{ servers: [{ label: 'a b', transport: 'stdio', command: 'x' }] }, 'mcp.servers[0].label: must match'],
    [{ servers: [{ label: 'a', transport: 'websocket', url: 'http://x' }] }, 'mcp.servers[0].transport'],
    [
      {
        servers: [
          { label: 'a', transport: 'stdio', command: 'x' },
          { label: 'a', transport: 'stdio', command: 'y' },
        ],
      },
      'mcp.servers[1].label: "a" is already used by servers[0]',
    ],
    [{ allowedHosts: ['http://example.com/'] }, 'mcp.allowedHosts[0]: must be a host name'],
    [{ allowedHosts: ['a.*.com'] }, 'mcp.allowedHosts[0]'],
    [{ maxServersPerRequest: 0 }, 'mcp.maxServersPerRequest'],
    [{ discoveryTimeoutMs: 1.5 }, 'mcp.discoveryTimeoutMs'],
    [{ allowedHost: [] }, 'unknown config key "mcp.allowedHost" (did you mean "mcp.allowedHosts"?)'],
  ])('rejects %j naming the setting', (raw, expected) => {
    expect(() => parseMcpSettings(raw)).toThrow(McpConfigError);
    expect(() => parseMcpSettings(raw)).toThrow(expected);
  });

  it('never quotes header or env values in its errors', () => {
    let message = '';
    try {
      parseMcpSettings({
        servers: [
          { label: 'a', transport: 'streamable-http', url: 'http://x', headers: { Authorization: 'Bearer sk-live-secret', 'X-Num': 42 } },
          { label: 'b', transport: 'stdio', command: 'x', env: { TOKEN: 'sk-env-secret', K: 42 } },
        ],
      });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('mcp.servers[0].headers.X-Num');
    expect(message).toContain('mcp.servers[1].env.K');
    expect(message).not.toContain('sk-live-secret');
    expect(message).not.toContain('sk-env-secret');
  });
});
