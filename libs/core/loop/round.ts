import { Observable, concatMap, defer, from } from 'rxjs';
import type { UpstreamCallContext } from '../upstream/upstream-client.interface.js';
import type { ModelToolChoice, Usage } from '#tool-sdk/items.js';
import type { ModelEvent, ModelRequest } from '../protocol/model-events.js';
import { RoundAccumulator, type DetectedGatewayCall } from './gateway-accumulator.js';
import { GatewayCallBatch } from './gateway-call-batch.js';
import { clampOutputBudget, estimateItemTokens, estimatePromptTokens, usefulOutputFloor } from './model-context.service.js';
import { truncateOldest } from './truncation.js';
import type { ScheduledCall } from './gateway-scheduler.service.js';
import { EachObserver } from './run-operators.js';
import type { RunContext } from './run-context.js';
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
 * infer, classify the model's events (the one classification, shared by
 * streaming and blocking), start each gateway call as it is detected, run
 * them through the scheduler while the model still streams, and end with
 * what the round leaves behind (`round.end`).
 *
 * Unsubscribing at any point is the one cancellation path: the upstream
 * request is dropped and the round's calls are stopped by the same teardown.
 */
export function round$(ctx: RunContext, state: RunState): Observable<RoundValue> {
  return new Observable<RoundValue>((subscriber) => {
    const number = state.rounds + 1;
    const roundTrace = ctx.trace?.round(number);
    let traced = false;
    // Once, when the round's result is known: the next round starts from the round's end, before its teardown.
    const endTrace = () => {
      if (traced) return;
      traced = true;
      // What the upstream reported for this round, also when the round was cut short (cancelled, failed).
      roundTrace?.usage?.(accumulator.usage);
      roundTrace?.end();
    };
    const batch = new GatewayCallBatch(ctx, state.calls, roundTrace);
    let approvalsRequested = 0;
    const detected: DetectedGatewayCall[] = [];
    // The round's public events go to its own subscriber as they are made; the calls to the scheduler.
    const publish = (event: EventInit) => subscriber.next(event);
    const accumulator = new RoundAccumulator(ctx.registry, publish, (call) => detected.push(call), {
      include: ctx.request.include,
      // A client may choose its reasoning event names per request (`x-switchyard-reasoning-events`).
      // `auto` is decided at the HTTP edge; other transports (WebSocket, broker) keep the OpenAI SDK's names.
      reasoningEvents: ctx.request.reasoningEvents ?? (ctx.services.config.server.reasoningEvents === 'auto' ? 'openai' : ctx.services.config.server.reasoningEvents),
      annotate: (text) => batch.annotate(text),
      summary: SUMMARY_MODES.has(ctx.request.reasoning?.summary ?? ''),
      seal: ctx.services.reasoning ? (reasoning) => ctx.services.reasoning!.seal(reasoning) : undefined,
    });
    // Each call detected in an event goes to the scheduler as it is started, before the next one starts.
    let started = false;
    const classify = (event: ModelEvent, emit: (scheduled: ScheduledCall) => void) => {
      if (!started) {
        started = true;
        for (const start of startEvents()) publish(start);
      }
      accumulator.handle(event);
      if (detected.length > 0) for (const call of detected.splice(0)) start(call, emit);
    };
    const start = (call: DetectedGatewayCall, emit: (scheduled: ScheduledCall) => void) => {
      const { events, started } = batch.start(call);
      for (const event of events) publish(event);
      if (started === 'approval') approvalsRequested++;
      else if (started) emit(started);
    };
    const result = (): RoundEnd => {
      const incompleteReason = accumulator.finish?.status === 'incomplete' ? (accumulator.finish.reason ?? 'max_output_tokens') : null;
      if (incompleteReason) publish(CUT_SHORT);
      endTrace();
      return {
        type: 'round.end',
        result: {
          modelItems: batch.rekey(accumulator.modelItems),
          outputs: batch.outputs(),
          usage: accumulator.usage,
          calls: batch.count,
          clientAction: accumulator.clientCalls > 0 || approvalsRequested > 0,
          gatewayResults: batch.results,
          incompleteReason,
          promptEstimate,
        },
      };
    };
    const { request, promptEstimate } = modelRequest(ctx, state, number);
    // Items the upstream never finished (stream cut short) are closed before the calls settle.
    const chain = infer$(ctx, request, roundTrace, state.usage, classify, () => accumulator.closeDangling())
      .pipe(batch.execute(result))
      .subscribe({
        next: (value) => subscriber.next(value),
        // A failed round is traced before anyone hears of it, also when it fails while it subscribes.
        error: (err: unknown) => {
          endTrace();
          subscriber.error(err);
        },
        complete: () => subscriber.complete(),
      });
    // After the chain's own teardown, as `finalize` would: a round cut short is traced too.
    return () => {
      chain.unsubscribe();
      endTrace();
    };
  });
}

/**
 * The upstream stream of this round, traced from subscription to its end
 * however it ends, each event classified as it arrives (`classify` writes the
 * calls to start) and `end` run once the upstream finished: `emitEach`'s
 * observer fed from the upstream's own subscriber, rather than an `emitEach`
 * step after it, since a stream holds every subscriber for as long as it is
 * open. A throw from either ends the round with that error.
 */
function infer$(
  ctx: RunContext,
  request: ModelRequest,
  roundTrace: RoundTrace | undefined,
  spent: Usage,
  classify: (event: ModelEvent, emit: (scheduled: ScheduledCall) => void) => void,
  end: (emit: (scheduled: ScheduledCall) => void) => void,
): Observable<ScheduledCall> {
  const call = new Observable<ScheduledCall>((subscriber) => {
    const upstreamTrace = roundTrace?.upstream();
    let traced = false;
    // The upstream's span ends with the upstream, before the round goes on with what it sent.
    const endTrace = (outcome: { error: unknown } | { cancelled: boolean }) => {
      if (traced) return;
      traced = true;
      upstreamTrace?.end(outcome);
    };
    const each = new EachObserver(subscriber, classify, end);
    const upstream = ctx.services.upstream.infer(request, { flow: ctx.flow, context: upstreamContext(ctx, upstreamTrace?.headers) }).subscribe({
      next: (event) => each.next(event),
      error: (err: unknown) => {
        endTrace({ error: err });
        each.error(err);
      },
      complete: () => {
        endTrace({ cancelled: false });
        each.complete();
      },
    });
    return () => {
      upstream.unsubscribe();
      endTrace({ cancelled: ctx.abandoned() });
    };
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
