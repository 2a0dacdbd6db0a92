import type { AnthropicErrorBody, AnthropicMessage, AnthropicStreamEvent, ContentBlock } from './anthropic-events.js';

/**
 * Folds translated stream events into the message a blocking request
 * answers with, exactly as an Anthropic client accumulates a stream.
 */
export class MessageFolder {
  private message: AnthropicMessage | null = null;
  private readonly json = new Map<number, string>();
  error: AnthropicErrorBody['error'] | null = null;

  add(event: AnthropicStreamEvent): void {
    switch (event.type) {
      case 'message_start':
        this.message = { ...event.message, content: [], usage: { ...event.message.usage } };
        return;
      case 'content_block_start':
        this.message!.content[event.index] = { ...event.content_block } as ContentBlock;
        return;
      case 'content_block_delta': {
        const block = this.message!.content[event.index] as Record<string, unknown>;
        const delta = event.delta;
        if (delta.type === 'text_delta') block.text += delta.text;
        else if (delta.type === 'thinking_delta') block.thinking += delta.thinking;
        else if (delta.type === 'signature_delta') block.signature = delta.signature;
        else if (delta.type === 'citations_delta') block.citations = [...((block.citations as unknown[] | undefined) ?? []), delta.citation];
        else this.json.set(event.index, (this.json.get(event.index) ?? '') + delta.partial_json);
        return;
      }
      case 'content_block_stop': {
        const raw = this.json.get(event.index);
        if (raw !== undefined) (this.message!.content[event.index] as { input: unknown }).input = parseInput(raw);
        return;
      }
      case 'message_delta':
        this.message!.stop_reason = event.delta.stop_reason;
        this.message!.usage = { ...event.usage };
        if (event.context_management) this.message!.context_management = event.context_management;
        return;
      case 'error':
        this.error = event.error;
        return;
    }
  }

  get result(): AnthropicMessage | null {
    return this.message;
  }
}

/**
 * A tool call's input must be an object. Arguments a model wrote as broken
 * JSON become `{}`: the client's tool then reports what is missing, and the
 * model can try again, where a refusal would end the turn.
 */
function parseInput(raw: string): unknown {
  if (raw.trim().length === 0) return {};
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
}
