import { EmptyError, Observable, Subject, concatMap, concatWith, defer, finalize, from, last, of, throwError, type Observer } from 'rxjs';
import { afterLast, emitEach } from './run-operators.js';

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

describe('emitEach', () => {
  it('writes what each step emits in order, then what the end emits, as concatMap over arrays and concatWith would', () => {
    const step = (n: number): number[] => Array.from({ length: n }, (_, i) => n * 10 + i);
    const viaRx: string[] = [];
    from([2, 0, 3])
      .pipe(concatMap(step), concatWith(defer(() => of(-1))))
      .subscribe(record(viaRx));
    const viaEach: string[] = [];
    from([2, 0, 3])
      .pipe(
        emitEach<number, number>(
          (n, emit) => step(n).forEach(emit),
          (emit) => emit(-1),
        ),
      )
      .subscribe(record(viaEach));
    expect(viaEach).toEqual(viaRx);
    expect(viaEach).toEqual(['next 20', 'next 21', 'next 30', 'next 31', 'next 32', 'next -1', 'complete']);
  });

  it('delivers each output before the step goes on to the next one', () => {
    const log: string[] = [];
    of('a')
      .pipe(
        emitEach<string, string>((value, emit) => {
          log.push('step starts');
          emit(`${value}1`);
          log.push('between');
          emit(`${value}2`);
        }),
      )
      .subscribe(record(log));
    expect(log).toEqual(['step starts', 'next a1', 'between', 'next a2', 'complete']);
  });

  it('ends with the error a step throws and lets go of the source, which sends no more', () => {
    const log: string[] = [];
    const source = new Subject<number>();
    watched(source, log)
      .pipe(
        emitEach<number, number>((n, emit) => {
          if (n === 2) throw new Error('bad value');
          emit(n);
        }),
      )
      .subscribe(record(log));
    source.next(1);
    source.next(2);
    source.next(3);
    expect(log).toEqual(['source subscribed', 'next 1', 'error bad value', 'source torn down']);
    expect(source.observed).toBe(false);
  });

  it('ends with the error the end throws instead of completing', () => {
    const log: string[] = [];
    of(1)
      .pipe(
        emitEach<number, number>(
          (n, emit) => emit(n),
          () => {
            throw new Error('no end');
          },
        ),
      )
      .subscribe(record(log));
    expect(log).toEqual(['next 1', 'error no end']);
  });

  it("passes the source's error on without running the end, and leaving unsubscribes the source", () => {
    const log: string[] = [];
    watched(
      throwError(() => new Error('upstream')),
      log,
    )
      .pipe(
        emitEach<never, string>(
          () => undefined,
          (emit) => emit('end'),
        ),
      )
      .subscribe(record(log));
    expect(log).toEqual(['source subscribed', 'error upstream', 'source torn down']);

    const left: string[] = [];
    const open = new Subject<number>();
    const subscription = watched(open, left)
      .pipe(emitEach<number, number>((n, emit) => emit(n)))
      .subscribe(record(left));
    open.next(7);
    subscription.unsubscribe();
    expect(left).toEqual(['source subscribed', 'next 7', 'source torn down']);
    expect(open.observed).toBe(false);
  });
});

describe('afterLast', () => {
  it('subscribes the project of the last value once the source completed, as last() then concatMap would', () => {
    const project = (n: number) => of(`finished with ${n}`, 'and done');
    const viaRx: string[] = [];
    from([1, 2, 3]).pipe(last(), concatMap(project)).subscribe(record(viaRx));
    const viaAfterLast: string[] = [];
    from([1, 2, 3]).pipe(afterLast(project)).subscribe(record(viaAfterLast));
    expect(viaAfterLast).toEqual(viaRx);
    expect(viaAfterLast).toEqual(['next finished with 3', 'next and done', 'complete']);
  });

  it('fails an empty source with EmptyError, as last() does', () => {
    const errors: unknown[] = [];
    let projected = false;
    of<number>()
      .pipe(
        afterLast(() => {
          projected = true;
          return of('never');
        }),
      )
      .subscribe({ error: (err: unknown) => errors.push(err) });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(EmptyError);
    expect(projected).toBe(false);
  });

  it('passes on errors of the source and of the project, thrown or sent', () => {
    const log: string[] = [];
    throwError(() => new Error('source'))
      .pipe(afterLast(() => of('never')))
      .subscribe(record(log));
    of(1)
      .pipe(
        afterLast(() => {
          throw new Error('thrown');
        }),
      )
      .subscribe(record(log));
    of(1)
      .pipe(afterLast(() => throwError(() => new Error('sent'))))
      .subscribe(record(log));
    expect(log).toEqual(['error source', 'error thrown', 'error sent']);
  });

  it('leaving tears down the source while it runs and the project once it started', () => {
    const log: string[] = [];
    const source = new Subject<number>();
    const first = watched(source, log)
      .pipe(afterLast(() => of('x')))
      .subscribe(record(log));
    source.next(1);
    first.unsubscribe();
    expect(log).toEqual(['source subscribed', 'source torn down']);

    const later: string[] = [];
    const finishing = new Subject<string>();
    const second = of(1)
      .pipe(afterLast(() => watched(finishing, later, 'project')))
      .subscribe(record(later));
    finishing.next('saving');
    second.unsubscribe();
    finishing.next('ignored');
    expect(later).toEqual(['project subscribed', 'next saving', 'project torn down']);
    expect(finishing.observed).toBe(false);
  });
});
