import { newId } from '#tool-sdk/ids.js';
import type { FunctionCallItem, ModelItem, PublicItem, ReasoningItem, Usage } from '#tool-sdk/items.js';
import type { ModelEvent } from '../protocol/model-events.js';
import type { ClientCallRelay, ClientCallShape } from '#tool-sdk/contract/index.js';
import type { ToolEntry, ToolRegistry } from '../registry/tool-registry.js';
import { finishField, pushField, startField, type FieldStream } from './json-string-field.streamer.js';
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

/** The upstream is done (complete, or cut short): what it left open is closed as incomplete. */
export interface UpstreamEnd {
  readonly type: 'upstream.end';
}

export const UPSTREAM_END: UpstreamEnd = { type: 'upstream.end' };

/** What the classification folds: the upstream's model events, then its end. */
export type RoundInput = ModelEvent | UpstreamEnd;

interface OpenMessage {
  readonly kind: 'message';
  readonly key: string;
  readonly item: Readonly<Record<string, unknown>>;
  readonly text: string;
}

interface OpenReasoning {
  readonly kind: 'reasoning';
  readonly key: string;
  readonly item: Readonly<Record<string, unknown>>;
  readonly text: string;
  /** The `reasoning_text` content part was announced (`response.content_part.added`). */
  readonly partOpen: boolean;
}

interface OpenClientCall {
  readonly kind: 'client_call';
  readonly key: string;
  /** False while a restored call is not announced yet. */
  readonly announced: boolean;
  readonly entry?: ToolEntry;
  readonly item: Readonly<Record<string, unknown>>;
  readonly shape: ClientCallShape;
  readonly relay: ClientCallRelay;
  readonly args: string;
  /** String-field relays: the decoder of the field, and what it has relayed so far. */
  readonly field?: { readonly name: string; readonly stream: FieldStream; readonly soFar: string; readonly events: { delta: string; done: string } };
}

interface OpenGatewayCall {
  readonly kind: 'gateway_call';
  readonly key: string;
  readonly entry: ToolEntry;
  /** Set when the call's arguments stream into its public item. */
  readonly stream?: { readonly opened: OpenedGatewayItem; readonly field: FieldStream; readonly delta: string };
}

type OpenItem = OpenMessage | OpenReasoning | OpenClientCall | OpenGatewayCall;

/**
 * What the classification knows between two model events: a plain value,
 * never written in place. Each step makes a new one (and a new `open` list
 * when an item opens, grows or closes); the previous one stays as it was,
 * so a fold can be replayed and a state compared. `open` is a list, in the
 * order the items opened, rather than a map by key: it holds the few items
 * open at once, and copying a list of one or two per delta is a fraction of
 * a `Map`'s copy (0.12 against 0.5 µs on this host).
 */
export interface RoundState {
  /** Items the model is still writing, each with the upstream's key, in the order they opened. */
  readonly open: readonly OpenItem[];
  /** The model's own output this round, as the model would see it again. */
  readonly modelItems: readonly ModelItem[];
  /** Client-owned calls handed back this round. */
  readonly clientCalls: number;
  readonly usage: Usage | null;
  readonly finish: { readonly status: 'completed' | 'incomplete'; readonly reason?: string | null } | null;
  /** Public items this round has opened: the next one's id is the round's id of that number (`ItemIds`). */
  readonly opened: number;
  /** A model event arrived: the run has started (`response.created` goes out with the first). */
  readonly started: boolean;
}

export const initialRoundState: RoundState = {
  open: [],
  modelItems: [],
  clientCalls: 0,
  usage: null,
  finish: null,
  opened: 0,
  started: false,
};

/** One model event classified: the state after it, its public events (unstamped), and the gateway calls it completed. */
export interface RoundStep {
  readonly state: RoundState;
  readonly events: readonly EventInit[];
  readonly calls: readonly DetectedGatewayCall[];
}

export const initialRoundStep: RoundStep = { state: initialRoundState, events: [], calls: [] };

/**
 * The round's public item ids, by the order the items open: the `n`-th has
 * one id, drawn the first time it is asked for, whoever asks again. Ids are
 * the one thing a step takes from outside; through this table a fold replayed
 * over the same events names its items the same.
 */
export type ItemIds = (prefix: string, n: number) => string;

export function roundItemIds(): ItemIds {
  const ids: string[] = [];
  return (prefix, n) => (ids[n] ??= newId(prefix));
}

export interface ClassificationOptions {
  include: readonly string[];
  reasoningEvents: ReasoningEventStyle;
  /** Annotations for a finished message's text (citations of gateway tool results). */
  annotate?: (text: string) => Array<Record<string, unknown>>;
  /** `reasoning.summary` was asked for (`auto`, `concise`, `detailed`): see `reasoningSummary`. */
  summary?: boolean;
  /** The gateway's own `encrypted_content` for a reasoning item (`ReasoningSealer`); else the upstream's is shown. */
  seal?: (reasoning: ReasoningItem) => string;
  /** The round's item ids; a fresh table per round when absent. */
  ids?: ItemIds;
}

/** The round's fixed inputs: what each step reads and never writes. */
interface Classifier {
  readonly registry: ToolRegistry;
  readonly options: ClassificationOptions;
  readonly ids: ItemIds;
  readonly reasoningNames: { delta: string; done: string };
}

/**
 * The step being made, written as it goes and handed out as it is once
 * `classify` returns (never written after). Its lists start shared and
 * empty: most steps complete no call, and a delta's one event becomes its
 * list, sized to it (a list grown by `push` from empty reserves 17 slots).
 */
interface StepOut {
  state: RoundState;
  events: readonly EventInit[];
  calls: readonly DetectedGatewayCall[];
}

const NO_EVENTS: readonly EventInit[] = Object.freeze([]);
const NO_CALLS: readonly DetectedGatewayCall[] = Object.freeze([]);

function emit(out: StepOut, ...events: EventInit[]): void {
  if (out.events === NO_EVENTS) out.events = events;
  else (out.events as EventInit[]).push(...events);
}

function handOver(out: StepOut, call: DetectedGatewayCall): void {
  if (out.calls === NO_CALLS) out.calls = [call];
  else (out.calls as DetectedGatewayCall[]).push(call);
}

/**
 * The one classification of an upstream round (raw → gateway → public), as
 * a reducer for `scan`: `(state, input) => step`.
 *
 * Messages, reasoning and client-owned calls are projected to their public
 * shape and lifecycle events as they arrive; calls to gateway-owned tools
 * are never shown as `function_call` and come out in `calls` once complete;
 * `upstream.end` closes what the upstream left open. The blocking and
 * streaming paths both fold through here. Events carry no output index: the
 * run's edge (`response-output.ts`) numbers items as they open.
 *
 * A step depends on the state and the input only (plus the round's fixed
 * inputs: the registry, the handlers' own plans, `annotate`, `seal` and the
 * id table); the state it is given is left as it was.
 */
export function roundReducer(registry: ToolRegistry, options: ClassificationOptions): (state: RoundState, input: RoundInput) => RoundStep {
  const cx: Classifier = { registry, options, ids: options.ids ?? roundItemIds(), reasoningNames: reasoningEventNames(options.reasoningEvents) };
  return (state, input) => {
    const out: StepOut = { state, events: NO_EVENTS, calls: NO_CALLS };
    out.state = classify(cx, state, input, out);
    return out;
  };
}

function classify(cx: Classifier, state: RoundState, event: RoundInput, out: StepOut): RoundState {
  if (event.type === 'upstream.end') return closeDangling(cx, state, out);
  const s = state.started ? state : changed(state, { started: true });
  switch (event.type) {
    case 'message.start':
      return startMessage(cx, s, event.key, out, event.phase);
    case 'message.delta':
      return messageDelta(cx, s, event.key, event.delta, out);
    case 'message.done':
      return finishMessage(cx, s, event.key, event.text, out);
    case 'reasoning.start':
      return startReasoning(cx, s, event.key, out);
    case 'reasoning.part': {
      const opened = ensureReasoning(cx, s, event.key, out);
      return withOpen(opened, openReasoningPart(openReasoning(opened, event.key), out));
    }
    case 'reasoning.delta':
      return reasoningDelta(cx, s, event.key, event.delta, out);
    case 'reasoning.done':
      return finishReasoning(cx, s, event.key, event.text, out, event.summary, event.encrypted_content);
    case 'call.start':
      return startCall(cx, s, event.key, event.call_id, event.name, out);
    case 'call.delta':
      return callDelta(s, event.key, event.delta, out);
    case 'call.done':
      return finishCall(cx, s, event.key, event.call_id, event.name, event.arguments, out);
    case 'usage':
      return changed(s, { usage: event.usage });
    case 'finish':
      return changed(s, { finish: { status: event.status, reason: event.reason ?? null } });
  }
}

// --- state helpers --------------------------------------------------------

type StateChange = { -readonly [K in keyof RoundState]?: RoundState[K] };

/**
 * The state with some fields changed, spelled out field by field: an
 * object spread with an override (`{ ...state, opened }`) took about ten
 * times a literal in Node 20 (1.7 against 0.15 µs on this host), once or
 * twice per model event.
 */
function changed(state: RoundState, change: StateChange): RoundState {
  return {
    open: change.open ?? state.open,
    modelItems: change.modelItems ?? state.modelItems,
    clientCalls: change.clientCalls ?? state.clientCalls,
    usage: change.usage !== undefined ? change.usage : state.usage,
    finish: change.finish !== undefined ? change.finish : state.finish,
    opened: change.opened ?? state.opened,
    started: change.started ?? state.started,
  };
}

function openAt(state: RoundState, key: string): OpenItem | undefined {
  // An index loop: `for...of` builds an iterator, three times per delta.
  for (let i = 0; i < state.open.length; i++) if (state.open[i].key === key) return state.open[i];
  return undefined;
}

/**
 * The state with `item` open: in place of the item of its key, or after the
 * others. Once per delta, so the state is written out here rather than
 * through `changed`, whose `change` takes a different shape at each caller.
 */
function withOpen(state: RoundState, item: OpenItem): RoundState {
  const open = state.open.slice();
  let at = 0;
  while (at < open.length && open[at].key !== item.key) at++;
  open[at] = item;
  const { modelItems, clientCalls, usage, finish, opened, started } = state;
  return { open, modelItems, clientCalls, usage, finish, opened, started };
}

/** The state with the item of `key` finished, and what the model wrote for it, if anything. */
function closed(state: RoundState, key: string, modelItem?: ModelItem): RoundState {
  return changed(state, { open: state.open.filter((item) => item.key !== key), modelItems: modelItem ? [...state.modelItems, modelItem] : state.modelItems });
}

/** The next public item's id, and the state that counts it. */
function nextId(cx: Classifier, state: RoundState, prefix: string): [string, RoundState] {
  return [cx.ids(prefix, state.opened), changed(state, { opened: state.opened + 1 })];
}

// --- messages -------------------------------------------------------------

function startMessage(cx: Classifier, state: RoundState, key: string, out: StepOut, phase?: string | null): RoundState {
  const [id, counted] = nextId(cx, state, 'msg');
  const item: Record<string, unknown> = { id, type: 'message', status: 'in_progress', role: 'assistant', content: [] };
  if (phase) item.phase = phase;
  emit(
    out,
    { type: 'response.output_item.added', output_index: UNSTAMPED, item: { ...item, content: [] } },
    { type: 'response.content_part.added', item_id: id, output_index: UNSTAMPED, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } },
  );
  return withOpen(counted, { kind: 'message', key, item, text: '' });
}

/** Upstreams that skip `*.start` still get a well-formed public lifecycle. */
function ensureMessage(cx: Classifier, state: RoundState, key: string, out: StepOut): RoundState {
  return openAt(state, key) ? state : startMessage(cx, state, key, out);
}

function openMessage(state: RoundState, key: string): OpenMessage {
  return openAt(state, key) as OpenMessage;
}

function messageDelta(cx: Classifier, state: RoundState, key: string, delta: string, out: StepOut): RoundState {
  const opened = ensureMessage(cx, state, key, out);
  const open = openMessage(opened, key);
  emit(out, { type: 'response.output_text.delta', item_id: open.item.id, output_index: UNSTAMPED, content_index: 0, delta, logprobs: [] });
  return withOpen(opened, { kind: 'message', key, item: open.item, text: open.text + delta });
}

function finishMessage(cx: Classifier, state: RoundState, key: string, text: string, out: StepOut, status: 'completed' | 'incomplete' = 'completed'): RoundState {
  let s = ensureMessage(cx, state, key, out);
  // A non-streamed upstream sends no deltas: relay the text as one delta so streaming clients see it.
  if (openMessage(s, key).text.length === 0 && text.length > 0) s = messageDelta(cx, s, key, text, out);
  const open = openMessage(s, key);
  const finalText = text.length > 0 ? text : open.text;
  // Citations are known once the text is: announced after its deltas, before its `.done`.
  const annotations = cx.options.annotate?.(finalText) ?? [];
  const part = { type: 'output_text', text: finalText, annotations, logprobs: [] };
  const base = { item_id: open.item.id, output_index: UNSTAMPED, content_index: 0 };
  annotations.forEach((annotation, i) => emit(out, { type: 'response.output_text.annotation.added', ...base, annotation_index: i, annotation }));
  emit(
    out,
    { type: 'response.output_text.done', ...base, text: finalText, logprobs: [] },
    { type: 'response.content_part.done', ...base, part },
    { type: 'response.output_item.done', output_index: UNSTAMPED, item: { ...open.item, status, content: [part] } },
  );
  return closed(s, key, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: finalText, annotations: [] }] });
}

// --- reasoning ------------------------------------------------------------

function startReasoning(cx: Classifier, state: RoundState, key: string, out: StepOut): RoundState {
  const [id, counted] = nextId(cx, state, 'rs');
  const item: Record<string, unknown> = { id, type: 'reasoning', status: 'in_progress', summary: [], content: [] };
  emit(out, { type: 'response.output_item.added', output_index: UNSTAMPED, item: { ...item, content: [] } });
  return withOpen(counted, { kind: 'reasoning', key, item, text: '', partOpen: false });
}

function ensureReasoning(cx: Classifier, state: RoundState, key: string, out: StepOut): RoundState {
  return openAt(state, key) ? state : startReasoning(cx, state, key, out);
}

function openReasoning(state: RoundState, key: string): OpenReasoning {
  return openAt(state, key) as OpenReasoning;
}

/**
 * Reasoning text streams inside a content part, like a message's: the SDKs'
 * stream accumulators fail on a reasoning delta for a part never added. The
 * part opens where vLLM opens its own (`reasoning.part`), or at the first
 * delta for upstreams that announce none (the chat dialect).
 */
function openReasoningPart(open: OpenReasoning, out: StepOut): OpenReasoning {
  if (open.partOpen) return open;
  emit(out, { type: 'response.content_part.added', item_id: open.item.id, output_index: UNSTAMPED, content_index: 0, part: { type: 'reasoning_text', text: '' } });
  return { kind: 'reasoning', key: open.key, item: open.item, text: open.text, partOpen: true };
}

function reasoningDelta(cx: Classifier, state: RoundState, key: string, delta: string, out: StepOut): RoundState {
  const opened = ensureReasoning(cx, state, key, out);
  const open = openReasoningPart(openReasoning(opened, key), out);
  emit(out, { type: cx.reasoningNames.delta, item_id: open.item.id, output_index: UNSTAMPED, content_index: 0, delta });
  return withOpen(opened, { kind: 'reasoning', key, item: open.item, text: open.text + delta, partOpen: true });
}

function finishReasoning(
  cx: Classifier,
  state: RoundState,
  key: string,
  text: string,
  out: StepOut,
  summary?: string[],
  encrypted?: string | null,
  status: 'completed' | 'incomplete' = 'completed',
): RoundState {
  let s = ensureReasoning(cx, state, key, out);
  if (openReasoning(s, key).text.length === 0 && text.length > 0) s = reasoningDelta(cx, s, key, text, out);
  const open = openReasoning(s, key);
  const finalText = text.length > 0 ? text : open.text;
  // An item without text (encrypted or summary only) never opened a part: nothing to close.
  if (open.partOpen) {
    const base = { item_id: open.item.id, output_index: UNSTAMPED, content_index: 0 };
    emit(out, { type: cx.reasoningNames.done, ...base, text: finalText }, { type: 'response.content_part.done', ...base, part: { type: 'reasoning_text', text: finalText } });
  }
  const shownSummary = reasoningSummary(cx, open, summary, finalText, out);
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
  if (cx.options.include.includes('reasoning.encrypted_content')) {
    const sealed = cx.options.seal ? cx.options.seal(forModel) : encrypted;
    if (sealed) item.encrypted_content = sealed;
  }
  emit(out, { type: 'response.output_item.done', output_index: UNSTAMPED, item });
  return closed(s, key, forModel);
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
function reasoningSummary(cx: Classifier, open: OpenReasoning, given: string[] | undefined, text: string, out: StepOut): string[] {
  const parts = given && given.length > 0 ? given : cx.options.summary && text.length > 0 ? [text] : [];
  if (!cx.options.summary) return given ?? [];
  parts.forEach((part, summaryIndex) => {
    const base = { item_id: open.item.id, output_index: UNSTAMPED, summary_index: summaryIndex };
    emit(
      out,
      { type: 'response.reasoning_summary_part.added', ...base, part: { type: 'summary_text', text: '' } },
      { type: 'response.reasoning_summary_text.delta', ...base, delta: part },
      { type: 'response.reasoning_summary_text.done', ...base, text: part },
      { type: 'response.reasoning_summary_part.done', ...base, part: { type: 'summary_text', text: part } },
    );
  });
  return parts;
}

// --- calls ----------------------------------------------------------------

function startCall(cx: Classifier, state: RoundState, key: string, callId: string, name: string, out: StepOut): RoundState {
  const entry = cx.registry.lookup(name);
  if (entry && entry.ownership.kind === 'gateway') {
    const [s, stream] = streamGatewayCall(cx, state, entry, callId, out);
    return withOpen(s, { kind: 'gateway_call', key, entry, stream });
  }
  // Unknown names are handed back like functions: the client declared nothing
  // else by that name, and dropping a call the model made loses data.
  const shape: ClientCallShape = entry?.ownership.kind === 'client' ? entry.ownership.shape : { kind: 'function_call', name };
  const relay = shape.relay ?? { kind: 'arguments' };
  const [id, counted] = nextId(cx, state, shape.idPrefix ?? 'fc');
  const item: Record<string, unknown> = {
    id,
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
    return withOpen(counted, { kind: 'client_call', key, announced: false, entry, item, shape, relay, args: '' });
  }
  const field =
    relay.kind === 'string-field'
      ? {
          name: relay.field,
          stream: startField(relay.field),
          soFar: '',
          events: { delta: `response.${shape.kind}_${relay.field}.delta`, done: `response.${shape.kind}_${relay.field}.done` },
        }
      : undefined;
  emit(out, { type: 'response.output_item.added', output_index: UNSTAMPED, item: { ...item } });
  return withOpen(counted, { kind: 'client_call', key, announced: true, item, shape, relay, args: '', field });
}

/**
 * A gateway call whose executor streams its arguments opens its public
 * item now, at the model's first token of it; the rest of its lifecycle
 * follows once the call is complete (`GatewayCallBatch.begin`).
 */
function streamGatewayCall(cx: Classifier, state: RoundState, entry: ToolEntry, callId: string, out: StepOut): [RoundState, OpenGatewayCall['stream']] {
  const binding = entry.ownership.kind === 'gateway' ? entry.ownership.binding : undefined;
  if (!binding || entry.handler.approvals) return [state, undefined];
  const stream = binding.executor.streamArguments?.(binding.params);
  if (!stream) return [state, undefined];
  const [itemId, counted] = nextId(cx, state, entry.handler.itemIdPrefix ?? 'gw');
  const call = { callId, itemId, modelName: entry.modelName, toolName: entry.toolName, scope: entry.scope, arguments: '' };
  const plan = binding.executor.planEvents(call, binding.params, { include: cx.options.include, streamed: true });
  const startedItem = { ...plan.startedItem, id: itemId, status: 'in_progress' } as PublicItem;
  emit(out, { type: 'response.output_item.added', output_index: UNSTAMPED, item: startedItem });
  for (const { type, ...rest } of stream.opening) emit(out, { type, item_id: itemId, output_index: UNSTAMPED, ...rest });
  return [counted, { opened: { itemId, startedItem }, field: startField(stream.field), delta: stream.delta }];
}

function callDelta(state: RoundState, key: string, delta: string, out: StepOut): RoundState {
  const open = openAt(state, key);
  if (open?.kind === 'gateway_call') {
    if (!open.stream) return state;
    const { opened, delta: deltaType } = open.stream;
    const { stream: field, decoded } = pushField(open.stream.field, delta);
    if (decoded) emit(out, { type: deltaType, item_id: opened.itemId, output_index: UNSTAMPED, delta: decoded });
    return withOpen(state, { kind: 'gateway_call', key, entry: open.entry, stream: { opened, field, delta: deltaType } });
  }
  if (open?.kind !== 'client_call') return state;
  const args = open.args + delta;
  // A JSON value on the item is not a string: OpenAI streams no deltas for it.
  if (open.relay.kind === 'json' || open.relay.kind === 'restored') return withOpen(state, withArgs(open, args, open.field));
  if (open.field) {
    const { stream, decoded } = pushField(open.field.stream, delta);
    if (decoded) emit(out, { type: open.field.events.delta, item_id: open.item.id, output_index: UNSTAMPED, delta: decoded });
    return withOpen(state, withArgs(open, args, { name: open.field.name, stream, soFar: open.field.soFar + decoded, events: open.field.events }));
  }
  emit(out, { type: 'response.function_call_arguments.delta', item_id: open.item.id, output_index: UNSTAMPED, delta });
  return withOpen(state, withArgs(open, args, undefined));
}

/** A client call with more of its arguments (a literal, not a spread: once per delta, see `changed`). */
function withArgs(open: OpenClientCall, args: string, field: OpenClientCall['field']): OpenClientCall {
  return { kind: 'client_call', key: open.key, announced: open.announced, entry: open.entry, item: open.item, shape: open.shape, relay: open.relay, args, field };
}

function finishCall(cx: Classifier, state: RoundState, key: string, callId: string, name: string, args: string, out: StepOut): RoundState {
  const started = openAt(state, key) ? state : startCall(cx, state, key, callId, name, out);
  const open = openAt(started, key)!;
  const modelCall: FunctionCallItem = { type: 'function_call', call_id: callId, name, arguments: args };
  if (open.kind === 'gateway_call') {
    if (open.stream) {
      // An upstream that sent the arguments whole (or held some back) streams the rest now.
      const { rest } = finishField(open.stream.field, args);
      if (rest) emit(out, { type: open.stream.delta, item_id: open.stream.opened.itemId, output_index: UNSTAMPED, delta: rest });
    }
    handOver(out, { entry: open.entry, callId, modelName: name, arguments: args, modelCall, opened: open.stream?.opened });
    return closed(started, key, modelCall);
  }
  if (open.kind !== 'client_call') return closed(started, key);
  if (open.relay.kind === 'restored') return finishRestoredCall(closed(started, key, modelCall), open, modelCall, out);
  const base = { item_id: open.item.id, output_index: UNSTAMPED };
  let item: Record<string, unknown>;
  if (open.field) {
    const { value, rest } = finishField(open.field.stream, args);
    if (rest) emit(out, { type: open.field.events.delta, ...base, delta: rest });
    emit(out, { type: open.field.events.done, ...base, [open.field.name]: value });
    item = { ...open.item, status: 'completed', [open.field.name]: value };
  } else if (open.relay.kind === 'json') {
    item = { ...open.item, status: 'completed', arguments: parsedArguments(args) };
  } else {
    if (open.args.length === 0 && args.length > 0) emit(out, { type: 'response.function_call_arguments.delta', ...base, delta: args });
    emit(out, { type: 'response.function_call_arguments.done', ...base, name: open.shape.name, arguments: args });
    item = { ...open.item, status: 'completed', arguments: args };
  }
  emit(out, { type: 'response.output_item.done', output_index: UNSTAMPED, item });
  return changed(closed(started, key, modelCall), { clientCalls: started.clientCalls + 1 });
}

/**
 * A call whose item its handler builds: announced whole, with the events
 * the handler plans, or, refused, handed to the batch as a failed call the
 * model reads about in the next round (no public item: the client never sees it).
 */
function finishRestoredCall(state: RoundState, open: OpenClientCall, modelCall: FunctionCallItem, out: StepOut): RoundState {
  const restored = open.entry?.handler.clientCalls?.restore(modelCall.arguments, open.shape) ?? { fields: { arguments: parsedArguments(modelCall.arguments) } };
  if ('error' in restored) {
    const { entry } = open;
    if (entry) handOver(out, { entry, callId: modelCall.call_id, modelName: modelCall.name, arguments: modelCall.arguments, modelCall, rejected: restored.error });
    return state;
  }
  const started = { ...open.item, ...restored.fields, ...open.shape.trailingFields, status: 'in_progress' };
  emit(out, { type: 'response.output_item.added', output_index: UNSTAMPED, item: { ...started } });
  for (const { type, ...rest } of restored.events ?? []) emit(out, { type, item_id: open.item.id, output_index: UNSTAMPED, ...rest });
  emit(out, { type: 'response.output_item.done', output_index: UNSTAMPED, item: { ...started, status: 'completed' } });
  return changed(state, { clientCalls: state.clientCalls + 1 });
}

/** Items the upstream never finished (stream cut short): closed as incomplete, in the order they opened. */
function closeDangling(cx: Classifier, state: RoundState, out: StepOut): RoundState {
  let s = state;
  for (const open of state.open) {
    if (open.kind === 'message') s = finishMessage(cx, s, open.key, '', out, 'incomplete');
    else if (open.kind === 'reasoning') s = finishReasoning(cx, s, open.key, '', out, undefined, undefined, 'incomplete');
    else if (open.kind === 'gateway_call' && open.stream) {
      // A streamed call cut short never runs: its item ends incomplete.
      const item = { ...open.stream.opened.startedItem, status: 'incomplete' } as PublicItem;
      emit(out, { type: 'response.output_item.done', output_index: UNSTAMPED, item });
    } else if (open.kind === 'client_call' && open.announced) {
      // A restored call cut short was never announced. A call cut short cannot be run: its public item ends incomplete and nothing is handed back.
      const partial = open.field ? { [open.field.name]: open.field.soFar } : { arguments: open.relay.kind === 'json' ? parsedArguments(open.args) : open.args };
      emit(out, { type: 'response.output_item.done', output_index: UNSTAMPED, item: { ...open.item, status: 'incomplete', ...partial } });
    }
  }
  return s.open.length === 0 ? s : changed(s, { open: [] });
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
