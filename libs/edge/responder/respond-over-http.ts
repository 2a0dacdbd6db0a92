import type { Response } from 'express';
import { type Observable, map } from 'rxjs';
import type { GatewayConfig } from '#config/gateway-config.js';
import type { ResponseStreamEvent } from '#core/loop/response-events.js';
import type { FlowGate } from '#core/protocol/flow-gate.js';
import { exchange, type EdgeOutcome } from './edge-responder.js';
import { UnavailableError } from '#tool-sdk/errors.js';
import type { EdgeFrame, EdgeSurface } from './edge-surface.js';
import { LastValueFolder, asValueFrame } from './value-frame.js';
import { JsonSink, SseSink } from './http-sinks.js';

export interface HttpRespondOptions {
  /** SSE when true, one folded JSON body otherwise. */
  stream: boolean;
  server: GatewayConfig['server'];
  /** The run's flow gate: paused while the client's socket buffer is full. */
  flow?: FlowGate;
}

/** What an HTTP route hands Nest: the run's events as they are answered, then the exchange's outcome. */
export type HttpExchange = Observable<ResponseStreamEvent | EdgeOutcome>;

/**
 * A run answered over HTTP, as SSE or as one JSON body; see `exchange`. The
 * controller returns this Observable to Nest, so that a host's interceptors
 * see each event as it is answered, then the exchange's outcome, and can
 * stop the run: letting go early cancels it (its upstream request is
 * aborted) and finishes the answer as `503 request_stopped` (or that error
 * as the last event of a stream under way). Nest also tears it down when the
 * client leaves, as the sink does.
 */
export function respondOverHttp<F extends EdgeFrame>(res: Response, events: Observable<ResponseStreamEvent>, surface: EdgeSurface<F>, options: HttpRespondOptions): HttpExchange {
  return options.stream
    ? exchange(events, surface, new SseSink(res, options.server, options.flow), { mode: 'stream', stopped })
    : exchange(events, surface, new JsonSink(res), { mode: 'fold', stopped });
}

/** One value as the whole answer (a background response's `queued` object): 200 with it, or the surface's error answer. */
export function answerOverHttp(res: Response, value: Observable<unknown>, surface: EdgeSurface): HttpExchange {
  const single: EdgeSurface = { ...surface, frames: (event) => [event], eventsAreFrames: true, folder: () => new LastValueFolder() };
  return exchange(value.pipe(map(asValueFrame)), single, new JsonSink(res), { mode: 'fold', stopped });
}

/** What a run stopped by the host (not the client) answers. */
function stopped(): UnavailableError {
  return new UnavailableError('The gateway stopped this request before its answer was complete.', 'request_stopped');
}
