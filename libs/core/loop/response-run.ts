import { defer, finalize, firstValueFrom, Observable, takeUntil } from 'rxjs';
import type { GatewayConfig } from '#config/gateway-config.js';
import type { UpstreamClient } from '../upstream/upstream-client.interface.js';
import { InvalidRequestError } from '../errors/gateway-error.js';
import type { ToolHandlerExplorer } from '../handlers/tool-handler.explorer.js';
import type { AnyToolHandler, ApprovalVerdict } from '../handlers/tool-handler.interface.js';
import { newId } from '../ids.js';
import type { ModelItem, PublicItem } from '../protocol/items.js';
import type { FlowGate } from '../protocol/flow-gate.js';
import { resolveToolChoice } from '../registry/tool-choice.resolver.js';
import type { ToolPreparationService } from '../registry/tool-preparation.service.js';
import type { ToolRegistry } from '../registry/tool-registry.js';
import { GatewayCalls } from './gateway-calls.js';
import type { GatewayScheduler } from './gateway-scheduler.service.js';
import { HistoryTranslator, type ApprovalSlot } from './history-to-model.js';
import { LoopDecision, classifyRound } from './loop-decision.js';
import { assertOutputsAnswerCalls } from './orphan-outputs.js';
import type { ModelContextService } from './model-context.service.js';
import type { ReasoningEventStyle, ResponseStreamEvent } from './response-events.js';
import { ResponseLifecycle } from './response-lifecycle.js';
import type { PriorState, ResponseRequest } from './response-request.js';
import type { ResponseStateStore } from './response-state.interface.js';
import { RoundRunner } from './round-runner.js';
import type { RunTrace } from './run-observer.interface.js';

export interface RunDependencies {
  upstream: UpstreamClient;
  preparation: ToolPreparationService;
  scheduler: GatewayScheduler;
  explorer: ToolHandlerExplorer;
  config: GatewayConfig;
  state: ResponseStateStore;
  reasoningEvents: ReasoningEventStyle;
  /** Streaming runs: lets a slow client hold back the upstream read. */
  flow?: FlowGate;
  /** Logs, metrics and traces of this run, when a `RUN_OBSERVER` is installed. */
  trace?: RunTrace;
  /** The upstream's context lengths, to fit `max_output_tokens` (absent: sent as requested). */
  contexts?: ModelContextService;
}

/** Raised inside a run when the client went away; never reaches the client. */
class RunCancelled extends Error {}

/** What a cancelled step resolves to instead of its value. */
const CANCELLED = Symbol('cancelled');

/** Emits once when the signal fires, at once if it already has. */
function abortOf(signal: AbortSignal): Observable<void> {
  return new Observable<void>((subscriber) => {
    if (signal.aborted) return subscriber.next();
    const onAbort = () => subscriber.next();
    signal.addEventListener('abort', onAbort, { once: true });
    return () => signal.removeEventListener('abort', onAbort);
  });
}

/**
 * One request through the tool loop: prepare tools, answer approvals, then
 * rounds of infer → classify → execute gateway calls → re-infer, until the
 * model is done, the client must act, or the round budget runs out.
 *
 * The public side (events, ledger, terminal event) is `ResponseLifecycle`;
 * a round is `RoundRunner`'s Observable; gateway calls are `GatewayCalls`.
 * Every step that waits runs until the abort signal, so a client going away
 * cancels through one path: the step's teardown.
 *
 * In blocking mode errors propagate to the caller (an HTTP error); in
 * streaming mode, once the stream has started, they end it with `response.failed`.
 */
export class ResponseRun {
  readonly id: string;
  readonly createdAt: number;
  private readonly lifecycle: ResponseLifecycle;
  private readonly calls: GatewayCalls;
  private readonly aborted$: Observable<void>;
  private readonly transcript: ModelItem[] = [];
  private turnStart = 0;
  private prior: PriorState = { modelItems: [], publicItems: [] };
  private registry!: ToolRegistry;

  constructor(
    private readonly deps: RunDependencies,
    req: ResponseRequest,
    out: (event: ResponseStreamEvent) => void,
    private readonly signal: AbortSignal,
  ) {
    this.id = req.responseId ?? newId('resp');
    this.createdAt = req.createdAt ?? Math.floor(Date.now() / 1000);
    this.lifecycle = new ResponseLifecycle(this.id, this.createdAt, req, deps.state, out);
    this.calls = new GatewayCalls(deps, this.lifecycle);
    this.aborted$ = abortOf(signal);
  }

  /** The request as the run sees it: replaced once, by the effective request, when a continuation inherits tools. */
  private get req(): ResponseRequest {
    return this.lifecycle.request;
  }

  private set req(request: ResponseRequest) {
    this.lifecycle.request = request;
  }

  async execute(): Promise<void> {
    const startTimer = this.req.stream ? setTimeout(() => this.lifecycle.ensureStarted(), this.deps.config.server.keepAliveMs) : undefined;
    try {
      await this.run();
    } catch (err) {
      if (err instanceof RunCancelled || this.signal.aborted) return;
      if (!this.req.stream || !this.lifecycle.hasStarted) throw err;
      await this.lifecycle.fail(err);
    } finally {
      clearTimeout(startTimer);
    }
  }

  /** Waits for `work` unless the client goes first; then `work` is unsubscribed (its teardown cancels it) and the run stops. */
  private async untilAborted<T>(work: Observable<T>): Promise<T> {
    const value = await firstValueFrom(work.pipe(takeUntil(this.aborted$)), { defaultValue: CANCELLED });
    if (value === CANCELLED || this.signal.aborted) throw new RunCancelled();
    return value as T;
  }

  private async run(): Promise<void> {
    await this.resolveReferences();
    const prior: PriorState = (await this.deps.state.load(this.req)) ?? { modelItems: [], publicItems: [] };
    this.prior = prior;
    assertOutputsAnswerCalls(this.req.input, prior.publicItems, prior.modelItems, this.deps.explorer.callOutputTypes());
    this.inheritTools(prior);
    this.registry = await this.deps.preparation.prepare(this.req.tools, {
      history: [...prior.publicItems, ...this.req.input],
      inputStart: prior.publicItems.length,
      signal: this.signal,
      requestId: this.id,
      owner: this.req.owner,
    });
    this.lifecycle.registry = this.registry;
    const choice = resolveToolChoice(this.req.toolChoice, this.registry, this.deps.explorer);

    this.transcript.push(...prior.modelItems);
    // Approval answers in prior items were resolved in their own turn: their slots are dropped.
    if (prior.untranslated?.length) this.translate(prior.untranslated, []);
    this.turnStart = this.transcript.length;
    const approvals: ApprovalSlot[] = [];
    this.translate(this.req.input, approvals);

    if (this.req.generate === false) return this.prepareOnly(approvals);
    if (this.registry.discoveryItems.length > 0 || approvals.length > 0) this.lifecycle.ensureStarted();
    for (const item of this.registry.discoveryItems) this.lifecycle.emitDiscoveryItem(item);
    if (approvals.length > 0) await this.answerApprovals(approvals, prior.publicItems);

    const fitted = this.req.maxOutputTokens !== null || this.req.truncation === 'auto';
    const contextLength = fitted && this.deps.contexts ? await this.deps.contexts.contextLength(this.req.model) : null;
    const rounds = new RoundRunner({ ...this.deps, signal: this.signal }, this.lifecycle, this.calls, this.registry, this.transcript, contextLength);
    const maxRounds = this.deps.config.tools.maxRounds;
    for (let round = 1; ; round++) {
      const outcome = await this.untilAborted(rounds.round$(round, choice));
      if (outcome.incompleteReason) return this.finish('incomplete', outcome.incompleteReason);
      const decision = classifyRound({ hasClientAction: outcome.clientAction, gatewayResults: outcome.gatewayResults, round, maxRounds });
      if (decision === LoopDecision.Continue) continue;
      if (decision === LoopDecision.Incomplete) return this.finish('incomplete', 'max_rounds');
      return this.finish('completed', null);
    }
  }

  private finish(status: 'completed' | 'incomplete', incompleteReason: string | null): Promise<void> {
    return this.lifecycle.finish(status, incompleteReason, { transcript: this.transcript, turnStart: this.turnStart, prior: this.prior });
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
   * output stays empty, so discovery listings appear on the first generating
   * turn. Approval answers would run tools with nothing to read their results.
   */
  private async prepareOnly(approvals: ApprovalSlot[]): Promise<void> {
    if (approvals.length > 0) {
      throw new InvalidRequestError(`'generate: false' cannot carry ${approvals[0].itemType} items: approved calls run only on a turn that generates.`, 'generate');
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
    // One item at a time keeps approval positions relative to the transcript as it grows.
    new HistoryTranslator(this.registry, this.deps.explorer).translate(items, this.transcript, approvals);
  }

  /**
   * Answers approval items before the first round, through each tool
   * module's approval contract: approved calls run now (with their public
   * lifecycle), denied ones tell the model so. Either way the output lands
   * where the answer stood in the input.
   */
  private async answerApprovals(approvals: ApprovalSlot[], priorPublic: PublicItem[]): Promise<void> {
    const verdicts = this.verdicts(approvals, [...priorPublic, ...this.req.input]);
    const live = approvals.filter((approval) => verdicts.get(approval)!.kind !== 'settled');
    if (live.length === 0) return;
    const batch = this.calls.openBatch();
    const outputs = new Map<ApprovalSlot, string>();
    const running: Array<{ approval: ApprovalSlot; index: number }> = [];
    const start = () => {
      for (const approval of live) {
        const verdict = verdicts.get(approval)!;
        if (verdict.kind === 'denied') outputs.set(approval, verdict.output);
        if (verdict.kind !== 'approved') continue;
        running.push({ approval, index: batch.slots.length });
        this.calls.startApproved(verdict.entry, approval.answer.requestId, verdict.arguments, batch);
      }
      return batch.settle();
    };
    // Starting is inside the step, so a call that fails to start stops the ones already running, like a cancel.
    await this.untilAborted(defer(start).pipe(finalize(() => batch.cancel())));
    for (const { approval, index } of running) outputs.set(approval, batch.slots[index].result?.output.text ?? '');
    // Positions index the transcript itself; insert from the back so earlier ones stay valid,
    // and reverse before the (stable) sort so answers sharing a position keep their given order.
    for (const approval of [...live].reverse().sort((a, b) => b.position - a.position)) {
      this.transcript.splice(approval.position, 0, { type: 'function_call_output', call_id: approval.answer.requestId, output: outputs.get(approval) ?? '' });
    }
  }

  /** One verdict per answer, each module deciding its own answers in their given order. */
  private verdicts(approvals: ApprovalSlot[], conversation: readonly PublicItem[]): Map<ApprovalSlot, ApprovalVerdict> {
    const byHandler = new Map<AnyToolHandler, ApprovalSlot[]>();
    for (const approval of approvals) byHandler.set(approval.handler, [...(byHandler.get(approval.handler) ?? []), approval]);
    const verdicts = new Map<ApprovalSlot, ApprovalVerdict>();
    const entries = [...this.registry.all()];
    for (const [handler, own] of byHandler) {
      const decided = handler.approvals!.resolve(
        own.map((approval) => approval.answer),
        { conversation, entries },
      );
      own.forEach((approval, i) => verdicts.set(approval, decided[i]));
    }
    return verdicts;
  }
}
