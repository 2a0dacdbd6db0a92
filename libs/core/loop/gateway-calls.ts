import type { GatewayConfig } from '#config/gateway-config.js';
import type { GatewayCall, GatewayCallResult, GatewayExecutor, PlannedEvent } from '../handlers/tool-handler.interface.js';
import { newId } from '../ids.js';
import type { FunctionCallItem, PublicItem } from '../protocol/items.js';
import type { ToolEntry } from '../registry/tool-registry.js';
import { CallBatch, type CallSlot } from './call-batch.js';
import type { DetectedGatewayCall } from './gateway-accumulator.js';
import type { GatewayScheduler } from './gateway-scheduler.service.js';
import type { ResponseLifecycle } from './response-lifecycle.js';
import type { RoundTrace, RunTrace } from './run-observer.interface.js';

/** A call to a registered gateway tool, with a fresh public item id in its module's prefix. */
export function gatewayCall(entry: ToolEntry, callId: string, args: string): GatewayCall {
  return {
    callId,
    itemId: newId(entry.handler.itemIdPrefix ?? 'gw'),
    modelName: entry.modelName,
    toolName: entry.toolName,
    scope: entry.scope,
    arguments: args,
  };
}

function bindingOf(entry: ToolEntry) {
  return entry.ownership.kind === 'gateway' ? entry.ownership.binding : undefined;
}

/**
 * The gateway-owned calls of one response: their public lifecycle (started,
 * planned events, finished in model order), the per-response call limit,
 * calls that become approval requests instead of running, and the results
 * that annotate later answers.
 */
export class GatewayCalls {
  private made = 0;
  /** Set once the call limit is reached: later rounds offer the model no tools. */
  limitReached = false;
  /** Completed calls per executor that annotates answers, for the messages that follow them. */
  private readonly completed = new Map<GatewayExecutor, GatewayCallResult[]>();

  constructor(
    private readonly deps: { scheduler: GatewayScheduler; config: GatewayConfig; trace?: RunTrace },
    private readonly lifecycle: ResponseLifecycle,
  ) {}

  private get include(): readonly string[] {
    return this.lifecycle.request.include;
  }

  openBatch(roundTrace?: RoundTrace): CallBatch {
    const trace = this.deps.trace;
    const execution = this.deps.scheduler.open({
      requestId: this.lifecycle.id,
      include: this.include,
      onCall: trace ? (call, entry) => trace.toolCall(call, entry.toolType, roundTrace) : undefined,
    });
    return new CallBatch(execution, (slot) => this.finish(slot));
  }

  /** Starts one call the model made; returns true when it became an approval request instead of running. */
  start(detected: DetectedGatewayCall, batch: CallBatch): boolean {
    const { entry } = detected;
    const call = gatewayCall(entry, detected.callId, detected.arguments);
    const binding = bindingOf(entry);

    if (binding?.executor.requiresApproval?.(call, binding.params) && binding.executor.approvalRequestItem) {
      const item = { ...binding.executor.approvalRequestItem(call, binding.params) };
      item.id ??= newId('apr');
      // The model's call is keyed by the approval id from here on, so the
      // answer matches it whether history comes from storage or the client.
      detected.modelCall.call_id = item.id!;
      this.lifecycle.emitWhole(item as PublicItem);
      return true;
    }

    const limit = this.callLimit();
    if (this.made >= limit.max) {
      this.limitReached = true;
      // The call stays in the transcript; its output tells the model why it did not run.
      batch.addRefused({
        call,
        entry,
        outputIndex: -1,
        modelCall: detected.modelCall,
        result: { call, status: 'failed', output: { text: JSON.stringify({ error: { code: limit.code, message: limit.message } }), isError: true } },
      });
      return false;
    }
    this.made++;
    if (this.made >= limit.max) this.limitReached = true;
    batch.add(this.begin(call, entry, detected.modelCall));
    return false;
  }

  /** Runs a call the client approved: it counts toward the limit but is never refused by it. */
  startApproved(entry: ToolEntry, requestId: string, args: string, batch: CallBatch): void {
    const call = { ...gatewayCall(entry, requestId, args), approvalRequestId: requestId };
    this.made++;
    batch.add(this.begin(call, entry, null));
  }

  /**
   * The request's own `max_tool_calls`, or the gateway's ceiling
   * (`tools.maxGatewayCallsPerRequest`) when lower: without one, a model that
   * keeps calling tools in many parallel calls per round makes one request
   * run thousands of calls against shared servers.
   */
  private callLimit(): { max: number; code: string; message: string } {
    const own = this.lifecycle.request.maxToolCalls;
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
  private begin(call: GatewayCall, entry: ToolEntry, modelCall: FunctionCallItem | null): CallSlot {
    const binding = bindingOf(entry);
    const plan = binding?.executor.planEvents(call, binding.params, { include: this.include });
    const startedItem = { ...(plan?.startedItem ?? { type: `${entry.toolType}_call` }), id: call.itemId, status: 'in_progress' } as PublicItem;
    this.lifecycle.ensureStarted();
    const outputIndex = this.lifecycle.ledger.open(startedItem);
    this.lifecycle.sink.emit({ type: 'response.output_item.added', output_index: outputIndex, item: startedItem });
    for (const planned of plan?.beforeExecute ?? []) this.emitPlanned(planned, call.itemId, outputIndex);
    return { call, entry, plan, outputIndex, modelCall };
  }

  /** Each executor that annotates sees this response's completed calls of its own type. */
  annotate(text: string): Array<Record<string, unknown>> {
    const out: Array<Record<string, unknown>> = [];
    for (const [executor, results] of this.completed) out.push(...(executor.annotateText?.(text, results) ?? []));
    return out;
  }

  private finish(slot: CallSlot): void {
    if (slot.outputIndex < 0 || !slot.result) return;
    const { call, entry, result } = slot;
    const binding = bindingOf(entry);
    if (binding?.executor.annotateText && result.status === 'completed') {
      const list = this.completed.get(binding.executor) ?? [];
      list.push(result);
      this.completed.set(binding.executor, list);
    }
    for (const planned of slot.plan?.afterExecute(result) ?? []) this.emitPlanned(planned, call.itemId, slot.outputIndex);
    const error = result.error ?? { code: 'tool_error', message: result.output.text };
    const produced = binding
      ? binding.executor.publicOutput(result, binding.params, { include: this.include })
      : (entry.handler.unboundCallItem?.(call, error) ?? { type: `${entry.toolType}_call`, status: 'failed', error: error.message });
    const item = { ...produced, id: call.itemId, status: produced.status ?? (result.status === 'completed' ? 'completed' : 'failed') } as PublicItem;
    this.lifecycle.ledger.set(slot.outputIndex, item);
    this.lifecycle.sink.emit({ type: 'response.output_item.done', output_index: slot.outputIndex, item });
  }

  private emitPlanned(planned: PlannedEvent, itemId: string, outputIndex: number): void {
    const { type, ...rest } = planned;
    this.lifecycle.sink.emit({ type, item_id: itemId, output_index: outputIndex, ...rest });
  }
}
