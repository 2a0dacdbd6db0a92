import { Observable, concatMap, connect, filter, last, merge, type OperatorFunction, type Subscriber } from 'rxjs';

/**
 * Steps of a run. `emitEach` is written as a single subscriber: the general
 * operators it replaces pay per value and per subscription (`concatMap` over
 * an array subscribes an inner Observable for every model event; see
 * bench/README.md, "a lighter run in flight"). `continueFrom` is made of
 * standard operators.
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
 * A stage followed by the next: the stage's values pass on as they come,
 * except the one that closes it (`isEnd`, its last value), which `next`
 * turns into the stage that follows once this one completed. A stage that
 * completes without its closing value fails with `EmptyError`, as `last()` does.
 */
export function continueFrom<V extends { type: string }, E extends V, R>(isEnd: (value: V) => value is E, next: (end: E) => Observable<R>): OperatorFunction<V, Exclude<V, E> | R> {
  return connect((values) => merge(values.pipe(filter((value): value is Exclude<V, E> => !isEnd(value))), values.pipe(filter(isEnd), last(), concatMap(next))));
}
