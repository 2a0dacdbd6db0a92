import type { Usage } from '#tool-sdk/items.js';

export const REQUEST_LIMITER = Symbol('REQUEST_LIMITER');

/** A request's place under its owner's limits, held while it runs. */
export interface RequestLease {
  /**
   * Gives the place back and settles the request's tokens: the estimate
   * reserved at admission is taken back and what the request used (`usage`;
   * null: nothing) is charged in its place. Idempotent.
   */
  release(usage: Usage | null): void;
  /**
   * Before another upstream call of the same run: throws the owner's refusal
   * (a `RateLimitError`) when the tokens already charged (less this run's own
   * reservation) plus what this run has used so far (`spent`, not charged
   * until release) reach a token budget.
   */
  check?(spent: Usage): Promise<void>;
}

/**
 * Per-owner fairness: how many requests an owner (an API key or OIDC
 * identity) may run at once and start per minute, and how many tokens it may
 * use per minute and per day. `acquire` throws a `RateLimitError` (429 with
 * `Retry-After`) instead of admitting a request past a limit. Optional:
 * without one, every request is admitted.
 *
 * `cost` is the request's own cost as far as it is known before the upstream
 * call (its prompt's estimate and its output bound); the limiter reserves
 * what `limits.admissionEstimate` says of it (both by default). A request
 * whose estimate would take a token budget past its limit is refused;
 * an admitted one reserves it in the counters, atomically with the check, so
 * that concurrent requests cannot together overspend what each alone fits, and
 * `release` settles the reservation to the actual usage.
 */
export interface RequestLimiter {
  acquire(owner: string | null, cost?: AdmissionCost): Promise<RequestLease>;
}

/** A request's cost as estimated before its first upstream call, in tokens. */
export interface AdmissionCost {
  /** Its own prompt at the gateway's estimate. */
  prompt: number;
  /** The output bound it set (`max_output_tokens`, `max_tokens`, ...; 0 when none). */
  output: number;
}
