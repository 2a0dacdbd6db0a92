import { newId } from '#tool-sdk/ids.js';
import type { FunctionCallItem, ModelItem, PublicItem, ReasoningItem, Usage } from '#tool-sdk/items.js';
import type { ModelEvent } from '../protocol/model-events.js';
import type { ClientCallRelay, ClientCallShape } from '#tool-sdk/contract/index.js';
import type { ToolEntry, ToolRegistry } from '../registry/tool-registry.js';
import { JsonStringFieldStreamer } from './json-string-field.streamer.js';
import { UNSTAMPED, reasoningEventNames, type EventInit, type ReasoningEventStyle } from './response-events.js';

/** A completed call to a gateway-owned tool, found in the model's output. */
export interface DetectedGatewayCall {
  entry: ToolEntry;
  callId: string;
  modelName: string;
  arguments: string;
  /** The call as it stands in the model transcript; the loop may re-key it (approvals). */
  modelCall: FunctionCallItem;
  /** A client-owned call its handler refused (`clientCalls.restore`): the model reads this as its result. */
  rejected?: string;
  /** Its public item was opened while the model wrote it (`GatewayExecutor.streamArguments`). */
  opened?: OpenedGatewayItem;
}

/** A gateway call's public item, opened and streamed before the call was complete. */
export interface OpenedGatewayItem {
  itemId: string;
  startedItem: PublicItem;
}

interface OpenMessage {
  kind: 'message';
  item: Record<string, unknown>;
  text: string;
}

interface OpenReasoning {
  kind: 'reasoning';
  item: Record<string, unknown>;
  text: string;
  /** The `reasoning_text` content part was announced (`response.content_part.added`). */
  partOpen: boolean;
}

interface OpenClientCall {
  kind: 'client_call';
  /** False while a restored call is not announced yet. */
  announced: boolean;
  entry?: ToolEntry;
  item: Record<string, unknown>;
  shape: ClientCallShape;
  relay: ClientCallRelay;
  args: string;
  /** String-field relays: the decoder of the field, and what it has relayed so far. */
  field?: { name: string; streamer: JsonStringFieldStreamer; soFar: string; events: { delta: string; done: string } };
}

interface OpenGatewayCall {
  kind: 'gateway_call';
  entry: ToolEntry;
  /** Set when the call's arguments stream into its public item. */
  stream?: { opened: OpenedGatewayItem; streamer: JsonStringFieldStreamer; delta: string };
}

type OpenItem = OpenMessage | OpenReasoning | OpenClientCall | OpenGatewayCall;

export interface AccumulatorOptions {
  include: readonly string[];
  reasoningEvents: ReasoningEventStyle;
  /** Annotations for a finished message's text (citations of gateway tool results). */
  annotate?: (text: string) => Array<Record<string, unknown>>;
  /** `reasoning.summary` was asked for (`auto`, `concise`, `detailed`): see `reasoningSummary`. */
  summary?: boolean;
  /** The gateway's own `encrypted_content` for a reasoning item (`ReasoningSealer`); else the upstream's is shown. */
  seal?: (reasoning: ReasoningItem) => string;
}

/**
 * The one classification of an upstream round (raw → gateway → public).
 *
 * Raw model events come in; messages, reasoning and client-owned calls are
 * projected to their public shape and lifecycle events right away; calls to
 * gateway-owned tools are never shown as `function_call` and are handed to
 * `onGatewayCall` when complete. The blocking and streaming paths both run
 * through here. Events are handed to `emit` as values without their output
 * index: the run's edge (`response-output.ts`) numbers items as they open.
 */
export class RoundAccumulator {
  /** The model's own output this round, as the model would see it again. */
  readonly modelItems: ModelItem[] = [];
  clientCalls = 0;
  usage: Usage | null = null;
  finish: { status: 'completed' | 'incomplete'; reason?: string | null } | null = null;

  private readonly open = new Map<string, OpenItem>();
  private readonly reasoningNames: { delta: string; done: string };

  constructor(
    private readonly registry: ToolRegistry,
    private readonly emit: (event: EventInit) => void,
    private readonly onGatewayCall: (call: DetectedGatewayCall) => void,
    private readonly options: AccumulatorOptions,
  ) {
    this.reasoningNames = reasoningEventNames(options.reasoningEvents);
  }

  handle(event: ModelEvent): void {
    switch (event.type) {
      case 'message.start':
        return this.startMessage(event.key, event.phase);
      case 'message.delta':
        return this.messageDelta(event.key, event.delta);
      case 'message.done':
        return this.finishMessage(event.key, event.text);
      case 'reasoning.start':
        return this.startReasoning(event.key);
      case 'reasoning.part':
        return this.openReasoningPart(this.ensure(event.key, 'reasoning') as OpenReasoning);
      case 'reasoning.delta':
        return this.reasoningDelta(event.key, event.delta);
      case 'reasoning.done':
        return this.finishReasoning(event.key, event.text, event.summary, event.encrypted_content);
      case 'call.start':
        return this.startCall(event.key, event.call_id, event.name);
      case 'call.delta':
        return this.callDelta(event.key, event.delta);
      case 'call.done':
        return this.finishCall(event.key, event.call_id, event.name, event.arguments);
      case 'usage':
        this.usage = event.usage;
        return;
      case 'finish':
        this.finish = { status: event.status, reason: event.reason ?? null };
        return;
    }
  }

  // --- messages -----------------------------------------------------------

  private startMessage(key: string, phase?: string | null): void {
    const item: Record<string, unknown> = { id: newId('msg'), type: 'message', status: 'in_progress', role: 'assistant', content: [] };
    if (phase) item.phase = phase;
    this.open.set(key, { kind: 'message', item, text: '' });
    this.emit({ type: 'response.output_item.added', output_index: UNSTAMPED, item: { ...item, content: [] } });
    this.emit({
      type: 'response.content_part.added',
      item_id: item.id,
      output_index: UNSTAMPED,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    });
  }

  private messageDelta(key: string, delta: string): void {
    const open = this.ensure(key, 'message') as OpenMessage;
    open.text += delta;
    this.emit({
      type: 'response.output_text.delta',
      item_id: open.item.id,
      output_index: UNSTAMPED,
      content_index: 0,
      delta,
      logprobs: [],
    });
  }

  private finishMessage(key: string, text: string, status: 'completed' | 'incomplete' = 'completed'): void {
    const open = this.ensure(key, 'message') as OpenMessage;
    // A non-streamed upstream sends no deltas: relay the text as one delta so streaming clients see it.
    if (open.text.length === 0 && text.length > 0) this.messageDelta(key, text);
    const finalText = text.length > 0 ? text : open.text;
    // Citations are known once the text is: announced after its deltas, before its `.done`.
    const annotations = this.options.annotate?.(finalText) ?? [];
    const part = { type: 'output_text', text: finalText, annotations, logprobs: [] };
    const base = { item_id: open.item.id, output_index: UNSTAMPED, content_index: 0 };
    annotations.forEach((annotation, i) => this.emit({ type: 'response.output_text.annotation.added', ...base, annotation_index: i, annotation }));
    this.emit({ type: 'response.output_text.done', ...base, text: finalText, logprobs: [] });
    this.emit({ type: 'response.content_part.done', ...base, part });
    const item = { ...open.item, status, content: [part] };
    this.emit({ type: 'response.output_item.done', output_index: UNSTAMPED, item });
    this.open.delete(key);
    this.modelItems.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: finalText, annotations: [] }] });
  }

  // --- reasoning ----------------------------------------------------------

  private startReasoning(key: string): void {
    const item: Record<string, unknown> = { id: newId('rs'), type: 'reasoning', status: 'in_progress', summary: [], content: [] };
    this.open.set(key, { kind: 'reasoning', item, text: '', partOpen: false });
    this.emit({ type: 'response.output_item.added', output_index: UNSTAMPED, item: { ...item, content: [] } });
  }

  /**
   * Reasoning text streams inside a content part, like a message's: the SDKs'
   * stream accumulators fail on a reasoning delta for a part never added. The
   * part opens where vLLM opens its own (`reasoning.part`), or at the first
   * delta for upstreams that announce none (the chat dialect).
   */
  private openReasoningPart(open: OpenReasoning): void {
    if (open.partOpen) return;
    open.partOpen = true;
    this.emit({
      type: 'response.content_part.added',
      item_id: open.item.id,
      output_index: UNSTAMPED,
      content_index: 0,
      part: { type: 'reasoning_text', text: '' },
    });
  }

  private reasoningDelta(key: string, delta: string): void {
    const open = this.ensure(key, 'reasoning') as OpenReasoning;
    this.openReasoningPart(open);
    open.text += delta;
    this.emit({ type: this.reasoningNames.delta, item_id: open.item.id, output_index: UNSTAMPED, content_index: 0, delta });
  }

  private finishReasoning(key: string, text: string, summary?: string[], encrypted?: string | null, status: 'completed' | 'incomplete' = 'completed'): void {
    const open = this.ensure(key, 'reasoning') as OpenReasoning;
    if (open.text.length === 0 && text.length > 0) this.reasoningDelta(key, text);
    const finalText = text.length > 0 ? text : open.text;
    // An item without text (encrypted or summary only) never opened a part: nothing to close.
    if (open.partOpen) {
      const base = { item_id: open.item.id, output_index: UNSTAMPED, content_index: 0 };
      this.emit({ type: this.reasoningNames.done, ...base, text: finalText });
      this.emit({ type: 'response.content_part.done', ...base, part: { type: 'reasoning_text', text: finalText } });
    }
    const shownSummary = this.reasoningSummary(open, summary, finalText);
    const item: Record<string, unknown> = {
      ...open.item,
      status,
      summary: shownSummary.map((s) => ({ type: 'summary_text', text: s })),
      content: open.partOpen ? [{ type: 'reasoning_text', text: finalText }] : [],
    };
    const forModel: ReasoningItem = {
      type: 'reasoning',
      summary: (summary ?? []).map((s) => ({ type: 'summary_text' as const, text: s })),
      content: finalText ? [{ type: 'reasoning_text', text: finalText }] : [],
      encrypted_content: encrypted ?? null,
    };
    if (this.options.include.includes('reasoning.encrypted_content')) {
      const sealed = this.options.seal ? this.options.seal(forModel) : encrypted;
      if (sealed) item.encrypted_content = sealed;
    }
    this.emit({ type: 'response.output_item.done', output_index: UNSTAMPED, item });
    this.open.delete(key);
    this.modelItems.push(forModel);
  }

  /**
   * The summary a client that asked for one is shown. Clients that display
   * reasoning (the AI SDK, LangChain) read only `summary[]` and the
   * `response.reasoning_summary_*` events; an open model rarely writes a
   * summary of its own, so without one the reasoning text itself is the
   * summary (it is what the model thought, unshortened). The events stream
   * each part once the reasoning is complete, before the item is done. What
   * the model is shown on the next turn keeps only the summary it wrote.
   */
  private reasoningSummary(open: OpenReasoning, given: string[] | undefined, text: string): string[] {
    const parts = given && given.length > 0 ? given : this.options.summary && text.length > 0 ? [text] : [];
    if (!this.options.summary) return given ?? [];
    parts.forEach((part, summaryIndex) => {
      const base = { item_id: open.item.id, output_index: UNSTAMPED, summary_index: summaryIndex };
      this.emit({ type: 'response.reasoning_summary_part.added', ...base, part: { type: 'summary_text', text: '' } });
      this.emit({ type: 'response.reasoning_summary_text.delta', ...base, delta: part });
      this.emit({ type: 'response.reasoning_summary_text.done', ...base, text: part });
      this.emit({ type: 'response.reasoning_summary_part.done', ...base, part: { type: 'summary_text', text: part } });
    });
    return parts;
  }

  // --- calls --------------------------------------------------------------

  private startCall(key: string, callId: string, name: string): void {
    const entry = this.registry.lookup(name);
    if (entry && entry.ownership.kind === 'gateway') {
      this.open.set(key, { kind: 'gateway_call', entry, stream: this.streamGatewayCall(entry, callId) });
      return;
    }
    // Unknown names are handed back like functions: the client declared nothing
    // else by that name, and dropping a call the model made loses data.
    const shape: ClientCallShape = entry?.ownership.kind === 'client' ? entry.ownership.shape : { kind: 'function_call', name };
    const relay = shape.relay ?? { kind: 'arguments' };
    const item: Record<string, unknown> = {
      id: newId(shape.idPrefix ?? 'fc'),
      type: shape.kind,
      status: 'in_progress',
      call_id: callId,
      ...(shape.omitName ? {} : { name: shape.name }),
      ...shape.leadingFields,
      ...(relay.kind === 'string-field' ? { [relay.field]: '' } : { arguments: relay.kind === 'json' ? {} : '' }),
      ...shape.trailingFields,
    };
    if (relay.kind === 'restored') {
      // Its fields exist once the arguments are complete, and the handler may refuse it: announced then.
      delete item.arguments;
      this.open.set(key, { kind: 'client_call', announced: false, entry, item, shape, relay, args: '' });
      return;
    }
    const open: OpenClientCall = { kind: 'client_call', announced: true, item, shape, relay, args: '' };
    if (relay.kind === 'string-field') {
      const events = { delta: `response.${shape.kind}_${relay.field}.delta`, done: `response.${shape.kind}_${relay.field}.done` };
      open.field = { name: relay.field, streamer: new JsonStringFieldStreamer(relay.field), soFar: '', events };
    }
    this.open.set(key, open);
    this.emit({ type: 'response.output_item.added', output_index: UNSTAMPED, item: { ...item } });
  }

  /**
   * A gateway call whose executor streams its arguments opens its public
   * item now, at the model's first token of it; the rest of its lifecycle
   * follows once the call is complete (`GatewayCallBatch.begin`).
   */
  private streamGatewayCall(entry: ToolEntry, callId: string): OpenGatewayCall['stream'] {
    const binding = entry.ownership.kind === 'gateway' ? entry.ownership.binding : undefined;
    if (!binding || entry.handler.approvals) return undefined;
    const stream = binding.executor.streamArguments?.(binding.params);
    if (!stream) return undefined;
    const itemId = newId(entry.handler.itemIdPrefix ?? 'gw');
    const call = { callId, itemId, modelName: entry.modelName, toolName: entry.toolName, scope: entry.scope, arguments: '' };
    const plan = binding.executor.planEvents(call, binding.params, { include: this.options.include, streamed: true });
    const startedItem = { ...plan.startedItem, id: itemId, status: 'in_progress' } as PublicItem;
    this.emit({ type: 'response.output_item.added', output_index: UNSTAMPED, item: startedItem });
    for (const { type, ...rest } of stream.opening) this.emit({ type, item_id: itemId, output_index: UNSTAMPED, ...rest });
    return { opened: { itemId, startedItem }, streamer: new JsonStringFieldStreamer(stream.field), delta: stream.delta };
  }

  private callDelta(key: string, delta: string): void {
    const open = this.open.get(key);
    if (open?.kind === 'gateway_call' && open.stream) {
      const decoded = open.stream.streamer.push(delta);
      const { itemId } = open.stream.opened;
      if (decoded) this.emit({ type: open.stream.delta, item_id: itemId, output_index: UNSTAMPED, delta: decoded });
      return;
    }
    if (!open || open.kind === 'gateway_call') return;
    if (open.kind !== 'client_call') return;
    open.args += delta;
    // A JSON value on the item is not a string: OpenAI streams no deltas for it.
    if (open.relay.kind === 'json' || open.relay.kind === 'restored') return;
    if (open.field) {
      const decoded = open.field.streamer.push(delta);
      if (decoded) {
        open.field.soFar += decoded;
        this.emit({ type: open.field.events.delta, item_id: open.item.id, output_index: UNSTAMPED, delta: decoded });
      }
      return;
    }
    this.emit({ type: 'response.function_call_arguments.delta', item_id: open.item.id, output_index: UNSTAMPED, delta });
  }

  private finishCall(key: string, callId: string, name: string, args: string): void {
    if (!this.open.has(key)) this.startCall(key, callId, name);
    const open = this.open.get(key)!;
    this.open.delete(key);
    const modelCall: FunctionCallItem = { type: 'function_call', call_id: callId, name, arguments: args };
    if (open.kind === 'gateway_call') {
      this.modelItems.push(modelCall);
      if (open.stream) {
        // An upstream that sent the arguments whole (or held some back) streams the rest now.
        const { rest } = open.stream.streamer.finish(args);
        const { itemId } = open.stream.opened;
        if (rest) this.emit({ type: open.stream.delta, item_id: itemId, output_index: UNSTAMPED, delta: rest });
      }
      this.onGatewayCall({ entry: open.entry, callId, modelName: name, arguments: args, modelCall, opened: open.stream?.opened });
      return;
    }
    if (open.kind !== 'client_call') return;
    if (open.relay.kind === 'restored') return this.finishRestoredCall(open, modelCall);
    this.clientCalls++;
    this.modelItems.push(modelCall);
    const base = { item_id: open.item.id, output_index: UNSTAMPED };
    let item: Record<string, unknown>;
    if (open.field) {
      const { value, rest } = open.field.streamer.finish(args);
      if (rest) this.emit({ type: open.field.events.delta, ...base, delta: rest });
      this.emit({ type: open.field.events.done, ...base, [open.field.name]: value });
      item = { ...open.item, status: 'completed', [open.field.name]: value };
    } else if (open.relay.kind === 'json') {
      item = { ...open.item, status: 'completed', arguments: parsedArguments(args) };
    } else {
      if (open.args.length === 0 && args.length > 0) {
        this.emit({ type: 'response.function_call_arguments.delta', ...base, delta: args });
      }
      this.emit({ type: 'response.function_call_arguments.done', ...base, name: open.shape.name, arguments: args });
      item = { ...open.item, status: 'completed', arguments: args };
    }
    this.emit({ type: 'response.output_item.done', output_index: UNSTAMPED, item });
  }

  /**
   * A call whose item its handler builds: announced whole, with the events
   * the handler plans, or, refused, handed to the batch as a failed call the
   * model reads about in the next round (no public item: the client never sees it).
   */
  private finishRestoredCall(open: OpenClientCall, modelCall: FunctionCallItem): void {
    this.modelItems.push(modelCall);
    const restored = open.entry?.handler.clientCalls?.restore(modelCall.arguments, open.shape) ?? { fields: { arguments: parsedArguments(modelCall.arguments) } };
    if ('error' in restored) {
      const { entry } = open;
      if (entry) this.onGatewayCall({ entry, callId: modelCall.call_id, modelName: modelCall.name, arguments: modelCall.arguments, modelCall, rejected: restored.error });
      return;
    }
    this.clientCalls++;
    const started = { ...open.item, ...restored.fields, ...open.shape.trailingFields, status: 'in_progress' };
    this.emit({ type: 'response.output_item.added', output_index: UNSTAMPED, item: { ...started } });
    for (const { type, ...rest } of restored.events ?? []) this.emit({ type, item_id: open.item.id, output_index: UNSTAMPED, ...rest });
    const item = { ...started, status: 'completed' };
    this.emit({ type: 'response.output_item.done', output_index: UNSTAMPED, item });
  }

  /** Upstreams that skip `*.start` still get a well-formed public lifecycle. */
  private ensure(key: string, kind: 'message' | 'reasoning'): OpenItem {
    let open = this.open.get(key);
    if (!open) {
      if (kind === 'message') this.startMessage(key);
      else this.startReasoning(key);
      open = this.open.get(key)!;
    }
    return open;
  }

  /** Items the upstream never finished (stream cut short): close them as incomplete. */
  closeDangling(): void {
    for (const [key, open] of this.open) {
      if (open.kind === 'message') this.finishMessage(key, '', 'incomplete');
      else if (open.kind === 'reasoning') this.finishReasoning(key, '', undefined, undefined, 'incomplete');
      else if (open.kind === 'gateway_call' && open.stream) {
        // A streamed call cut short never runs: its item ends incomplete.
        const item = { ...open.stream.opened.startedItem, status: 'incomplete' } as PublicItem;
        this.emit({ type: 'response.output_item.done', output_index: UNSTAMPED, item });
      } else if (open.kind === 'client_call' && open.announced) {
        // A restored call cut short was never announced. A call cut short cannot be run: its public item ends incomplete and nothing is handed back.
        const partial = open.field ? { [open.field.name]: open.field.soFar } : { arguments: open.relay.kind === 'json' ? parsedArguments(open.args) : open.args };
        const item = { ...open.item, status: 'incomplete', ...partial };
        this.emit({ type: 'response.output_item.done', output_index: UNSTAMPED, item });
      }
    }
    this.open.clear();
  }
}

/** JSON-relayed arguments as the value the model wrote; text that is not JSON is kept as a string rather than lost. */
function parsedArguments(args: string): unknown {
  if (args.trim() === '') return {};
  try {
    return JSON.parse(args) as unknown;
  } catch {
    return args;
  }
}
