import type { AdmissionCost } from '#core/loop/request-limiter.interface.js';
import { RateLimitError } from '#tool-sdk/errors.js';
import type { LimitsSettings } from './limits.settings.js';

export type LimitKind = 'concurrency' | 'requests' | 'tokens' | 'tokens_per_day';

const WHAT: Record<LimitKind, string> = {
  concurrency: 'concurrent requests',
  requests: 'requests per minute',
  tokens: 'tokens per minute',
  tokens_per_day: 'tokens per day',
};

/**
 * A duration as OpenAI's `x-ratelimit-reset-*` headers write it: `1s`,
 * `6m0s`, `20ms`, `1h2m3s`.
 */
export function resetDuration(ms: number): string {
  if (ms < 1_000) return `${Math.max(0, Math.ceil(ms))}ms`;
  const total = Math.ceil(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return h > 0 ? `${h}h${m}m${s}s` : m > 0 ? `${m}m${s}s` : `${s}s`;
}

/**
 * OpenAI's wording for rate limits, with what was hit and when to come back:
 * `Retry-After`, and for a request or token limit the `x-ratelimit-*` headers
 * of the limit that refused (`limit`, `remaining` (none left), `reset`).
 */
export function limitRefusal(kind: LimitKind, limit: number, retryAfterMs: number): RateLimitError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  const error = new RateLimitError(`Rate limit reached for this key: ${limit} ${WHAT[kind]}. Please try again in ${seconds}s.`, 'rate_limit_exceeded', seconds);
  if (kind !== 'concurrency') setLimitHeaders(error, kind === 'requests' ? 'requests' : 'tokens', limit, 0, retryAfterMs);
  return error;
}

/**
 * A token budget that still has room, but not for this request's own
 * estimated cost (`requested`: its prompt's estimate plus its output bound).
 * OpenAI's wording (Limit, Used, Requested); `remaining` is what is left, so a
 * client can shrink the request (`max_output_tokens`) or wait for the reset.
 */
export function costRefusal(kind: 'tokens' | 'tokens_per_day', limit: number, used: number, requested: number, retryAfterMs: number): RateLimitError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  const remaining = Math.max(0, limit - used);
  const error = new RateLimitError(
    `Rate limit reached for this key on ${WHAT[kind]}: Limit ${limit}, Used ${used}, Requested ${requested}. Please try again in ${seconds}s, or ask for fewer tokens.`,
    'rate_limit_exceeded',
    seconds,
  );
  setLimitHeaders(error, 'tokens', limit, remaining, retryAfterMs);
  return error;
}

function setLimitHeaders(error: RateLimitError, unit: 'requests' | 'tokens', limit: number, remaining: number, retryAfterMs: number): void {
  error.headers[`x-ratelimit-limit-${unit}`] = String(limit);
  error.headers[`x-ratelimit-remaining-${unit}`] = String(remaining);
  error.headers[`x-ratelimit-reset-${unit}`] = resetDuration(retryAfterMs);
}

/**
 * The admission test of one token budget: refused when it is spent
 * (`used >= limit`), or when this request's estimated cost would take it past
 * the limit. Null when admitted.
 */
export function tokenBudgetRefusal(kind: 'tokens' | 'tokens_per_day', limit: number | null, used: number, estimate: number, retryAfterMs: number): RateLimitError | null {
  if (limit === null) return null;
  if (used >= limit) return limitRefusal(kind, limit, retryAfterMs);
  if (estimate > 0 && used + estimate > limit) return costRefusal(kind, limit, used, estimate, retryAfterMs);
  return null;
}

export const WINDOW_MS = 60_000;
export const DAY_MS = 86_400_000;

/** The fixed UTC day a timestamp falls in, and how long until it ends. */
export function dayOf(now: number): { index: number; remainingMs: number } {
  const index = Math.floor(now / DAY_MS);
  return { index, remainingMs: (index + 1) * DAY_MS - now };
}

/** The fixed minute a timestamp falls in, and how long until it ends. */
export function windowOf(now: number): { index: number; remainingMs: number } {
  const index = Math.floor(now / WINDOW_MS);
  return { index, remainingMs: (index + 1) * WINDOW_MS - now };
}

/** The tokens to check and reserve for a request at admission, as `limits.admissionEstimate` says. */
export function reservationOf(settings: Pick<LimitsSettings, 'admissionEstimate'>, cost: AdmissionCost | undefined): number {
  if (!cost || settings.admissionEstimate === 'none') return 0;
  const whole = (n: number) => (Number.isFinite(n) && n > 0 ? Math.floor(n) : 0);
  return whole(cost.prompt) + (settings.admissionEstimate === 'prompt' ? 0 : whole(cost.output));
}
