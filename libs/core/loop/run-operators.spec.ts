import { EmptyError, Observable, Subject, defer, finalize, from, of, take, throwError, type Observer } from 'rxjs';
import { continueFrom, continueWith, then, valuesThen } from './run-operators.js';

/** Everything a subscriber saw, in order, as one log. */
function record<T>(log: string[]): Partial<Observer<T>> {
  return {
    next: (value) => log.push(`next ${String(value)}`),
    error: (err: unknown) => log.push(`error ${err instanceof Error ? err.message : String(err)}`),
    complete: () => log.push('complete'),
  };
}

/** A source that logs when it is subscribed and torn down. */
function watched<T>(source: Observable<T>, log: string[], name = 'source'): Observable<T> {
  return defer(() => {
    log.push(`${name} subscribed`);
    return source;
  }).pipe(finalize(() => log.push(`${name} torn down`)));
}

type Step = { type: 'event'; n: number } | { type: 'end'; n: number };
const isStepEnd = (value: Step): value is Extract<Step, { type: 'end' }> => value.type === 'end';
const ev = (n: number): Step => ({ type: 'event', n });
const endOf = (n: number): Step => ({ type: 'end', n });
const shown = (value: Step | string) => (typeof value === 'string' ? value : `${value.type} ${value.n}`);

describe('continueFrom', () => {
  it('passes the stage on, then subscribes the next stage from its closing value once it completed and let go', () => {
    const log: string[] = [];
    const first = new Subject<Step>();
    watched(first, log, 'stage')
      .pipe(continueFrom(isStepEnd, ({ n }) => watched(of(`next stage from ${n}`), log, 'next')))
      .subscribe({ ...record<string>(log), next: (value: Step | string) => log.push(shown(value)) });
    first.next(ev(1));
    first.next(ev(2));
    first.next(endOf(3));
    log.push('end seen');
    first.complete();
    // A next stage that completes as it is subscribed (`of`) is torn down after the completion it sent, as in `concat`.
    expect(log).toEqual(['stage subscribed', 'event 1', 'event 2', 'end seen', 'stage torn down', 'next subscribed', 'next stage from 3', 'complete', 'next torn down']);
  });

  it('runs the next stage on the subscriber: its teardown follows its completion, and a stage above lets go of it before going on', () => {
    const log: string[] = [];
    const later = new Subject<string>();
    of(ev(1), endOf(2))
      .pipe(continueFrom(isStepEnd, () => watched(later, log, 'next')))
      .subscribe({ ...record<string>(log), next: (value: Step | string) => log.push(shown(value)) });
    later.next('saved');
    later.complete();
    expect(log).toEqual(['event 1', 'next subscribed', 'saved', 'complete', 'next torn down']);

    // Nested as the run nests its rounds: the inner next stage is torn down before the outer next stage starts.
    const nested: string[] = [];
    const inner = new Subject<Step>();
    const stage = of(endOf(1)).pipe(continueFrom(isStepEnd, () => watched(inner, nested, 'inner next')));
    watched(stage, nested, 'stage')
      .pipe(continueFrom(isStepEnd, ({ n }) => watched(of(`after ${n}`), nested, 'after')))
      .subscribe({ ...record<string>(nested), next: (value: Step | string) => nested.push(shown(value)) });
    inner.next(ev(2));
    inner.next(endOf(3));
    inner.complete();
    expect(nested).toEqual([
      'stage subscribed',
      'inner next subscribed',
      'event 2',
      'inner next torn down',
      'stage torn down',
      'after subscribed',
      'after 3',
      'complete',
      'after torn down',
    ]);
  });

  it('takes the last closing value when a stage sends more than one, as last() does', () => {
    const log: string[] = [];
    of(endOf(1), ev(2), endOf(3))
      .pipe(continueFrom(isStepEnd, ({ n }) => of(`next stage from ${n}`)))
      .subscribe({ ...record<string>(log), next: (value: Step | string) => log.push(shown(value)) });
    expect(log).toEqual(['event 2', 'next stage from 3', 'complete']);
  });

  it('fails a stage that completes without its closing value with EmptyError, as last() does', () => {
    const errors: unknown[] = [];
    let projected = false;
    from([ev(1)])
      .pipe(
        continueFrom(isStepEnd, () => {
          projected = true;
          return of('never');
        }),
      )
      .subscribe({ error: (err: unknown) => errors.push(err) });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(EmptyError);
    expect(projected).toBe(false);
  });

  it('passes on errors of the stage and of the next one, thrown or sent', () => {
    const log: string[] = [];
    throwError(() => new Error('source'))
      .pipe(continueFrom(isStepEnd, () => of('never')))
      .subscribe(record(log));
    of(endOf(1))
      .pipe(
        continueFrom(isStepEnd, () => {
          throw new Error('thrown');
        }),
      )
      .subscribe(record(log));
    of(endOf(1))
      .pipe(continueFrom(isStepEnd, () => throwError(() => new Error('sent'))))
      .subscribe(record(log));
    expect(log).toEqual(['error source', 'error thrown', 'error sent']);
  });

  it('leaving tears down the stage while it runs and the next one once it started', () => {
    const log: string[] = [];
    const source = new Subject<Step>();
    const first = watched(source, log)
      .pipe(continueFrom(isStepEnd, () => of('x')))
      .subscribe(record(log));
    source.next(ev(1));
    first.unsubscribe();
    expect(log).toEqual(['source subscribed', 'next [object Object]', 'source torn down']);

    const later: string[] = [];
    const finishing = new Subject<string>();
    const second = of(endOf(1))
      .pipe(continueFrom(isStepEnd, () => watched(finishing, later, 'next')))
      .subscribe(record(later));
    finishing.next('saving');
    second.unsubscribe();
    finishing.next('ignored');
    expect(later).toEqual(['next subscribed', 'next saving', 'next torn down']);
    expect(finishing.observed).toBe(false);
  });
});

describe('continueFrom: steps that throw', () => {
  it('fails the run with what a closing-value predicate throws, and lets the stage go', () => {
    const log: string[] = [];
    const source = new Subject<Step>();
    watched(source, log)
      .pipe(
        continueFrom(
          (value: Step): value is Extract<Step, { type: 'end' }> => {
            if (value.n === 2) throw new Error('bad step');
            return value.type === 'end';
          },
          () => of('never'),
        ),
      )
      .subscribe({ ...record<string>(log), next: (value: Step | string) => log.push(shown(value)) });
    source.next(ev(1));
    source.next(ev(2));
    source.next(ev(3));
    expect(log).toEqual(['source subscribed', 'event 1', 'error bad step', 'source torn down']);
    expect(source.observed).toBe(false);
  });
});

describe('continueWith', () => {
  it('turns the one value of a step into the next stage, after the step let go', async () => {
    const log: string[] = [];
    await new Promise<void>((done) =>
      watched(
        defer(() => Promise.resolve(2)),
        log,
        'step',
      )
        .pipe(continueWith((n) => watched(of(n * 10, n * 20), log, 'next')))
        .subscribe({ ...record<number>(log), complete: () => (log.push('complete'), done()) }),
    );
    expect(log).toEqual(['step subscribed', 'step torn down', 'next subscribed', 'next 20', 'next 40', 'complete', 'next torn down']);
  });

  it('leaving during the step tears it down and never makes the next stage', () => {
    const log: string[] = [];
    const step = new Subject<number>();
    let made = false;
    const subscription = watched(step, log, 'step')
      .pipe(
        continueWith(() => {
          made = true;
          return of(1);
        }),
      )
      .subscribe(record(log));
    subscription.unsubscribe();
    step.next(1);
    step.complete();
    expect(log).toEqual(['step subscribed', 'step torn down']);
    expect(made).toBe(false);
  });
});

describe('then', () => {
  it('passes the stage on, then the stage made once it completed; null adds nothing', () => {
    const log: string[] = [];
    watched(of('a', 'b'), log)
      .pipe(then(() => watched(of('c'), log, 'next')))
      .subscribe(record(log));
    of('x')
      .pipe(then(() => null))
      .subscribe(record(log));
    expect(log).toEqual(['source subscribed', 'next a', 'next b', 'source torn down', 'next subscribed', 'next c', 'complete', 'next torn down', 'next x', 'complete']);
  });

  it('hears a failure before the subscriber, and the end of the run after the teardown, as tap({ error, finalize }) after it', () => {
    const log: string[] = [];
    const ends = { error: (err: unknown) => log.push(`ends: error ${(err as Error).message}`), finalize: () => log.push('ends: finalize') };
    watched(
      throwError(() => new Error('upstream')),
      log,
    )
      .pipe(then(() => of('never'), ends))
      .subscribe(record(log));
    expect(log).toEqual(['source subscribed', 'ends: error upstream', 'error upstream', 'source torn down', 'ends: finalize']);

    const left: string[] = [];
    const source = new Subject<string>();
    const subscription = watched(source, left)
      .pipe(then(() => of('never'), { finalize: () => left.push('ends: finalize') }))
      .subscribe(record(left));
    source.next('a');
    subscription.unsubscribe();
    expect(left).toEqual(['source subscribed', 'next a', 'source torn down', 'ends: finalize']);
  });

  it('fails the run with what the next stage factory throws', () => {
    const log: string[] = [];
    of('a')
      .pipe(
        then(() => {
          throw new Error('no result');
        }),
      )
      .subscribe(record(log));
    expect(log).toEqual(['next a', 'error no result']);
  });
});

describe('valuesThen', () => {
  it('sends the values, then runs the rest on the subscriber', () => {
    const log: string[] = [];
    valuesThen(['a', 'b'], watched(of('c'), log, 'rest')).subscribe(record(log));
    expect(log).toEqual(['next a', 'next b', 'rest subscribed', 'next c', 'complete', 'rest torn down']);
  });

  it('stops sending, and never subscribes the rest, once the subscriber left', () => {
    const log: string[] = [];
    let subscribed = false;
    const rest = defer(() => {
      subscribed = true;
      return of('c');
    });
    valuesThen(['a', 'b'], rest).pipe(take(1)).subscribe(record(log));
    expect(log).toEqual(['next a', 'complete']);
    expect(subscribed).toBe(false);
  });

  it('never subscribes the rest when the subscriber left on the last value', () => {
    const log: string[] = [];
    let subscribed = false;
    const rest = defer(() => {
      subscribed = true;
      return of('c');
    });
    valuesThen(['a', 'b'], rest).pipe(take(2)).subscribe(record(log));
    expect(log).toEqual(['next a', 'next b', 'complete']);
    expect(subscribed).toBe(false);
  });
});
