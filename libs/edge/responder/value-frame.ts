import type { ResponseStreamEvent } from '#core/loop/response-events.js';
import type { EdgeAnswer, EdgeFolder } from './edge-surface.js';

/**
 * An answer that is one value rather than a run's events (a background
 * response's `queued` object, the response object a broker `create`
 * replies with) travels as one frame, so that it goes through the same
 * responder, and is mapped, logged and timed like any run.
 */
export const VALUE_FRAME = 'edge.value';

export function asValueFrame(value: unknown): ResponseStreamEvent {
  return { type: VALUE_FRAME, sequence_number: -1, value };
}

/** Folds value frames into a 200 with the last value. */
export class LastValueFolder implements EdgeFolder<ResponseStreamEvent> {
  private value: unknown = {};

  add(frame: ResponseStreamEvent): void {
    if (frame.type === VALUE_FRAME) this.value = frame.value;
  }

  answer(): EdgeAnswer {
    return { status: 200, body: this.value };
  }
}
