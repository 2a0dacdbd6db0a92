import { Type } from 'class-transformer';
import { IsArray, IsBoolean, IsIn, IsInt, IsObject, IsOptional, IsString, Matches, Max, Min, MinLength, ValidateNested } from 'class-validator';
import { allowedHostProblem } from './mcp-host.policy.js';
import { classSectionKeys, defineConfigSection } from '#tool-sdk/index.js';

/** A `server_label` as declarations and operator config spell it. */
export const SERVER_LABEL = /^[a-zA-Z0-9_-]+$/;

/** A transport an operator server is reached by. */
const TRANSPORTS = ['streamable-http', 'sse', 'stdio'] as const;

/** One operator-configured MCP server, `mcp.servers[]`. */
export class OperatorServerConfig {
  @Matches(SERVER_LABEL, { message: 'must match ^[a-zA-Z0-9_-]+$' }) label!: string;
  @IsIn(TRANSPORTS) transport!: (typeof TRANSPORTS)[number];
  @IsOptional() @IsString() url?: string;
  /** Header name → value; checked by `mapProblems` (values are secrets, never quoted). */
  @IsOptional() headers?: Record<string, string>;
  @IsOptional() @IsString() @MinLength(1) command?: string;
  @IsOptional() @IsArray() @IsString({ each: true }) args?: string[];
  @IsOptional() env?: Record<string, string>;
  @IsOptional() @IsString() cwd?: string;
  @IsOptional() @IsString() description?: string;
}

/**
 * The `mcp` section of the gateway config. The gateway core treats the
 * section as an opaque object; this module owns its shape and checks it once
 * at boot, so a typo fails start-up instead of the first request.
 */
export class McpSettings {
  @IsArray()
  @IsObject({ each: true, message: 'must be a list of server objects ({ label, transport, ... })' })
  @ValidateNested({ each: true })
  @Type(() => OperatorServerConfig)
  servers: OperatorServerConfig[] = [];
  @IsArray() @IsString({ each: true }) @MinLength(1, { each: true }) allowedHosts: string[] = [];
  @IsInt() @Min(1) @Max(128) maxServersPerRequest = 8;
  @IsInt() @Min(1) @Max(10_000) maxToolsPerServer = 128;
  @IsInt() @Min(1) discoveryTimeoutMs = 10_000;
  /** Request-declared connections unused for this long are closed. */
  @IsInt() @Min(1) remoteIdleTimeoutMs = 300_000;
  /** Upper bound on pooled request-declared connections; the least recently used idle one goes first. */
  @IsInt() @Min(1) maxRemoteConnections = 64;
  /** Reuse a connection's `tools/list` answer for this long (0: list on every request); see McpToolListCache. */
  @IsInt() @Min(0) @Max(3_600_000) toolsListCacheMs = 0;
  /**
   * Keep a server's `tools/list` answer until it announces a change, for servers that declare
   * `tools.listChanged` and keep their notification stream open; see McpToolListCache.
   */
  @IsBoolean() toolsListUntilChanged = true;
}

/** Nest token for the validated `mcp` section. */
export const MCP_SETTINGS = Symbol('MCP_SETTINGS');

/** The gateway refuses to boot with this `mcp` section; the message names the setting. */
export class McpConfigError extends Error {}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

/** A map of non-empty names to strings (`headers`, `env`): each bad entry named, its value never quoted. */
function mapProblems(value: unknown, path: string): string[] {
  if (value === undefined) return [];
  if (!isRecord(value)) return [`${path}: must be an object of names to strings`];
  return Object.entries(value).flatMap(([name, entry]) => [
    ...(name === '' ? [`${path}: names must be non-empty`] : []),
    ...(typeof entry === 'string' ? [] : [`${path}.${name}: must be a string`]),
  ]);
}

/** The rules that tie a server's settings to its transport. */
function transportProblems(server: OperatorServerConfig, path: string): string[] {
  if (server.transport === 'stdio') {
    return [
      ...(server.command ? [] : [`${path}.command: is required for transport "stdio"`]),
      ...(server.url !== undefined ? [`${path}.url: is not used with transport "stdio"`] : []),
      ...(server.headers !== undefined ? [`${path}.headers: is not used with transport "stdio"`] : []),
    ];
  }
  if (!TRANSPORTS.includes(server.transport)) return [];
  const url = !server.url
    ? [`${path}.url: is required for transport "${server.transport}"`]
    : typeof server.url === 'string' && !isHttpUrl(server.url)
      ? [`${path}.url: must be an absolute http(s) URL`]
      : [];
  const stdioOnly = (['command', 'args', 'env', 'cwd'] as const).filter((f) => server[f] !== undefined).map((f) => `${path}.${f}: is only used with transport "stdio"`);
  return [...url, ...stdioOnly];
}

/** Rules across entries: unique labels, well-formed host patterns. */
function sectionProblems(section: McpSettings): string[] {
  const problems: string[] = [];
  const seen = new Map<string, number>();
  const servers = Array.isArray(section.servers) ? section.servers : [];
  servers.forEach((server, i) => {
    if (!isRecord(server)) return;
    const path = `mcp.servers[${i}]`;
    problems.push(...mapProblems(server.headers, `${path}.headers`), ...mapProblems(server.env, `${path}.env`), ...transportProblems(server, path));
    const first = seen.get(server.label);
    if (first !== undefined) problems.push(`${path}.label: "${server.label}" is already used by servers[${first}]`);
    if (typeof server.label === 'string') seen.set(server.label, i);
  });
  if (Array.isArray(section.allowedHosts)) {
    section.allowedHosts.forEach((entry, i) => {
      const problem = typeof entry === 'string' && entry !== '' ? allowedHostProblem(entry) : undefined;
      if (problem) problems.push(`mcp.allowedHosts[${i}]: ${problem}`);
    });
  }
  return problems;
}

/**
 * The `mcp` section: operator-configured servers and the hosts requests may
 * name. Every problem at once, unknown keys among them. Values never appear
 * in a message: header values and `env` entries are secrets.
 */
export const mcpConfigSection = defineConfigSection({
  key: 'mcp',
  type: McpSettings,
  token: MCP_SETTINGS,
  env: [{ env: 'MCP_ALLOWED_HOSTS', path: 'allowedHosts', kind: 'list' }],
  // A server entry's own keys; maps such as `headers` and `env` take any key.
  keys: { ...classSectionKeys(McpSettings), servers: [classSectionKeys(OperatorServerConfig)] },
  secretValues: true,
  check: sectionProblems,
});

/** Validates a raw `mcp` section (defaults when absent), outside the Nest container. */
export function parseMcpSettings(raw: unknown): McpSettings {
  try {
    return mcpConfigSection.parse(raw);
  } catch (err) {
    throw new McpConfigError((err as Error).message);
  }
}
