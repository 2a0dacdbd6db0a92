import { Inject, Injectable, Optional } from '@nestjs/common';
import { Observable, type Subscription, from, tap, throwError } from 'rxjs';
import { GATEWAY_CONFIG, GatewayConfig } from '#config/gateway-config.js';
import { UPSTREAM_CLIENT, type UpstreamClient } from '../upstream/upstream-client.interface.js';
import { InvalidRequestError, conversationNotFound, previousResponseNotFound } from '#tool-sdk/errors.js';
import { ToolHandlerExplorer } from '../handlers/tool-handler.explorer.js';
import type { JsonObject, ModelItem, PublicItem, Usage } from '#tool-sdk/items.js';
import type { FlowGate } from '../protocol/flow-gate.js';
import { ToolPreparationService } from '../registry/tool-preparation.service.js';
import { newId } from '#tool-sdk/ids.js';
import { abortable } from './abortable.js';
import { admissionCost } from './admission-cost.js';
import { answerApprovals$, type ApprovalsEnd } from './approvals.js';
import { GatewayScheduler } from './gateway-scheduler.service.js';
import { LoopDecision } from './loop-decision.js';
import { ModelContextService } from './model-context.service.js';
import { UNSTAMPED, wholeItemEvents, type EventInit, type ResponseStreamEvent } from './response-events.js';
import { ResponseOutput, responseEvents } from './response-output.js';
import type { PriorState, ResponseRequest } from './response-request.js';
import { REASONING_SEALER, type ReasoningSealer } from './reasoning-sealer.interface.js';
import { RESPONSE_STATE, type ResponseStateStore } from './response-state.interface.js';
import { MESSAGE_FILES, type MessageFiles } from '#tool-sdk/ports/message-files.interface.js';
import { withRoundUsage } from './round-usage.trace.js';
import { REQUEST_LIMITER, type RequestLease, type RequestLimiter } from './request-limiter.interface.js';
import { round$, type RoundEnd } from './round.js';
import { continueFrom, continueWith, valuesThen } from './run-operators.js';
import { effectiveRequest, prepareRun, type PreparedRun, type RunContext, type RunEdge, type RunServices } from './run-context.js';
import { startEvents, type RunDescribed, type RunFinished, type RunUsage, type RunValue } from './run-values.js';
import { RUN_OBSERVER, type RunObserver } from './run-observer.interface.js';
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
 * subscribing starts the run, unsubscribing (client gone, or a host
 * interceptor letting go) cancels it, and that is the only way anything in a
 * run is cancelled.
 *
 * Every stage is an Observable of the run's values (`run-values.ts`): its
 * public events as they happen, then what it leaves for the next stage.
 *
 *   run        admission (the owner's limits), then
 *   execute    the edge: values numbered into public events, keep-alive and
 *              the terminal snapshot (`responseEvents`), the trace, cancellation in
 *   drive      the effective request, then tools prepared into a `RunContext`
 *              (fixed from here on), then
 *   turn       discovery listings, approvals answered, then
 *   rounds     one round (`round.ts`), decided (`run-state.ts`), then the
 *              next from its end while the `LoopDecision` is `Continue`, else
 *   finish     the turn handed to the edge, which saves it and sends the terminal event.
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
    // A hand-written Observable because it owns a resource, the lease.
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

  /**
   * The edge of a run: its values become numbered public events
   * (`responseEvents`), its trace begins and ends here, and unsubscription
   * comes in. A hand-written Observable because it owns the trace, whose end
   * must know whether the run finished, failed or was left.
   */
  private execute(request: ResponseRequest, options: RunOptions, spent?: (usage: Usage) => void, budget?: (spent: Usage) => Promise<void>): Observable<ResponseStreamEvent> {
    return new Observable<ResponseStreamEvent>((subscriber) => {
      const id = request.responseId ?? newId('resp');
      const trace = withRoundUsage(this.observer?.begin(request, id), spent);
      let abandoned = false;
      let settled = false;
      const state = options.state ?? this.state;
      const edge: RunEdge = { services: this.services, id, state, flow: options.flow, trace, abandoned: () => abandoned, budget };
      const output = new ResponseOutput(id, request.createdAt ?? Math.floor(Date.now() / 1000), request);
      const values = spent ? this.drive(edge, request).pipe(tap((value) => value.type === 'run.usage' && spent((value as RunUsage).usage))) : this.drive(edge, request);
      let run: Subscription | undefined;
      let failure: { err: unknown } | undefined;
      // A failed run is traced once every step let go of what it held (a round's trace
      // ends in its teardown), then the subscriber hears the error.
      const fail = (err: unknown) => {
        run!.unsubscribe();
        trace?.end({ error: err });
        subscriber.error(err);
      };
      run = values.pipe(responseEvents(output, { state, keepAliveMs: request.stream ? this.config.server.keepAliveMs : null, stream: request.stream === true })).subscribe({
        next: (event) => {
          trace?.event(event);
          subscriber.next(event);
        },
        complete: () => {
          settled = true;
          trace?.end({ cancelled: false });
          subscriber.complete();
        },
        error: (err: unknown) => {
          settled = true;
          // A step that fails while it subscribes does so before `run` is known.
          if (run) fail(err);
          else failure = { err };
        },
      });
      if (failure) fail(failure.err);
      return () => {
        if (settled) return;
        abandoned = true;
        run.unsubscribe();
        trace?.end({ cancelled: true });
      };
    });
  }

  /** The request made effective, then the tools prepared into a `RunContext`, then the turn. */
  private drive(edge: RunEdge, received: ResponseRequest): Observable<RunValue> {
    // Each I/O step owns its cancellation: leaving during it aborts it.
    return abortable(() => effectiveRequest(edge, received)).pipe(
      continueWith(({ request, prior }) =>
        valuesThen<RunValue, RunValue>([described(request)], abortable((cancel) => prepareRun(edge, request, prior, cancel)).pipe(continueWith((prepared) => this.turn(prepared)))),
      ),
    );
  }

  /**
   * Discovery listings shown, approvals answered, then rounds, each started
   * from the end of the last while the `LoopDecision` is `Continue`, each a
   * step from one `RunState` to the next (`round.ts`, `run-state.ts`), then
   * the turn finished as decided.
   */
  private turn({ ctx, transcript, approvals }: PreparedRun): Observable<RunValue> {
    const { registry, request } = ctx;
    const opening: RunValue[] = [described(request, registry.publicTools)];
    if (request.generate === false) return valuesThen(opening, this.prepareOnly(ctx, initialState(transcript), approvals.length > 0 ? approvals[0].itemType : null));
    if (registry.discoveryItems.length > 0 || approvals.length > 0) opening.push(...startEvents());
    for (const item of registry.discoveryItems) opening.push(...discoveryItemEvents(item));
    return valuesThen(
      opening,
      answerApprovals$(ctx, initialState(transcript), approvals).pipe(
        continueFrom(isEnd<ApprovalsEnd>('approvals.end'), ({ state }) => valuesThen([usageOf(state)], this.rounds(ctx, state))),
      ),
    );
  }

  /** One round, then the next from where it ended, or the end of the turn. */
  private rounds(ctx: RunContext, state: RunState): Observable<RunValue> {
    return round$(ctx, state).pipe(
      continueFrom(isEnd<RoundEnd>('round.end'), ({ result }) => {
        const step = decide(state, result, this.config.tools.maxRounds);
        return valuesThen([usageOf(step.state)], step.decision === LoopDecision.Continue ? this.rounds(ctx, step.state) : this.end(ctx, step));
      }),
    );
  }

  /** The turn's last step, finished as what it decided. */
  private end(ctx: RunContext, step: RunStep): Observable<RunValue> {
    return this.finish(ctx, step.state, step.decision === LoopDecision.Incomplete ? 'incomplete' : 'completed', step.incompleteReason);
  }

  /**
   * `generate: false`: the context is prepared (tools discovered, input
   * translated) and saved like any response, and no model is called. The
   * output stays empty, so discovery listings appear on the first generating
   * turn. Approval answers would run tools with nothing to read their results.
   */
  private prepareOnly(ctx: RunContext, state: RunState, approvalItemType: string | null): Observable<RunValue> {
    if (approvalItemType !== null) {
      return throwError(() => new InvalidRequestError(`'generate: false' cannot carry ${approvalItemType} items: approved calls run only on a turn that generates.`, 'generate'));
    }
    return this.finish(ctx, state, 'completed', null);
  }

  /** The turn as the edge saves it (split where it began) and then announces it. */
  private finish(ctx: RunContext, state: RunState, status: 'completed' | 'incomplete', incompleteReason: string | null): Observable<RunValue> {
    const { transcript } = state;
    const finished: RunFinished = {
      type: 'run.finished',
      status,
      incompleteReason,
      usage: state.usage,
      record: {
        modelItems: transcript.slice(ctx.turnStart),
        tools: ctx.registry.continuationTools,
        // Nothing untranslated: the transcript began as the prior's model items, which are shared rather than copied.
        prior: priorOf(ctx.prior, ctx.prior.untranslated?.length ? transcript.slice(0, ctx.turnStart) : ctx.prior.modelItems),
      },
    };
    return from<RunValue[]>([...startEvents(), finished]);
  }
}

function described(request: ResponseRequest, tools?: readonly JsonObject[]): RunDescribed {
  return { type: 'run.described', request, tools };
}

function usageOf(state: RunState): RunUsage {
  return { type: 'run.usage', usage: state.usage };
}

function isEnd<E extends { type: string }>(type: E['type']): (value: { type: string }) => value is E {
  return (value): value is E => value.type === type;
}

/** A discovery listing (shown whole before the first round), with its own in_progress / completed pair. */
function discoveryItemEvents(item: PublicItem): EventInit[] {
  const failed = Boolean((item as { error?: unknown }).error);
  return wholeItemEvents(item, [
    { type: `response.${item.type}.in_progress`, item_id: item.id, output_index: UNSTAMPED },
    { type: `response.${item.type}.${failed ? 'failed' : 'completed'}`, item_id: item.id, output_index: UNSTAMPED },
  ]);
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
