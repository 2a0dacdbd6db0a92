import { loadedMcpSdk } from './mcp-sdk.js';
import type { McpTarget } from './mcp-target.js';

/**
 * What a tenant may learn of a failed MCP exchange, and what only the log
 * keeps. The transport's own words ("Non-200 status code (404)", "Invalid
 * content type", "ECONNREFUSED 10.0.0.5:8080") tell whoever declares
 * `server_url`s what answers on each port of each allowed host, and name an
 * operator server's internal address: the tenant reads one of two verdicts,
 * the operator the whole story.
 */
export type McpFailureVerdict = 'unreachable' | 'not_mcp';

/** Socket-level failures: nothing answered (or stopped answering) at the address. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EPIPE',
  'ECONNABORTED',
  'ENOENT',
  'EACCES',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);

function causes(err: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = err, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) chain.push(e);
  return chain;
}

/**
 * Unreachable when nothing spoke HTTP back (a refused or reset socket, no
 * such host, a stdio command that would not start, no answer in time); not
 * an MCP server when something answered but not as MCP (a status, a content
 * type, a body that is not JSON-RPC).
 */
export function mcpFailureVerdict(err: unknown, timedOut = false): McpFailureVerdict {
  if (timedOut) return 'unreachable';
  const sdk = loadedMcpSdk();
  for (const e of causes(err)) {
    const code = (e as { code?: unknown })?.code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return 'unreachable';
    if (sdk && e instanceof sdk.McpError && (code === sdk.ErrorCode.ConnectionClosed || code === sdk.ErrorCode.RequestTimeout)) return 'unreachable';
    if (e instanceof Error && /^fetch failed$|socket hang up|other side closed/i.test(e.message)) return 'unreachable';
    if (e instanceof Error && e.name === 'AbortError') return 'unreachable';
  }
  return 'not_mcp';
}

/** The tenant's sentence for a verdict: the server's label, nothing of where it is or what the transport said. */
export function mcpFailureMessage(target: McpTarget, verdict: McpFailureVerdict): string {
  return verdict === 'unreachable'
    ? `MCP server ${target.publicName()} is unreachable.`
    : `MCP server ${target.publicName()} is not an MCP server: something answered, but not over MCP.`;
}

/** The whole story for the log: where, and the transport's words (credentials redacted). */
export function mcpFailureDetail(target: McpTarget, err: unknown): string {
  const words = causes(err)
    .map((e) => (e instanceof Error ? e.message : String(e)))
    .filter((m, i, all) => m && all.indexOf(m) === i)
    .join(': ');
  return target.redact(`MCP server ${target.describe()}: ${words}`);
}
