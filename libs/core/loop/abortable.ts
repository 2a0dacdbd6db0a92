import { Observable } from 'rxjs';
import { Cancellation } from '../protocol/cancellation.js';

/**
 * A promise-returning I/O step as an Observable that owns its cancellation:
 * the cancellation is made here, at the edge of the call, and aborted only
 * when the subscriber leaves before the work settles. Nothing inside the
 * run passes signals around; unsubscription is the one way to cancel. The
 * work reads `cancel.signal` where it needs a real `AbortSignal`; a step
 * that never does costs none (see cancellation.ts).
 */
export function abortable<T>(work: (cancel: Cancellation) => Promise<T>): Observable<T> {
  return new Observable<T>((subscriber) => {
    const controller = new Cancellation();
    let settled = false;
    work(controller).then(
      (value) => {
        settled = true;
        subscriber.next(value);
        subscriber.complete();
      },
      (err: unknown) => {
        settled = true;
        subscriber.error(err);
      },
    );
    return () => {
      if (!settled) controller.abort();
    };
  });
}
