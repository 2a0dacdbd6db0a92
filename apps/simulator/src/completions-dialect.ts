import { splitIntoDeltas, type ModelPlan } from './model-behaviour.js';
import type { DialectInput } from './responses-dialect.js';
import { frame, hexId, unixSeconds, type SseFrame } from './wire-format.js';

/**
 * vLLM's legacy `/v1/completions` wire format, streamed and not: `cmpl-` ids,
 * `object: "text_completion"`, choices carrying `text` (no roles, no tool
 * calls), vLLM's extra `stop_reason` / `prompt_logprobs`, and the same usage
 * block as chat. A plan's tool calls cannot be expressed here; the "model"
 * answers with its text only.
 */

type Json = Record<string, unknown>;

function finishReason(plan: ModelPlan): 'stop' | 'length' {
  return plan.incomplete ? 'length' : 'stop';
}

function usage(plan: ModelPlan): Json {
  const { inputTokens, outputTokens } = plan.usage;
  return { prompt_tokens: inputTokens, total_tokens: inputTokens + outputTokens, completion_tokens: outputTokens, prompt_tokens_details: null };
}

/** The prompt as chat messages, so the simulated model reads it as one user turn; vLLM takes a string or a list of strings. */
export function completionPromptAsChat(body: Json): Json {
  const prompt = Array.isArray(body.prompt) ? body.prompt.filter((p) => typeof p === 'string').join('\n') : body.prompt;
  return { ...body, messages: [{ role: 'user', content: typeof prompt === 'string' ? prompt : '' }] };
}

export function completionBody(input: DialectInput): Json {
  const { plan } = input;
  return {
    id: `cmpl-${hexId(32)}`,
    object: 'text_completion',
    created: unixSeconds(),
    model: input.model,
    choices: [{ index: 0, text: plan.text ?? '', logprobs: null, finish_reason: finishReason(plan), stop_reason: null, prompt_logprobs: null }],
    service_tier: null,
    system_fingerprint: null,
    usage: usage(plan),
    kv_transfer_params: null,
  };
}

export function* completionFrames(input: DialectInput, includeUsage: boolean): Generator<SseFrame> {
  const { plan, chunkChars } = input;
  const envelope = { id: `cmpl-${hexId(32)}`, object: 'text_completion', created: unixSeconds(), model: input.model };
  const chunk = (text: string, finish: string | null, token: boolean, terminal = false): SseFrame =>
    frame('', { ...envelope, choices: [{ index: 0, text, logprobs: null, finish_reason: finish, stop_reason: null }], usage: null }, token, terminal);
  for (const piece of splitIntoDeltas(plan.text ?? '', chunkChars)) yield chunk(piece, null, true);
  yield chunk('', finishReason(plan), false, true);
  if (includeUsage) yield frame('', { ...envelope, choices: [], usage: usage(plan) });
  yield frame('', '[DONE]');
}
