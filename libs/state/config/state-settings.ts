import type { GatewayConfig } from '#config/gateway-config.js';

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
  background: BackgroundSettings;
}

/** `state.background`: how many background responses may run, and how a crashed gateway's runs are found. */
export interface BackgroundSettings {
  /** Live background runs across every gateway sharing the store; past it, create answers 429. */
  maxRuns: number;
  maxRunsPerOwner: number;
  /**
   * A running gateway renews its runs' leases every third of this; a run whose
   * lease lapses (its gateway crashed) is ended `failed` by whichever gateway
   * notices first.
   */
  leaseMs: number;
  /** How often a stream follower re-reads the store when no notification came (SQLite across processes). */
  pollMs: number;
}

export const DEFAULT_BACKGROUND_SETTINGS: BackgroundSettings = { maxRuns: 256, maxRunsPerOwner: 32, leaseMs: 30_000, pollMs: 1_000 };
const BACKGROUND_KEYS = new Set(Object.keys(DEFAULT_BACKGROUND_SETTINGS));

export const DEFAULT_SOCKET_CACHE_SIZE = 8;
export const DEFAULT_COMPACTION_KEEP_ITEMS = 2;
/** Short keys make the signature guessable; 16 characters is a floor, not a recommendation. */
const MIN_KEY_LENGTH = 16;
export const STATE_KEYS = new Set(['compactionKey', 'socketCacheSize', 'compactionKeepItems', 'background']);

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
    if (!STATE_KEYS.has(key)) fail(key, `is not a setting (known: ${[...STATE_KEYS].join(', ')})`);
  }
  const key = raw.compactionKey;
  if (key !== undefined && key !== null && (typeof key !== 'string' || key.length < MIN_KEY_LENGTH)) {
    fail('compactionKey', `must be a string of at least ${MIN_KEY_LENGTH} characters`);
  }
  return {
    background: readBackgroundSettings(raw.background),
    compactionKey: (key as string | undefined) ?? null,
    socketCacheSize: integer(raw, 'socketCacheSize', 1, 1000, DEFAULT_SOCKET_CACHE_SIZE),
    compactionKeepItems: integer(raw, 'compactionKeepItems', 0, 100, DEFAULT_COMPACTION_KEEP_ITEMS),
  };
}

function readBackgroundSettings(section: unknown): BackgroundSettings {
  if (section === undefined || section === null) return { ...DEFAULT_BACKGROUND_SETTINGS };
  if (typeof section !== 'object' || Array.isArray(section)) fail('background', 'must be an object');
  const raw = section as Record<string, unknown>;
  for (const key of Object.keys(raw)) {
    if (!BACKGROUND_KEYS.has(key)) fail(`background.${key}`, `is not a setting (known: ${[...BACKGROUND_KEYS].join(', ')})`);
  }
  const d = DEFAULT_BACKGROUND_SETTINGS;
  const at = (key: keyof BackgroundSettings, min: number, max: number) => {
    const value = raw[key];
    if (value === undefined || value === null) return d[key];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      fail(`background.${key}`, `must be an integer from ${min} to ${max}`, value);
    }
    return value;
  };
  return {
    maxRuns: at('maxRuns', 1, 1_000_000),
    maxRunsPerOwner: at('maxRunsPerOwner', 1, 1_000_000),
    leaseMs: at('leaseMs', 300, 3_600_000),
    pollMs: at('pollMs', 10, 60_000),
  };
}
