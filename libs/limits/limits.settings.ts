import { IsIn, IsInt, IsOptional, IsString, Matches, Min } from 'class-validator';
import { defineConfigSection } from '#config/config-section.js';
import type { GatewayConfig } from '#config/gateway-config.js';

export const ADMISSION_ESTIMATES = ['prompt_and_output', 'prompt', 'none'] as const;
export type AdmissionEstimate = (typeof ADMISSION_ESTIMATES)[number];

/** Thrown at start-up; the message names the offending setting. */
export class LimitsConfigError extends Error {}

/**
 * The `limits` section: per owner (API key or OIDC identity; all
 * unauthenticated callers are one owner). Each limit is off when unset.
 * Windows are fixed minutes; with `redisUrl` the counts are shared by every
 * gateway using that Redis, else they are this gateway's: the primary of
 * worker mode counts for all its workers.
 */
export class LimitsSettings {
  @IsOptional() @IsInt() @Min(1) concurrentRequests: number | null = null;
  @IsOptional() @IsInt() @Min(1) requestsPerMinute: number | null = null;
  @IsOptional() @IsInt() @Min(1) tokensPerMinute: number | null = null;
  /** Tokens per fixed UTC day. */
  @IsOptional() @IsInt() @Min(1) tokensPerDay: number | null = null;
  @IsOptional() @IsString() @Matches(/^rediss?:\/\//, { message: 'must be a redis:// or rediss:// URL' }) redisUrl: string | null = null;
  /**
   * What of a request's own estimated cost is checked against the token
   * budgets and reserved at admission: its prompt and its output bound
   * (OpenAI's rule), the prompt only (clients that ask a large `max_tokens` of
   * every request, as Claude Code does, still fit a small budget), or nothing
   * (only a budget already spent refuses at admission).
   */
  @IsIn(ADMISSION_ESTIMATES) admissionEstimate: AdmissionEstimate = 'prompt_and_output';
  /** Prefix of the Redis keys, so several deployments can share one Redis. */
  @IsString() keyPrefix = 'switchyard:limits:';
}

/** Nest token for the validated `limits` section; null when no limit is set. */
export const LIMITS_SETTINGS = Symbol('LIMITS_SETTINGS');

const noLimitSet = (s: LimitsSettings): boolean => s.concurrentRequests === null && s.requestsPerMinute === null && s.tokensPerMinute === null && s.tokensPerDay === null;

/** The `limits` section: per-owner request and token limits, and the Redis that shares their counters. */
export const limitsConfigSection = defineConfigSection({
  key: 'limits',
  type: LimitsSettings,
  token: LIMITS_SETTINGS,
  env: [
    { env: 'LIMIT_CONCURRENT_REQUESTS', path: 'concurrentRequests', kind: 'int' },
    { env: 'LIMIT_REQUESTS_PER_MINUTE', path: 'requestsPerMinute', kind: 'int' },
    { env: 'LIMIT_TOKENS_PER_MINUTE', path: 'tokensPerMinute', kind: 'int' },
    { env: 'LIMIT_TOKENS_PER_DAY', path: 'tokensPerDay', kind: 'int' },
    { env: 'LIMIT_ADMISSION_ESTIMATE', path: 'admissionEstimate', kind: 'string' },
    { env: 'LIMITS_REDIS_URL', path: 'redisUrl', kind: 'string', secret: true },
  ],
  // Null when no limit is set: then nothing is counted at all.
  settings: (s): LimitsSettings | null => (noLimitSet(s) ? null : s),
});

/** The `limits` settings of a gateway config, for the primary of worker mode (outside the Nest container). */
export function readLimitsSettings(config: GatewayConfig): LimitsSettings | null {
  try {
    return limitsConfigSection.read(config);
  } catch (err) {
    throw new LimitsConfigError((err as Error).message);
  }
}
