import { Observable, type Subscriber } from 'rxjs';
import type { ResponseStreamEvent } from '#core/loop/response-events.js';
import { respond } from './edge-responder.js';
import type { EdgeSink } from './edge-sink.js';
import type { EdgeAnswer, EdgeFrame, EdgeSurface } from './edge-surface.js';

/**
 * The sink of a surface whose transport is itself an Observable (a broker
 * reply stream): frames and answers are values, and an error, which such
 * transports carry on their error channel, is the surface's answer body.
 * It never starts, so every error reaches the caller as that body.
 */
class ObserverSink implements EdgeSink {
  readonly started = false;
  status: number | undefined;
  readonly bytes = 0;

  constructor(private readonly subscriber: Subscriber<unknown>) {}

  frame(frame: EdgeFrame): void {
    this.status ??= 200;
    this.subscriber.next(frame);
  }

  answer(answer: EdgeAnswer, cause?: unknown): void {
    this.status = answer.status;
    if (cause !== undefined) this.subscriber.error(answer.body);
    else this.subscriber.next(answer.body);
  }

  end(): void {}

  stop(): void {}

  onGone(): () => void {
    // Such transports say a caller left by unsubscribing, which tears the run down.
    return () => undefined;
  }
}

/**
 * A run relayed as an Observable of what the surface makes of it (frames,
 * or the folded answer), through the same responder as every other edge:
 * errors are mapped and logged in one place. Unsubscribing cancels the run.
 */
export function relay<T>(events: Observable<ResponseStreamEvent>, surface: EdgeSurface, mode: 'stream' | 'fold'): Observable<T> {
  return new Observable<T>((subscriber) =>
    respond(events, surface, new ObserverSink(subscriber as Subscriber<unknown>), { mode }).subscribe({ complete: () => subscriber.complete() }),
  );
}
