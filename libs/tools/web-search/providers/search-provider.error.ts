export type SearchFailureKind = 'auth' | 'rate_limited' | 'http' | 'server' | 'timeout' | 'malformed' | 'network' | 'aborted';

/**
 * A search the provider could not answer. The message is written for the
 * model (it becomes the tool output) and for operators (it is logged): it
 * names the provider and the HTTP status but never a key or a base URL.
 */
export class SearchProviderError extends Error {
  constructor(
    message: string,
    readonly provider: string,
    readonly kind: SearchFailureKind,
    /** The provider's own HTTP status, when it answered with one. */
    readonly providerStatus?: number,
    /** Seconds the provider asked us to wait (429 `retry-after`). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'SearchProviderError';
  }
}
