import type { OperatorFunction } from 'rxjs';
import type { GatewayCall, GatewayCallResult, GatewayEventPlan, GatewayExecutor, PlannedEvent } from '#tool-sdk/contract/index.js';
import { newId } from '#tool-sdk/ids.js';
import type { FunctionCallItem, ModelItem, PublicItem } from '#tool-sdk/items.js';
import type { ToolEntry } from '../registry/tool-registry.js';
import type { DetectedGatewayCall, OpenedGatewayItem } from './round-classification.js';
import type { ScheduledCall } from './gateway-scheduler.service.js';
import { UNSTAMPED, wholeItemEvents, type EventInit } from './response-events.js';
import { startEvents } from './run-values.js';
import type { RunContext } from './run-context.js';
import type { RoundTrace } from './run-observer.interface.js';
import type { CallCount } from './run-state.js';

/** A call to a registered gateway tool, with a fresh public item id in its module's prefix. */
export function gatewayCall(entry: ToolEntry, callId: string, args: string, itemId?: string): GatewayCall {
  return {
    callId,
    itemId: itemId ?? newId(entry.handler.itemIdPrefix ?? 'gw'),
    modelName: entry.modelName,
    toolName: entry.toolName,
    scope: entry.scope,
    arguments: args,
  };
}

function bindingOf(entry: ToolEntry) {
  return entry.ownership.kind === 'gateway' ? entry.ownership.binding : undefined;
}

/** One gateway call as it moves through a batch: started publicly, executed, finished in model order. */
interface CallSlot {
  call: GatewayCall;
  entry: ToolEntry;
  plan?: GatewayEventPlan;
  /** False for a call refused before it started (no public item). */
  shown: boolean;
  result?: GatewayCallResult;
}

/**
 * The gateway calls of one round (or of the approvals answered before the
 * first): each call's public start, the per-response call limit, calls that
 * become approval requests instead of running, execution through the
 * scheduler's operator, and each call's public finish in model order,
 * whatever order they complete in.
 *
 * `start` turns a call into what the scheduler runs, with the public events
 * it makes at once; `execute()` is the operator that runs them and emits
 * each call's public finish. Unsubscribing from it stops every call in flight.
 */
export class GatewayCallBatch {
  private readonly slots: CallSlot[] = [];
  private nextToFinish = 0;
  private made: number;
  private limitReached: boolean;
  /** Never written in place: shared with the count it came from and the counts it hands out (one entry per annotating executor). */
  private completed: ReadonlyMap<GatewayExecutor, readonly GatewayCallResult[]>;
  /** Model calls re-keyed by the approval request they became; made with the first. */
  private rekeyed?: Map<FunctionCallItem, string>;

  constructor(
    private readonly ctx: RunContext,
    from: CallCount,
    private readonly roundTrace?: RoundTrace,
  ) {
    this.made = from.made;
    this.limitReached = from.limitReached;
    this.completed = from.completed;
  }

  /** The count after this batch, for the next state. */
  get count(): CallCount {
    return { made: this.made, limitReached: this.limitReached, completed: this.completed };
  }

  /** Calls that ended in this batch (run, failed or refused), in model order. */
  get results(): number {
    return this.slots.length;
  }

  /** Each call's output for the model, in model order. */
  outputs(): ModelItem[] {
    // A loop, not `flatMap` with an array per slot: that was a line of its own in a tool round's profile.
    const outputs: ModelItem[] = [];
    for (const slot of this.slots) if (slot.result) outputs.push({ type: 'function_call_output', call_id: slot.call.callId, output: slot.result.output.text });
    return outputs;
  }

  outputOf(index: number): string {
    return this.slots[index]?.result?.output.text ?? '';
  }

  /** The model's items with calls that became approval requests keyed by the request's id. */
  rekey(items: readonly ModelItem[]): ModelItem[] {
    const rekeyed = this.rekeyed;
    if (!rekeyed) return [...items];
    return items.map((item) => {
      const id = rekeyed.get(item as FunctionCallItem);
      return id ? { ...(item as FunctionCallItem), call_id: id } : item;
    });
  }

  /**
   * Starts one call the model made: its public events, and what the scheduler
   * runs, 'approval' when it became an approval request, or null when it was
   * refused (by its handler or the limit).
   */
  start(detected: DetectedGatewayCall): { events: EventInit[]; started: ScheduledCall | 'approval' | null } {
    const { entry } = detected;
    const call = gatewayCall(entry, detected.callId, detected.arguments, detected.opened?.itemId);
    if (detected.rejected !== undefined) {
      // A client call its handler refused: never shown, and not a tool run; the model reads why and tries again.
      this.slots.push({ call, entry, shown: false, result: { call, status: 'failed', output: { text: detected.rejected, isError: true } } });
      return { events: [], started: null };
    }
    const binding = bindingOf(entry);

    const approvals = entry.handler.approvals;
    if (binding && approvals?.requires(call, binding.params)) {
      const item = { ...approvals.requestItem(call, binding.params) };
      item.id ??= newId('apr');
      // The model's call is keyed by the approval id from here on, so the
      // answer matches it whether history comes from storage or the client.
      (this.rekeyed ??= new Map()).set(detected.modelCall, item.id!);
      return { events: wholeItemEvents(item as PublicItem), started: 'approval' };
    }

    const limit = this.callLimit();
    if (this.made >= limit.max) {
      this.limitReached = true;
      // The call stays in the transcript; its output tells the model why it did not run.
      const text = JSON.stringify({ error: { code: limit.code, message: limit.message } });
      // A call whose item already streamed ends that item as failed, in model order.
      this.slots.push({ call, entry, shown: detected.opened !== undefined, result: { call, status: 'failed', output: { text, isError: true } } });
      return { events: this.flush(), started: null };
    }
    this.made++;
    if (this.made >= limit.max) this.limitReached = true;
    const events: EventInit[] = [];
    return { events, started: this.begin(call, entry, events, detected.opened) };
  }

  /** A call the client approved: it counts toward the limit but is never refused by it. */
  startApproved(entry: ToolEntry, requestId: string, args: string): { index: number; scheduled: ScheduledCall; events: EventInit[] } {
    const call = { ...gatewayCall(entry, requestId, args), approvalRequestId: requestId };
    this.made++;
    const events: EventInit[] = [];
    const scheduled = this.begin(call, entry, events);
    return { index: scheduled.slot, scheduled, events };
  }

  /** Calls that became approval requests instead of running. */
  get approvalsRequested(): number {
    return this.rekeyed?.size ?? 0;
  }

  /**
   * Runs the started calls through the scheduler and emits each one's public
   * finish, in model order, as the results that make them due come in. The
   * public events among the calls (their starts, the model's own) pass on in
   * their place, ahead of what a call they precede emits.
   */
  execute(): OperatorFunction<EventInit | ScheduledCall, EventInit> {
    const { ctx, roundTrace } = this;
    const trace = ctx.trace;
    return ctx.services.scheduler.scheduleAmong<EventInit, EventInit>(
      {
        requestId: ctx.id,
        request: ctx.toolRequest,
        include: ctx.request.include,
        onCall: trace ? (call, entry) => trace.toolCall(call, entry.toolType, roundTrace) : undefined,
      },
      ({ slot, result }) => {
        this.slots[slot].result = result;
        return this.flush();
      },
    );
  }

  /**
   * The request's own `max_tool_calls`, or the gateway's ceiling
   * (`tools.maxGatewayCallsPerRequest`) when lower: without one, a model that
   * keeps calling tools in many parallel calls per round makes one request
   * run thousands of calls against shared servers.
   */
  private callLimit(): { max: number; code: string; message: string } {
    const own = this.ctx.request.maxToolCalls;
    const ceiling = this.ctx.services.config.tools.maxGatewayCallsPerRequest;
    if (own !== null && own <= ceiling) {
      return { max: own, code: 'max_tool_calls', message: `The limit of ${own} tool calls for this response was reached; the call was not run.` };
    }
    return {
      max: ceiling,
      code: 'gateway_call_limit',
      message: `This gateway runs at most ${ceiling} tool calls per response and that many have run; the call was not run. Answer with what you have.`,
    };
  }

  /** The call's public start (`output_item.added` and the planned pre-execution events), into `events`. */
  private begin(call: GatewayCall, entry: ToolEntry, events: EventInit[], opened?: OpenedGatewayItem): ScheduledCall {
    const { request } = this.ctx;
    const binding = bindingOf(entry);
    const plan = binding?.executor.planEvents(call, binding.params, { include: request.include, streamed: !!opened });
    // A streamed call's item is open already (the accumulator opened it at the model's first token).
    if (!opened) {
      const startedItem = { ...(plan?.startedItem ?? { type: `${entry.toolType}_call` }), id: call.itemId, status: 'in_progress' } as PublicItem;
      events.push(...startEvents(), { type: 'response.output_item.added', output_index: UNSTAMPED, item: startedItem });
    }
    // A streamed call's field had its deltas; its `done` closes them with the whole text.
    const stream = opened && binding ? binding.executor.streamArguments?.(binding.params) : undefined;
    if (stream) events.push(plannedEvent({ type: stream.done, [stream.field]: decodedField(call.arguments, stream.field) }, call.itemId));
    for (const planned of plan?.beforeExecute ?? []) events.push(plannedEvent(planned, call.itemId));
    const slot = this.slots.push({ call, entry, plan, shown: true }) - 1;
    return { slot, call, entry };
  }

  /** Each executor that annotates sees this response's completed calls of its own type. */
  annotate(text: string): Array<Record<string, unknown>> {
    const out: Array<Record<string, unknown>> = [];
    for (const [executor, results] of this.completed) out.push(...(executor.annotateText?.(text, [...results]) ?? []));
    return out;
  }

  /** Public completion follows model call order, whatever order the calls finish in: the events of those now due. */
  private flush(): EventInit[] {
    const events: EventInit[] = [];
    while (this.nextToFinish < this.slots.length && this.slots[this.nextToFinish].result) this.finish(this.slots[this.nextToFinish++], events);
    return events;
  }

  private finish(slot: CallSlot, events: EventInit[]): void {
    if (!slot.shown || !slot.result) return;
    const { call, entry, result } = slot;
    const { request } = this.ctx;
    const binding = bindingOf(entry);
    if (binding?.executor.annotateText && result.status === 'completed') {
      this.completed = new Map(this.completed).set(binding.executor, [...(this.completed.get(binding.executor) ?? []), result]);
    }
    for (const planned of slot.plan?.afterExecute(result) ?? []) events.push(plannedEvent(planned, call.itemId));
    const error = result.error ?? { code: 'tool_error', message: result.output.text };
    const produced = binding
      ? binding.executor.publicOutput(result, binding.params, { include: request.include })
      : (entry.handler.unboundCallItem?.(call, error) ?? { type: `${entry.toolType}_call`, status: 'failed', error: error.message });
    const item = { ...produced, id: call.itemId, status: produced.status ?? (result.status === 'completed' ? 'completed' : 'failed') } as PublicItem;
    events.push({ type: 'response.output_item.done', output_index: UNSTAMPED, item });
  }
}

function plannedEvent(planned: PlannedEvent, itemId: string): EventInit {
  const { type, ...rest } = planned;
  return { type, item_id: itemId, output_index: UNSTAMPED, ...rest };
}

/** The string `field` of a call's JSON arguments, as its deltas decoded it; empty when absent or not JSON. */
function decodedField(args: string, field: string): string {
  try {
    const value = (JSON.parse(args) as Record<string, unknown> | null)?.[field];
    return typeof value === 'string' ? value : '';
  } catch {
    return '';
  }
}
