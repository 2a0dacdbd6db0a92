/**
 * How many interactive model requests (Responses, Messages, chat
 * completions, completions, embeddings over HTTP) this process is serving
 * right now. Background work that shares the process (batch lines) reads it
 * to step aside while a client is waiting. Provided by the HTTP edge's
 * telemetry; a gateway without it runs background work at its full share.
 */
export interface InteractiveLoad {
  readonly interactiveInFlight: number;
  /** When the last interactive request ended (`Date.now()`), 0 before any: a client sending one after another is still there between them. */
  readonly lastInteractiveEndedAt: number;
  /** Calls `listener` each time the count falls to zero; returns the unsubscribe. */
  onInteractiveIdle(listener: () => void): () => void;
}

export const INTERACTIVE_LOAD = Symbol('INTERACTIVE_LOAD');
