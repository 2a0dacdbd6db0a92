import type { GatewayConfig } from '../../config/gateway-config.js';

/**
 * The `state` section of the gateway config, owned by the state module the
 * way `webSearch` is owned by its tool module: core only carries it along,
 * and it is checked here, once, at start-up.
 */

/** Thrown at start-up; the message names the offending setting. */
export class StateConfigError extends Error {}

export const STATE_SETTINGS = Symbol('STATE_SETTINGS');

export interface StateSettings {
  /**
   * Signs compaction items (HMAC-SHA256) so that clients cannot hand the
   * model a summary the gateway never wrote. Every replica behind one load
   * balancer needs the same key; without one, items are unsigned.
   */
  compactionKey: string | null;
  /** Responses a WebSocket remembers for `previous_response_id` (store:false continuations). */
  socketCacheSize: number;
  /** Most recent transcript items a compaction keeps verbatim. */
  compactionKeepItems: number;
}

export const DEFAULT_SOCKET_CACHE_SIZE = 8;
export const DEFAULT_COMPACTION_KEEP_ITEMS = 2;
/** Short keys make the signature guessable; 16 characters is a floor, not a recommendation. */
const MIN_KEY_LENGTH = 16;
const KEYS = new Set(['compactionKey', 'socketCacheSize', 'compactionKeepItems']);

function fail(setting: string, message: string, value?: unknown): never {
  // Never echo the key itself.
  const got = value === undefined || setting === 'compactionKey' ? '' : ` (got ${JSON.stringify(value)})`;
  throw new StateConfigError(`Invalid configuration: state.${setting}: ${message}${got}`);
}

function integer(raw: Record<string, unknown>, key: string, min: number, max: number, fallback: number): number {
  const value = raw[key];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail(key, `must be an integer from ${min} to ${max}`, value);
  }
  return value;
}

export function readStateSettings(config: GatewayConfig): StateSettings {
  const section = (config as GatewayConfig & { state?: unknown }).state;
  if (section !== undefined && section !== null && (typeof section !== 'object' || Array.isArray(section))) {
    throw new StateConfigError('Invalid configuration: state must be an object.');
  }
  const raw = (section ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(raw)) {
    if (!KEYS.has(key)) fail(key, `is not a setting (known: ${[...KEYS].join(', ')})`);
  }
  const key = raw.compactionKey;
  if (key !== undefined && key !== null && (typeof key !== 'string' || key.length < MIN_KEY_LENGTH)) {
    fail('compactionKey', `must be a string of at least ${MIN_KEY_LENGTH} characters`);
  }
  return {
    compactionKey: (key as string | undefined) ?? null,
    socketCacheSize: integer(raw, 'socketCacheSize', 1, 1000, DEFAULT_SOCKET_CACHE_SIZE),
    compactionKeepItems: integer(raw, 'compactionKeepItems', 0, 100, DEFAULT_COMPACTION_KEEP_ITEMS),
  };
}
