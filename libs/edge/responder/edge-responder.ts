import { Logger, type LoggerService } from '@nestjs/common';
import { Observable, type Subscription } from 'rxjs';
import type { ResponseStreamEvent } from '#core/loop/response-events.js';
import { logEdgeError } from './edge-error-log.js';
import type { EdgeSink } from './edge-sink.js';
import type { EdgeFrame, EdgeSurface } from './edge-surface.js';

/** What the exchange came to, emitted once the answer is out (or the peer left). */
export interface EdgeOutcome {
  /** The status sent; 499 when the peer left before anything was sent. */
  status: number;
  /** Body bytes written. */
  bytes: number;
  /** The run ended in an error (answered as an error body or an error frame). */
  failed: boolean;
  /** The peer left before the end; the run was cancelled. */
  clientGone: boolean;
}

export interface RespondOptions {
  /** `stream`: every frame goes out as it comes; `fold`: frames become one answer (needs the surface's folder). */
  mode: 'stream' | 'fold';
  /** Called with the run's error before it is answered (e.g. to evict state the run left behind). */
  onError?: (err: unknown) => void;
  logger?: Pick<LoggerService, 'error' | 'warn'>;
}

/** nginx's "client closed request": nothing was sent because nobody was left to send it to. */
const CLIENT_GONE = 499;

const defaultLogger = new Logger('Errors');

/**
 * The one streaming edge. Subscribing runs `events` and writes what the
 * surface makes of them to the sink; the Observable emits one outcome when
 * the answer is complete and then completes, so that whoever subscribed (Nest,
 * with its interceptors, when a controller returns it or the promise of its
 * outcome) sees the whole exchange.
 *
 * Errors never escape: before the first frame they are a whole answer in
 * the surface's envelope, after it they are the surface's error frame, and
 * either way they are logged here, since no exception filter sees an error
 * raised after the handler returned. Unsubscribing, or the peer leaving,
 * unsubscribes `events`, which is what cancels the run.
 */
export function respond<F extends EdgeFrame>(
  events: Observable<ResponseStreamEvent>,
  surface: EdgeSurface<F>,
  sink: EdgeSink<F>,
  options: RespondOptions,
): Observable<EdgeOutcome> {
  return new Observable<EdgeOutcome>((subscriber) =>
    startAnswer(events, surface, sink, options, (outcome) => {
      subscriber.next(outcome);
      subscriber.complete();
    }),
  );
}

/**
 * `respond` for a host framework that holds the exchange (Nest, with its
 * interceptors): the Observable emits each event of the run once the sink
 * has it, then the outcome, so an interceptor sees the run as it goes and
 * can stop it. Letting go before the end cancels the run; an answer not yet
 * complete is then finished as the error `stopped` says (an error body, or
 * the surface's error frame on a stream under way), unless the peer is gone.
 */
export function exchange<F extends EdgeFrame>(
  events: Observable<ResponseStreamEvent>,
  surface: EdgeSurface<F>,
  sink: EdgeSink<F>,
  options: RespondOptions & { stopped: () => unknown },
): Observable<ResponseStreamEvent | EdgeOutcome> {
  // Hand-written: the Observable owns the answer, which it must finish however it is let go.
  return new Observable<ResponseStreamEvent | EdgeOutcome>((subscriber) =>
    startAnswer(
      events,
      surface,
      sink,
      options,
      (outcome) => {
        subscriber.next(outcome);
        subscriber.complete();
      },
      (event) => subscriber.next(event),
    ),
  );
}

/** Runs `events` into the sink as `respond` says, calls `settled` once with the outcome, and returns what stops the answer early. */
function startAnswer<F extends EdgeFrame>(
  events: Observable<ResponseStreamEvent>,
  surface: EdgeSurface<F>,
  sink: EdgeSink<F>,
  options: RespondOptions,
  settled: (outcome: EdgeOutcome) => void,
  answered?: (event: ResponseStreamEvent) => void,
): () => void {
  const logger = options.logger ?? defaultLogger;
  const folder = options.mode === 'fold' ? surface.folder?.() : undefined;
  if (options.mode === 'fold' && !folder) throw new Error(`The ${surface.name} surface cannot fold a run into one answer.`);
  const eventsAreFrames = surface.eventsAreFrames === true;
  let run: Subscription | undefined;
  let done = false;

  const settle = (failed: boolean, clientGone: boolean): void => {
    if (done) return;
    done = true;
    // Nobody is left to answer once the answer is out: the sink stops watching for the peer.
    removeGoneListener();
    settled({ status: sink.status ?? CLIENT_GONE, bytes: sink.bytes, failed, clientGone });
  };

  const fail = (err: unknown): void => {
    if (done) return;
    const answer = surface.errorAnswer(err);
    logEdgeError(logger, surface.name, err, answer.status);
    options.onError?.(err);
    if (!sink.started) {
      sink.stop();
      sink.answer(answer, err);
    } else {
      sink.frame(surface.errorFrame(err));
      sink.end();
    }
    settle(true, false);
  };

  const removeGoneListener = sink.onGone(() => {
    run?.unsubscribe();
    sink.stop();
    settle(false, true);
  });

  run = events.subscribe({
    next: (event) => {
      try {
        if (eventsAreFrames) {
          const frame = event as unknown as F;
          if (folder) folder.add(frame);
          else sink.frame(frame);
        } else {
          for (const frame of surface.frames(event)) {
            if (folder) folder.add(frame);
            else sink.frame(frame);
          }
        }
      } catch (err) {
        // A translator that throws must not leave the run going with nobody told.
        run?.unsubscribe();
        fail(err);
        return;
      }
      answered?.(event);
    },
    error: fail,
    complete: () => {
      if (done) return;
      if (folder) sink.answer(folder.answer());
      else sink.end();
      settle(false, false);
    },
  });
  // An Observable that failed or threw synchronously settled before `run` was assigned.
  if (done) run.unsubscribe();

  return () => {
    removeGoneListener();
    run?.unsubscribe();
    if (done) return;
    const stopped = 'stopped' in options ? (options as { stopped: () => unknown }).stopped : undefined;
    // Let go by whoever holds the exchange (a host interceptor): the answer is finished, not left open.
    if (stopped && !sink.gone) fail(stopped());
    else sink.stop();
  };
}
