import { z } from 'zod';
import { allowedHostProblem } from './mcp-host.policy.js';

/** A `server_label` as declarations and operator config spell it. */
export const SERVER_LABEL = /^[a-zA-Z0-9_-]+$/;

/**
 * The `mcp` section of the gateway config. The gateway core treats the
 * section as an opaque object; this module owns its shape and checks it once
 * at boot, so a typo fails start-up instead of the first request.
 */
const headerMap = z.record(z.string().min(1), z.string());

const operatorServer = z
  .object({
    label: z.string().regex(SERVER_LABEL, 'must match ^[a-zA-Z0-9_-]+$'),
    transport: z.enum(['streamable-http', 'sse', 'stdio']),
    url: z.string().optional(),
    headers: headerMap.optional(),
    command: z.string().min(1).optional(),
    args: z.array(z.string()).optional(),
    env: z.record(z.string().min(1), z.string()).optional(),
    cwd: z.string().optional(),
    description: z.string().optional(),
  })
  .strict()
  .superRefine((server, ctx) => {
    if (server.transport === 'stdio') {
      if (!server.command) ctx.addIssue({ code: 'custom', path: ['command'], message: 'is required for transport "stdio"' });
      if (server.url !== undefined) ctx.addIssue({ code: 'custom', path: ['url'], message: 'is not used with transport "stdio"' });
      if (server.headers !== undefined) ctx.addIssue({ code: 'custom', path: ['headers'], message: 'is not used with transport "stdio"' });
      return;
    }
    if (!server.url) {
      ctx.addIssue({ code: 'custom', path: ['url'], message: `is required for transport "${server.transport}"` });
    } else if (!isHttpUrl(server.url)) {
      ctx.addIssue({ code: 'custom', path: ['url'], message: 'must be an absolute http(s) URL' });
    }
    for (const field of ['command', 'args', 'env', 'cwd'] as const) {
      if (server[field] !== undefined) ctx.addIssue({ code: 'custom', path: [field], message: `is only used with transport "stdio"` });
    }
  });

const mcpSection = z
  .object({
    servers: z.array(operatorServer).default([]),
    allowedHosts: z.array(z.string().min(1)).default([]),
    maxServersPerRequest: z.int().min(1).max(128).default(8),
    maxToolsPerServer: z.int().min(1).max(10_000).default(128),
    discoveryTimeoutMs: z.int().min(1).default(10_000),
    /** Request-declared connections unused for this long are closed. */
    remoteIdleTimeoutMs: z.int().min(1).default(300_000),
    /** Upper bound on pooled request-declared connections; the least recently used idle one goes first. */
    maxRemoteConnections: z.int().min(1).default(64),
    /** Reuse a connection's `tools/list` answer for this long (0: list on every request); see McpToolListCache. */
    toolsListCacheMs: z.int().min(0).max(3_600_000).default(0),
  })
  .strict()
  .superRefine((section, ctx) => {
    const seen = new Map<string, number>();
    section.servers.forEach((server, i) => {
      const first = seen.get(server.label);
      if (first !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['servers', i, 'label'], message: `"${server.label}" is already used by servers[${first}]` });
      }
      seen.set(server.label, i);
    });
    section.allowedHosts.forEach((entry, i) => {
      const problem = allowedHostProblem(entry);
      if (problem) ctx.addIssue({ code: 'custom', path: ['allowedHosts', i], message: problem });
    });
  });

/** The keys the section accepts, read from the schemas (maps such as `headers` and `env` take any key). */
export const MCP_SETTINGS_KEYS = {
  ...Object.fromEntries(Object.keys(mcpSection.shape).map((k) => [k, true as const])),
  servers: [Object.fromEntries(Object.keys(operatorServer.shape).map((k) => [k, true as const]))],
} as const;

export type OperatorServerConfig = z.infer<typeof operatorServer>;
export type McpSettings = z.infer<typeof mcpSection>;

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

function pathOf(path: ReadonlyArray<PropertyKey>): string {
  return path.reduce<string>((out, key) => (typeof key === 'number' ? `${out}[${key}]` : `${out}.${String(key)}`), 'mcp');
}

/**
 * Validates `config.mcp`. Values never appear in the message: header values
 * and `env` entries are secrets.
 */
export function parseMcpSettings(raw: unknown): McpSettings {
  const result = mcpSection.safeParse(raw ?? {});
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => `${pathOf(issue.path)}: ${issue.message}`);
  throw new McpConfigError(`Invalid MCP configuration:\n  ${lines.join('\n  ')}`);
}
