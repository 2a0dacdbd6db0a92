import type { Usage } from '#tool-sdk/items.js';

export const REQUEST_LIMITER = Symbol('REQUEST_LIMITER');

/** A request's place under its owner's limits, held while it runs. */
export interface RequestLease {
  /** Gives the place back and charges the tokens the request used. Idempotent. */
  release(usage: Usage | null): void;
  /**
   * Before another upstream call of the same run: throws the owner's refusal
   * (a `RateLimitError`) when the tokens already charged plus what this run
   * has used so far (`spent`, not charged until release) reach a token budget.
   */
  check?(spent: Usage): Promise<void>;
}

/**
 * Per-owner fairness: how many requests an owner (an API key or OIDC
 * identity) may run at once and start per minute, and how many tokens it may
 * use per minute. `acquire` throws a `RateLimitError` (429 with `Retry-After`)
 * instead of admitting a request past a limit. Optional: without one, every
 * request is admitted.
 */
export interface RequestLimiter {
  acquire(owner: string | null): Promise<RequestLease>;
}
