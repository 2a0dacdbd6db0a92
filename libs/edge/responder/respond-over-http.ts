import type { Response } from 'express';
import { type Observable, defer, map } from 'rxjs';
import type { GatewayConfig } from '#config/gateway-config.js';
import type { ResponseStreamEvent } from '#core/loop/response-events.js';
import type { FlowGate } from '#core/protocol/flow-gate.js';
import { respond, type EdgeOutcome } from './edge-responder.js';
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

/** A run answered over HTTP, as SSE or as one JSON body; see `respond`. A sink is made per subscription. */
export function respondOverHttp<F extends EdgeFrame>(
  res: Response,
  events: Observable<ResponseStreamEvent>,
  surface: EdgeSurface<F>,
  options: HttpRespondOptions,
): Observable<EdgeOutcome> {
  return defer(() =>
    options.stream ? respond(events, surface, new SseSink(res, options.server, options.flow), { mode: 'stream' }) : respond(events, surface, new JsonSink(res), { mode: 'fold' }),
  );
}

/** One value as the whole answer (a background response's `queued` object): 200 with it, or the surface's error answer. */
export function answerOverHttp(res: Response, value: Observable<unknown>, surface: EdgeSurface): Observable<EdgeOutcome> {
  const single: EdgeSurface = { ...surface, frames: (event) => [event], folder: () => new LastValueFolder() };
  return defer(() => respond(value.pipe(map(asValueFrame)), single, new JsonSink(res), { mode: 'fold' }));
}
