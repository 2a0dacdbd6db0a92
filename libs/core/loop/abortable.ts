import { Observable } from 'rxjs';

/**
 * A promise-returning I/O step as an Observable that owns its cancellation:
 * the AbortSignal is made here, at the edge of the call, and aborted only
 * when the subscriber leaves before the work settles. Nothing inside the
 * run passes signals around; unsubscription is the one way to cancel.
 */
export function abortable<T>(work: (signal: AbortSignal) => Promise<T>): Observable<T> {
  return new Observable<T>((subscriber) => {
    const controller = new AbortController();
    let settled = false;
    work(controller.signal).then(
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
