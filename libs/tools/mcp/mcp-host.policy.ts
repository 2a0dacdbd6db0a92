import { BlockList, isIP } from 'node:net';

/**
 * Where request-declared MCP servers may live. A client-supplied `server_url`
 * makes the gateway open connections on the client's behalf, so without this
 * policy any caller could reach the gateway's own network (metadata services,
 * admin ports, databases on loopback).
 */

/** A request-declared destination the policy refuses; the message names the host, never credentials. */
export class RefusedDestinationError extends Error {
  readonly code = 'mcp_server_url_refused';
  constructor(
    message: string,
    /** For the log only: what the name resolved to (the gateway's internal DNS view is not the tenant's). */
    readonly detail: string | null = null,
  ) {
    super(message);
  }
}

/**
 * Loopback, private, link-local and otherwise non-public ranges. IPv4-mapped
 * IPv6 addresses (`::ffff:127.0.0.1`) are matched against the IPv4 rules by
 * `BlockList` itself.
 */
const NON_PUBLIC = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network", includes 0.0.0.0, which Linux routes to loopback
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT: not reachable from the internet either
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, home of cloud metadata endpoints
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['224.0.0.0', 3], // multicast and reserved
] as const) {
  NON_PUBLIC.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96], // NAT64 can embed any IPv4 address, private ones included
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  NON_PUBLIC.addSubnet(net, prefix, 'ipv6');
}

function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** True for an IP address the gateway must not reach for a client unless the operator listed it. */
export function isNonPublicAddress(address: string): boolean {
  const ip = unbracket(address);
  const family = isIP(ip);
  if (family === 0) return false;
  return NON_PUBLIC.check(ip, family === 6 ? 'ipv6' : 'ipv4');
}

interface HostEntry {
  /** Canonical host (URL `hostname` form), or the domain under a `*.` wildcard. */
  host: string;
  wildcard: boolean;
  port?: string;
}

/** How a URL's host matched `allowedHosts`: `explicit` entries also admit non-public addresses. */
export type HostMatch = 'explicit' | 'wildcard';

/** URL `hostname` form (lowercase, IPv4 normalised, IPv6 bracketed and compressed), no trailing dot. */
function canonicalHost(host: string): string {
  const bare = unbracket(host);
  return new URL(`http://${isIP(bare) === 6 ? `[${bare}]` : bare}`).hostname.replace(/\.$/, '');
}

function parseEntry(entry: string): HostEntry {
  const wildcard = entry.startsWith('*.');
  const rest = wildcard ? entry.slice(2) : entry;
  let host = rest;
  let port: string | undefined;
  const bracketed = /^\[(.+)\](?::(\d+))?$/.exec(rest);
  if (bracketed) {
    host = bracketed[1];
    port = bracketed[2];
  } else {
    const hostPort = /^([^:]+):(\d+)$/.exec(rest);
    if (hostPort) {
      host = hostPort[1];
      port = hostPort[2];
    }
  }
  // A wildcard's domain stays as written: canonicalising `*.0.1` as an IPv4
  // address would change which names it covers.
  const canonical = wildcard ? host.toLowerCase().replace(/\.$/, '') : canonicalHost(host);
  return { host: canonical, wildcard, port: port === undefined ? undefined : String(Number(port)) };
}

/** Why an `allowedHosts` entry is unusable, or undefined when it is fine (for config validation). */
export function allowedHostProblem(entry: string): string | undefined {
  const rest = entry.startsWith('*.') ? entry.slice(2) : entry;
  if (rest.length === 0 || /[/\s@?#*]/.test(rest)) {
    return 'must be a host name, "*.domain" or "host:port" (no scheme, path or inner wildcard)';
  }
  try {
    const parsed = parseEntry(entry);
    if (parsed.port !== undefined && (Number(parsed.port) < 1 || Number(parsed.port) > 65535)) return 'has a port outside 1-65535';
  } catch {
    return 'is not a valid host';
  }
  return undefined;
}

function effectivePort(url: URL): string {
  return url.port || (url.protocol === 'https:' ? '443' : '80');
}

/**
 * `mcp.allowedHosts` applied to request-declared server URLs.
 *
 * - `example.com` admits that host on any port; `127.0.0.1:8931` one port only;
 *   `*.corp.internal` any subdomain (not the bare domain).
 * - A destination in a non-public range is refused unless the host matched an
 *   explicit (non-wildcard) entry: naming `127.0.0.1:8931` or `mcp.corp.internal`
 *   is the operator's consent, a wildcard is not. This holds for IP literals
 *   and for what a host name resolves to at connect time (see `guarded-fetch`).
 */
export class HostPolicy {
  private readonly entries: HostEntry[];

  constructor(allowedHosts: readonly string[]) {
    this.entries = allowedHosts.map(parseEntry);
  }

  match(url: URL): HostMatch | undefined {
    const host = url.hostname.toLowerCase().replace(/\.$/, '');
    const port = effectivePort(url);
    let found: HostMatch | undefined;
    for (const entry of this.entries) {
      if (entry.port !== undefined && entry.port !== port) continue;
      if (!entry.wildcard && entry.host === host) return 'explicit';
      if (entry.wildcard && host.endsWith(`.${entry.host}`)) found = 'wildcard';
    }
    return found;
  }

  /** Checks a URL before any connection is made. Throws `RefusedDestinationError`. */
  vet(url: URL, what = 'MCP server URL'): HostMatch {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new RefusedDestinationError(`${what} must use http or https.`);
    }
    const match = this.match(url);
    if (!match) {
      throw new RefusedDestinationError(`${what} host "${url.host}" is not in the gateway's allowed MCP hosts (mcp.allowedHosts, MCP_ALLOWED_HOSTS).`);
    }
    if (match !== 'explicit' && isNonPublicAddress(url.hostname)) {
      throw new RefusedDestinationError(
        `${what} host "${url.host}" is a loopback, private or link-local address, which needs an explicit mcp.allowedHosts (MCP_ALLOWED_HOSTS) entry.`,
      );
    }
    return match;
  }

  /** Checks an address a host name resolved to. Throws `RefusedDestinationError`. */
  vetAddress(hostname: string, address: string, match: HostMatch): void {
    if (match !== 'explicit' && isNonPublicAddress(address)) {
      throw new RefusedDestinationError(
        `MCP server host "${hostname}" resolves to a loopback, private or link-local address; only an explicit mcp.allowedHosts (MCP_ALLOWED_HOSTS) entry admits that.`,
        `"${hostname}" resolved to ${address}`,
      );
    }
  }
}
