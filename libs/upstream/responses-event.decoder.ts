import type { JsonObject } from '#tool-sdk/items.js';
import type { ModelEvent } from '#core/protocol/model-events.js';
import { UpstreamUnavailableError } from '#tool-sdk/errors.js';
import { toUsage } from './usage.mapper.js';
import { argumentsText, isJsonObject, newCallId, numberOr, stringOr } from './wire-values.js';

type ItemKind = 'message' | 'reasoning' | 'call';

interface ItemState {
  key: string;
  kind: ItemKind;
  started: boolean;
  done: boolean;
  /** Message text, reasoning text or call arguments accumulated from deltas. */
  text: string;
  /** Reasoning summary texts accumulated from deltas, by `summary_index`. */
  summary: string[];
  callId: string;
  name: string;
  phase?: 'commentary' | 'final_answer' | null;
}

const ITEM_KINDS: Record<string, ItemKind> = {
  message: 'message',
  reasoning: 'reasoning',
  function_call: 'call',
};

const REASONING_DELTAS = new Set(['response.reasoning_text.delta', 'response.reasoning.delta', 'response.reasoning_summary_text.delta', 'response.reasoning_summary.delta']);

const TERMINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/**
 * Turns vLLM's Responses output (streamed events, or one response object)
 * into `ModelEvent`s. A non-streamed response is decoded as a terminal event
 * alone, so both paths share one classification of items.
 *
 * vLLM's vendor-only `response.reasoning_part.added` becomes `reasoning.part`
 * (the public stream opens its `reasoning_text` content part there). The
 * redundant events (`response.reasoning_part.done`, `response.content_part.*`,
 * the `*.done` text duplicates) are dropped: the `output_item.done` item
 * carries the same text, and the accumulator closes parts itself.
 */
export class ResponsesEventDecoder {
  private readonly items: ItemState[] = [];
  private readonly byId = new Map<string, ItemState>();
  private readonly byIndex = new Map<number, ItemState>();
  private ended = false;

  constructor(
    private readonly emit: (event: ModelEvent) => void,
    private readonly url: string,
  ) {}

  /** Feeds one streamed event; returns `true` when it ended the response. */
  push(event: JsonObject): boolean {
    if (this.ended) return true;
    const type = stringOr(event.type, '');
    if (type === 'error' || (type === '' && (event.object === 'error' || event.error !== undefined))) {
      throw this.failed(event);
    }
    if (TERMINAL_EVENTS.has(type)) {
      this.finishWith(isJsonObject(event.response) ? event.response : {}, type);
      return true;
    }
    if (type === 'response.output_item.added') {
      const item = isJsonObject(event.item) ? event.item : {};
      const state = this.track(item, event.output_index);
      if (state) this.start(state);
    } else if (type === 'response.output_item.done') {
      const item = isJsonObject(event.item) ? event.item : {};
      const state = this.lookup(item.id, event.output_index) ?? this.track(item, event.output_index);
      if (state) this.complete(state, item);
    } else if (type === 'response.output_text.delta') {
      const state = this.deltaTarget(event, 'message');
      this.delta(state, event.delta);
    } else if (type === 'response.function_call_arguments.delta') {
      const state = this.lookup(event.item_id, event.output_index);
      // Without `output_item.added` the call has no name yet; the done item or
      // the terminal response still carries the whole call.
      if (state?.kind === 'call' && state.started) this.delta(state, event.delta);
    } else if (type === 'response.reasoning_part.added') {
      const state = this.deltaTarget(event, 'reasoning');
      if (state && !state.done) this.emit({ type: 'reasoning.part', key: state.key });
    } else if (REASONING_DELTAS.has(type)) {
      const state = this.deltaTarget(event, 'reasoning');
      if (type.includes('summary') && typeof event.delta === 'string' && state && !state.done) {
        const index = numberOr(event.summary_index, 0);
        state.summary[index] = (state.summary[index] ?? '') + event.delta;
        this.emit({ type: 'reasoning.delta', key: state.key, delta: event.delta });
      } else {
        this.delta(state, event.delta);
      }
    }
    return false;
  }

  /** Decodes a whole (non-streamed) response object. */
  decodeResponse(response: JsonObject): void {
    if (response.object === 'error' || (response.error && !Array.isArray(response.output))) {
      throw this.failed(response);
    }
    const status = response.status;
    this.finishWith(response, status === 'failed' ? 'response.failed' : status === 'incomplete' ? 'response.incomplete' : 'response.completed');
  }

  /** The body ended: without a terminal event the response is incomplete in an unknown way. */
  end(): void {
    if (this.ended) return;
    throw new UpstreamUnavailableError('The model server ended the stream before the response finished.', 'upstream_stream_error').withDetail(`upstream ${this.url}`);
  }

  private finishWith(response: JsonObject, type: string): void {
    this.ended = true;
    if (type === 'response.failed' || response.status === 'failed') throw this.failed(response);

    // Items whose `output_item.done` never came are completed from the terminal
    // response; vLLM's terminal event may also omit `output` entirely.
    const output = Array.isArray(response.output) ? response.output : [];
    output.forEach((raw, index) => {
      if (!isJsonObject(raw)) return;
      const state = this.lookup(raw.id, index) ?? this.track(raw, index);
      if (state && !state.done) this.complete(state, raw);
    });
    for (const state of this.items) if (!state.done) this.complete(state, undefined);

    this.emit({ type: 'usage', usage: toUsage(response.usage) });
    const incomplete = type === 'response.incomplete' || response.status === 'incomplete';
    if (!incomplete) {
      this.emit({ type: 'finish', status: 'completed' });
      return;
    }
    const details = isJsonObject(response.incomplete_details) ? response.incomplete_details : {};
    const reason = details.reason === 'max_output_tokens' || details.reason === 'content_filter' ? details.reason : null;
    this.emit({ type: 'finish', status: 'incomplete', reason });
  }

  /** Registers an item the first time it is seen; `undefined` for item types a model client cannot use. */
  private track(item: JsonObject, outputIndex: unknown): ItemState | undefined {
    const kind = ITEM_KINDS[stringOr(item.type, '')];
    if (!kind) return undefined;
    const id = stringOr(item.id, '');
    const index = typeof outputIndex === 'number' ? outputIndex : this.items.length;
    const phase = item.phase === 'commentary' || item.phase === 'final_answer' ? item.phase : undefined;
    const state: ItemState = {
      key: id || `output_${index}`,
      kind,
      started: false,
      done: false,
      text: '',
      summary: [],
      // Some vLLM versions leave `call_id` empty; the item id is then the only handle.
      callId: stringOr(item.call_id, '') || id || newCallId(),
      name: stringOr(item.name, ''),
      phase,
    };
    this.items.push(state);
    if (id) this.byId.set(id, state);
    this.byIndex.set(index, state);
    return state;
  }

  private lookup(itemId: unknown, outputIndex: unknown): ItemState | undefined {
    if (typeof itemId === 'string' && itemId) {
      const byId = this.byId.get(itemId);
      if (byId) return byId;
    }
    return typeof outputIndex === 'number' ? this.byIndex.get(outputIndex) : undefined;
  }

  /** The item a text delta belongs to; a delta for an item never announced starts one. */
  private deltaTarget(event: JsonObject, kind: 'message' | 'reasoning'): ItemState | undefined {
    const known = this.lookup(event.item_id, event.output_index);
    if (known) return known.kind === kind ? known : undefined;
    const state = this.track({ type: kind, id: event.item_id }, event.output_index);
    if (state) this.start(state);
    return state;
  }

  private start(state: ItemState): void {
    if (state.started) return;
    state.started = true;
    if (state.kind === 'message') {
      this.emit(state.phase ? { type: 'message.start', key: state.key, phase: state.phase } : { type: 'message.start', key: state.key });
    } else if (state.kind === 'reasoning') {
      this.emit({ type: 'reasoning.start', key: state.key });
    } else {
      this.emit({ type: 'call.start', key: state.key, call_id: state.callId, name: state.name });
    }
  }

  private delta(state: ItemState | undefined, delta: unknown): void {
    if (!state || state.done || typeof delta !== 'string' || delta === '') return;
    state.text += delta;
    const type = state.kind === 'message' ? 'message.delta' : state.kind === 'reasoning' ? 'reasoning.delta' : 'call.delta';
    this.emit({ type, key: state.key, delta });
  }

  /** Emits the item's done event from the finished item, or from the deltas when there is none. */
  private complete(state: ItemState, item: JsonObject | undefined): void {
    if (item && !state.started) {
      // A call first seen at its end still needs its name on `call.start`.
      state.name = stringOr(item.name, state.name);
      state.callId = stringOr(item.call_id, '') || state.callId;
    }
    this.start(state);
    state.done = true;
    if (state.kind === 'message') {
      const parts = item && Array.isArray(item.content) ? item.content : undefined;
      const text = (parts && textOf(parts, 'output_text')) || state.text;
      this.emit({ type: 'message.done', key: state.key, text });
    } else if (state.kind === 'reasoning') {
      const parts = item && Array.isArray(item.content) ? item.content : undefined;
      const text = (parts && textOf(parts, 'reasoning_text')) || state.text;
      const summary =
        item && Array.isArray(item.summary) && item.summary.length
          ? item.summary.map((part) => (isJsonObject(part) ? stringOr(part.text, '') : ''))
          : state.summary.filter((part) => part !== undefined);
      const encrypted = item ? stringOr(item.encrypted_content, null) : null;
      this.emit({
        type: 'reasoning.done',
        key: state.key,
        text,
        ...(summary.length ? { summary } : {}),
        ...(encrypted ? { encrypted_content: encrypted } : {}),
      });
    } else {
      const args = item && item.arguments !== undefined && item.arguments !== null ? argumentsText(item.arguments) : state.text;
      this.emit({
        type: 'call.done',
        key: state.key,
        call_id: state.callId,
        name: item ? stringOr(item.name, state.name) || state.name : state.name,
        arguments: args,
      });
    }
  }

  private failed(body: JsonObject): UpstreamUnavailableError {
    const error = isJsonObject(body.error) ? body.error : undefined;
    const message = (error && stringOr(error.message, '')) || stringOr(body.error, '') || stringOr(body.message, '') || 'The model server failed to produce a response.';
    return new UpstreamUnavailableError(message, 'upstream_failed').withDetail(`upstream ${this.url}`);
  }
}

function textOf(parts: unknown[], type: string): string {
  let text = '';
  for (const part of parts) {
    if (isJsonObject(part) && part.type === type && typeof part.text === 'string') text += part.text;
  }
  return text;
}
