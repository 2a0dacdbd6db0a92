import type { Response } from 'express';
import { type Observable, defer, map } from 'rxjs';
import type { GatewayConfig } from '../../config/gateway-config.js';
import type { ResponseStreamEvent } from '../../core/loop/response-events.js';
import type { FlowGate } from '../../core/protocol/flow-gate.js';
import { respond, type EdgeOutcome } from './edge-responder.js';
import type { EdgeAnswer, EdgeFolder, EdgeFrame, EdgeSurface } from './edge-surface.js';
import { JsonSink, SseSink } from './http-sinks.js';

export interface HttpRespondOptions {
  /** SSE when true, one folded JSON body otherwise. */
  stream: boolean;
  server: GatewayConfig['server'];
  /** The run's flow gate: paused while the client's socket buffer is full. */
  flow?: FlowGate;
}

/** A run answered over HTTP, as SSE or as one JSON body; see `respond`. A sink is made per subscription. */
export function respondOverHttp<F extends EdgeFrame>(
  res: Response,
  events: Observable<ResponseStreamEvent>,
  surface: EdgeSurface<F>,
  options: HttpRespondOptions,
): Observable<EdgeOutcome> {
  return defer(() =>
    options.stream
      ? respond(events, surface, new SseSink(res, options.server, options.flow), { mode: 'stream' })
      : respond(events, surface, new JsonSink(res), { mode: 'fold' }),
  );
}

const ANSWER = 'edge.answer';
type AnswerFrame = ResponseStreamEvent & { body: unknown };

class LastValueFolder implements EdgeFolder<AnswerFrame> {
  private body: unknown = {};

  add(frame: AnswerFrame): void {
    this.body = frame.body;
  }

  answer(): EdgeAnswer {
    return { status: 200, body: this.body };
  }
}

/**
 * An answer that is one value, not a run (a background response's `queued`
 * object): 200 with its last value, or the surface's error answer, through
 * the same responder so that it is logged and timed like any other.
 */
export function answerOverHttp(res: Response, value: Observable<unknown>, surface: EdgeSurface): Observable<EdgeOutcome> {
  const single: EdgeSurface<AnswerFrame> = {
    name: surface.name,
    frames: (event) => [event as AnswerFrame],
    errorAnswer: (err) => surface.errorAnswer(err),
    errorFrame: (err) => surface.errorFrame(err) as AnswerFrame,
    folder: () => new LastValueFolder(),
  };
  const frames = value.pipe(map((body): AnswerFrame => ({ type: ANSWER, sequence_number: -1, body })));
  return defer(() => respond(frames, single, new JsonSink(res), { mode: 'fold' }));
}
