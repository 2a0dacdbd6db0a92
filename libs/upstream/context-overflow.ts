import { ContextLengthExceededError } from '#tool-sdk/errors.js';

/**
 * vLLM's refusals of a prompt that does not fit (HTTP 400, before generating), recognised by
 * their wording since vLLM gives them no code of their own:
 * - the prompt alone: "This model's maximum context length is L tokens. However, your request has N input tokens. ..."
 * - prompt and budget: "'max_tokens' or 'max_completion_tokens' is too large: M. This model's maximum context length
 *   is L tokens and your request has N input tokens (M > L - N)."
 * - older releases: "... maximum context length is L tokens. However, you requested T tokens (N in the messages, M in the completion). ..."
 */
const PROMPT_ALONE = /maximum context length is (\d+) tokens\. However, your request has (\d+) input tokens/;
const WITH_BUDGET = /is too large: (\d+)\. This model's maximum context length is (\d+) tokens and your request has (\d+) input tokens/;
const OLDER = /maximum context length is (\d+) tokens\. However, you requested \d+ tokens \((\d+) in the messages, (\d+) in the completion\)/;

/** The upstream's 4xx as a context overflow when its message says so, else null. */
export function contextOverflowError(message: string, status: number): ContextLengthExceededError | null {
  if (status !== 400 && status !== 413) return null;
  let match = WITH_BUDGET.exec(message);
  if (match) return new ContextLengthExceededError(message, status, { outputTokens: Number(match[1]), contextLength: Number(match[2]), inputTokens: Number(match[3]) });
  match = OLDER.exec(message);
  if (match) {
    const [contextLength, inputTokens, outputTokens] = [Number(match[1]), Number(match[2]), Number(match[3])];
    return new ContextLengthExceededError(message, status, { contextLength, inputTokens, outputTokens: inputTokens >= contextLength ? null : outputTokens });
  }
  match = PROMPT_ALONE.exec(message);
  if (match) return new ContextLengthExceededError(message, status, { contextLength: Number(match[1]), inputTokens: Number(match[2]), outputTokens: null });
  return null;
}
