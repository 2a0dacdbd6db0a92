import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadGatewayConfig } from './config.loader.js';

describe('loadGatewayConfig', () => {
  it('defaults to vLLM on its default port with the responses dialect', () => {
    const config = loadGatewayConfig();
    expect(config.upstream.baseUrl).toBe('http://127.0.0.1:8000/v1');
    expect(config.upstream.dialect).toBe('responses');
    expect(config.server.port).toBe(8080);
    expect(config.tools.maxRounds).toBe(10);
    expect(config.tools.maxConcurrentGatewayCalls).toBe(5);
    expect(config.tools.defaultTimeoutMs).toBe(60_000);
  });

  it('reads environment variables over the config file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-config-'));
    const file = join(dir, 'gateway.yaml');
    writeFileSync(file, 'upstream:\n  dialect: chat\n  baseUrl: http://10.1.2.3:9000/v1\ntools:\n  maxRounds: 4\n');
    const config = loadGatewayConfig({ env: { SWITCHYARD_CONFIG: file, UPSTREAM_URL: 'http://127.0.0.1:1234/v1', PORT: '9999' } });
    expect(config.upstream.dialect).toBe('chat');
    expect(config.upstream.baseUrl).toBe('http://127.0.0.1:1234/v1');
    expect(config.tools.maxRounds).toBe(4);
    expect(config.server.port).toBe(9999);
  });

  it('maps tool-module settings from the environment', () => {
    const config = loadGatewayConfig({
      env: { WEB_SEARCH_PROVIDER: 'brave', WEB_SEARCH_API_KEY: 'bsa-key', MCP_ALLOWED_HOSTS: 'a.example, b.example:8443', COMPACTION_KEY: 'k'.repeat(32) },
    });
    expect(config.webSearch).toEqual({ provider: 'brave', brave: { apiKey: 'bsa-key' } });
    expect(config.mcp).toEqual({ allowedHosts: ['a.example', 'b.example:8443'] });
    expect(config.state).toEqual({ compactionKey: 'k'.repeat(32) });
  });

  it('has documented defaults for the request, socket and store limits, and reads them from the environment', () => {
    const defaults = loadGatewayConfig();
    expect(defaults.tools.maxToolsPerRequest).toBe(512);
    expect(defaults.tools.maxGatewayCallsPerRequest).toBe(256);
    expect(defaults.auth.maxSocketsPerOwner).toBe(64);
    expect(defaults.storage.connectTimeoutMs).toBe(3_000);
    expect(defaults.storage.queryTimeoutMs).toBe(5_000);
    const config = loadGatewayConfig({
      env: { MAX_TOOLS_PER_REQUEST: '128', MAX_GATEWAY_CALLS_PER_REQUEST: '40', MAX_SOCKETS_PER_OWNER: '3', STORE_CONNECT_TIMEOUT_MS: '700', STORE_QUERY_TIMEOUT_MS: '900' },
    });
    expect([config.tools.maxToolsPerRequest, config.tools.maxGatewayCallsPerRequest, config.auth.maxSocketsPerOwner]).toEqual([128, 40, 3]);
    expect([config.storage.connectTimeoutMs, config.storage.queryTimeoutMs]).toEqual([700, 900]);
    expect(() => loadGatewayConfig({ env: { MAX_TOOLS_PER_REQUEST: '0' } })).toThrow(/tools\.maxToolsPerRequest \(MAX_TOOLS_PER_REQUEST\)/);
  });

  it('names the bad setting and its environment variable', () => {
    expect(() => loadGatewayConfig({ env: { UPSTREAM_DIALECT: 'grpc' } })).toThrow(/upstream\.dialect \(UPSTREAM_DIALECT\)/);
    expect(() => loadGatewayConfig({ env: { PORT: 'eighty' } })).toThrow(ConfigError);
    expect(() => loadGatewayConfig({ env: { PORT: 'eighty' } })).toThrow(/server\.port \(PORT\)/);
    expect(() => loadGatewayConfig({ env: { UPSTREAM_URL: 'not a url' } })).toThrow(/upstream\.baseUrl \(UPSTREAM_URL\)/);
    expect(() => loadGatewayConfig({ overrides: { tools: { maxRounds: 0 } } })).toThrow(/tools\.maxRounds/);
  });

  it('reports an unreadable config file by name', () => {
    expect(() => loadGatewayConfig({ env: { SWITCHYARD_CONFIG: '/nonexistent/sy.json' } })).toThrow(/Cannot read config file \/nonexistent\/sy.json/);
  });
  it('reads several upstream replicas from a comma-separated UPSTREAM_URL', () => {
    const config = loadGatewayConfig({ env: { UPSTREAM_URL: 'http://10.0.0.1:8000/v1, http://10.0.0.2:8000/v1' } });
    expect(config.upstream.baseUrls).toEqual(['http://10.0.0.1:8000/v1', 'http://10.0.0.2:8000/v1']);
    expect(config.upstream.baseUrl).toBe('http://10.0.0.1:8000/v1');
    expect(() => loadGatewayConfig({ env: { UPSTREAM_URL: 'http://10.0.0.1:8000/v1,not a url' } })).toThrow(/upstream\.baseUrls/);
  });
});

describe('upstream.forwardHeaders', () => {
  it('takes a comma-separated list of header names', () => {
    expect(loadGatewayConfig({ env: { UPSTREAM_FORWARD_HEADERS: 'x-tenant, X-Request-Id' } }).upstream.forwardHeaders).toEqual(['x-tenant', 'X-Request-Id']);
  });

  it('refuses names the transport manages, naming the setting and its variable', () => {
    expect(() => loadGatewayConfig({ env: { UPSTREAM_FORWARD_HEADERS: 'x-tenant,content-length' } })).toThrow(/upstream\.forwardHeaders \(UPSTREAM_FORWARD_HEADERS\)/);
    expect(() => loadGatewayConfig({ env: { UPSTREAM_FORWARD_HEADERS: 'not a name' } })).toThrow(/upstream\.forwardHeaders/);
  });
});
