import type { EdgeAnswer, EdgeFolder, EdgeSurface } from '#edge/responder/edge-surface.js';
import type { ToolOrigin } from '../request/tool-origin.js';
import type { AnthropicStreamEvent } from '../stream/anthropic-events.js';
import { MessageFolder } from '../stream/message-folder.js';
import type { MessagesEventTranslator } from '../stream/messages-event.translator.js';
import { toAnthropicError } from './anthropic-error.js';

/** A blocking Messages request answers with the folded message, or the error event the run ended with. */
class AnthropicMessageFolder implements EdgeFolder<AnthropicStreamEvent> {
  private readonly folder = new MessageFolder();

  add(event: AnthropicStreamEvent): void {
    this.folder.add(event);
  }

  answer(): EdgeAnswer {
    const { error, result } = this.folder;
    if (error || !result) return { status: 500, body: { type: 'error', error: error ?? { type: 'api_error', message: 'The run ended without a message.' } } };
    return { status: 200, body: result };
  }
}

/**
 * The Anthropic Messages API for one run: loop events through its
 * translator (which keeps block state, hence one surface per run), errors in
 * Anthropic's envelope with the fields named as the client sent them. Once
 * the stream began, an error is an `error` event of type `api_error`, as
 * Anthropic's own streams report failures mid-stream.
 */
export function messagesSurface(translator: MessagesEventTranslator, toolOrigins: readonly ToolOrigin[]): EdgeSurface<AnthropicStreamEvent> {
  return {
    name: 'Messages',
    frames: (event) => translator.push(event),
    errorAnswer: (err) => toAnthropicError(err, toolOrigins),
    errorFrame: (err) => ({ type: 'error', error: { type: 'api_error', message: toAnthropicError(err, toolOrigins).body.error.message } }),
    folder: () => new AnthropicMessageFolder(),
  };
}
