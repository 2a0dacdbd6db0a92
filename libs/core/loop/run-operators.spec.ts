import { EmptyError, Observable, Subject, defer, finalize, from, of, throwError, type Observer } from 'rxjs';
import { continueFrom } from './run-operators.js';

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

  it('tears a next stage that completes later down before the completion', () => {
    const log: string[] = [];
    const later = new Subject<string>();
    of(ev(1), endOf(2))
      .pipe(continueFrom(isStepEnd, () => watched(later, log, 'next')))
      .subscribe({ ...record<string>(log), next: (value: Step | string) => log.push(shown(value)) });
    later.next('saved');
    later.complete();
    expect(log).toEqual(['event 1', 'next subscribed', 'saved', 'next torn down', 'complete']);
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
