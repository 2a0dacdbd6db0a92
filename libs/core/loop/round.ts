import { Observable, type ObservableInput, type Subscriber, concatMap, connect, defer, filter, from, identity, merge, type OperatorFunction } from 'rxjs';
import type { UpstreamCallContext } from '../upstream/upstream-client.interface.js';
import type { ModelToolChoice, Usage } from '#tool-sdk/items.js';
import type { ModelEvent, ModelRequest } from '../protocol/model-events.js';
import { GatewayCallBatch, isScheduled } from './gateway-call-batch.js';
import { clampOutputBudget, estimateItemTokens, estimatePromptTokens, usefulOutputFloor } from './model-context.service.js';
import { truncateOldest } from './truncation.js';
import type { ScheduledCall } from './gateway-scheduler.service.js';
import { UPSTREAM_END, initialRoundState, roundReducer, type ClassificationOptions, type RoundInput, type RoundState, type RoundStep } from './round-classification.js';
import type { RunContext } from './run-context.js';
import { StageRelay, then } from './run-operators.js';
import type { RoundTrace } from './run-observer.interface.js';
import type { RoundResult, RunState } from './run-state.js';
import type { EventInit } from './response-events.js';
import { startEvents } from './run-values.js';

/** What one round emits: its public events as they happen, then its result. */
export type RoundValue = EventInit | RoundEnd;

export interface RoundEnd {
  readonly type: 'round.end';
  readonly result: RoundResult;
}

/** The upstream stopped short: the edge marks the last message `incomplete`. */
const CUT_SHORT: EventInit = { type: 'run.cut_short' };

/**
 * One round as a cold Observable of its public events and then its result:
 * infer, fold the model's events through the one classification (`scan`
 * over `roundReducer`, shared by streaming and blocking), start each gateway
 * call as a step completes it, run them through the scheduler while the
 * model still streams, and end with what the final state and the batch
 * leave behind (`round.end`).
 *
 * Unsubscribing at any point is the one cancellation path: the upstream
 * request is dropped and the round's calls are stopped by the same teardown.
 */
export function round$(ctx: RunContext, state: RunState): Observable<RoundValue> {
  return defer(() => {
    const number = state.rounds + 1;
    const roundTrace = ctx.trace?.round(number);
    const batch = new GatewayCallBatch(ctx, state.calls, roundTrace);
    const { request, promptEstimate } = modelRequest(ctx, state, number);
    const reduce = roundReducer(ctx.registry, classificationOptions(ctx, batch));
    // The state after the last step: the result's source, and what a round cut short (cancelled, failed) reports to its trace.
    let classified: RoundState = initialRoundState;
    let traced = false;
    // Once, when the round's result is known (before `round.end` goes out), or when the round fails or is left.
    const endTrace = () => {
      if (traced) return;
      traced = true;
      roundTrace?.usage?.(classified.usage);
      roundTrace?.end();
    };
    const end = (final: RoundState): RoundValue[] => {
      const incompleteReason = final.finish?.status === 'incomplete' ? (final.finish.reason ?? 'max_output_tokens') : null;
      endTrace();
      const result: RoundResult = {
        modelItems: batch.rekey(final.modelItems),
        outputs: batch.outputs(),
        usage: final.usage,
        calls: batch.count,
        clientAction: final.clientCalls > 0 || batch.approvalsRequested > 0,
        gatewayResults: batch.results,
        incompleteReason,
        promptEstimate,
      };
      return incompleteReason ? [CUT_SHORT, { type: 'round.end', result }] : [{ type: 'round.end', result }];
    };
    // Items the upstream never finished (stream cut short) are closed by the last step, before the calls settle.
    return infer$(ctx, request, roundTrace, state.usage).pipe(
      // The last state is kept for the result and the trace: a round cut short has no step left to carry it.
      foldSteps(reduce, batch, (step) => (classified = step)),
      // A request without tools has no calls: its rounds set up no scheduler.
      ctx.registry.size > 0 ? runCalls(batch) : (identity as OperatorFunction<EventInit | ScheduledCall, EventInit>),
      // Once every call has finished: the round's result, from the last step's state.
      // A failed round is traced before anyone hears of it; one cut short after the chain's own teardown.
      then(() => end(classified), { error: endTrace, finalize: endTrace }),
    );
  });
}

/** What the round's classification decides, with the batch's citations for the messages. */
function classificationOptions(ctx: RunContext, batch: GatewayCallBatch): ClassificationOptions {
  return {
    include: ctx.request.include,
    // A client may choose its reasoning event names per request (`x-switchyard-reasoning-events`).
    // `auto` is decided at the HTTP edge; other transports (WebSocket, broker) keep the OpenAI SDK's names.
    reasoningEvents: ctx.request.reasoningEvents ?? (ctx.services.config.server.reasoningEvents === 'auto' ? 'openai' : ctx.services.config.server.reasoningEvents),
    annotate: (text) => batch.annotate(text),
    summary: SUMMARY_MODES.has(ctx.request.reasoning?.summary ?? ''),
    seal: ctx.services.reasoning ? (reasoning) => ctx.services.reasoning!.seal(reasoning) : undefined,
  };
}

/**
 * One step's values in order: the run's start with the first model event,
 * the step's public events, then each call it completed, started in the
 * batch (its public start, then what the scheduler runs), one after another.
 */
function stepValues(step: RoundStep, first: boolean, batch: GatewayCallBatch): ReadonlyArray<EventInit | ScheduledCall> {
  const events = first && step.state.started ? [...startEvents(), ...step.events] : step.events;
  if (step.calls.length === 0) return events;
  const values: Array<EventInit | ScheduledCall> = [...events];
  for (const call of step.calls) {
    const { events: started, started: scheduled } = batch.start(call);
    values.push(...started);
    if (scheduled && scheduled !== 'approval') values.push(scheduled);
  }
  return values;
}

/**
 * The round's classification folded over the model's events and then the
 * upstream's end (`scan` over `roundReducer` with `endWith(UPSTREAM_END)`),
 * each step's values passed on in order as it is made (`stepValues`), the
 * items the upstream never finished closed by the last step. Hand-written
 * for what a waiting round holds (run-operators.ts): `endWith`, `scan`,
 * `tap` and a `connect` of `filter` / `map` / `mergeMap` kept about 10 KiB
 * per idle stream. A step of one public event and no call, most model
 * events, costs one call per event here and no inner subscription.
 */
function foldSteps(
  reduce: (state: RoundState, input: RoundInput) => RoundStep,
  batch: GatewayCallBatch,
  noteState: (state: RoundState) => void,
): OperatorFunction<ModelEvent, EventInit | ScheduledCall> {
  return (events) => new Observable<EventInit | ScheduledCall>((destination) => new StepFold(destination, reduce, batch, noteState).follow(events));
}

class StepFold extends StageRelay<ModelEvent, EventInit | ScheduledCall> {
  private state: RoundState = initialRoundState;
  private firstStep = true;

  constructor(
    destination: Subscriber<EventInit | ScheduledCall>,
    private readonly reduce: (state: RoundState, input: RoundInput) => RoundStep,
    private readonly batch: GatewayCallBatch,
    private readonly noteState: (state: RoundState) => void,
  ) {
    super(destination);
  }

  protected first(event: ModelEvent): void {
    this.step(event);
  }

  protected following(): ObservableInput<EventInit | ScheduledCall> | null {
    this.step(UPSTREAM_END);
    return null;
  }

  private step(input: RoundInput): void {
    const step = this.reduce(this.state, input);
    this.state = step.state;
    this.noteState(step.state);
    const first = this.firstStep;
    this.firstStep = false;
    // The lone public event of most model events goes on as it is.
    const values = !first && step.calls.length === 0 ? step.events : stepValues(step, first, this.batch);
    for (let i = 0; i < values.length; i++) this.destination.next(values[i]);
  }
}

/** A public event, not a call for the scheduler (a request without tools has only these: its rounds set up no scheduler). */
function isEvent(value: EventInit | ScheduledCall): value is EventInit {
  return !isScheduled(value);
}

/** Public events pass on; calls go to the scheduler, whose public finishes follow in model order. */
function runCalls(batch: GatewayCallBatch) {
  return connect((values: Observable<EventInit | ScheduledCall>) => merge(values.pipe(filter(isEvent)), values.pipe(filter(isScheduled), batch.execute())));
}

/**
 * The upstream stream of this round, its trace's span ending with it
 * however it ends, before the round goes on with what it sent.
 */
function infer$(ctx: RunContext, request: ModelRequest, roundTrace: RoundTrace | undefined, spent: Usage): Observable<ModelEvent> {
  const call = defer(() => {
    const upstreamTrace = roundTrace?.upstream();
    let traced = false;
    const endTrace = (outcome: { error: unknown } | { cancelled: boolean }) => {
      if (traced) return;
      traced = true;
      upstreamTrace?.end(outcome);
    };
    const events = ctx.services.upstream.infer(request, { flow: ctx.flow, context: upstreamContext(ctx, upstreamTrace?.headers) });
    if (!upstreamTrace) return events;
    // `then` for `tap({ error, complete, finalize })`, which an open stream would hold (run-operators.ts).
    return events.pipe(
      then<ModelEvent, never>(
        () => {
          endTrace({ cancelled: false });
          return null;
        },
        {
          error: (err: unknown) => endTrace({ error: err }),
          finalize: () => endTrace({ cancelled: ctx.abandoned() }),
        },
      ),
    );
  });
  // Once earlier rounds used tokens their cost is known: a budget they used up stops the run before the next call.
  const budget = ctx.budget;
  return budget && spent.total_tokens > 0 ? defer(() => from(budget(spent))).pipe(concatMap(() => call)) : call;
}

/** `reasoning.summary` values that ask for `summary_text` parts. */
const SUMMARY_MODES = new Set(['auto', 'concise', 'detailed']);

function modelRequest(ctx: RunContext, state: RunState, round: number): { request: ModelRequest; promptEstimate: number | null } {
  const { request: r, choice } = ctx;
  // A forcing choice applies to the first round only: later rounds answer the
  // forced call instead of repeating it. Past `max_tool_calls`, no more tools.
  let toolChoice: ModelToolChoice = round === 1 || !choice.forcing ? choice.choice : 'auto';
  if (state.calls.limitReached) toolChoice = 'none';
  const request: ModelRequest = {
    model: r.model,
    input: state.transcript as ModelRequest['input'],
    instructions: r.instructions,
    tools: choice.tools,
    parallel_tool_calls: r.parallelToolCalls,
    temperature: r.temperature,
    top_p: r.topP,
    max_output_tokens: r.maxOutputTokens,
    presence_penalty: r.presencePenalty || null,
    frequency_penalty: r.frequencyPenalty || null,
    top_logprobs: r.topLogprobs || null,
    text: r.text,
    reasoning: r.reasoning,
    user: r.user,
    safety_identifier: r.safetyIdentifier,
    prompt_cache_key: r.promptCacheKey,
    stream: r.stream,
  };
  if (choice.tools.length > 0) request.tool_choice = toolChoice;
  if (r.truncation === 'auto' && ctx.contextLength !== null) request.input = truncated(request, ctx.contextLength);
  // Only a budget to fit needs the estimate, which serializes every item and tool (100 declared
  // tools: a few per cent of the request); without one, no round of this run needs it.
  const fits = ctx.contextLength !== null && r.maxOutputTokens !== null && r.maxOutputTokens !== undefined;
  const promptEstimate = fits ? estimatePromptTokens(request) : null;
  // Each round's prompt is longer than the last, so the fit is worked out per round.
  if (ctx.contextLength !== null) {
    request.max_output_tokens =
      promptEstimate !== null ? clampOutputBudget(r.maxOutputTokens, ctx.contextLength, promptTokens(ctx, state, promptEstimate)) : (r.maxOutputTokens ?? null);
  }
  return { request, promptEstimate };
}

/** `truncation: "auto"`: the newest items that fit the context beside the instructions, the tools and a useful output budget. */
function truncated(request: ModelRequest, contextLength: number): ModelRequest['input'] {
  const fixed = estimatePromptTokens({ instructions: request.instructions, input: [], tools: request.tools });
  const reserve = usefulOutputFloor(request.max_output_tokens ?? 1024, contextLength);
  return [...truncateOldest(request.input, estimateItemTokens, contextLength - fixed - reserve)] as ModelRequest['input'];
}

/**
 * The prompt's size: the model server's count when the request carries it
 * (first round), plus, in later rounds, the estimate of what the rounds since added.
 */
function promptTokens(ctx: RunContext, state: RunState, estimate: number): number {
  const measured = ctx.request.promptTokens;
  if (measured === undefined) return estimate;
  return measured + Math.max(0, estimate - (state.firstPromptEstimate ?? estimate));
}

/**
 * The call's context: the operator's forwarded request headers plus this round's
 * trace headers (`traceparent` / `tracestate`), which win over forwarded ones of the same name.
 */
function upstreamContext(ctx: RunContext, traceHeaders?: Readonly<Record<string, string>>): UpstreamCallContext {
  const r = ctx.request;
  const headers = traceHeaders ? { ...(r.forwardedHeaders ?? {}), ...traceHeaders } : (r.forwardedHeaders ?? {});
  return { owner: r.owner, requestId: ctx.id, headers };
}
