import { Inject, Injectable } from '@nestjs/common';
import { Observable, Subject, Subscription, defer, from, isObservable, mergeMap, finalize, take } from 'rxjs';
import { GATEWAY_CONFIG, GatewayConfig } from '#config/gateway-config.js';
import type { GatewayCall, GatewayCallResult, ToolOutput } from '../handlers/tool-handler.interface.js';
import type { ToolEntry } from '../registry/tool-registry.js';
import type { ToolCallTrace } from './run-observer.interface.js';

/** Told when a call starts executing (not while it waits in a queue), for logs, metrics and traces. */
export type CallObserver = (call: GatewayCall, entry: ToolEntry) => ToolCallTrace | undefined;

/** One gateway call waiting for a slot, with its position in model call order. */
export interface ScheduledCall {
  slot: number;
  call: GatewayCall;
  entry: ToolEntry;
}

export interface ScheduledResult {
  slot: number;
  result: GatewayCallResult;
}

/**
 * The gateway scheduler: a sliding window of concurrently running calls
 * (`mergeMap` with a concurrency cap), with calls to one model-visible tool
 * serialized unless its executor declares overlap safe.
 *
 * Serialization happens *before* `mergeMap`: a call whose tool is busy waits
 * in a per-tool queue instead of holding a window slot, so it never blocks a
 * call to another tool that could run.
 */
@Injectable()
export class GatewayScheduler {
  constructor(@Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig) {}

  open(ctx: { requestId: string; include: readonly string[]; window?: number; onCall?: CallObserver }): RoundExecution {
    return new RoundExecution(ctx.window ?? this.config.tools.maxConcurrentGatewayCalls, ctx.requestId, ctx.include, ctx.onCall);
  }
}

export class RoundExecution {
  private readonly ready$ = new Subject<ScheduledCall>();
  private readonly queues = new Map<string, ScheduledCall[]>();
  private readonly busy = new Set<string>();
  private readonly results$ = new Subject<ScheduledResult>();
  private readonly subscription: Subscription;
  private submitted = 0;
  private finished = 0;
  private closed = false;
  private resolveDone!: () => void;
  readonly done: Promise<void>;
  /** Highest number of calls running at once: what the tests and benchmarks observe. */
  peakConcurrency = 0;
  private running = 0;

  constructor(
    readonly window: number,
    private readonly requestId: string,
    private readonly include: readonly string[],
    private readonly onCall?: CallObserver,
  ) {
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    this.subscription = this.ready$
      .pipe(mergeMap((scheduled) => this.runOne(scheduled).pipe(finalize(() => this.release(scheduled))), window))
      .subscribe((result) => this.results$.next(result));
  }

  /** Results in completion order; the caller reorders for public output. */
  get results(): Observable<ScheduledResult> {
    return this.results$.asObservable();
  }

  submit(scheduled: ScheduledCall): void {
    this.submitted++;
    const binding = scheduled.entry.ownership.kind === 'gateway' ? scheduled.entry.ownership.binding : undefined;
    if (binding && !binding.parallelSafe) {
      const key = scheduled.entry.modelName;
      if (this.busy.has(key)) {
        const queue = this.queues.get(key) ?? [];
        queue.push(scheduled);
        this.queues.set(key, queue);
        return;
      }
      this.busy.add(key);
    }
    this.ready$.next(scheduled);
  }

  /** No more calls this round; `done` resolves when every submitted call has finished. */
  close(): void {
    this.closed = true;
    this.checkDone();
  }

  /** Client went away or the round failed: stop everything in flight. */
  cancel(): void {
    this.subscription.unsubscribe();
    this.results$.complete();
    this.resolveDone();
  }

  private release(scheduled: ScheduledCall): void {
    this.running--;
    this.finished++;
    const key = scheduled.entry.modelName;
    const queue = this.queues.get(key);
    if (queue && queue.length > 0) {
      this.ready$.next(queue.shift()!);
    } else {
      this.busy.delete(key);
    }
    this.checkDone();
  }

  private checkDone(): void {
    if (this.closed && this.finished === this.submitted) {
      this.results$.complete();
      this.resolveDone();
    }
  }

  private runOne(scheduled: ScheduledCall): Observable<ScheduledResult> {
    return defer(() => {
      this.running++;
      this.peakConcurrency = Math.max(this.peakConcurrency, this.running);
      return executeWithDeadline(scheduled, this.requestId, this.include, this.onCall?.(scheduled.call, scheduled.entry));
    });
  }
}

function failure(call: GatewayCall, code: string, message: string): GatewayCallResult {
  return {
    call,
    status: 'failed',
    output: { text: JSON.stringify({ error: { code, message } }), isError: true },
    error: { code, message },
  };
}

/**
 * Runs one call under its deadline. The result always arrives: a timeout or
 * exception becomes that call's error output, never its siblings' failure.
 * Unsubscribing (client gone) aborts the executor's signal.
 */
function executeWithDeadline(scheduled: ScheduledCall, requestId: string, include: readonly string[], trace?: ToolCallTrace): Observable<ScheduledResult> {
  const { call, entry, slot } = scheduled;
  return new Observable<ScheduledResult>((subscriber) => {
    const binding = entry.ownership.kind === 'gateway' ? entry.ownership.binding : undefined;
    if (!binding) {
      const result = failure(call, 'tool_not_available', `Tool type "${entry.toolType}" has no executor in this gateway; the call was not run.`);
      trace?.end(result);
      subscriber.next({ slot, result });
      subscriber.complete();
      return;
    }
    const controller = new AbortController();
    let settled = false;
    const settle = (result: GatewayCallResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      trace?.end(result);
      subscriber.next({ slot, result });
      subscriber.complete();
    };
    const timer = setTimeout(() => {
      controller.abort(new Error('deadline exceeded'));
      settle(failure(call, 'tool_timeout', `Tool "${call.toolName}" did not finish within ${binding.timeoutMs} ms.`));
    }, binding.timeoutMs);

    let inner: Subscription | undefined;
    try {
      const produced = binding.executor.execute(call, binding.params, {
        signal: controller.signal,
        deadline: Date.now() + binding.timeoutMs,
        requestId,
        include,
      });
      const source: Observable<ToolOutput> = isObservable(produced) ? produced : from(produced);
      inner = source.pipe(take(1)).subscribe({
        next: (output) =>
          settle({
            call,
            status: output.isError ? 'failed' : 'completed',
            output,
            ...(output.isError ? { error: { code: 'tool_error', message: output.text } } : {}),
          }),
        error: (err: unknown) => settle(failure(call, 'tool_error', err instanceof Error ? err.message : String(err))),
        complete: () => settle(failure(call, 'tool_error', `Tool "${call.toolName}" returned no output.`)),
      });
    } catch (err) {
      settle(failure(call, 'tool_error', err instanceof Error ? err.message : String(err)));
    }
    return () => {
      clearTimeout(timer);
      inner?.unsubscribe();
      if (!settled) {
        controller.abort(new Error('cancelled'));
        trace?.end(null);
      }
    };
  });
}
