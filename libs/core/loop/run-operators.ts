import { EmptyError, Observable, type ObservableInput, type Observer, type OperatorFunction, type Subscriber, type Subscription, type Unsubscribable, from } from 'rxjs';

/**
 * Steps of a run: one stage, then the stage that follows from it, on one
 * subscriber. These are hand-written because of what an open stream holds.
 * A run waiting on its model holds every operator of its chain at once, and
 * each standard operator keeps an `OperatorSubscriber` with its own closures
 * (about 0.6 KiB for a `filter`, 1.1-1.5 KiB for `concat`, `concatWith`,
 * `startWith` or `concatMap`, whose `mergeInternals` keeps a dozen). Built
 * from them, the stages between rounds, the round's close and the edge held
 * about 16 KiB more per idle stream than they do with these relays
 * (bench/README.md, "Why some pieces are hand-written";
 * `idle-stream-heap.bench.ts` names what is held). The round's own fold
 * stays standard operators, `scan` over its reducer (`round.ts`).
 *
 * Behaviour is that of the standard operators they replace, with one
 * difference in order: a stage is torn down before the next one is
 * subscribed, as in `concat`, but the next stage runs on the subscriber
 * itself, so its teardown follows the completion it sends (the stage above
 * lets go of it before going on). Running on the subscriber, it keeps no
 * subscriber of its own, and its values take no extra hop. Whatever a step
 * throws (a predicate, a reducer, the next stage's factory) fails the run
 * rather than escaping as an unhandled error.
 */
export abstract class StageRelay<T, R> implements Observer<unknown>, Unsubscribable {
  /** The running stage's subscription; undefined while it is being subscribed. */
  private current: Subscription | undefined;
  private completedEarly = false;
  private closed = false;
  /** Stages subscribed so far: a failure handled by starting another stage may do so while one is being subscribed. */
  private stages = 0;
  /** Past the first stage: values pass on as they are. */
  protected later = false;
  /**
   * The next stage runs through this relay (whose `failed` then sees its
   * errors) rather than on the subscriber itself.
   */
  protected relaysNextStage = false;

  constructor(protected readonly destination: Subscriber<R>) {}

  /** A value of the first stage. */
  protected abstract first(value: T): void;

  /** What follows the first stage once it completed and let go of what it held; null completes. */
  protected abstract following(): ObservableInput<R> | null;

  /** A stage failed, or a step of this relay threw. */
  protected failed(err: unknown): void {
    this.destination.error(err);
  }

  /** Subscribes `stage` as the running one; the destination's teardown reaches it through this relay. */
  follow(stage: ObservableInput<unknown>): this {
    const number = ++this.stages;
    this.current = undefined;
    const subscription = from(stage).subscribe(this);
    if (this.closed) subscription.unsubscribe();
    // It failed as it was subscribed and another stage took its place (`EdgeRelay`): that one is the running stage.
    else if (number !== this.stages) return this;
    else if (this.completedEarly) {
      // It completed while subscribing: torn down by now, so the next stage may start.
      this.completedEarly = false;
      this.afterStage();
    } else this.current = subscription;
    return this;
  }

  next(value: unknown): void {
    if (this.later) return this.destination.next(value as R);
    try {
      this.first(value as T);
    } catch (err) {
      this.failed(err);
    }
  }

  error(err: unknown): void {
    this.failed(err);
  }

  complete(): void {
    const current = this.current;
    if (current === undefined) {
      // A later stage that completes as it is subscribed completes the run before its teardown, as in `concat`.
      if (this.later) return this.destination.complete();
      this.completedEarly = true;
      return;
    }
    this.current = undefined;
    current.unsubscribe();
    this.afterStage();
  }

  unsubscribe(): void {
    this.closed = true;
    this.current?.unsubscribe();
  }

  /** Lets go of the running stage (a failure handled by starting another). */
  protected dropStage(): void {
    const current = this.current;
    this.current = undefined;
    current?.unsubscribe();
  }

  private afterStage(): void {
    if (this.later) return this.destination.complete();
    this.later = true;
    // Left while the stage completed: nothing follows.
    if (this.closed) return;
    let next: ObservableInput<R> | null;
    try {
      next = this.following();
    } catch (err) {
      return this.failed(err);
    }
    if (next === null) this.destination.complete();
    else if (this.relaysNextStage) this.follow(next);
    else from(next).subscribe(this.destination);
  }
}

class ContinueFrom<V, E extends V, R> extends StageRelay<V, Exclude<V, E> | R> {
  private end: { value: E } | undefined;

  constructor(
    destination: Subscriber<Exclude<V, E> | R>,
    private readonly isEnd: (value: V) => value is E,
    private readonly nextStage: (end: E) => ObservableInput<R>,
  ) {
    super(destination);
  }

  protected first(value: V): void {
    if (this.isEnd(value)) this.end = { value };
    else this.destination.next(value as Exclude<V, E>);
  }

  protected following(): ObservableInput<R> {
    const end = this.end;
    if (!end) throw new EmptyError();
    // The next stage has what it needs of the closing value; this relay stays with the subscriber until the run ends.
    this.end = undefined;
    return this.nextStage(end.value);
  }
}

class Then<T, R> extends StageRelay<T, T | R> {
  constructor(
    destination: Subscriber<T | R>,
    private readonly nextStage: () => ObservableInput<R> | null,
    private readonly ends?: StageEnds,
  ) {
    super(destination);
  }

  protected override failed(err: unknown): void {
    this.ends?.error?.(err);
    super.failed(err);
  }

  override unsubscribe(): void {
    super.unsubscribe();
    this.ends?.finalize?.();
  }

  protected first(value: T): void {
    this.destination.next(value);
  }

  protected following(): ObservableInput<R> | null {
    return this.nextStage();
  }
}

/**
 * A stage followed by the next: the stage's values pass on as they come,
 * except the one that closes it (`isEnd`, its last value), which `next`
 * turns into the stage that follows once this one completed (and let go of
 * what it held). A stage that completes without its closing value fails
 * with `EmptyError`, as `last()` does.
 */
export function continueFrom<V extends { type: string }, E extends V, R>(isEnd: (value: V) => value is E, next: (end: E) => Observable<R>): OperatorFunction<V, Exclude<V, E> | R> {
  return (values) => new Observable<Exclude<V, E> | R>((destination) => new ContinueFrom(destination, isEnd, next).follow(values));
}

/** A one-value step (an `abortable` call), then the stage made from its value: `concatMap` for a source of one value. */
export function continueWith<T, R>(next: (value: T) => Observable<R>): OperatorFunction<T, R> {
  return (source) => new Observable<R>((destination) => new ContinueFrom<T, T, R>(destination as Subscriber<Exclude<T, T> | R>, isAny, next).follow(source));
}

/** Every value of a one-value step closes it. */
function isAny<T>(value: T): value is T {
  void value;
  return true;
}

/** What `tap({ error, finalize })` placed after `then` would see. */
export interface StageEnds {
  /** Either stage failed (or a step threw): called before the failure goes on. */
  error?(err: unknown): void;
  /** The subscriber let go, after the teardown of what ran; also once the run completed or failed. */
  finalize?(): void;
}

/**
 * The stage's values, then those of the stage `next` makes once it
 * completed: `concatWith(defer(next))`; null adds nothing. `ends` saves the
 * `tap` that would follow it.
 */
export function then<T, R>(next: () => ObservableInput<R> | null, ends?: StageEnds): OperatorFunction<T, T | R> {
  return (source) => new Observable<T | R>((destination) => new Then<T, R>(destination, next, ends).follow(source));
}

/**
 * `values`, then the stage `rest`: `concat(from(values), rest)` or
 * `rest.pipe(startWith(...values))`. `rest` runs on the subscriber itself.
 */
export function valuesThen<T, R>(values: readonly T[], rest: Observable<R>): Observable<T | R> {
  return new Observable<T | R>((destination) => {
    for (let i = 0; i < values.length; i++) {
      if (destination.closed) return;
      destination.next(values[i]);
    }
    // Left on the last value: `rest` is not started, as `concat` would not start it.
    if (!destination.closed) rest.subscribe(destination);
  });
}
