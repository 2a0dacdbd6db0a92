import { Subscription } from 'rxjs';
import type { GatewayConfig } from '#config/gateway-config.js';
import type { UpstreamCallContext, UpstreamClient } from '#upstream/upstream-client.interface.js';
import { InvalidRequestError, isGatewayError } from '../errors/gateway-error.js';
import type { ToolHandlerExplorer } from '../handlers/tool-handler.explorer.js';
import type { GatewayCall, GatewayCallResult, GatewayEventPlan, GatewayExecutor, PlannedEvent } from '../handlers/tool-handler.interface.js';
import { newId } from '../ids.js';
import { addUsage, emptyUsage, type FunctionCallItem, type ModelItem, type ModelToolChoice, type PublicItem } from '../protocol/items.js';
import type { FlowGate } from '../protocol/flow-gate.js';
import type { ModelEvent, ModelRequest } from '../protocol/model-events.js';
import { resolveToolChoice, type ResolvedToolChoice } from '../registry/tool-choice.resolver.js';
import type { ToolPreparationService } from '../registry/tool-preparation.service.js';
import type { ToolEntry, ToolRegistry } from '../registry/tool-registry.js';
import { DetectedGatewayCall, RoundAccumulator } from './gateway-accumulator.js';
import type { GatewayScheduler, RoundExecution } from './gateway-scheduler.service.js';
import { ApprovalSlot, HistoryTranslator } from './history-to-model.js';
import { LoopDecision, classifyRound } from './loop-decision.js';
import { assertOutputsAnswerCalls } from './orphan-outputs.js';
import { clampOutputBudget, estimatePromptTokens, type ModelContextService } from './model-context.service.js';
import type { InputItemTranslator } from './loop.service.js';
import { buildResponseObject, type ResponseStatus } from './response-object.js';
import { OutputLedger, ResponseEventSink, emitWholeItem, type ReasoningEventStyle, type ResponseStreamEvent } from './response-events.js';
import type { PriorState, ResponseRequest } from './response-request.js';
import type { ResponseStateStore } from './response-state.interface.js';
import type { RoundTrace, RunTrace } from './run-observer.interface.js';

export interface RunDependencies {
  upstream: UpstreamClient;
  preparation: ToolPreparationService;
  scheduler: GatewayScheduler;
  explorer: ToolHandlerExplorer;
  config: GatewayConfig;
  state: ResponseStateStore;
  reasoningEvents: ReasoningEventStyle;
  /** Input item types owned outside core and tool modules (e.g. `compaction`). */
  itemTranslators?: ReadonlyMap<string, InputItemTranslator>;
  /** Streaming runs: lets a slow client hold back the upstream read. */
  flow?: FlowGate;
  /** Logs, metrics and traces of this run, when a `RUN_OBSERVER` is installed. */
  trace?: RunTrace;
  /** The upstream's context lengths, to fit `max_output_tokens` (absent: sent as requested). */
  contexts?: ModelContextService;
}

/** Raised inside a run when the client went away; never reaches the client. */
class RunCancelled extends Error {}

const ITEM_PREFIX: Record<string, string> = { mcp: 'mcp', web_search: 'ws', file_search: 'fs', code_interpreter: 'ci' };

/** A call to a registered gateway tool, with a fresh public item id. */
function gatewayCall(entry: ToolEntry, callId: string, args: string): GatewayCall {
  return {
    callId,
    itemId: newId(ITEM_PREFIX[entry.toolType] ?? 'gw'),
    modelName: entry.modelName,
    toolName: entry.toolName,
    serverLabel: entry.serverLabel,
    arguments: args,
  };
}

/** One gateway call as it moves through a batch: started publicly, executed, finished in model order. */
interface CallSlot {
  call: GatewayCall;
  entry: ToolEntry;
  plan?: GatewayEventPlan;
  outputIndex: number;
  modelCall: FunctionCallItem | null;
  result?: GatewayCallResult;
}

/** The gateway calls of one round (or of one set of approvals), and their in-order completion. */
class CallBatch {
  readonly slots: CallSlot[] = [];
  private nextToFinish = 0;
  private readonly subscription: Subscription;

  constructor(
    readonly execution: RoundExecution,
    private readonly finishSlot: (slot: CallSlot) => void,
  ) {
    this.subscription = execution.results.subscribe(({ slot, result }) => {
      this.slots[slot].result = result;
      this.flush();
    });
  }

  add(slot: CallSlot): void {
    const index = this.slots.push(slot) - 1;
    this.execution.submit({ slot: index, call: slot.call, entry: slot.entry });
  }

  /** Public completion follows model call order, whatever order the calls finish in. */
  private flush(): void {
    while (this.nextToFinish < this.slots.length && this.slots[this.nextToFinish].result) {
      this.finishSlot(this.slots[this.nextToFinish++]);
    }
  }

  async settle(): Promise<void> {
    this.execution.close();
    await this.execution.done;
    this.flush();
    this.subscription.unsubscribe();
  }

  cancel(): void {
    this.subscription.unsubscribe();
    this.execution.cancel();
  }
}

/**
 * One request through the tool loop: prepare tools, then rounds of
 * infer → classify → execute gateway calls → re-infer, until the model is
 * done, the client must act, or the round budget runs out.
 *
 * Events go to `out` in order; the response object rides on the terminal
 * event. In blocking mode errors propagate to the caller (an HTTP error);
 * in streaming mode, once the stream has started, they end it with
 * `response.failed`.
 */
export class ResponseRun {
  readonly id: string;
  readonly createdAt: number;
  private readonly sink: ResponseEventSink;
  private readonly ledger = new OutputLedger();
  private readonly usage = emptyUsage();
  private readonly transcript: ModelItem[] = [];
  private turnStart = 0;
  private prior: PriorState = { modelItems: [], publicItems: [] };
  private registry!: ToolRegistry;
  private started = false;
  private gatewayCallsMade = 0;
  private toolLimitReached = false;
  /** The model's context length, known only when a budget must be fitted to it. */
  private contextLength: number | null = null;
  private activeUpstream?: Subscription;
  private readonly activeBatches = new Set<CallBatch>();
  /** Completed calls per executor that annotates answers, for the messages that follow them. */
  private readonly completedCalls = new Map<GatewayExecutor, GatewayCallResult[]>();
  private cancelReject?: (e: Error) => void;

  constructor(
    private readonly deps: RunDependencies,
    /** Replaced once, by the effective request, when a continuation inherits tools. */
    private req: ResponseRequest,
    out: (event: ResponseStreamEvent) => void,
    private readonly signal: AbortSignal,
  ) {
    this.id = req.responseId ?? newId('resp');
    this.createdAt = req.createdAt ?? Math.floor(Date.now() / 1000);
    this.sink = new ResponseEventSink(out);
    signal.addEventListener('abort', () => this.cancel(), { once: true });
  }

  async execute(): Promise<void> {
    const startTimer = this.req.stream ? setTimeout(() => this.ensureStarted(), this.deps.config.server.keepAliveMs) : undefined;
    try {
      await this.run();
    } catch (err) {
      if (err instanceof RunCancelled || this.signal.aborted) return;
      if (!this.req.stream || !this.started) throw err;
      await this.fail(err);
    } finally {
      clearTimeout(startTimer);
    }
  }

  private async run(): Promise<void> {
    await this.resolveReferences();
    const prior: PriorState = (await this.deps.state.load(this.req)) ?? { modelItems: [], publicItems: [] };
    this.prior = prior;
    assertOutputsAnswerCalls(this.req.input, prior.publicItems, prior.modelItems);
    this.inheritTools(prior);
    this.registry = await this.deps.preparation.prepare(this.req.tools, {
      history: [...prior.publicItems, ...this.req.input],
      inputStart: prior.publicItems.length,
      signal: this.signal,
      requestId: this.id,
      owner: this.req.owner,
    });
    const choice = resolveToolChoice(this.req.toolChoice, this.registry);

    this.transcript.push(...prior.modelItems);
    // Approval answers in prior items were resolved in their own turn: their slots are dropped.
    if (prior.untranslated?.length) this.translate(prior.untranslated, []);
    this.turnStart = this.transcript.length;
    const approvals: ApprovalSlot[] = [];
    this.translate(this.req.input, approvals);

    if (this.req.generate === false) return this.prepareOnly(approvals);
    if (this.registry.discoveryItems.length > 0 || approvals.length > 0) this.ensureStarted();
    for (const item of this.registry.discoveryItems) this.emitDiscoveryItem(item);
    if (approvals.length > 0) await this.resolveApprovals(approvals, prior.publicItems);

    if (this.req.maxOutputTokens !== null && this.deps.contexts) this.contextLength = await this.deps.contexts.contextLength(this.req.model);
    const maxRounds = this.deps.config.tools.maxRounds;
    for (let round = 1; ; round++) {
      const outcome = await this.runRound(round, choice);
      if (outcome.incompleteReason) return this.finish('incomplete', outcome.incompleteReason);
      const decision = classifyRound({ hasClientAction: outcome.clientAction, gatewayResults: outcome.gatewayResults, round, maxRounds });
      if (decision === LoopDecision.Continue) continue;
      if (decision === LoopDecision.Incomplete) return this.finish('incomplete', 'max_rounds');
      return this.finish('completed', null);
    }
  }

  /** `item_reference` items become the stored items they name, before anything reads the input. */
  private async resolveReferences(): Promise<void> {
    const index = this.req.input.findIndex((item) => item.type === 'item_reference');
    if (index < 0) return;
    if (!this.deps.state.resolveReferences) {
      throw new InvalidRequestError(`input[${index}] is an item_reference, but this gateway stores no items to resolve it against.`, `input[${index}].id`, 'item_not_found');
    }
    this.req = { ...this.req, input: await this.deps.state.resolveReferences(this.req) };
  }

  /**
   * `generate: false`: the context is prepared (tools discovered, input
   * translated) and saved like any response, and no model is called. The
   * output stays empty, so MCP listings appear on the first generating turn.
   * Approval answers would run tools with nothing to read their results.
   */
  private async prepareOnly(approvals: ApprovalSlot[]): Promise<void> {
    if (approvals.length > 0) {
      throw new InvalidRequestError("'generate: false' cannot carry mcp_approval_response items: approved calls run only on a turn that generates.", 'generate');
    }
    return this.finish('completed', null);
  }

  /**
   * A continuation that does not mention `tools` keeps the previous
   * response's tools, and then its tool_choice too unless it sends one (a
   * stored choice naming a tool only makes sense with the stored tools).
   */
  private inheritTools(prior: PriorState): void {
    if (!prior.tools || this.req.toolsSupplied || this.req.tools.length > 0) return;
    const toolChoice = this.req.toolChoiceSupplied || prior.toolChoice === undefined ? this.req.toolChoice : prior.toolChoice;
    this.req = { ...this.req, tools: prior.tools, toolChoice };
  }

  private translate(items: readonly PublicItem[], approvals: ApprovalSlot[]): void {
    const translator = new HistoryTranslator(this.registry, this.deps.explorer);
    for (const item of items) {
      const own = this.deps.itemTranslators?.get(item.type);
      // One item at a time keeps approval positions relative to the transcript as it grows.
      if (own) this.transcript.push(...own(item));
      else translator.translate([item], this.transcript, approvals);
    }
  }

  // --- rounds ---------------------------------------------------------------

  private async runRound(round: number, resolved: ResolvedToolChoice): Promise<{ clientAction: boolean; gatewayResults: number; incompleteReason: string | null }> {
    const roundTrace = this.deps.trace?.round(round);
    const batch = this.openBatch(roundTrace);
    let approvalsRequested = 0;
    const accumulator = new RoundAccumulator(
      this.registry,
      this.sink,
      this.ledger,
      (detected) => {
        if (this.startGatewayCall(detected, batch)) approvalsRequested++;
      },
      { include: this.req.include, reasoningEvents: this.deps.reasoningEvents, annotate: (text) => this.annotate(text) },
    );
    const request = this.modelRequest(round, resolved);
    try {
      await this.consumeUpstream(
        request,
        (event) => {
          this.ensureStarted();
          accumulator.handle(event);
        },
        roundTrace,
      );
      accumulator.closeDangling();
      await batch.settle();
      // Cancelling ends the batch early: its calls have no results, so the run must stop, not finish.
      if (this.signal.aborted) throw new RunCancelled();
    } catch (err) {
      // The round failed (upstream error, cancellation): calls it started must not outlive it.
      batch.cancel();
      throw err;
    } finally {
      this.activeBatches.delete(batch);
      roundTrace?.end();
    }
    if (accumulator.usage) addUsage(this.usage, accumulator.usage);

    this.transcript.push(...accumulator.modelItems);
    for (const slot of batch.slots) {
      if (slot.result) this.transcript.push({ type: 'function_call_output', call_id: slot.call.callId, output: slot.result.output.text });
    }
    const incomplete = accumulator.finish?.status === 'incomplete' ? (accumulator.finish.reason ?? 'max_output_tokens') : null;
    if (incomplete) this.markLastMessageIncomplete();
    return {
      clientAction: accumulator.clientCalls > 0 || approvalsRequested > 0,
      gatewayResults: batch.slots.length,
      incompleteReason: incomplete,
    };
  }

  private modelRequest(round: number, resolved: ResolvedToolChoice): ModelRequest {
    const r = this.req;
    // A forcing choice applies to the first round only: later rounds answer the
    // forced call instead of repeating it. Past `max_tool_calls`, no more tools.
    let toolChoice: ModelToolChoice = round === 1 || !resolved.forcing ? resolved.choice : 'auto';
    if (this.toolLimitReached) toolChoice = 'none';
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
    // Each round's prompt is longer than the last, so the fit is worked out per round.
    if (this.contextLength !== null) request.max_output_tokens = clampOutputBudget(r.maxOutputTokens, this.contextLength, estimatePromptTokens(request));
    return request;
  }

  /**
   * The call's context: the operator's forwarded request headers plus this round's
   * trace headers (`traceparent` / `tracestate`), which win over forwarded ones of the same name.
   */
  private upstreamContext(traceHeaders?: Readonly<Record<string, string>>): UpstreamCallContext {
    const headers = traceHeaders ? { ...(this.req.forwardedHeaders ?? {}), ...traceHeaders } : (this.req.forwardedHeaders ?? {});
    return { owner: this.req.owner, requestId: this.id, headers };
  }

  private consumeUpstream(request: ModelRequest, onEvent: (event: ModelEvent) => void, roundTrace?: RoundTrace): Promise<void> {
    const upstreamTrace = roundTrace?.upstream();
    let upstreamError: unknown;
    return new Promise<void>((resolve, reject) => {
      if (this.signal.aborted) return reject(new RunCancelled());
      this.cancelReject = reject;
      this.activeUpstream = this.deps.upstream.infer(request, { flow: this.deps.flow, context: this.upstreamContext(upstreamTrace?.headers) }).subscribe({
        next: (event) => {
          try {
            onEvent(event);
          } catch (err) {
            this.activeUpstream?.unsubscribe();
            reject(err);
          }
        },
        error: (err: unknown) => {
          upstreamError = err;
          reject(err);
        },
        complete: resolve,
      });
    }).finally(() => {
      upstreamTrace?.end(upstreamError ? { error: upstreamError } : { cancelled: this.signal.aborted });
      this.activeUpstream = undefined;
      this.cancelReject = undefined;
    });
  }

  // --- gateway calls --------------------------------------------------------

  private openBatch(roundTrace?: RoundTrace): CallBatch {
    const trace = this.deps.trace;
    const execution = this.deps.scheduler.open({
      requestId: this.id,
      include: this.req.include,
      onCall: trace ? (call, entry) => trace.toolCall(call, entry.toolType, roundTrace) : undefined,
    });
    const batch = new CallBatch(execution, (slot) => this.finishGatewayCall(slot));
    this.activeBatches.add(batch);
    return batch;
  }

  /** Returns true when the call became an approval request instead of running. */
  private startGatewayCall(detected: DetectedGatewayCall, batch: CallBatch): boolean {
    const { entry } = detected;
    const call = gatewayCall(entry, detected.callId, detected.arguments);
    const binding = entry.ownership.kind === 'gateway' ? entry.ownership.binding : undefined;

    if (binding?.executor.requiresApproval?.(call, binding.params) && binding.executor.approvalRequestItem) {
      const item = { ...binding.executor.approvalRequestItem(call, binding.params) };
      item.id ??= newId('mcpr');
      // The model's call is keyed by the approval id from here on, so the
      // answer matches it whether history comes from storage or the client.
      detected.modelCall.call_id = item.id!;
      emitWholeItem(this.sink, this.ledger, item as PublicItem);
      return true;
    }

    const limit = this.callLimit();
    if (this.gatewayCallsMade >= limit.max) {
      this.toolLimitReached = true;
      // The call stays in the transcript; its output tells the model why it did not run.
      batch.slots.push({
        call,
        entry,
        outputIndex: -1,
        modelCall: detected.modelCall,
        result: { call, status: 'failed', output: { text: JSON.stringify({ error: { code: limit.code, message: limit.message } }), isError: true } },
      });
      return false;
    }
    this.gatewayCallsMade++;
    if (this.gatewayCallsMade >= limit.max) this.toolLimitReached = true;
    batch.add(this.beginCallSlot(call, entry, detected.modelCall));
    return false;
  }

  /**
   * The request's own `max_tool_calls`, or the gateway's ceiling
   * (`tools.maxGatewayCallsPerRequest`) when lower: without one, a model that
   * keeps calling tools in many parallel calls per round makes one request
   * run thousands of calls against shared servers.
   */
  private callLimit(): { max: number; code: string; message: string } {
    const own = this.req.maxToolCalls;
    const ceiling = this.deps.config.tools.maxGatewayCallsPerRequest;
    if (own !== null && own <= ceiling) {
      return { max: own, code: 'max_tool_calls', message: `The limit of ${own} tool calls for this response was reached; the call was not run.` };
    }
    return {
      max: ceiling,
      code: 'gateway_call_limit',
      message: `This gateway runs at most ${ceiling} tool calls per response and that many have run; the call was not run. Answer with what you have.`,
    };
  }

  /** Emits the call's public start (`output_item.added` and the planned pre-execution events). */
  private beginCallSlot(call: GatewayCall, entry: ToolEntry, modelCall: FunctionCallItem | null): CallSlot {
    const binding = entry.ownership.kind === 'gateway' ? entry.ownership.binding : undefined;
    const plan = binding?.executor.planEvents(call, binding.params, { include: this.req.include });
    const startedItem = { ...(plan?.startedItem ?? { type: `${entry.toolType}_call` }), id: call.itemId, status: 'in_progress' } as PublicItem;
    this.ensureStarted();
    const outputIndex = this.ledger.open(startedItem);
    this.sink.emit({ type: 'response.output_item.added', output_index: outputIndex, item: startedItem });
    for (const planned of plan?.beforeExecute ?? []) this.emitPlanned(planned, call.itemId, outputIndex);
    return { call, entry, plan, outputIndex, modelCall };
  }

  /** Each executor that annotates sees this response's completed calls of its own type. */
  private annotate(text: string): Array<Record<string, unknown>> {
    const out: Array<Record<string, unknown>> = [];
    for (const [executor, results] of this.completedCalls) out.push(...(executor.annotateText?.(text, results) ?? []));
    return out;
  }

  private finishGatewayCall(slot: CallSlot): void {
    if (slot.outputIndex < 0 || !slot.result) return;
    const { call, entry, result } = slot;
    const binding = entry.ownership.kind === 'gateway' ? entry.ownership.binding : undefined;
    if (binding?.executor.annotateText && result.status === 'completed') {
      const list = this.completedCalls.get(binding.executor) ?? [];
      list.push(result);
      this.completedCalls.set(binding.executor, list);
    }
    for (const planned of slot.plan?.afterExecute(result) ?? []) this.emitPlanned(planned, call.itemId, slot.outputIndex);
    const error = result.error ?? { code: 'tool_error', message: result.output.text };
    const produced = binding
      ? binding.executor.publicOutput(result, binding.params, { include: this.req.include })
      : (entry.handler.unboundCallItem?.(call, error) ?? { type: `${entry.toolType}_call`, status: 'failed', error: error.message });
    const item = { ...produced, id: call.itemId, status: produced.status ?? (result.status === 'completed' ? 'completed' : 'failed') } as PublicItem;
    this.ledger.set(slot.outputIndex, item);
    this.sink.emit({ type: 'response.output_item.done', output_index: slot.outputIndex, item });
  }

  private emitPlanned(planned: PlannedEvent, itemId: string, outputIndex: number): void {
    const { type, ...rest } = planned;
    this.sink.emit({ type, item_id: itemId, output_index: outputIndex, ...rest });
  }

  // --- approvals ------------------------------------------------------------

  /**
   * Answers `mcp_approval_response` items before the first round: approved
   * calls run now (with their public lifecycle), denied ones tell the model so.
   * Either way the output lands where the response stood in the input.
   */
  private async resolveApprovals(approvals: ApprovalSlot[], priorPublic: PublicItem[]): Promise<void> {
    // An approval the conversation already shows carried out (an `mcp_call`
    // bearing its id) was answered in an earlier turn: running it again would
    // repeat the call's side effects. That item supplies the model's output.
    const executed = new Set<string>();
    for (const item of [...priorPublic, ...this.req.input]) {
      if (item.type === 'mcp_call' && typeof item.approval_request_id === 'string') executed.add(item.approval_request_id);
    }
    approvals = approvals.filter((approval) => !executed.has(approval.approvalRequestId));
    if (approvals.length === 0) return;
    const known = new Map<string, Record<string, unknown>>();
    for (const item of [...priorPublic, ...this.req.input]) {
      if (item.type === 'mcp_approval_request' && typeof item.id === 'string') known.set(item.id, item as Record<string, unknown>);
    }
    const batch = this.openBatch();
    const outputs = new Map<ApprovalSlot, string>();
    const running: Array<{ approval: ApprovalSlot; index: number }> = [];
    for (const approval of approvals) {
      const request = known.get(approval.approvalRequestId);
      if (!request) {
        throw new InvalidRequestError(
          `mcp_approval_response refers to approval request "${approval.approvalRequestId}", which is not in this conversation.`,
          'input',
          'approval_request_not_found',
        );
      }
      if (!approval.approve) {
        outputs.set(approval, JSON.stringify({ error: { code: 'approval_denied', message: `The user denied this call.${approval.reason ? ` Reason: ${approval.reason}` : ''}` } }));
        continue;
      }
      const entry = [...this.registry.all()].find((e) => e.serverLabel === request.server_label && e.toolName === request.name && e.ownership.kind === 'gateway');
      if (!entry) {
        throw new InvalidRequestError(
          `The approved call to "${String(request.name)}" on server "${String(request.server_label)}" has no matching tool declaration in this request.`,
          'tools',
          'approval_tool_not_declared',
        );
      }
      const args = typeof request.arguments === 'string' ? request.arguments : JSON.stringify(request.arguments ?? {});
      const call = { ...gatewayCall(entry, approval.approvalRequestId, args), approvalRequestId: approval.approvalRequestId };
      this.gatewayCallsMade++;
      running.push({ approval, index: batch.slots.length });
      batch.add(this.beginCallSlot(call, entry, null));
    }
    try {
      await batch.settle();
    } finally {
      this.activeBatches.delete(batch);
    }
    for (const { approval, index } of running) outputs.set(approval, batch.slots[index].result?.output.text ?? '');
    // Positions index the transcript itself; insert from the back so earlier ones stay valid,
    // and reverse before the (stable) sort so answers sharing a position keep their given order.
    for (const approval of [...approvals].reverse().sort((a, b) => b.position - a.position)) {
      this.transcript.splice(approval.position, 0, { type: 'function_call_output', call_id: approval.approvalRequestId, output: outputs.get(approval) ?? '' });
    }
  }

  // --- lifecycle ------------------------------------------------------------

  private emitDiscoveryItem(item: PublicItem): void {
    const failed = Boolean((item as { error?: unknown }).error);
    emitWholeItem(this.sink, this.ledger, item, (outputIndex) => {
      this.sink.emit({ type: `response.${item.type}.in_progress`, item_id: item.id, output_index: outputIndex });
      this.sink.emit({ type: `response.${item.type}.${failed ? 'failed' : 'completed'}`, item_id: item.id, output_index: outputIndex });
    });
  }

  private ensureStarted(): void {
    if (this.started) return;
    this.started = true;
    const snapshot = this.snapshot('in_progress');
    this.sink.emit({ type: 'response.created', response: snapshot });
    this.sink.emit({ type: 'response.in_progress', response: snapshot });
  }

  private snapshot(status: ResponseStatus, extra: { error?: { code: string; message: string }; incompleteReason?: string | null } = {}) {
    const terminal = status !== 'in_progress';
    return buildResponseObject(this.req, {
      id: this.id,
      createdAt: this.createdAt,
      status,
      output: terminal ? this.ledger.items : [],
      tools: this.registry?.publicTools ?? [],
      usage: terminal ? this.usage : null,
      error: extra.error ?? null,
      incompleteReason: extra.incompleteReason ?? null,
      completedAt: status === 'completed' ? Math.floor(Date.now() / 1000) : null,
    });
  }

  private async finish(status: 'completed' | 'incomplete', incompleteReason: string | null): Promise<void> {
    this.ensureStarted();
    const response = this.snapshot(status, { incompleteReason });
    await this.deps.state.save({
      request: this.req,
      response,
      modelItems: this.transcript.slice(this.turnStart),
      tools: this.registry.continuationTools,
      prior: { ...this.prior, modelItems: this.transcript.slice(0, this.turnStart), untranslated: undefined },
    });
    this.sink.emit({ type: status === 'completed' ? 'response.completed' : 'response.incomplete', response });
  }

  private async fail(err: unknown): Promise<void> {
    const error = isGatewayError(err)
      ? { code: err.code ?? err.type, message: err.message }
      : { code: 'server_error', message: 'The gateway failed while producing this response.' };
    for (const batch of this.activeBatches) batch.cancel();
    await this.deps.state.discard?.(this.req, this.id).catch(() => undefined);
    this.sink.emit({ type: 'response.failed', response: this.snapshot('failed', { error }) });
  }

  private markLastMessageIncomplete(): void {
    for (let i = this.ledger.items.length - 1; i >= 0; i--) {
      const item = this.ledger.items[i];
      if (item.type === 'message') {
        this.ledger.set(i, { ...item, status: 'incomplete' } as PublicItem);
        return;
      }
    }
  }

  /** Client disconnect: abort the upstream request and every in-flight tool call at once. */
  private cancel(): void {
    this.activeUpstream?.unsubscribe();
    this.activeUpstream = undefined;
    for (const batch of this.activeBatches) batch.cancel();
    this.cancelReject?.(new RunCancelled());
  }
}
