import { Observable, Subject, lastValueFrom, of, take, throwError } from 'rxjs';
import { UpstreamUnavailableError } from '#tool-sdk/errors.js';
import { toErrorEnvelope } from '../errors/error-envelope.js';
import type { ResponseStreamEvent } from '#core/loop/response-events.js';
import { exchange, respond, type EdgeOutcome } from './edge-responder.js';
import type { EdgeSink } from './edge-sink.js';
import type { EdgeAnswer, EdgeFrame, EdgeSurface } from './edge-surface.js';

/** A sink that records what reached it, in order; `started` flips with the first frame, as an SSE stream's headers do. */
class RecordingSink implements EdgeSink {
  readonly log: string[] = [];
  started = false;
  status: number | undefined;
  bytes = 0;
  private goneCallback?: () => void;

  frame(frame: EdgeFrame): void {
    this.started = true;
    this.status ??= 200;
    this.bytes += 10;
    this.log.push(`frame ${frame.type}`);
  }
  answer(answer: EdgeAnswer, cause?: unknown): void {
    this.status = answer.status;
    this.bytes += 5;
    this.log.push(`answer ${answer.status} ${JSON.stringify(answer.body)}${cause ? ' (error)' : ''}`);
  }
  end(): void {
    this.log.push('end');
  }
  stop(): void {
    this.log.push('stop');
  }
  onGone(callback: () => void): () => void {
    this.goneCallback = callback;
    return () => (this.goneCallback = undefined);
  }
  get watching(): boolean {
    return this.goneCallback !== undefined;
  }
  leave(): void {
    this.goneCallback?.();
  }
}

const event = (type: string): ResponseStreamEvent => ({ type, sequence_number: 0 });

/** Upper-cases types, folds by counting, and names errors by status. */
const surface: EdgeSurface = {
  name: 'Test',
  frames: (e) => (e.type === 'skip' ? [] : [{ type: e.type.toUpperCase() }]),
  errorAnswer: (err) => ({ status: toErrorEnvelope(err).status, body: 'failed' }),
  errorFrame: () => ({ type: 'ERROR' }),
  folder: () => {
    let count = 0;
    return { add: () => void count++, answer: () => ({ status: 200, body: { frames: count } }) };
  },
};

function quietLogger() {
  const lines: string[] = [];
  return { lines, logger: { warn: (m: unknown) => void lines.push(`warn ${String(m)}`), error: (m: unknown) => void lines.push(`error ${String(m)}`) } };
}

describe('respond', () => {
  it('streams every frame, ends, and then emits one outcome', async () => {
    const sink = new RecordingSink();
    const outcome = await lastValueFrom(respond(of(event('a'), event('skip'), event('b')), surface, sink, { mode: 'stream' }));
    expect(sink.log).toEqual(['frame A', 'frame B', 'end']);
    expect(outcome).toEqual<EdgeOutcome>({ status: 200, bytes: 20, failed: false, clientGone: false });
  });

  it('folds frames into one answer for a blocking request', async () => {
    const sink = new RecordingSink();
    await lastValueFrom(respond(of(event('a'), event('b')), surface, sink, { mode: 'fold' }));
    expect(sink.log).toEqual(['answer 200 {"frames":2}']);
  });

  it('answers an error before the first frame as a whole answer, and logs it', async () => {
    const sink = new RecordingSink();
    const { lines, logger } = quietLogger();
    const failure = new UpstreamUnavailableError('upstream down');
    const outcome = await lastValueFrom(
      respond(
        throwError(() => failure),
        surface,
        sink,
        { mode: 'stream', logger },
      ),
    );
    expect(sink.log).toEqual(['stop', 'answer 502 "failed" (error)']);
    expect(outcome).toMatchObject({ status: 502, failed: true });
    expect(lines).toEqual(['warn Test: the run ended with 502 upstream_error (upstream_unavailable)']);
  });

  it('ends a stream already under way with the error frame, and logs an unexpected error with its stack', async () => {
    const sink = new RecordingSink();
    const { lines, logger } = quietLogger();
    const events = new Observable<ResponseStreamEvent>((s) => {
      s.next(event('a'));
      s.error(new TypeError('boom'));
    });
    const seen: unknown[] = [];
    await lastValueFrom(respond(events, surface, sink, { mode: 'stream', logger, onError: (err) => seen.push(err) }));
    expect(sink.log).toEqual(['frame A', 'frame ERROR', 'end']);
    expect(seen).toEqual([new TypeError('boom')]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^error Test: the run ended with an unexpected error: TypeError: boom\n\s+at /);
  });

  it('stops the run when a translator throws, instead of leaving it running unseen', async () => {
    const sink = new RecordingSink();
    const run = new Subject<ResponseStreamEvent>();
    const throwing: EdgeSurface = {
      ...surface,
      frames: () => {
        throw new Error('cannot translate');
      },
    };
    const outcome = lastValueFrom(respond(run, throwing, sink, { mode: 'stream', logger: quietLogger().logger }));
    run.next(event('a'));
    expect(run.observed).toBe(false);
    expect(await outcome).toMatchObject({ status: 500, failed: true });
  });

  it('cancels the run when the peer leaves, and still emits an outcome', async () => {
    const sink = new RecordingSink();
    const run = new Subject<ResponseStreamEvent>();
    const outcome = lastValueFrom(respond(run, surface, sink, { mode: 'stream' }));
    run.next(event('a'));
    sink.leave();
    expect(run.observed).toBe(false);
    expect(sink.log).toEqual(['frame A', 'stop']);
    expect(await outcome).toEqual({ status: 200, bytes: 10, failed: false, clientGone: true });
  });

  it('cancels the run when the subscriber unsubscribes (a Nest disconnect), and releases the sink', () => {
    const sink = new RecordingSink();
    const run = new Subject<ResponseStreamEvent>();
    const subscription = respond(run, surface, sink, { mode: 'stream' }).subscribe();
    expect(run.observed).toBe(true);
    subscription.unsubscribe();
    expect(run.observed).toBe(false);
    expect(sink.log).toEqual(['stop']);
  });

  it('is cold: nothing runs until subscription', () => {
    let subscribed = 0;
    const events = new Observable<ResponseStreamEvent>(() => void subscribed++);
    const edge = respond(events, surface, new RecordingSink(), { mode: 'stream' });
    expect(subscribed).toBe(0);
    edge.subscribe().unsubscribe();
    expect(subscribed).toBe(1);
  });
});

/** The HTTP edge's form: the same answer, each event emitted once answered, then the outcome. */
const stopped = () => new UpstreamUnavailableError('stopped by the host');
function respondSettled(
  events: Observable<ResponseStreamEvent>,
  surf: EdgeSurface,
  sink: RecordingSink,
  options: Omit<Parameters<typeof exchange>[3], 'stopped'>,
): Promise<EdgeOutcome> {
  return lastValueFrom(exchange(events, surf, sink, { ...options, stopped })) as Promise<EdgeOutcome>;
}

describe('exchange', () => {
  it('emits each event once the sink has its frames, then the outcome', () => {
    const sink = new RecordingSink();
    const seen: string[] = [];
    exchange(of(event('a'), event('b')), surface, sink, { mode: 'stream', stopped }).subscribe((value) =>
      seen.push('type' in value ? `event ${value.type} after ${sink.log.length} sink calls` : `outcome ${value.status}`),
    );
    expect(seen).toEqual(['event a after 1 sink calls', 'event b after 2 sink calls', 'outcome 200']);
  });

  it('a holder that lets go early (take) cancels the run and finishes the answer with the stopped error', () => {
    const sink = new RecordingSink();
    const run = new Subject<ResponseStreamEvent>();
    const { logger } = quietLogger();
    const seen: unknown[] = [];
    exchange(run, surface, sink, { mode: 'stream', stopped, logger })
      .pipe(take(2))
      .subscribe((value) => seen.push(value));
    run.next(event('a'));
    run.next(event('b'));
    expect(seen).toHaveLength(2);
    expect(run.observed).toBe(false);
    expect(sink.log).toEqual(['frame A', 'frame B', 'frame ERROR', 'end']);
  });

  it('streams every frame, ends, resolves with the outcome and stops watching for the peer', async () => {
    const sink = new RecordingSink();
    const outcome = await respondSettled(of(event('a'), event('skip'), event('b')), surface, sink, { mode: 'stream' });
    expect(sink.log).toEqual(['frame A', 'frame B', 'end']);
    expect(outcome).toEqual<EdgeOutcome>({ status: 200, bytes: 20, failed: false, clientGone: false });
    expect(sink.watching).toBe(false);
  });

  it('watches for the peer while the run goes on', () => {
    const sink = new RecordingSink();
    void respondSettled(new Subject<ResponseStreamEvent>(), surface, sink, { mode: 'stream' });
    expect(sink.watching).toBe(true);
  });

  it('answers an error before the first frame in the envelope, and resolves with the failure', async () => {
    const sink = new RecordingSink();
    const { lines, logger } = quietLogger();
    const outcome = await respondSettled(
      throwError(() => new UpstreamUnavailableError('upstream down')),
      surface,
      sink,
      { mode: 'fold', logger },
    );
    expect(sink.log).toEqual(['stop', 'answer 502 "failed" (error)']);
    expect(outcome).toMatchObject({ status: 502, failed: true, clientGone: false });
    expect(lines).toHaveLength(1);
    expect(sink.watching).toBe(false);
  });

  it('stops the run when a translator throws', async () => {
    const run = new Subject<ResponseStreamEvent>();
    const throwing: EdgeSurface = {
      ...surface,
      frames: () => {
        throw new Error('cannot translate');
      },
    };
    const outcome = respondSettled(run, throwing, new RecordingSink(), { mode: 'stream', logger: quietLogger().logger });
    run.next(event('a'));
    expect(run.observed).toBe(false);
    expect(await outcome).toMatchObject({ status: 500, failed: true });
  });

  it('cancels the run when the peer leaves, and resolves with it gone', async () => {
    const sink = new RecordingSink();
    const run = new Subject<ResponseStreamEvent>();
    const outcome = respondSettled(run, surface, sink, { mode: 'stream' });
    run.next(event('a'));
    sink.leave();
    expect(run.observed).toBe(false);
    expect(sink.log).toEqual(['frame A', 'stop']);
    expect(await outcome).toEqual({ status: 200, bytes: 10, failed: false, clientGone: true });
  });

  it('settles a run that ends while it is subscribed, and lets go of it', async () => {
    let tornDown = false;
    const events = new Observable<ResponseStreamEvent>((s) => {
      s.next(event('a'));
      s.complete();
      return () => void (tornDown = true);
    });
    expect(await respondSettled(events, surface, new RecordingSink(), { mode: 'stream' })).toMatchObject({ status: 200, failed: false });
    expect(tornDown).toBe(true);
  });

  it('rejects when the surface cannot fold', async () => {
    const unfoldable: EdgeSurface = { ...surface, folder: undefined };
    await expect(respondSettled(of(event('a')), unfoldable, new RecordingSink(), { mode: 'fold' })).rejects.toThrow('cannot fold');
  });
});
