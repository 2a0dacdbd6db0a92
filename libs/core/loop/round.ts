import { type Observable, concatMap, connect, defer, endWith, filter, from, map, merge, mergeMap, type OperatorFunction, scan, tap } from 'rxjs';
import type { UpstreamCallContext } from '../upstream/upstream-client.interface.js';
import type { ModelToolChoice, Usage } from '#tool-sdk/items.js';
import type { ModelEvent, ModelRequest } from '../protocol/model-events.js';
import { GatewayCallBatch } from './gateway-call-batch.js';
import { clampOutputBudget, estimateItemTokens, estimatePromptTokens, usefulOutputFloor } from './model-context.service.js';
import { truncateOldest } from './truncation.js';
import { isScheduled, type ScheduledCall } from './gateway-scheduler.service.js';
import { UPSTREAM_END, initialRoundState, initialRoundStep, roundReducer, type ClassificationOptions, type RoundState, type RoundStep } from './round-classification.js';
import type { RunContext } from './run-context.js';
import { then } from './run-operators.js';
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
      endWith(UPSTREAM_END),
      scan((step: RoundStep, input) => reduce(step.state, input), initialRoundStep),
      // The last state, kept for the result and the trace: a round cut short has no step left to carry it.
      tap((step) => (classified = step.state)),
      flattenSteps(batch, ctx.registry.runsGatewayTools ? batch.execute() : filter(isEvent)),
      // Once every call has finished: the round's result, from the last step's state. A failed round is traced
      // before anyone hears of it; one cut short after the chain's own teardown. `then` in place of
      // `concatWith(defer(...))` + `tap({ error, finalize })`: 2 KiB less per waiting stream (run-operators.ts).
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
 * Each step's values, one after another. Most model events (a text or
 * arguments delta) make one public event and complete no call: that event
 * passes on through `filter` and `map`, without the inner subscription
 * `mergeMap` makes for every array it flattens (bench/README.md, "Why some
 * pieces are hand-written", `round-flatten.bench.ts`). The first step (the
 * run's start goes out with it) and every step with more values or a call
 * are flattened in order, then go through `calls` (the batch's `execute()`,
 * which passes their public events on in place and runs their calls); a
 * step with nothing adds nothing.
 */
function flattenSteps(batch: GatewayCallBatch, calls: OperatorFunction<EventInit | ScheduledCall, EventInit>) {
  return connect((steps: Observable<RoundStep>) =>
    merge(
      steps.pipe(filter(isLoneEvent), map(loneEvent)),
      // Every first step comes this way, so this branch's first step is the round's.
      steps.pipe(
        filter(isSeveralValues),
        mergeMap((step, index) => stepValues(step, index === 0, batch)),
        calls,
      ),
    ),
  );
}

function isLoneEvent(step: RoundStep, index: number): boolean {
  return index > 0 && step.calls.length === 0 && step.events.length === 1;
}

function isSeveralValues(step: RoundStep, index: number): boolean {
  return index === 0 || step.calls.length > 0 || step.events.length > 1;
}

function loneEvent(step: RoundStep): EventInit {
  return step.events[0];
}

/** A public event, not a call for the scheduler (a request without gateway tools has only these: its rounds set up no scheduler). */
function isEvent(value: EventInit | ScheduledCall): value is EventInit {
  return !isScheduled(value);
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
    return ctx.services.upstream.infer(request, { flow: ctx.flow, context: upstreamContext(ctx, upstreamTrace?.headers) }).pipe(
      tap({
        error: (err: unknown) => endTrace({ error: err }),
        complete: () => endTrace({ cancelled: false }),
        finalize: () => endTrace({ cancelled: ctx.abandoned() }),
      }),
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
