import { type Observable, concatMap, connect, filter, last, merge, type OperatorFunction } from 'rxjs';

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
 * turns into the stage that follows once this one completed. A stage that
 * completes without its closing value fails with `EmptyError`, as `last()` does.
 */
export function continueFrom<V extends { type: string }, E extends V, R>(isEnd: (value: V) => value is E, next: (end: E) => Observable<R>): OperatorFunction<V, Exclude<V, E> | R> {
  return connect((values) => merge(values.pipe(filter((value): value is Exclude<V, E> => !isEnd(value))), values.pipe(filter(isEnd), last(), concatMap(next))));
}
