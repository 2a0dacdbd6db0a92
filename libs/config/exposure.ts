import type { GatewayConfig } from './gateway-config.js';

/**
 * Whether the gateway is closed to callers without a credential. Core does
 * not own the `auth` section (the state library does); it only asks whether
 * any credential is configured, which is what decides where a fresh install
 * may listen and whether tenant code may run there.
 */
export function hasCredentials(config: GatewayConfig): boolean {
  const auth = config.auth as { apiKeys?: unknown[]; oidc?: unknown } | undefined;
  return (auth?.apiKeys?.length ?? 0) > 0 || (auth?.oidc !== undefined && auth?.oidc !== null);
}

/** `127.0.0.1`, `::1`, `localhost` and the rest of 127/8: reachable from this host only. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h) || h === '::ffff:127.0.0.1';
}

/**
 * The address to listen on when `server.host` is unset: loopback without
 * credentials (anyone who reaches an open port would run code), every
 * interface with them (as an authenticated deployment always did).
 */
export function defaultListenHost(config: GatewayConfig): string {
  return hasCredentials(config) ? '0.0.0.0' : '127.0.0.1';
}

/** The setting that turns code execution on for an unauthenticated non-loopback gateway, as an operator types it. */
export const ALLOW_UNAUTHENTICATED_CODE_SETTING = 'ALLOW_UNAUTHENTICATED_CODE=true (server.allowUnauthenticatedCode)';

/**
 * Why the tools that run code are off, or null when they are on. They are
 * off when the gateway listens beyond loopback with no credential and the
 * operator has not said `server.allowUnauthenticatedCode`: then anyone who
 * reaches the port would run programs on this host.
 */
export function codeExecutionRefusal(config: GatewayConfig): string | null {
  const host = config.server.host ?? defaultListenHost(config);
  if (isLoopbackHost(host) || hasCredentials(config) || config.server.allowUnauthenticatedCode) return null;
  return `listening on ${host} without API keys, anyone who reaches the port could run code on this host; set API_KEYS, listen on 127.0.0.1, or set ${ALLOW_UNAUTHENTICATED_CODE_SETTING} to turn code execution on`;
}
