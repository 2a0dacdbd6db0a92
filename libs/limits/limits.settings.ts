import type { GatewayConfig } from '#config/gateway-config.js';

/** Thrown at start-up; the message names the offending setting. */
export class LimitsConfigError extends Error {}

/**
 * The `limits` section: per owner (API key or OIDC identity; all
 * unauthenticated callers are one owner). Each limit is off when unset.
 * Windows are fixed minutes; with `redisUrl` the counts are shared by every
 * gateway using that Redis, else they are this gateway's: the primary of
 * worker mode counts for all its workers.
 */
export interface LimitsSettings {
  concurrentRequests: number | null;
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
  /** Tokens per fixed UTC day. */
  tokensPerDay: number | null;
  redisUrl: string | null;
  /** Prefix of the Redis keys, so several deployments can share one Redis. */
  keyPrefix: string;
}

export const LIMITS_KEYS = ['concurrentRequests', 'requestsPerMinute', 'tokensPerMinute', 'tokensPerDay', 'redisUrl', 'keyPrefix'];

function fail(key: string, message: string): never {
  throw new LimitsConfigError(`Invalid configuration: limits.${key}: ${message}`);
}

function limit(raw: Record<string, unknown>, key: string): number | null {
  const value = raw[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) fail(key, `must be a positive integer (got ${JSON.stringify(value)})`);
  return value;
}

/** Null when no limit is set: then nothing is counted at all. */
export function readLimitsSettings(config: GatewayConfig): LimitsSettings | null {
  const section = config.limits;
  if (section === undefined || section === null) return null;
  const raw = section as Record<string, unknown>;
  for (const key of Object.keys(raw)) if (!LIMITS_KEYS.includes(key)) fail(key, `is not a setting (known: ${LIMITS_KEYS.join(', ')})`);
  const redisUrl = raw.redisUrl ?? null;
  if (redisUrl !== null && (typeof redisUrl !== 'string' || !/^rediss?:\/\//.test(redisUrl))) fail('redisUrl', 'must be a redis:// or rediss:// URL');
  const keyPrefix = raw.keyPrefix ?? 'switchyard:limits:';
  if (typeof keyPrefix !== 'string') fail('keyPrefix', 'must be a string');
  const settings: LimitsSettings = {
    concurrentRequests: limit(raw, 'concurrentRequests'),
    requestsPerMinute: limit(raw, 'requestsPerMinute'),
    tokensPerMinute: limit(raw, 'tokensPerMinute'),
    tokensPerDay: limit(raw, 'tokensPerDay'),
    redisUrl: redisUrl as string | null,
    keyPrefix,
  };
  if (settings.concurrentRequests === null && settings.requestsPerMinute === null && settings.tokensPerMinute === null && settings.tokensPerDay === null) return null;
  return settings;
}
