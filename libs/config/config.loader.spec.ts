import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Type } from 'class-transformer';
import { IsArray, IsInt, IsObject, IsOptional, IsString, ValidateNested } from 'class-validator';
import { defineConfigSection } from './config-section.js';
import { ConfigError, jsonPosition, loadGatewayConfig, validateGatewayConfig } from './config.loader.js';
import { tempDir } from '../../test/support/temp-dir.js';

class PlanetSize {
  @IsOptional() @IsInt() radiusKm?: number;
}

/** A module's section as a module would declare it, to show the loader treats it as its own. */
class Planet {
  @IsOptional() @IsString() name?: string;
  @IsOptional() @IsArray() @IsString({ each: true }) moons?: string[];
  @IsOptional() @IsObject() @ValidateNested() @Type(() => PlanetSize) size?: PlanetSize;
  @IsOptional() @IsArray() rings?: Array<{ width?: number }>;
  @IsOptional() @IsObject() labels?: Record<string, unknown>;
}

const planetSection = defineConfigSection({
  key: 'planet',
  type: Planet,
  token: Symbol('PLANET'),
  env: [
    { env: 'PLANET_NAME', path: 'name', kind: 'string' },
    { env: 'PLANET_MOONS', path: 'moons', kind: 'list' },
    { env: 'PLANET_RADIUS_KM', path: 'size.radiusKm', kind: 'int' },
  ],
  keys: { name: true, moons: true, size: { radiusKm: true }, rings: [{ width: true }], labels: { '*': true } },
  check: (planet) => (planet.name === 'pluto' ? ['planet.name: must not be "pluto"'] : []),
});

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
    const dir = tempDir('sy-config-');
    const file = join(dir, 'gateway.yaml');
    writeFileSync(file, 'upstream:\n  dialect: chat\n  baseUrl: http://10.1.2.3:9000/v1\ntools:\n  maxRounds: 4\n');
    const config = loadGatewayConfig({ env: { SWITCHYARD_CONFIG: file, UPSTREAM_URL: 'http://127.0.0.1:1234/v1', PORT: '9999' } });
    expect(config.upstream.dialect).toBe('chat');
    expect(config.upstream.baseUrl).toBe('http://127.0.0.1:1234/v1');
    expect(config.tools.maxRounds).toBe(4);
    expect(config.server.port).toBe(9999);
  });

  it("maps a section's own environment variables, found only through the section", () => {
    const config = loadGatewayConfig({ env: { PLANET_NAME: 'mars', PLANET_MOONS: 'phobos, deimos', PLANET_RADIUS_KM: '3389' }, sections: [planetSection] });
    expect(config.planet).toEqual({ name: 'mars', moons: ['phobos', 'deimos'], size: { radiusKm: 3389 } });
    // Without the module that declares it, the variable means nothing.
    expect(loadGatewayConfig({ env: { PLANET_NAME: 'mars' } }).planet).toBeUndefined();
    expect(() => loadGatewayConfig({ env: { PLANET_RADIUS_KM: 'big' }, sections: [planetSection] })).toThrow(
      /planet\.size\.radiusKm \(PLANET_RADIUS_KM\): must be an integer \(got "big"\)/,
    );
  });

  it("runs the section's validation at load, naming the setting and its variable", () => {
    expect(() => loadGatewayConfig({ env: { PLANET_NAME: 'pluto' }, sections: [planetSection] })).toThrow('Invalid configuration: planet.name (PLANET_NAME): must not be "pluto"');
  });
  it('has documented defaults for the request limits, and reads them from the environment', () => {
    const defaults = loadGatewayConfig();
    expect(defaults.tools.maxToolsPerRequest).toBe(512);
    expect(defaults.tools.maxGatewayCallsPerRequest).toBe(256);
    const config = loadGatewayConfig({
      env: { MAX_TOOLS_PER_REQUEST: '128', MAX_GATEWAY_CALLS_PER_REQUEST: '40' },
    });
    expect([config.tools.maxToolsPerRequest, config.tools.maxGatewayCallsPerRequest]).toEqual([128, 40]);
    expect(() => loadGatewayConfig({ env: { MAX_TOOLS_PER_REQUEST: '0' } })).toThrow(/tools\.maxToolsPerRequest \(MAX_TOOLS_PER_REQUEST\)/);
  });

  it('keeps 256 prepared tool lists in 32 MiB by default, 0 turning the cache off', () => {
    const defaults = loadGatewayConfig();
    expect([defaults.tools.declarationCacheEntries, defaults.tools.declarationCacheBytes]).toEqual([256, 32 * 1024 * 1024]);
    const off = loadGatewayConfig({ env: { TOOL_DECLARATION_CACHE_ENTRIES: '0', TOOL_DECLARATION_CACHE_BYTES: '1048576' } });
    expect([off.tools.declarationCacheEntries, off.tools.declarationCacheBytes]).toEqual([0, 1048576]);
    expect(() => loadGatewayConfig({ env: { TOOL_DECLARATION_CACHE_BYTES: '-1' } })).toThrow(/tools\.declarationCacheBytes \(TOOL_DECLARATION_CACHE_BYTES\)/);
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

  it('points at the line and column of a JSON syntax error', () => {
    const dir = tempDir('sy-config-');
    const file = join(dir, 'gateway.json');
    writeFileSync(file, '{\n  "server": {\n    "port": 80 80\n  }\n}\n');
    expect(() => loadGatewayConfig({ env: { SWITCHYARD_CONFIG: file } })).toThrow(`${file}:3:16 is not valid JSON`);
    const truncated = join(dir, 'truncated.json');
    writeFileSync(truncated, '{\n  "server": {');
    expect(() => loadGatewayConfig({ file: truncated })).toThrow(`${truncated}:2:14 is not valid JSON`);
  });

  it('gives a position for every JSON.parse failure message shape', () => {
    const text = 'ab\ncd';
    expect(jsonPosition(text, new SyntaxError('Unexpected token in JSON at position 4'))).toBe(':2:2');
    expect(jsonPosition(text, new SyntaxError('Unexpected token (line 7 column 3)'))).toBe(':7:3');
    expect(jsonPosition(text, new SyntaxError('Unexpected end of JSON input'))).toBe(':2:3');
  });

  it('points at the line and column of a YAML error', () => {
    const dir = tempDir('sy-config-');
    const file = join(dir, 'gateway.yaml');
    writeFileSync(file, 'server:\n  port: [1, 2\n');
    expect(() => loadGatewayConfig({ file })).toThrow(new RegExp(`${file}:\\d+:\\d+ is not valid YAML`));
  });

  it('refuses a config file whose top level is not an object', () => {
    const dir = tempDir('sy-config-');
    const file = join(dir, 'list.json');
    writeFileSync(file, '[1, 2]');
    expect(() => loadGatewayConfig({ file })).toThrow(/must hold an object of settings/);
  });

  it('leaves storage, observability, transports and auth to the modules that own them', () => {
    // Without their sections the keys are unknown to core, and their variables fill nothing.
    expect(() => validateGatewayConfig({ storage: { driver: 'memory' } })).toThrow('unknown config key "storage"');
    expect(() => validateGatewayConfig({ observability: { metrics: false } })).toThrow('unknown config key "observability"');
    expect(() => validateGatewayConfig({ transports: { patternPrefix: 'a.' } })).toThrow('unknown config key "transports"');
    expect(() => validateGatewayConfig({ auth: { apiKeys: ['k'] } })).toThrow('unknown config key "auth"');
    expect(loadGatewayConfig({ env: { STORAGE_DRIVER: 'postgres', LOG_FORMAT: 'xml', NATS_URL: 'nats://x:4222', API_KEYS: 'k' } })).not.toHaveProperty('storage');
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

describe('unknown config keys', () => {
  const load = (raw: Record<string, unknown>) => () => validateGatewayConfig(raw, { sections: [planetSection] });

  it('refuses a top-level key no section and not core knows, naming the closest valid one', () => {
    expect(load({ upstrem: { baseUrl: 'http://a/v1' } })).toThrow('Invalid configuration: unknown config key "upstrem" (did you mean "upstream"?)');
    expect(load({ plnet: {} })).toThrow('(did you mean "planet"?)');
    expect(load({ zzzzzzzzzzzz: 1 })).toThrow(/unknown config key "zzzzzzzzzzzz" \(known: upstream, .*planet\)/);
  });

  it("refuses a key inside one of core's sections", () => {
    expect(load({ server: { prot: 80 } })).toThrow('unknown config key "server.prot" (did you mean "server.port"?)');
    // A map's keys are the operator's own.
    expect(load({ tools: { timeoutMsByType: { mcp: 1000, anything: 5 } } })().tools.timeoutMsByType).toEqual({ mcp: 1000, anything: 5 });
  });

  it("refuses a key inside a module's section by the section's shape, lists and maps included", () => {
    expect(load({ planet: { nmae: 'x' } })).toThrow('unknown config key "planet.nmae" (did you mean "planet.name"?)');
    expect(load({ planet: { size: { radius: 1 } } })).toThrow('(did you mean "planet.size.radiusKm"?)');
    expect(load({ planet: { rings: [{ width: 1 }, { widht: 2 }] } })).toThrow('unknown config key "planet.rings[1].widht" (did you mean "planet.rings[1].width"?)');
    expect(load({ planet: { labels: { any: 1, key: 2 } } })().planet).toEqual({ labels: { any: 1, key: 2 } });
  });

  it('reports every unknown key and bad value of one load together', () => {
    expect(load({ upstrem: {}, server: { port: -1 }, planet: { nmae: 'x' } })).toThrow(
      /Invalid configuration:\n {2}unknown config key "upstrem".*\n {2}server\.port.*\n {2}unknown config key "planet\.nmae"/s,
    );
  });

  it('reads unknown keys from a config file the same way', () => {
    const dir = tempDir('sy-config-');
    const file = join(dir, 'gateway.yaml');
    writeFileSync(file, 'upstream:\n  baseUrl: http://10.1.2.3:9000/v1\n  dialekt: chat\n');
    expect(() => loadGatewayConfig({ file })).toThrow('unknown config key "upstream.dialekt" (did you mean "upstream.dialect"?)');
  });
});
