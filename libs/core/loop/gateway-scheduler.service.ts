import { Inject, Injectable } from '@nestjs/common';
import { Observable, type Observer, Subject, type OperatorFunction, from, isObservable, mergeMap, finalize, take } from 'rxjs';
import { GATEWAY_CONFIG, GatewayConfig } from '#config/gateway-config.js';
import type { GatewayCall, GatewayCallResult, ToolOutput, ToolRequestContext } from '#tool-sdk/contract/index.js';
import { RequestToolContext } from '#tool-sdk/request-local.js';
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

export interface ScheduleOptions {
  requestId: string;
  /** The request's context for its tool types (`ExecutionContext.request`); one is made from `requestId` when absent. */
  request?: ToolRequestContext;
  include: readonly string[];
  /** Calls running at once; `tools.maxConcurrentGatewayCalls` unless set. */
  window?: number;
  onCall?: CallObserver;
}

/**
 * The gateway scheduler: an operator from calls to their results, a sliding
 * window of concurrently running calls (`mergeMap(execute, window)`), with
 * calls to one model-visible tool serialized unless its executor declares
 * overlap safe. Results come in completion order, each tagged with its slot.
 *
 * Serialization happens *before* `mergeMap`: a call whose tool is busy waits
 * in a per-tool queue instead of holding a window slot, so it never blocks a
 * call to another tool that could run. Unsubscribing stops every call in
 * flight (their signals abort) and starts none of the queued ones.
 */
@Injectable()
export class GatewayScheduler {
  constructor(@Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig) {}

  /** The window a schedule without its own runs with. */
  get window(): number {
    return this.config.tools.maxConcurrentGatewayCalls;
  }

  schedule(options: ScheduleOptions): OperatorFunction<ScheduledCall, ScheduledResult> {
    return scheduleCalls<never, ScheduledResult>({ ...options, window: options.window ?? this.window }, (result) => [result]);
  }

  /**
   * The schedule for a stream of calls among other values (a round's public
   * events): those pass on as they come, each call runs as above, and each
   * result becomes the values `finish` makes of it (none, until a result
   * makes a finish due). One operator where a split of the stream
   * (`connect` + `merge` + two `filter`s) and a `mergeMap` over each
   * result's values took 11 more subscriptions per round and about three
   * more hops per value (bench/README.md, "Why some pieces are
   * hand-written", `round-calls.bench.ts`).
   */
  scheduleAmong<T extends Passing, R>(options: ScheduleOptions, finish: (result: ScheduledResult) => readonly R[]): OperatorFunction<T | ScheduledCall, T | R> {
    return scheduleCalls({ ...options, window: options.window ?? this.window }, finish);
  }
}

/** A value a schedule passes on rather than runs: it has a `type`, which a call never has. */
export interface Passing {
  readonly type: string;
}

/**
 * A call for the scheduler, not a value it passes on. Asked of every
 * streamed event: one property read, where `'slot' in value` went through
 * V8's megamorphic `in` for the events' many shapes.
 */
export function isScheduled(value: ScheduledCall | Passing): value is ScheduledCall {
  return (value as { type?: unknown }).type === undefined;
}

/** Per-tool serialization: which tools are busy, and the calls waiting for each. */
class ToolQueues {
  private readonly waiting = new Map<string, ScheduledCall[]>();
  private readonly busy = new Set<string>();

  /** True when the call may go to the window now; otherwise it waits for its tool. */
  admit(scheduled: ScheduledCall): boolean {
    const binding = scheduled.entry.ownership.kind === 'gateway' ? scheduled.entry.ownership.binding : undefined;
    if (!binding || binding.parallelSafe) return true;
    const key = scheduled.entry.modelName;
    if (!this.busy.has(key)) {
      this.busy.add(key);
      return true;
    }
    this.waiting.set(key, [...(this.waiting.get(key) ?? []), scheduled]);
    return false;
  }

  /** The tool's next call, if one waits; otherwise the tool is free again. */
  release(scheduled: ScheduledCall): ScheduledCall | undefined {
    const key = scheduled.entry.modelName;
    const next = this.waiting.get(key)?.shift();
    if (!next) this.busy.delete(key);
    return next;
  }
}

/**
 * Values that are not calls pass through in their order; each result goes
 * out as what `finish` makes of it, synchronously when the executor is.
 * Completes once the source has and every call it sent has finished.
 */
export function scheduleCalls<T extends Passing, R>(
  options: ScheduleOptions & { window: number },
  finish: (result: ScheduledResult) => readonly R[],
): OperatorFunction<T | ScheduledCall, T | R> {
  return (values) =>
    new Observable<T | R>((subscriber) => {
      let submitted = 0;
      let finished = 0;
      let sourceDone = false;
      // Made with the first call: most rounds run none, and a round stays open while the model streams.
      let window: { ready: Subject<ScheduledCall>; queues: ToolQueues } | undefined;
      const maybeComplete = () => {
        if (!sourceDone || finished !== submitted) return;
        if (window) window.ready.complete();
        else subscriber.complete();
      };
      const open = () => {
        const request = options.request ?? new RequestToolContext(options.requestId, null);
        const ready = new Subject<ScheduledCall>();
        const queues = new ToolQueues();
        const results: Observer<ScheduledResult> = {
          next: (result) => {
            let made: readonly R[];
            try {
              made = finish(result);
            } catch (err) {
              return subscriber.error(err);
            }
            for (const value of made) subscriber.next(value);
          },
          error: (err: unknown) => subscriber.error(err),
          complete: () => subscriber.complete(),
        };
        // Added to the subscriber, so its teardown stops every call in flight.
        const running = ready
          .pipe(
            // `mergeMap` calls this only once a slot is free (a call over the window waits as a value), so the
            // observer hears of a call as it starts, without a `defer` around it.
            mergeMap(
              (scheduled) =>
                executeWithDeadline(scheduled, request, options.include, options.onCall?.(scheduled.call, scheduled.entry)).pipe(
                  finalize(() => {
                    finished++;
                    const next = queues.release(scheduled);
                    if (next) ready.next(next);
                    else maybeComplete();
                  }),
                ),
              options.window,
            ),
          )
          .subscribe(results);
        subscriber.add(running);
        return { ready, queues };
      };
      return values.subscribe({
        next: (value) => {
          if (!isScheduled(value)) return subscriber.next(value);
          const scheduled = value;
          submitted++;
          window ??= open();
          if (window.queues.admit(scheduled)) window.ready.next(scheduled);
        },
        error: (err: unknown) => subscriber.error(err),
        complete: () => {
          sourceDone = true;
          maybeComplete();
        },
      });
    });
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
 * Unsubscribing (client gone) aborts the executor's signal: the signal is
 * derived here, at the edge of the call, and nowhere else.
 */
function executeWithDeadline(scheduled: ScheduledCall, request: ToolRequestContext, include: readonly string[], trace?: ToolCallTrace): Observable<ScheduledResult> {
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

    let inner: { unsubscribe(): void } | undefined;
    try {
      const produced = binding.executor.execute(call, binding.params, {
        request,
        signal: controller.signal,
        abort: (reason) => controller.abort(reason),
        deadline: Date.now() + binding.timeoutMs,
        requestId: request.requestId,
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
