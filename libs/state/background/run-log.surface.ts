import type { ResponseStreamEvent } from '#core/loop/response-events.js';
import { toErrorEnvelope } from '#edge/errors/error-envelope.js';
import type { EdgeSink } from '#edge/responder/edge-sink.js';
import type { EdgeAnswer, EdgeFrame, EdgeSurface } from '#edge/responder/edge-surface.js';
import type { RunEventLog } from './run-event.log.js';

/** A run's error on its way into the log, which turns it into `response.failed` with the response as it stands. */
interface RunFailure extends EdgeFrame {
  readonly type: 'response.failed';
  readonly cause: unknown;
}

type RunLogFrame = ResponseStreamEvent | RunFailure;

function isFailure(frame: RunLogFrame): frame is RunFailure {
  return 'cause' in frame;
}

/**
 * A background run has no client on the line: its events go into the
 * store, where followers read them, and its error becomes the log's
 * `response.failed` (there is nobody to send a status line to).
 */
export const runLogSurface: EdgeSurface<RunLogFrame> = {
  name: 'Background',
  frames: (event) => [event],
  errorAnswer: (err) => ({ status: toErrorEnvelope(err).status, body: null }),
  errorFrame: (cause): RunFailure => ({ type: 'response.failed', cause }),
};

/** The store-bound end of a background run; it is under way from the first moment (the log opens with `queued`). */
export class RunLogSink implements EdgeSink<RunLogFrame> {
  readonly started = true;
  readonly status = 200;
  readonly bytes = 0;
  private failed = false;

  constructor(private readonly log: RunEventLog) {}

  frame(frame: RunLogFrame): void {
    if (!isFailure(frame)) return this.log.push(frame);
    this.failed = true;
    this.log.fail(frame.cause);
  }

  answer(_answer: EdgeAnswer): void {
    throw new Error('A background run is never answered as a whole.');
  }

  end(): void {
    // After `response.failed` the log is already ended; closing it is for a run that stopped without a terminal event.
    if (!this.failed) this.log.close();
  }

  stop(): void {}

  onGone(): () => void {
    return () => undefined;
  }
}
