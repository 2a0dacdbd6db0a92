import { concatWith, defer, finalize, ignoreElements, Observable, tap } from 'rxjs';
import type { UpstreamCallContext, UpstreamClient } from '../upstream/upstream-client.interface.js';
import { addUsage, type ModelItem, type ModelToolChoice } from '../protocol/items.js';
import type { FlowGate } from '../protocol/flow-gate.js';
import type { ModelRequest } from '../protocol/model-events.js';
import type { ResolvedToolChoice } from '../registry/tool-choice.resolver.js';
import type { ToolRegistry } from '../registry/tool-registry.js';
import { RoundAccumulator } from './gateway-accumulator.js';
import type { GatewayCalls } from './gateway-calls.js';
import { clampOutputBudget, estimateItemTokens, estimatePromptTokens, usefulOutputFloor } from './model-context.service.js';
import { truncateOldest } from './truncation.js';
import type { ReasoningEventStyle } from './response-events.js';
import type { ResponseLifecycle } from './response-lifecycle.js';
import type { RoundTrace, RunTrace } from './run-observer.interface.js';

export interface RoundOutcome {
  clientAction: boolean;
  gatewayResults: number;
  incompleteReason: string | null;
}

export interface RoundDependencies {
  upstream: UpstreamClient;
  reasoningEvents: ReasoningEventStyle;
  flow?: FlowGate;
  trace?: RunTrace;
  /** The run's abort signal: a dropped upstream is traced as cancelled when it fired. */
  signal: AbortSignal;
}

/**
 * One round as a cold Observable: infer, relay the model's events, start
 * gateway calls as they are detected, settle them, and emit the round's
 * outcome. Unsubscribing at any point (the client went away) is the one
 * cancellation path: the upstream request is dropped and the round's calls
 * are stopped by the same teardown.
 */
export class RoundRunner {
  constructor(
    private readonly deps: RoundDependencies,
    private readonly lifecycle: ResponseLifecycle,
    private readonly calls: GatewayCalls,
    private readonly registry: ToolRegistry,
    /** The transcript so far; the round appends its model items and call outputs. */
    private readonly transcript: ModelItem[],
    /** The model's context length, when a budget must be fitted to it. */
    private readonly contextLength: number | null,
  ) {}

  /** The first round's estimate, when the request carried the model server's count of that prompt. */
  private firstEstimate: number | null = null;

  round$(round: number, resolved: ResolvedToolChoice): Observable<RoundOutcome> {
    return defer(() => {
      const roundTrace = this.deps.trace?.round(round);
      const batch = this.calls.openBatch(roundTrace);
      let approvalsRequested = 0;
      const accumulator = new RoundAccumulator(
        this.registry,
        this.lifecycle.sink,
        this.lifecycle.ledger,
        (detected) => {
          if (this.calls.start(detected, batch)) approvalsRequested++;
        },
        {
          include: this.lifecycle.request.include,
          reasoningEvents: this.lifecycle.request.reasoningEvents ?? this.deps.reasoningEvents,
          annotate: (text) => this.calls.annotate(text),
          summary: ['auto', 'concise', 'detailed'].includes(this.lifecycle.request.reasoning?.summary ?? ''),
        },
      );
      const settle = defer(async (): Promise<RoundOutcome> => {
        accumulator.closeDangling();
        await batch.settle();
        if (accumulator.usage) addUsage(this.lifecycle.usage, accumulator.usage);
        this.transcript.push(...accumulator.modelItems);
        for (const slot of batch.slots) {
          if (slot.result) this.transcript.push({ type: 'function_call_output', call_id: slot.call.callId, output: slot.result.output.text });
        }
        const incomplete = accumulator.finish?.status === 'incomplete' ? (accumulator.finish.reason ?? 'max_output_tokens') : null;
        if (incomplete) this.lifecycle.markLastMessageIncomplete();
        return { clientAction: accumulator.clientCalls > 0 || approvalsRequested > 0, gatewayResults: batch.slots.length, incompleteReason: incomplete };
      });
      return this.infer$(this.modelRequest(round, resolved), roundTrace).pipe(
        tap((event) => {
          this.lifecycle.ensureStarted();
          accumulator.handle(event);
        }),
        ignoreElements(),
        concatWith(settle),
        // Failed or cancelled, the calls the round started must not outlive it (a no-op once settled).
        finalize(() => {
          batch.cancel();
          roundTrace?.end();
        }),
      );
    });
  }

  /** The upstream stream of this round, traced from subscription to its end however it ends. */
  private infer$(request: ModelRequest, roundTrace?: RoundTrace) {
    return defer(() => {
      const upstreamTrace = roundTrace?.upstream();
      let upstreamError: unknown;
      return this.deps.upstream.infer(request, { flow: this.deps.flow, context: this.upstreamContext(upstreamTrace?.headers) }).pipe(
        tap({ error: (err: unknown) => (upstreamError = err) }),
        finalize(() => upstreamTrace?.end(upstreamError ? { error: upstreamError } : { cancelled: this.deps.signal.aborted })),
      );
    });
  }

  private modelRequest(round: number, resolved: ResolvedToolChoice): ModelRequest {
    const r = this.lifecycle.request;
    // A forcing choice applies to the first round only: later rounds answer the
    // forced call instead of repeating it. Past `max_tool_calls`, no more tools.
    let toolChoice: ModelToolChoice = round === 1 || !resolved.forcing ? resolved.choice : 'auto';
    if (this.calls.limitReached) toolChoice = 'none';
    const request: ModelRequest = {
      model: r.model,
      input: this.transcript,
      instructions: r.instructions,
      tools: resolved.tools,
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
    if (resolved.tools.length > 0) request.tool_choice = toolChoice;
    if (r.truncation === 'auto' && this.contextLength !== null) request.input = this.truncated(request);
    // Each round's prompt is longer than the last, so the fit is worked out per round.
    if (this.contextLength !== null) request.max_output_tokens = clampOutputBudget(r.maxOutputTokens, this.contextLength, this.promptTokens(request));
    return request;
  }

  /** `truncation: "auto"`: the newest items that fit the context beside the instructions, the tools and a useful output budget. */
  private truncated(request: ModelRequest): ModelItem[] {
    const fixed = estimatePromptTokens({ instructions: request.instructions, input: [], tools: request.tools });
    const reserve = usefulOutputFloor(request.max_output_tokens ?? 1024, this.contextLength!);
    return [...truncateOldest(request.input, estimateItemTokens, this.contextLength! - fixed - reserve)];
  }

  /**
   * The prompt's size: the model server's count when the request carries it,
   * plus, in later rounds, the estimate of what the rounds since added.
   */
  private promptTokens(request: ModelRequest): number {
    const estimate = estimatePromptTokens(request);
    const measured = this.lifecycle.request.promptTokens;
    if (measured === undefined) return estimate;
    this.firstEstimate ??= estimate;
    return measured + Math.max(0, estimate - this.firstEstimate);
  }

  /**
   * The call's context: the operator's forwarded request headers plus this round's
   * trace headers (`traceparent` / `tracestate`), which win over forwarded ones of the same name.
   */
  private upstreamContext(traceHeaders?: Readonly<Record<string, string>>): UpstreamCallContext {
    const r = this.lifecycle.request;
    const headers = traceHeaders ? { ...(r.forwardedHeaders ?? {}), ...traceHeaders } : (r.forwardedHeaders ?? {});
    return { owner: r.owner, requestId: this.lifecycle.id, headers };
  }
}
