import { EmptyError, Observable, type OperatorFunction, type Subscriber } from 'rxjs';

/**
 * Steps of a run written as single subscribers. A run holds its whole chain
 * for as long as it is open (an idle stream holds it for minutes), and the
 * general operators these replace pay per value and per subscription:
 * `concatMap` over an array subscribes an inner Observable for every model
 * event, `concatWith` is a `concatAll` of its own (`emitEach`'s `end` emits
 * what comes after the source instead), and `last()` is two operators. Each
 * step here keeps the order and teardown of the chain it replaces.
 */

/**
 * Zero or more outputs per input, written synchronously through `emit`, in
 * order; `end` may write more once the source completed. A throw from either
 * ends the stream with that error and lets go of the source.
 */
export function emitEach<T, R>(step: (value: T, emit: (out: R) => void) => void, end?: (emit: (out: R) => void) => void): OperatorFunction<T, R> {
  return (source) => new Observable<R>((subscriber) => source.subscribe(new EachObserver(subscriber, step, end)));
}

/**
 * `emitEach`'s observer, one object per subscription rather than a closure
 * per callback; a source that has its own subscriber (the round's upstream)
 * hands its values to one directly instead of adding an `emitEach` after it.
 */
export class EachObserver<T, R> {
  private readonly emit: (out: R) => void;

  constructor(
    private readonly subscriber: Subscriber<R>,
    private readonly step: (value: T, emit: (out: R) => void) => void,
    private readonly end: ((emit: (out: R) => void) => void) | undefined,
  ) {
    this.emit = (out) => subscriber.next(out);
  }

  next(value: T): void {
    try {
      this.step(value, this.emit);
    } catch (err) {
      this.subscriber.error(err);
    }
  }

  error(err: unknown): void {
    this.subscriber.error(err);
  }

  complete(): void {
    try {
      this.end?.(this.emit);
    } catch (err) {
      this.subscriber.error(err);
      return;
    }
    this.subscriber.complete();
  }
}

/**
 * `last()` then `concatMap(project)`: the source's last value goes to
 * `project` once the source completed, and the stream is what that returns.
 * An empty source fails with `EmptyError`, as `last()` does.
 */
export function afterLast<T, R>(project: (last: T) => Observable<R>): OperatorFunction<T, R> {
  return (source) =>
    new Observable<R>((subscriber) => {
      let seen = false;
      let lastValue: T;
      return source.subscribe({
        next: (value) => {
          seen = true;
          lastValue = value;
        },
        error: (err: unknown) => subscriber.error(err),
        complete: () => {
          if (!seen) return subscriber.error(new EmptyError());
          let next: Observable<R>;
          try {
            next = project(lastValue);
          } catch (err) {
            return subscriber.error(err);
          }
          // The subscriber itself, so the inner subscription is torn down with it.
          next.subscribe(subscriber);
        },
      });
    });
}
