import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { plainToInstance } from 'class-transformer';
import { checkConfig } from '../../apps/gateway/src/cli.js';
import { stateConfigSection } from '#state/config/state-settings.js';
import { mcpConfigSection } from '#tools/mcp/mcp.config.js';
import { HostPolicy } from '#tools/mcp/mcp-host.policy.js';
import { validateFields } from '#tool-sdk/routes/request-validation.js';
import { CreateResponseDto } from '#responses/request/create-response.dto.js';
import { ConfigError, loadGatewayConfig, validateGatewayConfig } from './config.loader.js';
import { tempDir } from '../../test/support/temp-dir.js';

const messageOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected an error');
};

describe('errors that teach', () => {
  it('a wrong type is one line saying what the setting takes and what came', () => {
    expect(messageOf(() => validateGatewayConfig({ server: { port: 'http' } }))).toBe('Invalid configuration: server.port (PORT): must be an integer from 0 to 65535 (got "http")');
    expect(messageOf(() => validateGatewayConfig({ server: { port: 70_000 } }))).toBe('Invalid configuration: server.port (PORT): must be an integer from 0 to 65535 (got 70000)');
    expect(messageOf(() => validateGatewayConfig({ upstream: { dialect: 'grpc' } }))).toBe(
      'Invalid configuration: upstream.dialect (UPSTREAM_DIALECT): must be "responses" or "chat" (got "grpc")',
    );
  });

  it('an upstream URL that names an endpoint says to drop it and where the dialect is chosen', () => {
    for (const url of ['http://127.0.0.1:11434/v1/chat/completions', 'http://gpu:8000/v1/responses/']) {
      expect(messageOf(() => loadGatewayConfig({ env: { UPSTREAM_URL: url } }))).toMatch(
        /^Invalid configuration: upstream\.baseUrl \(UPSTREAM_URL\): must be the server's base URL \(ending in \/v1\), not one of its endpoints: drop the trailing \/chat\/completions.*UPSTREAM_DIALECT/,
      );
    }
    expect(messageOf(() => loadGatewayConfig({ env: { UPSTREAM_URL: 'http://a:8000/v1,http://b:8000/v1/chat/completions' } }))).toMatch(/upstream\.baseUrls: .*drop the trailing/);
    expect(loadGatewayConfig({ env: { UPSTREAM_URL: 'http://127.0.0.1:11434/v1' } }).upstream.baseUrl).toBe('http://127.0.0.1:11434/v1');
  });

  it('an MCP server host refused by policy names both the setting and its variable', () => {
    const policy = new HostPolicy(['tools.example.com']);
    expect(messageOf(() => policy.vet(new URL('https://elsewhere.example.com/mcp')))).toContain('(mcp.allowedHosts, MCP_ALLOWED_HOSTS)');
  });

  it('a request field of the wrong type is one message with what it takes and what came', () => {
    const dto = plainToInstance(CreateResponseDto, { model: 'm', temperature: 'hot' });
    expect(messageOf(() => validateFields(dto))).toBe(`Invalid value for 'temperature': must be a number from 0 to 2 (got "hot").`);
  });

  it('reports unknown keys and wrong values of every section in one pass, core and modules alike', () => {
    const sections = [mcpConfigSection, stateConfigSection];
    const message = messageOf(() =>
      validateGatewayConfig(
        {
          server: { port: 'http', prot: 1 },
          mcp: { alowedHosts: ['a.example'], maxServersPerRequest: 0, servers: [{ label: 'a b', transport: 'stdio' }] },
          state: { socketCache: 1, compactionKeepItems: 'all', background: { leaseMs: 1 } },
        },
        { sections },
      ),
    );
    expect(message.split('\n')).toEqual([
      'Invalid configuration:',
      '  unknown config key "server.prot" (did you mean "server.port"?)',
      '  server.port (PORT): must be an integer from 0 to 65535 (got "http")',
      '  unknown config key "mcp.alowedHosts" (did you mean "mcp.allowedHosts"?)',
      '  mcp.servers[0].label: must match ^[a-zA-Z0-9_-]+$',
      '  mcp.maxServersPerRequest: must be an integer from 1 to 128',
      '  mcp.servers[0].command: is required for transport "stdio"',
      '  unknown config key "state.socketCache" (did you mean "state.socketCacheSize"?)',
      '  state.compactionKeepItems: must be an integer from 0 to 100 (got "all")',
      '  state.background.leaseMs (BACKGROUND_LEASE_MS): must be an integer from 300 to 3600000 (got 1)',
    ]);
  });

  it('a variable of the wrong kind is reported with the other problems, not instead of them', () => {
    const message = messageOf(() => loadGatewayConfig({ env: { PORT: 'http', MAX_ROUNDS: '0' } }));
    expect(message.split('\n')).toEqual([
      'Invalid configuration:',
      '  server.port (PORT): must be an integer (got "http")',
      '  tools.maxRounds (MAX_ROUNDS): must be an integer from 1 to 1000 (got 0)',
    ]);
  });

  it('an unreadable file is blamed on what named it', () => {
    const missing = join(tmpdir(), 'sy-no-such-dir', 'gateway.yaml');
    expect(messageOf(() => loadGatewayConfig({ file: missing }))).toMatch(new RegExp(`^Cannot read config file ${missing}: `));
    expect(messageOf(() => loadGatewayConfig({ env: { SWITCHYARD_CONFIG: missing } }))).toMatch(new RegExp(`^Cannot read config file ${missing} \\(SWITCHYARD_CONFIG\\): `));
    expect(() => loadGatewayConfig({ file: missing })).toThrow(ConfigError);
  });

  it('check-config says each problem once, without a doubled heading, and in good grammar', () => {
    const dir = tempDir('sy-teach-');
    const file = join(dir, 'one.yaml');
    writeFileSync(file, 'server: { port: http }\n');
    expect(checkConfig({}, file)).toEqual({ ok: false, lines: ['error: server.port (PORT): must be an integer from 0 to 65535 (got "http")'] });
    expect(checkConfig({})).toEqual({ ok: true, lines: ['ok: the environment gives a valid configuration'] });
  });
});
