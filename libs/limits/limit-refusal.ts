import { RateLimitError } from '#tool-sdk/errors.js';

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
  if (kind !== 'concurrency') {
    const unit = kind === 'requests' ? 'requests' : 'tokens';
    error.headers[`x-ratelimit-limit-${unit}`] = String(limit);
    error.headers[`x-ratelimit-remaining-${unit}`] = '0';
    error.headers[`x-ratelimit-reset-${unit}`] = resetDuration(retryAfterMs);
  }
  return error;
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
