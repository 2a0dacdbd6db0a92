import { splitIntoDeltas, type ModelPlan } from './model-behaviour.js';
import type { DialectInput } from './responses-dialect.js';
import { frame, hexId, unixSeconds, type SseFrame } from './wire-format.js';

/** vLLM's `/v1/chat/completions` wire format, streamed and not. */

type Json = Record<string, unknown>;

function finishReason(plan: ModelPlan): 'stop' | 'tool_calls' | 'length' {
  if (plan.incomplete) return 'length';
  return plan.calls.length > 0 ? 'tool_calls' : 'stop';
}

function usage(plan: ModelPlan): Json {
  const { inputTokens, outputTokens } = plan.usage;
  return {
    prompt_tokens: inputTokens,
    total_tokens: inputTokens + outputTokens,
    completion_tokens: outputTokens,
    prompt_tokens_details: null,
  };
}

const toolCallId = () => `chatcmpl-tool-${hexId()}`;

export function chatBody(input: DialectInput): Json {
  const { plan } = input;
  return {
    id: `chatcmpl-${hexId(32)}`,
    object: 'chat.completion',
    created: unixSeconds(),
    model: input.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: plan.text ?? (plan.calls.length > 0 ? null : ''),
          refusal: null,
          annotations: null,
          audio: null,
          function_call: null,
          tool_calls: plan.calls.map((call) => ({
            id: toolCallId(),
            type: 'function',
            function: { name: call.name, arguments: call.arguments },
          })),
          // Older vLLM releases name it `reasoning_content`, newer ones `reasoning`: send both.
          reasoning_content: plan.reasoning,
          reasoning: plan.reasoning,
        },
        logprobs: null,
        finish_reason: finishReason(plan),
        stop_reason: null,
      },
    ],
    service_tier: null,
    system_fingerprint: null,
    usage: usage(plan),
    prompt_logprobs: null,
    prompt_token_ids: null,
    kv_transfer_params: null,
  };
}

export function* chatFrames(input: DialectInput, includeUsage: boolean): Generator<SseFrame> {
  const { plan, chunkChars } = input;
  const envelope = { id: `chatcmpl-${hexId(32)}`, object: 'chat.completion.chunk', created: unixSeconds(), model: input.model };
  const chunk = (delta: Json, token = false): SseFrame => frame('', { ...envelope, choices: [{ index: 0, delta, logprobs: null, finish_reason: null }] }, token);

  yield chunk({ role: 'assistant', content: '' });
  if (plan.reasoning !== null) {
    for (const piece of splitIntoDeltas(plan.reasoning, chunkChars)) yield chunk({ reasoning_content: piece }, true);
  }
  for (const [index, call] of plan.calls.entries()) {
    yield chunk({ tool_calls: [{ index, id: toolCallId(), type: 'function', function: { name: call.name, arguments: '' } }] });
    for (const piece of splitIntoDeltas(call.arguments, chunkChars)) {
      yield chunk({ tool_calls: [{ index, function: { arguments: piece } }] }, true);
    }
  }
  if (plan.text !== null) {
    for (const piece of splitIntoDeltas(plan.text, chunkChars)) yield chunk({ content: piece }, true);
  }
  const finalDelta = plan.calls.length > 0 ? {} : { content: '' };
  yield frame('', { ...envelope, choices: [{ index: 0, delta: finalDelta, logprobs: null, finish_reason: finishReason(plan), stop_reason: null }] }, false, true);
  if (includeUsage) yield frame('', { ...envelope, choices: [], usage: usage(plan) });
  yield frame('', '[DONE]');
}
