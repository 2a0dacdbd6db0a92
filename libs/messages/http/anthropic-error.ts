import { ContextLengthExceededError, isGatewayError } from '#tool-sdk/errors.js';
import { toErrorEnvelope } from '#edge/errors/error-envelope.js';
import { toAnthropicParam, type ToolOrigin } from '../request/tool-origin.js';
import type { AnthropicErrorBody } from '../stream/anthropic-events.js';

/** Anthropic's error `type` for each HTTP status it documents. */
function errorType(status: number): string {
  switch (status) {
    case 401:
      return 'authentication_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 504:
      return 'timeout_error';
    default:
      return status >= 400 && status < 500 ? 'invalid_request_error' : 'api_error';
  }
}

/**
 * Any error as Anthropic's envelope. Status and wording come from the one
 * OpenAI-side mapping (`toErrorEnvelope`), so both surfaces agree on what an
 * error is; a core error naming a tool declaration is renamed to the field
 * the Messages client sent.
 */
export function toAnthropicError(err: unknown, toolOrigins: readonly ToolOrigin[] = []): { status: number; body: AnthropicErrorBody; headers?: Record<string, string> } {
  const { status, body, headers } = toErrorEnvelope(err);
  if (err instanceof ContextLengthExceededError) return { status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: overflowMessage(err) } } };
  let message = body.error.message;
  const param = isGatewayError(err) ? err.param : null;
  if (param) {
    const renamed = toAnthropicParam(param, toolOrigins);
    message = message.split(param).join(renamed);
    if (!message.includes(renamed)) message = `${renamed}: ${message}`;
  }
  // The headers (`retry-after` on a 429 or 503) say when to come back, whichever envelope carries the error.
  return { status, body: { type: 'error', error: { type: errorType(status), message } }, headers };
}

/**
 * A context overflow in Anthropic's words, which Claude Code acts on by
 * their start: `prompt is too long` makes it compact the conversation, and
 * ``input length and `max_tokens` exceed context limit: N + M > L`` makes it
 * retry with a `max_tokens` that fits (it reads the three figures).
 */
function overflowMessage(err: ContextLengthExceededError): string {
  const { inputTokens, outputTokens, contextLength } = err.overflow;
  if (outputTokens === null || inputTokens >= contextLength) return `prompt is too long: ${inputTokens} tokens > ${contextLength} maximum`;
  return `input length and \`max_tokens\` exceed context limit: ${inputTokens} + ${outputTokens} > ${contextLength}, decrease input length or \`max_tokens\` and try again`;
}
