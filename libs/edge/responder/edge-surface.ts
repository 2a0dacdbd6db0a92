import type { ResponseStreamEvent } from '#core/loop/response-events.js';

/** Anything a surface sends as one unit: an SSE event (named by `type`) or a WebSocket frame. */
export interface EdgeFrame {
  readonly type: string;
}

/** A whole answer: status, JSON body, and the headers that belong with it (`retry-after`). */
export interface EdgeAnswer {
  status: number;
  body: unknown;
  headers?: Readonly<Record<string, string>>;
}

/** Turns the frames of a blocking request into its one answer. */
export interface EdgeFolder<F extends EdgeFrame> {
  add(frame: F): void;
  answer(): EdgeAnswer;
}

/**
 * How one API surface speaks, for one run: which frames a loop event
 * becomes, and how an error reads before and after the first frame left.
 * The responder owns everything else (subscribing, ordering, cancellation,
 * logging), so the surfaces differ only in what they say.
 */
export interface EdgeSurface<F extends EdgeFrame = EdgeFrame> {
  /** Names the surface in log lines. */
  readonly name: string;
  /** What one loop event becomes here: none, one or several frames (translators may keep state per run). */
  frames(event: ResponseStreamEvent): Iterable<F>;
  /**
   * Each loop event is its own one frame (`frames` gives `[event]`): the
   * responder then passes events on as they are, without the array and its
   * iteration per event.
   */
  readonly eventsAreFrames?: boolean;
  /** The error as a whole answer, while nothing has been sent yet. */
  errorAnswer(err: unknown): EdgeAnswer;
  /** The error as the frame that ends a stream already under way. */
  errorFrame(err: unknown): F;
  /** Blocking requests only: a fresh folder for this run. */
  folder?(): EdgeFolder<F>;
}
