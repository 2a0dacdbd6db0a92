import { defineConfigSection } from '#config/config-section.js';
import { LIMITS_KEYS, type LimitsSettings, readLimitsSettings } from './limits.settings.js';

/** Nest token for the validated `limits` section; null when no limit is set. */
export const LIMITS_SETTINGS = Symbol('LIMITS_SETTINGS');

/** The `limits` section: per-owner request and token limits, and the Redis that shares their counters. */
export const limitsConfigSection = defineConfigSection<LimitsSettings | null>({
  key: 'limits',
  token: LIMITS_SETTINGS,
  env: [
    { env: 'LIMIT_CONCURRENT_REQUESTS', path: 'concurrentRequests', kind: 'int' },
    { env: 'LIMIT_REQUESTS_PER_MINUTE', path: 'requestsPerMinute', kind: 'int' },
    { env: 'LIMIT_TOKENS_PER_MINUTE', path: 'tokensPerMinute', kind: 'int' },
    { env: 'LIMIT_TOKENS_PER_DAY', path: 'tokensPerDay', kind: 'int' },
    { env: 'LIMIT_ADMISSION_ESTIMATE', path: 'admissionEstimate', kind: 'string' },
    { env: 'LIMITS_REDIS_URL', path: 'redisUrl', kind: 'string', secret: true },
  ],
  keys: Object.fromEntries(LIMITS_KEYS.map((k) => [k, true as const])),
  parse: (_section, config) => readLimitsSettings(config),
});
