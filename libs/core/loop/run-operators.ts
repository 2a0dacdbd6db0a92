import { EmptyError, type Observable, type OperatorFunction, concatWith, defer, filter, throwError } from 'rxjs';

/**
 * Steps of a run, made of standard operators. (`emitEach`, a hand-written
 * operator that flattened per-event outputs without an inner subscription,
 * went with the round's reducer: the round flattens its steps with
 * `filter` + `map` for a lone event and `mergeMap` for the rest (`flattenSteps`),
 * measured in bench/README.md, "Why some pieces are hand-written".)
 */

/**
 * A stage followed by the next: the stage's values pass on as they come,
 * except the one that closes it (`isEnd`, its last value), which `next`
 * turns into the stage that follows once this one completed (and let go of
 * what it held). A stage that completes without its closing value fails
 * with `EmptyError`, as `last()` does.
 *
 * Every public event of a round passes through these (its round's, and a
 * hop of each stage the round follows), so a value costs one `filter` and
 * `concatWith`'s hop: the closing value is noted as it goes by, rather than
 * picked out by a second subscriber of the shared stage (`connect`'s
 * `Subject`, a second `filter` and `last()` on every value; bench/README.md,
 * "Streamed events: the per-event path").
 */
export function continueFrom<V extends { type: string }, E extends V, R>(isEnd: (value: V) => value is E, next: (end: E) => Observable<R>): OperatorFunction<V, Exclude<V, E> | R> {
  return (values) =>
    defer(() => {
      // The stage's last closing value, as `last()` would pick it: noted while the stage runs, read once it completed.
      let end: { value: E } | undefined;
      const passes = (value: V): value is Exclude<V, E> => {
        if (!isEnd(value)) return true;
        end = { value };
        return false;
      };
      return values.pipe(filter(passes), concatWith(defer(() => (end ? next(end.value) : throwError(() => new EmptyError())))));
    });
}
