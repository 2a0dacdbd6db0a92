import type { EdgeAnswer, EdgeFrame } from './edge-surface.js';

/**
 * Where a surface's frames go: an SSE stream, a JSON body, a WebSocket. A
 * sink knows its transport (headers, backpressure, byte counts); it knows
 * nothing of events or errors, which the surface maps.
 */
export interface EdgeSink<F extends EdgeFrame = EdgeFrame> {
  /** Once true, an error can only be sent as a frame: the answer is under way. */
  readonly started: boolean;
  /** The status sent, once sent. */
  readonly status: number | undefined;
  /** Body bytes handed to the transport so far. */
  readonly bytes: number;
  frame(frame: F): void;
  /** The whole answer (a blocking request, or an error before the first frame); `cause` is the error it answers. */
  answer(answer: EdgeAnswer, cause?: unknown): void;
  end(): void;
  /** The run stopped before its end (the peer left, or the caller unsubscribed): release timers. */
  stop(): void;
  /** True once the peer is known to be gone: nothing more can reach it. */
  readonly gone?: boolean;
  /** Calls back once if the peer leaves before the end, never from within `onGone` itself; returns what removes the callback. */
  onGone(callback: () => void): () => void;
}
