import { Inject, Injectable, Optional } from '@nestjs/common';
import { Observable, catchError, defer, ignoreElements, throwError } from 'rxjs';
import { GATEWAY_CONFIG, GatewayConfig } from '#config/gateway-config.js';
import { UPSTREAM_CLIENT, type UpstreamClient } from '../upstream/upstream-client.interface.js';
import { InvalidRequestError, conversationNotFound, previousResponseNotFound } from '#tool-sdk/errors.js';
import { ToolHandlerExplorer } from '../handlers/tool-handler.explorer.js';
import { emptyUsage, type ModelItem, type Usage } from '#tool-sdk/items.js';
import type { FlowGate } from '../protocol/flow-gate.js';
import { ToolPreparationService } from '../registry/tool-preparation.service.js';
import { newId } from '#tool-sdk/ids.js';
import { abortable } from './abortable.js';
import type { Cancellation } from '../protocol/cancellation.js';
import { admissionCost } from './admission-cost.js';
import { answerApprovals$ } from './approvals.js';
import { GatewayScheduler } from './gateway-scheduler.service.js';
import { LoopDecision } from './loop-decision.js';
import { ModelContextService } from './model-context.service.js';
import type { ResponseStreamEvent } from './response-events.js';
import type { PriorState, ResponseRequest } from './response-request.js';
import { REASONING_SEALER, type ReasoningSealer } from './reasoning-sealer.interface.js';
import { RESPONSE_STATE, type ResponseStateStore } from './response-state.interface.js';
import { MESSAGE_FILES, type MessageFiles } from '#tool-sdk/ports/message-files.interface.js';
import { withRoundUsage } from './round-usage.trace.js';
import { REQUEST_LIMITER, type RequestLease, type RequestLimiter } from './request-limiter.interface.js';
import { round$ } from './round.js';
import { afterLast } from './run-operators.js';
import { effectiveRequest, prepareRun, type PreparedRun, type RunContext, type RunEdge, type RunServices } from './run-context.js';
import { RUN_OBSERVER, type RunObserver } from './run-observer.interface.js';
import { RunOutput } from './run-output.js';
import { decide, initialState, type RunState, type RunStep } from './run-state.js';

/** Used when no state module is installed: nothing persists, so nothing can be continued. */
export class StatelessResponseState implements ResponseStateStore {
  async load(request: ResponseRequest) {
    if (request.previousResponseId) throw previousResponseNotFound(request.previousResponseId);
    if (request.conversationId) throw conversationNotFound(request.conversationId);
    return null;
  }

  async save(): Promise<void> {}
}

export const TERMINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed']);

export interface RunOptions {
  state?: ResponseStateStore;
  /** Streaming runs: lets a slow client hold back the upstream read. */
  flow?: FlowGate;
}

/**
 * Runs requests through the tool loop, and is the one place to read a run
 * top to bottom. The result is a cold Observable of public events:
 * subscribing starts the run, unsubscribing (client gone) cancels it, and
 * that is the only way anything in a run is cancelled.
 *
 *   run        admission (the owner's limits), then
 *   execute    the edge: events out, keep-alive, the trace, cancellation in
 *   drive      the effective request, then tools prepared into a `RunContext`
 *              (fixed from here on), then
 *   turn       approvals answered, then rounds, each started from the end of
 *              the last while the `LoopDecision` is `Continue`, each round a pure step from one
 *              `RunState` to the next (`round.ts`, `run-state.ts`), then the
 *              state saved and the terminal event sent.
 *
 * In blocking mode errors propagate to the caller (an HTTP error); in
 * streaming mode, once the stream has started, they end it with `response.failed`.
 */
@Injectable()
export class LoopService {
  private readonly state: ResponseStateStore;
  private readonly services: RunServices;

  constructor(
    @Inject(UPSTREAM_CLIENT) upstream: UpstreamClient,
    preparation: ToolPreparationService,
    scheduler: GatewayScheduler,
    explorer: ToolHandlerExplorer,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Optional() @Inject(RESPONSE_STATE) state?: ResponseStateStore,
    @Optional() contexts?: ModelContextService,
    @Optional() @Inject(REQUEST_LIMITER) private readonly limiter?: RequestLimiter | null,
    @Optional() @Inject(RUN_OBSERVER) private readonly observer?: RunObserver,
    @Optional() @Inject(REASONING_SEALER) reasoning?: ReasoningSealer,
    @Optional() @Inject(MESSAGE_FILES) messageFiles?: MessageFiles,
  ) {
    this.state = state ?? new StatelessResponseState();
    this.services = { upstream, preparation, scheduler, explorer, config, contexts, reasoning, messageFiles };
  }

  run(request: ResponseRequest, options: RunOptions = {}): Observable<ResponseStreamEvent> {
    const limiter = this.limiter;
    if (!limiter) return this.execute(request, options);
    // Admission comes first: a request past its owner's limits, or whose own
    // estimated cost does not fit the token budget left, never starts; its
    // place (and reservation) is held until the run ends however it ends.
    return new Observable<ResponseStreamEvent>((subscriber) => {
      let lease: RequestLease | undefined;
      let usage: Usage | null = null;
      let inner: { unsubscribe(): void } | undefined;
      let closed = false;
      limiter.acquire(request.owner, admissionCost(request)).then(
        (acquired) => {
          lease = acquired;
          if (closed) return lease.release(null);
          // The rounds' usage as the run goes, so a run cancelled midway is charged what it used.
          const budget = acquired.check ? (spent: Usage) => acquired.check!(spent) : undefined;
          inner = this.execute(request, options, (spent) => (usage = spent), budget).subscribe({
            next: (event) => {
              if (TERMINAL_EVENTS.has(event.type)) usage = ((event.response as { usage?: Usage } | undefined)?.usage ?? usage) as Usage | null;
              subscriber.next(event);
            },
            error: (err: unknown) => {
              lease?.release(usage);
              subscriber.error(err);
            },
            complete: () => {
              lease?.release(usage);
              subscriber.complete();
            },
          });
        },
        (err: unknown) => subscriber.error(err),
      );
      return () => {
        closed = true;
        inner?.unsubscribe();
        lease?.release(usage);
      };
    });
  }

  /** The edge of a run: where its events leave, its trace begins and ends, and unsubscription comes in. */
  private execute(request: ResponseRequest, options: RunOptions, spent?: (usage: Usage) => void, budget?: (spent: Usage) => Promise<void>): Observable<ResponseStreamEvent> {
    return new Observable<ResponseStreamEvent>((subscriber) => {
      const id = request.responseId ?? newId('resp');
      const trace = withRoundUsage(this.observer?.begin(request, id), spent);
      let abandoned = false;
      // How the run settled, known before the subscriber hears it; the trace ends once the run's own teardowns ran.
      let outcome: { error?: unknown; cancelled?: boolean } | undefined;
      let keepAlive: NodeJS.Timeout | undefined;
      const output = new RunOutput(id, request.createdAt ?? Math.floor(Date.now() / 1000), request, (event) => {
        // Once the stream has started the timer has nothing left to do: an open stream need not hold it.
        if (keepAlive !== undefined && output.hasStarted) {
          clearTimeout(keepAlive);
          keepAlive = undefined;
        }
        trace?.event(event);
        subscriber.next(event);
      });
      const edge: RunEdge = { services: this.services, id, state: options.state ?? this.state, output, flow: options.flow, trace, abandoned: () => abandoned, budget };
      // A stream says it started before the first output, so a slow tool preparation still sees bytes.
      keepAlive = request.stream ? setTimeout(() => output.ensureStarted(), this.config.server.keepAliveMs) : undefined;
      const run = this.drive(edge, request, spent).subscribe({
        complete: () => {
          clearTimeout(keepAlive);
          outcome = { cancelled: false };
          trace?.end(outcome);
          subscriber.complete();
        },
        // A step that fails while it subscribes tears down after this handler runs: the error is
        // passed on a microtask later, once every step let go of what it held.
        error: (err: unknown) => {
          clearTimeout(keepAlive);
          outcome = { error: err };
          queueMicrotask(() => {
            trace?.end({ error: err });
            subscriber.error(err);
          });
        },
      });
      return () => {
        clearTimeout(keepAlive);
        if (outcome) return;
        abandoned = true;
        run.unsubscribe();
        trace?.end({ cancelled: true });
      };
    });
  }

  /** The request made effective, the tools prepared, then the turn; a streaming run that fails after it started ends `failed`. */
  private drive(edge: RunEdge, received: ResponseRequest, spent?: (usage: Usage) => void): Observable<never> {
    let usage = emptyUsage();
    // One step from the received request to the prepared run; leaving during it aborts the preparation.
    const prepare = async (cancel: Cancellation) => {
      const { request, prior } = await effectiveRequest(edge, received);
      edge.output.describe(request);
      return prepareRun(edge, request, prior, cancel);
    };
    return abortable(prepare).pipe(
      afterLast((prepared) =>
        this.turn(prepared, (state) => {
          usage = state.usage;
          spent?.(usage);
        }),
      ),
      catchError((err: unknown) => {
        if (!received.stream || !edge.output.hasStarted) return throwError(() => err);
        return defer(() => edge.output.fail(edge.state, err, usage)).pipe(ignoreElements());
      }),
    );
  }

  private turn({ ctx, transcript, approvals }: PreparedRun, advanced: (state: RunState) => void): Observable<never> {
    const { output, registry, request } = ctx;
    output.describe(request, registry.publicTools);
    if (request.generate === false) return this.prepareOnly(ctx, initialState(transcript), approvals.length > 0 ? approvals[0].itemType : null);
    if (registry.discoveryItems.length > 0 || approvals.length > 0) output.ensureStarted();
    for (const item of registry.discoveryItems) output.emitDiscoveryItem(item);

    const maxRounds = this.config.tools.maxRounds;
    // Each state is reported as it is reached: the one the approvals left, then each round's. The
    // next round (or the finish) is subscribed from the end of the last, before its teardown, with
    // the turn's own subscriber: an open stream holds one round's chain, not an `expand` and a `map`
    // around it as well.
    const rounds = (state: RunState): Observable<never> =>
      round$(ctx, state).pipe(
        afterLast((result) => {
          const step = decide(state, result, maxRounds);
          advanced(step.state);
          return step.decision === LoopDecision.Continue ? rounds(step.state) : this.end(ctx, step);
        }),
      );
    return answerApprovals$(ctx, initialState(transcript), approvals).pipe(
      afterLast((state) => {
        advanced(state);
        return rounds(state);
      }),
    );
  }

  /** The turn's last step, finished as what it decided. */
  private end(ctx: RunContext, step: RunStep): Observable<never> {
    return this.finish(ctx, step.state, step.decision === LoopDecision.Incomplete ? 'incomplete' : 'completed', step.incompleteReason);
  }

  /**
   * `generate: false`: the context is prepared (tools discovered, input
   * translated) and saved like any response, and no model is called. The
   * output stays empty, so discovery listings appear on the first generating
   * turn. Approval answers would run tools with nothing to read their results.
   */
  private prepareOnly(ctx: RunContext, state: RunState, approvalItemType: string | null): Observable<never> {
    if (approvalItemType !== null) {
      return throwError(() => new InvalidRequestError(`'generate: false' cannot carry ${approvalItemType} items: approved calls run only on a turn that generates.`, 'generate'));
    }
    return this.finish(ctx, state, 'completed', null);
  }

  /** The turn saved (split where it began), then announced. */
  private finish(ctx: RunContext, state: RunState, status: 'completed' | 'incomplete', incompleteReason: string | null): Observable<never> {
    const { transcript } = state;
    return defer(() =>
      ctx.output.finish(ctx.state, status, incompleteReason, state.usage, {
        modelItems: transcript.slice(ctx.turnStart),
        tools: ctx.registry.continuationTools,
        prior: priorOf(ctx.prior, transcript.slice(0, ctx.turnStart)),
      }),
    ).pipe(ignoreElements());
  }
}

/**
 * The state a turn continued from, with the model items it had when the turn
 * began and nothing left untranslated. A literal rather than a spread grown
 * by its changes (the same cost as in `prepareRun`); the type makes every
 * member of `PriorState` one it must name.
 */
function priorOf(prior: PriorState, modelItems: ModelItem[]): { [K in keyof Required<PriorState>]: PriorState[K] } {
  return {
    modelItems,
    publicItems: prior.publicItems,
    untranslated: undefined,
    tools: prior.tools,
    toolChoice: prior.toolChoice,
    compacted: prior.compacted,
  };
}
