import type { Response } from 'express';
import { type Observable, map } from 'rxjs';
import type { GatewayConfig } from '#config/gateway-config.js';
import type { ResponseStreamEvent } from '#core/loop/response-events.js';
import type { FlowGate } from '#core/protocol/flow-gate.js';
import { respondSettled, type EdgeOutcome } from './edge-responder.js';
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

/**
 * A run answered over HTTP, as SSE or as one JSON body; see `respond`. The
 * answer starts at once and the promise settles with its outcome when it is
 * written (or the client left), so a host's interceptors still see and can
 * time the whole exchange.
 *
 * A promise, not the Observable: Nest wraps an Observable a handler returns
 * in a chain of its own (`tap`, `takeUntil` a close watcher with `switchMap`,
 * `lastValueFrom`, three suspended async functions) that an open stream holds
 * for its whole life, about 6 KiB each, to tear it down when the client goes
 * away, which the responder already does through the sink. The price: a host
 * interceptor that unsubscribes early (a `timeout`) no longer cancels the run.
 */
export function respondOverHttp<F extends EdgeFrame>(
  res: Response,
  events: Observable<ResponseStreamEvent>,
  surface: EdgeSurface<F>,
  options: HttpRespondOptions,
): Promise<EdgeOutcome> {
  return options.stream
    ? respondSettled(events, surface, new SseSink(res, options.server, options.flow), { mode: 'stream' })
    : respondSettled(events, surface, new JsonSink(res), { mode: 'fold' });
}

/** One value as the whole answer (a background response's `queued` object): 200 with it, or the surface's error answer. */
export function answerOverHttp(res: Response, value: Observable<unknown>, surface: EdgeSurface): Promise<EdgeOutcome> {
  const single: EdgeSurface = { ...surface, frames: (event) => [event], folder: () => new LastValueFolder() };
  return respondSettled(value.pipe(map(asValueFrame)), single, new JsonSink(res), { mode: 'fold' });
}
