import type { JsonObject, Usage } from '#tool-sdk/items.js';
import type { ModelEvent } from '#core/protocol/model-events.js';
import { emptyUsage } from '#tool-sdk/items.js';
import { UpstreamUnavailableError } from '#tool-sdk/errors.js';
import { toUsage } from './usage.mapper.js';
import { argumentsText, isJsonObject, newCallId, stringOr } from './wire-values.js';

interface TextItem {
  kind: 'reasoning' | 'message';
  key: string;
  text: string;
}

interface CallState {
  index: number;
  key: string;
  id: string;
  name: string;
  arguments: string;
  started: boolean;
  /** Its `call.done` went out: the next call began, so its arguments are complete. */
  closed: boolean;
}

/**
 * Turns chat-completion output into `ModelEvent`s. A streamed chunk carries
 * `choices[].delta`; a whole completion carries `choices[].message` and is
 * decoded as one big delta with `deltas: false`, so both paths share one
 * classification.
 *
 * Text items are sequential: reasoning closes when the answer or a tool call
 * begins and the answer closes when a tool call begins, so consumers never
 * see two text items open at once (the order the Responses dialect has too).
 * Tool calls are assembled by `index`; a call closes when the next one begins
 * (servers write a completion's calls one after another) or at the end. So
 * every call is done before the next starts, as on the Responses dialect, and
 * the loop publishes gateway and client calls in the model's order: with all
 * calls left open to the end, a client call's item was announced at its first
 * token while a gateway call's waited for its arguments, after it.
 */
export class ChatCompletionDecoder {
  private current: TextItem | undefined;
  private readonly counts = { reasoning: 0, message: 0 };
  private readonly calls = new Map<number, CallState>();
  private readonly callsById = new Map<string, CallState>();
  private lastCall: CallState | undefined;
  private usage: Usage | undefined;
  private finishReason: string | undefined;
  private ended = false;

  constructor(
    private readonly emit: (event: ModelEvent) => void,
    private readonly url: string,
    private readonly deltas: boolean,
  ) {}

  /** True once a choice reported why it stopped. */
  get sawFinishReason(): boolean {
    return this.finishReason !== undefined;
  }

  push(chunk: JsonObject): void {
    if (chunk.object === 'error' || (chunk.error !== undefined && chunk.error !== null)) throw this.failed(chunk);
    // Servers with continuous usage stats send cumulative counts on every chunk: the last one wins.
    if (isJsonObject(chunk.usage)) this.usage = toUsage(chunk.usage);
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    for (const choice of choices) {
      // `n > 1` is never requested; a stray second choice is not ours to merge.
      if (!isJsonObject(choice) || (typeof choice.index === 'number' && choice.index !== 0)) continue;
      const delta = isJsonObject(choice.delta) ? choice.delta : isJsonObject(choice.message) ? choice.message : {};
      const reasoning = stringOr(delta.reasoning_content, '') || stringOr(delta.reasoning, '');
      if (reasoning) this.text('reasoning', reasoning);
      const content = contentText(delta.content);
      if (content) this.text('message', content);
      // TGI 2.x sends one tool call as an object rather than an array.
      const toolCalls = Array.isArray(delta.tool_calls) ? delta.tool_calls : isJsonObject(delta.tool_calls) ? [delta.tool_calls] : [];
      for (const call of toolCalls) if (isJsonObject(call)) this.toolCall(call);
      if (typeof choice.finish_reason === 'string' && choice.finish_reason) this.finishReason = choice.finish_reason;
    }
  }

  /** Closes open items in order (text item, then calls by index) and reports usage and finish. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.closeText();
    this.closeCalls();
    this.emit({ type: 'usage', usage: this.usage ?? emptyUsage() });
    if (this.finishReason === 'length') {
      this.emit({ type: 'finish', status: 'incomplete', reason: 'max_output_tokens' });
    } else if (this.finishReason === 'content_filter') {
      this.emit({ type: 'finish', status: 'incomplete', reason: 'content_filter' });
    } else {
      this.emit({ type: 'finish', status: 'completed' });
    }
  }

  private text(kind: 'reasoning' | 'message', delta: string): void {
    if (this.current?.kind !== kind) {
      this.closeText();
      const key = `${kind}_${this.counts[kind]++}`;
      this.current = { kind, key, text: '' };
      this.emit(kind === 'message' ? { type: 'message.start', key } : { type: 'reasoning.start', key });
    }
    this.current.text += delta;
    if (this.deltas) this.emit({ type: kind === 'message' ? 'message.delta' : 'reasoning.delta', key: this.current.key, delta });
  }

  private closeText(): void {
    const item = this.current;
    if (!item) return;
    this.current = undefined;
    this.emit(item.kind === 'message' ? { type: 'message.done', key: item.key, text: item.text } : { type: 'reasoning.done', key: item.key, text: item.text });
  }

  private toolCall(raw: JsonObject): void {
    const fn = isJsonObject(raw.function) ? raw.function : {};
    const id = stringOr(raw.id, '');
    const name = stringOr(fn.name, '');
    const call = this.callFor(raw, id, name);
    if (!call) return;
    if (call.closed) {
      // Arguments interleaved across calls: the earlier call was already handed on as complete.
      throw new UpstreamUnavailableError(`Upstream ${this.url} continued tool call ${call.index} after the next call began.`, 'upstream_bad_response');
    }
    // Servers repeat the id (and sometimes the name) on later chunks: first value wins.
    if (id && !call.id) {
      call.id = id;
      this.callsById.set(id, call);
    }
    if (name && !call.name) call.name = name;

    let piece = '';
    if (typeof fn.arguments === 'string') piece = fn.arguments;
    else if (fn.arguments !== undefined && fn.arguments !== null) piece = argumentsText(fn.arguments);
    call.arguments += piece;

    if (!call.started && call.name) {
      this.startCall(call);
      // Arguments that came before the name are replayed as one piece.
      if (this.deltas && call.arguments) this.emit({ type: 'call.delta', key: call.key, delta: call.arguments });
    } else if (call.started && piece && this.deltas) {
      this.emit({ type: 'call.delta', key: call.key, delta: piece });
    }
  }

  /**
   * The call a tool-call delta belongs to: by `index` when the server sends
   * one; otherwise by id, a new call when a name appears, or a continuation
   * of the latest call (Ollama and older llama.cpp send no index).
   */
  private callFor(raw: JsonObject, id: string, name: string): CallState | undefined {
    let index: number;
    if (typeof raw.index === 'number') {
      index = raw.index;
    } else if (id && this.callsById.has(id)) {
      return this.callsById.get(id);
    } else if (id || name || !this.lastCall) {
      index = this.calls.size ? Math.max(...this.calls.keys()) + 1 : 0;
    } else {
      return this.lastCall;
    }
    let call = this.calls.get(index);
    if (!call) {
      // A new call means the ones before it are complete.
      this.closeCalls(index);
      call = { index, key: `call_${index}`, id: '', name: '', arguments: '', started: false, closed: false };
      this.calls.set(index, call);
    }
    this.lastCall = call;
    return call;
  }

  /** Ends every open call before `before` (all of them by default), in index order. */
  private closeCalls(before = Number.POSITIVE_INFINITY): void {
    for (const call of [...this.calls.values()].sort((a, b) => a.index - b.index)) {
      if (call.closed || call.index >= before) continue;
      this.startCall(call);
      call.closed = true;
      this.emit({ type: 'call.done', key: call.key, call_id: call.id, name: call.name, arguments: call.arguments });
    }
  }

  private startCall(call: CallState): void {
    if (call.started) return;
    call.started = true;
    // A tool call ends whatever text came before it.
    this.closeText();
    if (!call.id) {
      call.id = newCallId();
      this.callsById.set(call.id, call);
    }
    this.emit({ type: 'call.start', key: call.key, call_id: call.id, name: call.name });
  }

  private failed(chunk: JsonObject): UpstreamUnavailableError {
    const error = chunk.error;
    const message = (isJsonObject(error) && stringOr(error.message, '')) || stringOr(error, '') || stringOr(chunk.message, '') || 'The model server failed while generating.';
    return new UpstreamUnavailableError(message, 'upstream_failed').withDetail(`upstream ${this.url}`);
  }
}

/** Message content as text; some servers (Mistral-style) send a list of text parts. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) {
    if (isJsonObject(part) && typeof part.text === 'string') text += part.text;
  }
  return text;
}
