import { type Usage } from '#tool-sdk/items.js';
import { isJsonObject, numberOr } from './wire-values.js';

/**
 * Token usage from either dialect: Responses (`input_tokens`, `output_tokens`)
 * or chat completions (`prompt_tokens`, `completion_tokens`). Missing counts
 * are zero; vendor extras (vLLM's `*_per_turn` arrays) are dropped.
 */
export function toUsage(raw: unknown): Usage {
  const usage = isJsonObject(raw) ? raw : {};
  const inputDetails = isJsonObject(usage.input_tokens_details) ? usage.input_tokens_details : isJsonObject(usage.prompt_tokens_details) ? usage.prompt_tokens_details : {};
  const outputDetails = isJsonObject(usage.output_tokens_details)
    ? usage.output_tokens_details
    : isJsonObject(usage.completion_tokens_details)
      ? usage.completion_tokens_details
      : {};
  const input = numberOr(usage.input_tokens, numberOr(usage.prompt_tokens, 0));
  const output = numberOr(usage.output_tokens, numberOr(usage.completion_tokens, 0));
  return {
    input_tokens: input,
    output_tokens: output,
    total_tokens: numberOr(usage.total_tokens, input + output),
    input_tokens_details: { cached_tokens: numberOr(inputDetails.cached_tokens, 0) },
    output_tokens_details: { reasoning_tokens: numberOr(outputDetails.reasoning_tokens, 0) },
  };
}
