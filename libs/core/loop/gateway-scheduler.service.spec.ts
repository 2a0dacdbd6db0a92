import { Observable, Subject, of, throwError } from 'rxjs';
import type { AnyToolHandler, ExecutionContext, GatewayCall, GatewayEventPlan, GatewayExecutor, ToolOutput } from '#tool-sdk/contract/index.js';
import type { ToolEntry } from '../registry/tool-registry.js';
import { deferred, flush, sleep, until, type Deferred } from '../testing/deferred.js';
import { testConfig } from '../testing/fixtures.js';
import { GatewayScheduler, type ScheduledCall, type ScheduledResult } from './gateway-scheduler.service.js';

type Behaviour = (call: GatewayCall, ctx: ExecutionContext) => Promise<ToolOutput> | Observable<ToolOutput>;

/** Records when each call starts and ends and how many run at once, overall and per tool. */
class RecordingExecutor implements GatewayExecutor<{ tag: string }> {
  readonly type = 'rec';
  readonly started: string[] = [];
  readonly contexts = new Map<string, ExecutionContext>();
  readonly pending = new Map<string, Deferred<ToolOutput>>();
  running = 0;
  peak = 0;
  readonly peakByTool = new Map<string, number>();
  private readonly runningByTool = new Map<string, number>();

  /** Default: each call waits until the test settles it through `pending`. */
  behaviour: Behaviour = (call) => {
    const d = deferred<ToolOutput>();
    this.pending.set(call.callId, d);
    return d.promise;
  };

  execute(call: GatewayCall, _params: { tag: string }, ctx: ExecutionContext): Promise<ToolOutput> | Observable<ToolOutput> {
    this.started.push(call.callId);
    this.contexts.set(call.callId, ctx);
    this.running++;
    this.peak = Math.max(this.peak, this.running);
    const n = (this.runningByTool.get(call.modelName) ?? 0) + 1;
    this.runningByTool.set(call.modelName, n);
    this.peakByTool.set(call.modelName, Math.max(this.peakByTool.get(call.modelName) ?? 0, n));
    const end = () => {
      this.running--;
      this.runningByTool.set(call.modelName, this.runningByTool.get(call.modelName)! - 1);
    };
    const produced = this.behaviour(call, ctx);
    if (produced instanceof Promise) {
      produced.then(end, end);
      return produced;
    }
    return new Observable<ToolOutput>((sub) => {
      const inner = produced.subscribe(sub);
      return () => {
        end();
        inner.unsubscribe();
      };
    });
  }

  finish(callId: string, text = `done ${callId}`): void {
    this.pending.get(callId)!.resolve({ text });
  }

  planEvents(): GatewayEventPlan {
    return { startedItem: { type: 'rec_call' }, beforeExecute: [], afterExecute: () => [] };
  }

  publicOutput() {
    return { type: 'rec_call' };
  }
}

const handler: AnyToolHandler = { type: 'rec', gatewayOwned: true, validate: () => ({}), normalize: () => [] };

function entry(modelName: string, executor: RecordingExecutor | null, options: { parallel?: boolean; timeoutMs?: number } = {}): ToolEntry {
  return {
    modelName,
    toolType: 'rec',
    toolName: modelName,
    ownership: executor
      ? { kind: 'gateway', binding: { executor, params: { tag: modelName }, parallelSafe: options.parallel ?? false, timeoutMs: options.timeoutMs ?? 5_000 } }
      : { kind: 'gateway' },
    handler,
    declarationIndex: 0,
    offered: true,
  };
}

function call(callId: string, modelName: string): GatewayCall {
  return { callId, itemId: `item_${callId}`, modelName, toolName: modelName, arguments: '{}' };
}

/**
 * Runs calls through the scheduler's operator and collects the results as
 * they arrive: `submit` feeds the source, `close` completes it, `cancel`
 * unsubscribes (the only way to stop the calls), `done` settles on either.
 */
function open(window: number) {
  const scheduler = new GatewayScheduler(testConfig({ tools: { maxConcurrentGatewayCalls: 7 } }));
  const source = new Subject<ScheduledCall>();
  const results: ScheduledResult[] = [];
  let completed = false;
  let settle!: () => void;
  const done = new Promise<void>((resolve) => (settle = resolve));
  const subscription = source.pipe(scheduler.schedule({ requestId: 'resp_sched', include: ['x.y'], window })).subscribe({
    next: (r) => results.push(r),
    complete: () => {
      completed = true;
      settle();
    },
  });
  const execution = {
    close: () => source.complete(),
    cancel: () => {
      subscription.unsubscribe();
      settle();
    },
    done,
  };
  let slot = 0;
  const submit = (callId: string, e: ToolEntry) => source.next({ slot: slot++, call: call(callId, e.modelName), entry: e });
  const byCall = (callId: string) => results.find((r) => r.result.call.callId === callId)?.result;
  return { execution, results, submit, byCall, isCompleted: () => completed };
}

describe('GatewayScheduler (the operator)', () => {
  it('takes its window from the configuration unless the schedule sets one', async () => {
    const scheduler = new GatewayScheduler(testConfig({ tools: { maxConcurrentGatewayCalls: 7 } }));
    expect(scheduler.window).toBe(7);
    const exec = new RecordingExecutor();
    const source = new Subject<ScheduledCall>();
    const subscription = source.pipe(scheduler.schedule({ requestId: 'r', include: [] })).subscribe();
    for (let i = 0; i < 9; i++) source.next({ slot: i, call: call(`w${i}`, `tool_${i}`), entry: entry(`tool_${i}`, exec) });
    await flush();
    expect(exec.started).toHaveLength(7);
    // Left open, the seven calls would wait out their deadlines after the test: unsubscribing stops them.
    subscription.unsubscribe();
    expect(exec.started.map((id) => exec.contexts.get(id)!.signal.aborted)).toEqual(Array(7).fill(true));
  });

  it('runs at most `window` calls at once and starts the next as one finishes', async () => {
    const exec = new RecordingExecutor();
    const { execution, submit, results, isCompleted } = open(2);
    for (const id of ['c1', 'c2', 'c3', 'c4', 'c5']) submit(id, entry(`tool_${id}`, exec));
    execution.close();
    await flush();
    expect(exec.started).toEqual(['c1', 'c2']);

    exec.finish('c2');
    await flush();
    expect(exec.started).toEqual(['c1', 'c2', 'c3']);
    exec.finish('c1');
    exec.finish('c3');
    await flush();
    exec.finish('c4');
    exec.finish('c5');
    await execution.done;

    expect(exec.peak).toBe(2);
    expect(isCompleted()).toBe(true);
    // Completion order, each result tagged with its slot in model order.
    expect(results.map((r) => r.slot)).toEqual([1, 0, 2, 3, 4]);
    expect(results.every((r) => r.result.status === 'completed')).toBe(true);
  });

  it('serializes calls to one tool without holding a window slot for the waiting call', async () => {
    const exec = new RecordingExecutor();
    const { execution, submit } = open(2);
    const a = entry('tool_a', exec);
    submit('a1', a);
    submit('a2', a);
    submit('b1', entry('tool_b', exec));
    execution.close();
    await flush();
    // b1 runs next to a1; a2 waits for a1 rather than for a slot.
    expect(exec.started).toEqual(['a1', 'b1']);

    exec.finish('a1');
    await flush();
    expect(exec.started).toEqual(['a1', 'b1', 'a2']);
    exec.finish('a2');
    exec.finish('b1');
    await execution.done;
    expect(exec.peakByTool.get('tool_a')).toBe(1);
    expect(exec.peak).toBe(2);
  });

  it('lets another tool overtake a queued same-tool call when the window is full', async () => {
    const exec = new RecordingExecutor();
    const { execution, submit } = open(1);
    const a = entry('tool_a', exec);
    submit('a1', a);
    submit('a2', a);
    submit('b1', entry('tool_b', exec));
    execution.close();
    await flush();
    expect(exec.started).toEqual(['a1']);
    exec.finish('a1');
    await flush();
    expect(exec.started).toEqual(['a1', 'b1']);
    exec.finish('b1');
    await flush();
    exec.finish('a2');
    await execution.done;
    expect(exec.started).toEqual(['a1', 'b1', 'a2']);
    expect(exec.peak).toBe(1);
  });

  it('overlaps calls to one tool when its executor declares that safe', async () => {
    const exec = new RecordingExecutor();
    const { execution, submit } = open(4);
    const p = entry('tool_p', exec, { parallel: true });
    submit('p1', p);
    submit('p2', p);
    submit('p3', p);
    execution.close();
    await flush();
    expect(exec.started).toEqual(['p1', 'p2', 'p3']);
    expect(exec.peakByTool.get('tool_p')).toBe(3);
    for (const id of ['p1', 'p2', 'p3']) exec.finish(id);
    await execution.done;
  });

  it('passes request id, include and a deadline to the executor', async () => {
    const exec = new RecordingExecutor();
    exec.behaviour = async () => ({ text: 'ok' });
    const { execution, submit } = open(2);
    const before = Date.now();
    submit('c1', entry('tool', exec, { timeoutMs: 1_000 }));
    execution.close();
    await execution.done;
    const ctx = exec.contexts.get('c1')!;
    expect(ctx.requestId).toBe('resp_sched');
    expect(ctx.include).toEqual(['x.y']);
    expect(ctx.deadline).toBeGreaterThanOrEqual(before + 1_000);
    expect(ctx.deadline).toBeLessThanOrEqual(Date.now() + 1_000);
    expect(ctx.signal.aborted).toBe(false);
  });

  it("turns a timeout into that call's failed result and aborts its signal; siblings are unaffected", async () => {
    const exec = new RecordingExecutor();
    const { execution, submit, byCall } = open(3);
    submit('slow', entry('tool_slow', exec, { timeoutMs: 25 }));
    submit('fast', entry('tool_fast', exec, { timeoutMs: 5_000 }));
    execution.close();
    await flush();
    exec.finish('fast', 'fast result');
    await execution.done;

    const slow = byCall('slow')!;
    expect(slow.status).toBe('failed');
    expect(slow.error).toEqual({ code: 'tool_timeout', message: expect.stringContaining('25 ms') });
    expect(slow.output.isError).toBe(true);
    expect(JSON.parse(slow.output.text)).toEqual({ error: { code: 'tool_timeout', message: slow.error!.message } });
    expect(exec.contexts.get('slow')!.signal.aborted).toBe(true);
    expect(byCall('fast')).toMatchObject({ status: 'completed', output: { text: 'fast result' } });
    expect(exec.contexts.get('fast')!.signal.aborted).toBe(false);
  });

  it('ignores output that arrives after the deadline', async () => {
    const exec = new RecordingExecutor();
    const { execution, submit, results } = open(1);
    submit('late', entry('tool', exec, { timeoutMs: 10 }));
    execution.close();
    await execution.done;
    exec.finish('late', 'too late');
    await flush();
    expect(results).toHaveLength(1);
    expect(results[0].result.error?.code).toBe('tool_timeout');
  });

  it('starts the deadline when the call starts, not while it waits behind its tool', async () => {
    const exec = new RecordingExecutor();
    exec.behaviour = (c) => sleep(c.callId === 'first' ? 60 : 5).then(() => ({ text: c.callId }));
    const { execution, submit, byCall } = open(2);
    const tool = entry('tool', exec, { timeoutMs: 40 });
    // `first` itself times out at 40 ms; `second` waits for it, then needs only 5 ms of its own 40.
    submit('first', tool);
    submit('second', tool);
    execution.close();
    await execution.done;
    expect(byCall('first')?.error?.code).toBe('tool_timeout');
    expect(byCall('second')).toMatchObject({ status: 'completed', output: { text: 'second' } });
  });

  it('isolates failures: thrown, rejected, erroring, empty and isError calls fail alone', async () => {
    const exec = new RecordingExecutor();
    exec.behaviour = (c) => {
      switch (c.callId) {
        case 'throws':
          throw new Error('sync boom');
        case 'rejects':
          return Promise.reject(new Error('async boom'));
        case 'rejects_non_error':
          return Promise.reject('plain string');
        case 'errors':
          return new Observable<ToolOutput>((sub) => sub.error(new Error('stream boom')));
        case 'empty':
          return new Observable<ToolOutput>((sub) => sub.complete());
        case 'tool_says_no':
          return Promise.resolve({ text: 'quota exceeded', isError: true });
        default:
          return Promise.resolve({ text: `ok ${c.callId}` });
      }
    };
    const { execution, submit, byCall, results } = open(10);
    const ids = ['throws', 'ok1', 'rejects', 'rejects_non_error', 'errors', 'empty', 'tool_says_no', 'ok2'];
    for (const id of ids) submit(id, entry(`tool_${id}`, exec));
    execution.close();
    await execution.done;

    expect(results).toHaveLength(ids.length);
    expect(byCall('throws')).toMatchObject({ status: 'failed', error: { code: 'tool_error', message: 'sync boom' } });
    expect(byCall('rejects')).toMatchObject({ status: 'failed', error: { code: 'tool_error', message: 'async boom' } });
    expect(byCall('rejects_non_error')).toMatchObject({ status: 'failed', error: { code: 'tool_error', message: 'plain string' } });
    expect(byCall('errors')).toMatchObject({ status: 'failed', error: { code: 'tool_error', message: 'stream boom' } });
    expect(byCall('empty')).toMatchObject({ status: 'failed', error: { code: 'tool_error' } });
    expect(byCall('tool_says_no')).toMatchObject({ status: 'failed', output: { text: 'quota exceeded', isError: true }, error: { code: 'tool_error' } });
    for (const failed of ['throws', 'rejects', 'errors', 'empty']) {
      expect(JSON.parse(byCall(failed)!.output.text).error.code).toBe('tool_error');
    }
    expect(byCall('ok1')).toMatchObject({ status: 'completed', output: { text: 'ok ok1' } });
    expect(byCall('ok2')).toMatchObject({ status: 'completed', output: { text: 'ok ok2' } });
  });

  it('releases a tool for its next call after a failure', async () => {
    const exec = new RecordingExecutor();
    exec.behaviour = (c) => (c.callId === 'a1' ? Promise.reject(new Error('no')) : Promise.resolve({ text: 'fine' }));
    const { execution, submit, byCall } = open(2);
    const a = entry('tool_a', exec);
    submit('a1', a);
    submit('a2', a);
    execution.close();
    await execution.done;
    expect(byCall('a1')?.status).toBe('failed');
    expect(byCall('a2')?.status).toBe('completed');
  });

  it('accepts Observable executors and takes their first value', async () => {
    const exec = new RecordingExecutor();
    let torndown = false;
    exec.behaviour = (c) =>
      c.callId === 'sync'
        ? of({ text: 'synchronous' })
        : new Observable<ToolOutput>((sub) => {
            sub.next({ text: 'first' });
            sub.next({ text: 'second' });
            return () => (torndown = true);
          });
    const { execution, submit, byCall } = open(1);
    submit('obs', entry('tool', exec));
    submit('sync', entry('tool_sync', exec));
    execution.close();
    await execution.done;
    expect(byCall('obs')).toMatchObject({ status: 'completed', output: { text: 'first' } });
    expect(byCall('sync')).toMatchObject({ status: 'completed', output: { text: 'synchronous' } });
    expect(torndown).toBe(true);
  });

  it('unsubscribing stops Observable executors, aborts in-flight signals and never starts queued calls', async () => {
    const exec = new RecordingExecutor();
    const torndown: string[] = [];
    exec.behaviour = (c) => new Observable<ToolOutput>(() => () => torndown.push(c.callId));
    const { execution, submit, results, isCompleted } = open(2);
    const a = entry('tool_a', exec);
    submit('a1', a);
    submit('b1', entry('tool_b', exec));
    submit('a2', a); // waits for a1
    submit('c1', entry('tool_c', exec)); // waits for a slot
    await flush();
    expect(exec.started).toEqual(['a1', 'b1']);

    execution.cancel();
    await execution.done;
    await flush();

    expect(torndown.sort()).toEqual(['a1', 'b1']);
    expect(exec.contexts.get('a1')!.signal.aborted).toBe(true);
    expect(exec.contexts.get('b1')!.signal.aborted).toBe(true);
    expect(exec.started).toEqual(['a1', 'b1']);
    expect(results).toHaveLength(0);
    expect(isCompleted()).toBe(false);
  });

  it('unsubscribing aborts promise-based executors too', async () => {
    const exec = new RecordingExecutor();
    const { execution, submit } = open(2);
    submit('p1', entry('tool', exec));
    await flush();
    execution.cancel();
    await until(() => exec.contexts.get('p1')!.signal.aborted);
    expect(exec.contexts.get('p1')!.signal.reason).toBeInstanceOf(Error);
  });

  it('fails a call to a gateway type without executor with tool_not_available', async () => {
    const exec = new RecordingExecutor();
    exec.behaviour = async () => ({ text: 'ran' });
    const { execution, submit, byCall } = open(2);
    submit('unbound', entry('file_search', null));
    submit('bound', entry('tool', exec));
    execution.close();
    await execution.done;
    expect(byCall('unbound')).toMatchObject({ status: 'failed', error: { code: 'tool_not_available' }, output: { isError: true } });
    expect(JSON.parse(byCall('unbound')!.output.text).error.code).toBe('tool_not_available');
    expect(byCall('bound')?.status).toBe('completed');
    expect(exec.started).toEqual(['bound']);
  });

  it('is done at once when closed with nothing submitted', async () => {
    const { execution, isCompleted } = open(2);
    execution.close();
    await execution.done;
    expect(isCompleted()).toBe(true);
  });

  it('is not done until every submitted call has finished', async () => {
    const exec = new RecordingExecutor();
    const { execution, submit } = open(2);
    submit('c1', entry('tool', exec));
    execution.close();
    let done = false;
    void execution.done.then(() => (done = true));
    await flush();
    expect(done).toBe(false);
    exec.finish('c1');
    await execution.done;
    expect(done).toBe(true);
  });

  it('tells its observer of a call as it starts, not while it waits for a window slot or its tool', async () => {
    const scheduler = new GatewayScheduler(testConfig({ tools: { maxConcurrentGatewayCalls: 7 } }));
    const exec = new RecordingExecutor();
    const observed: string[] = [];
    const source = new Subject<ScheduledCall>();
    source.pipe(scheduler.schedule({ requestId: 'r', include: [], window: 1, onCall: (c) => void observed.push(c.callId) })).subscribe();
    source.next({ slot: 0, call: call('w1', 'tool_a'), entry: entry('tool_a', exec) });
    source.next({ slot: 1, call: call('w2', 'tool_b'), entry: entry('tool_b', exec) });
    source.complete();
    await flush();
    expect(observed).toEqual(['w1']);
    exec.finish('w1');
    await until(() => exec.started.length === 2);
    expect(observed).toEqual(['w1', 'w2']);
    exec.finish('w2');
  });

  it('runs calls a source sends while it is being subscribed, queued per tool, and completes after them', async () => {
    const scheduler = new GatewayScheduler(testConfig({ tools: { maxConcurrentGatewayCalls: 7 } }));
    const exec = new RecordingExecutor();
    const busy = entry('busy', exec);
    const results: string[] = [];
    let completed = false;
    const calls = of({ slot: 0, call: call('s1', 'busy'), entry: busy }, { slot: 1, call: call('s2', 'busy'), entry: busy });
    calls.pipe(scheduler.schedule({ requestId: 'r', include: [] })).subscribe({
      next: (r) => results.push(r.result.call.callId),
      complete: () => (completed = true),
    });
    await flush();
    expect(exec.started).toEqual(['s1']);
    exec.finish('s1');
    await until(() => exec.started.length === 2);
    expect(completed).toBe(false);
    exec.finish('s2');
    await until(() => completed);
    expect(results).toEqual(['s1', 's2']);
  });
});

/** A public event among the calls: the values `scheduleAmong` passes on. */
interface Shown {
  readonly type: string;
}

describe('GatewayScheduler.scheduleAmong (calls among public events)', () => {
  /** Feeds events and calls in one stream; each result becomes `finish:<callId>`, or what `finish` makes of it. */
  function among(finish: (result: ScheduledResult) => Shown[] = (r) => [{ type: `finish:${r.result.call.callId}` }]) {
    const scheduler = new GatewayScheduler(testConfig({ tools: { maxConcurrentGatewayCalls: 7 } }));
    const source = new Subject<Shown | ScheduledCall>();
    const seen: string[] = [];
    let slot = 0;
    const subscription = source.pipe(scheduler.scheduleAmong<Shown, Shown>({ requestId: 'r', include: [] }, finish)).subscribe({
      next: (value) => seen.push(value.type),
      error: (err: Error) => seen.push(`error:${err.message}`),
      complete: () => seen.push('complete'),
    });
    const event = (type: string) => source.next({ type });
    const submit = (callId: string, e: ToolEntry) => source.next({ slot: slot++, call: call(callId, e.modelName), entry: e });
    return { source, seen, subscription, event, submit };
  }

  it('passes events on in their place, a synchronous call finishing at once, a later one after the events that came before it', async () => {
    const exec = new RecordingExecutor();
    exec.behaviour = (c) => {
      if (c.callId !== 'slow') return of({ text: 'now' });
      const d = deferred<ToolOutput>();
      exec.pending.set(c.callId, d);
      return d.promise;
    };
    const { source, seen, event, submit } = among();
    const tool = entry('tool', exec, { parallel: true });
    event('e1');
    submit('sync', tool);
    event('e2');
    submit('slow', tool);
    event('e3');
    source.complete();
    expect(seen).toEqual(['e1', 'finish:sync', 'e2', 'e3']);
    exec.finish('slow');
    await until(() => seen.includes('complete'));
    expect(seen).toEqual(['e1', 'finish:sync', 'e2', 'e3', 'finish:slow', 'complete']);
  });

  it('hands on every value `finish` makes of a result, in order, and nothing for a result that makes none', async () => {
    const exec = new RecordingExecutor();
    const { source, seen, submit } = among((r) => (r.slot === 0 ? [] : [{ type: `a:${r.result.call.callId}` }, { type: `b:${r.result.call.callId}` }]));
    submit('c0', entry('t0', exec));
    submit('c1', entry('t1', exec));
    source.complete();
    await flush();
    exec.finish('c0');
    await flush();
    expect(seen).toEqual([]);
    exec.finish('c1');
    await until(() => seen.includes('complete'));
    expect(seen).toEqual(['a:c1', 'b:c1', 'complete']);
  });

  it('completes with its source when no call came, without opening a window', () => {
    const { source, seen, event } = among();
    event('e1');
    source.complete();
    expect(seen).toEqual(['e1', 'complete']);
  });

  it('unsubscribing stops every call in flight and passes nothing more on', async () => {
    const exec = new RecordingExecutor();
    const { seen, event, submit, subscription } = among();
    submit('a', entry('ta', exec));
    submit('b', entry('tb', exec));
    event('e1');
    await flush();
    subscription.unsubscribe();
    expect(['a', 'b'].map((id) => exec.contexts.get(id)!.signal.aborted)).toEqual([true, true]);
    event('e2');
    expect(seen).toEqual(['e1']);
  });

  it("fails with its source's error, stopping the calls in flight", async () => {
    const exec = new RecordingExecutor();
    const { source, seen, submit } = among();
    submit('a', entry('ta', exec));
    await flush();
    source.error(new Error('upstream gone'));
    expect(seen).toEqual(['error:upstream gone']);
    expect(exec.contexts.get('a')!.signal.aborted).toBe(true);
  });

  it('fails when `finish` throws, stopping the other calls in flight', async () => {
    const exec = new RecordingExecutor();
    const { seen, submit } = among((r) => {
      if (r.result.call.callId === 'bad') throw new Error('finish failed');
      return [];
    });
    submit('bad', entry('tbad', exec));
    submit('other', entry('tother', exec));
    await flush();
    exec.finish('bad');
    await until(() => seen.length > 0);
    expect(seen).toEqual(['error:finish failed']);
    expect(exec.contexts.get('other')!.signal.aborted).toBe(true);
  });

  it('an executor that fails synchronously still finishes in its place', () => {
    const exec = new RecordingExecutor();
    exec.behaviour = () => throwError(() => new Error('refused'));
    const { source, seen, event, submit } = among((r) => [{ type: `${r.result.status}:${r.result.call.callId}` }]);
    submit('x', entry('tx', exec));
    event('e1');
    source.complete();
    expect(seen).toEqual(['failed:x', 'e1', 'complete']);
  });
});
