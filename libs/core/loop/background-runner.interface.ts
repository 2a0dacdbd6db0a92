import type { Observable } from 'rxjs';
import type { JsonObject } from '#tool-sdk/items.js';
import type { ResponseStreamEvent } from './response-events.js';
import type { ResponseRequest } from './response-request.js';

export const BACKGROUND_RUNNER = Symbol('BACKGROUND_RUNNER');

/**
 * Runs `background: true` requests detached from the connection that made
 * them. Provided by the state module (a background run lives in the store so
 * that any replica can poll, resume or cancel it); without one, the HTTP edge
 * refuses `background`.
 */
export interface BackgroundRunner {
  /** Admits and starts the run; resolves with the `queued` response object. Limits refuse with a 429. */
  start(request: ResponseRequest): Promise<JsonObject>;
  /**
   * The run's events with a sequence number above `startingAfter`, then its
   * live ones until it ends. Unsubscribing stops following, never the run.
   */
  follow(id: string, owner: string | null, startingAfter: number): Observable<ResponseStreamEvent>;
}
