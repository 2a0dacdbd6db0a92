import { TERMINAL_EVENTS } from '#core/loop/loop.service.js';
import type { ResponseStreamEvent } from '#core/loop/response-events.js';
import { toErrorEnvelope } from '../errors/error-envelope.js';
import type { EdgeAnswer, EdgeFolder, EdgeSurface } from './edge-surface.js';

/** A blocking Responses request answers with the response object of the terminal event. */
class TerminalResponseFolder implements EdgeFolder<ResponseStreamEvent> {
  private terminal?: ResponseStreamEvent;

  add(event: ResponseStreamEvent): void {
    if (TERMINAL_EVENTS.has(event.type)) this.terminal = event;
  }

  answer(): EdgeAnswer {
    return { status: 200, body: this.terminal?.response ?? {} };
  }
}

/**
 * The OpenAI Responses API: events go out as the loop made them, errors in
 * OpenAI's envelope, or, once the stream began, as an `error` event (its
 * `sequence_number` is -1: it is the edge's, not the run's).
 */
export const responsesSurface: EdgeSurface<ResponseStreamEvent> = {
  name: 'Responses',
  frames: (event) => [event],
  eventsAreFrames: true,
  errorAnswer: (err) => toErrorEnvelope(err),
  errorFrame: (err) => ({ type: 'error', sequence_number: -1, error: { ...toErrorEnvelope(err).body.error } }),
  folder: () => new TerminalResponseFolder(),
};
