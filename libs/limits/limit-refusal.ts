import { RateLimitError } from '#tool-sdk/errors.js';

export type LimitKind = 'concurrency' | 'requests' | 'tokens';

/** OpenAI's wording for rate limits, with what was hit and when to come back. */
export function limitRefusal(kind: LimitKind, limit: number, retryAfterMs: number): RateLimitError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  const what = kind === 'concurrency' ? `${limit} concurrent requests` : kind === 'requests' ? `${limit} requests per minute` : `${limit} tokens per minute`;
  return new RateLimitError(`Rate limit reached for this key: ${what}. Please try again in ${seconds}s.`, 'rate_limit_exceeded', seconds);
}

export const WINDOW_MS = 60_000;

/** The fixed minute a timestamp falls in, and how long until it ends. */
export function windowOf(now: number): { index: number; remainingMs: number } {
  const index = Math.floor(now / WINDOW_MS);
  return { index, remainingMs: (index + 1) * WINDOW_MS - now };
}
