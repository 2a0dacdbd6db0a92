import { splitIntoDeltas, type ModelPlan } from './model-behaviour.js';
import { frame, hexId, unixSeconds, type SseFrame } from './wire-format.js';

/**
 * vLLM's `/v1/responses` wire format, as recorded in shared/fixtures/vllm: the response object with
 * vLLM's extra fields, and the streamed events including the vendor-only `response.reasoning_part.*`.
 */

type Json = Record<string, unknown>;

export interface DialectInput {
  body: Json;
  plan: ModelPlan;
  model: string;
  chunkChars: number;
  maxModelLen: number;
}

type OutputItem =
  { kind: 'reasoning'; id: string; text: string } | { kind: 'call'; hex: string; callId: string; name: string; arguments: string } | { kind: 'message'; id: string; text: string };

function outputItems(plan: ModelPlan): OutputItem[] {
  const items: OutputItem[] = [];
  if (plan.reasoning !== null) items.push({ kind: 'reasoning', id: `rs_${hexId()}`, text: plan.reasoning });
  for (const call of plan.calls) {
    items.push({ kind: 'call', hex: hexId(), callId: `call_${hexId()}`, name: call.name, arguments: call.arguments });
  }
  if (plan.text !== null) items.push({ kind: 'message', id: `msg_${hexId()}`, text: plan.text });
  return items;
}

function finalItem(item: OutputItem): Json {
  switch (item.kind) {
    case 'reasoning':
      return {
        id: item.id,
        type: 'reasoning',
        summary: [],
        content: [{ type: 'reasoning_text', text: item.text }],
        encrypted_content: null,
        status: null,
      };
    case 'call':
      return {
        id: `fc_${item.hex}`,
        type: 'function_call',
        call_id: item.callId,
        name: item.name,
        arguments: item.arguments,
        namespace: null,
        status: 'completed',
      };
    case 'message':
      return {
        id: item.id,
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [outputText(item.text, null)],
      };
  }
}

function outputText(text: string, logprobs: [] | null): Json {
  return { type: 'output_text', text, annotations: [], logprobs };
}

function usage(plan: ModelPlan): Json {
  const { inputTokens, outputTokens, reasoningTokens } = plan.usage;
  return {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: 0, cached_tokens_per_turn: [], input_tokens_per_turn: [] },
    output_tokens: outputTokens,
    output_tokens_details: {
      reasoning_tokens: reasoningTokens,
      tool_output_tokens: 0,
      output_tokens_per_turn: [],
      tool_output_tokens_per_turn: [],
    },
    total_tokens: inputTokens + outputTokens,
  };
}

/** vLLM echoes declared function tools with `defer_loading` and `strict` filled in. */
function echoTools(tools: unknown): unknown[] {
  if (!Array.isArray(tools)) return [];
  return tools.map((tool: Json) =>
    tool?.type === 'function'
      ? {
          defer_loading: null,
          description: tool.description ?? null,
          name: tool.name,
          parameters: tool.parameters ?? null,
          strict: tool.strict ?? null,
          type: 'function',
        }
      : tool,
  );
}

interface Envelope {
  id: string;
  createdAt: number;
}

function responseObject(input: DialectInput, envelope: Envelope, status: 'in_progress' | 'completed' | 'incomplete', output: Json[], usageValue: Json | null): Json {
  const { body, plan } = input;
  return {
    id: envelope.id,
    created_at: envelope.createdAt,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: body.instructions ?? null,
    metadata: body.metadata ?? null,
    model: input.model,
    object: 'response',
    output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    temperature: body.temperature ?? 1.0,
    tool_choice: body.tool_choice ?? 'auto',
    tools: echoTools(body.tools),
    top_p: body.top_p ?? 1.0,
    background: body.background ?? false,
    // vLLM reports the effective limit: whatever of the context the prompt left over.
    max_output_tokens: body.max_output_tokens ?? Math.max(1, input.maxModelLen - plan.usage.inputTokens),
    max_tool_calls: body.max_tool_calls ?? null,
    previous_response_id: body.previous_response_id ?? null,
    prompt: body.prompt ?? null,
    reasoning: body.reasoning ?? null,
    service_tier: body.service_tier ?? 'auto',
    status,
    text: body.text ?? null,
    top_logprobs: body.top_logprobs ?? null,
    truncation: body.truncation ?? 'disabled',
    usage: usageValue,
    user: body.user ?? null,
    frequency_penalty: body.frequency_penalty ?? 0.0,
    presence_penalty: body.presence_penalty ?? 0.0,
    input_messages: null,
    output_messages: null,
    kv_transfer_params: null,
  };
}

function finalStatus(plan: ModelPlan): 'completed' | 'incomplete' {
  return plan.incomplete ? 'incomplete' : 'completed';
}

export function responsesBody(input: DialectInput): Json {
  const envelope = { id: `resp_${hexId()}`, createdAt: unixSeconds() };
  const items = outputItems(input.plan).map(finalItem);
  return responseObject(input, envelope, finalStatus(input.plan), items, usage(input.plan));
}

export function* responsesFrames(input: DialectInput): Generator<SseFrame> {
  const envelope = { id: `resp_${hexId()}`, createdAt: unixSeconds() };
  let sequence = 0;
  const event = (type: string, payload: Json, token = false, terminal = false): SseFrame => frame(type, { type, ...payload, sequence_number: sequence++ }, token, terminal);

  const initial = responseObject(input, envelope, 'in_progress', [], null);
  yield event('response.created', { response: initial });
  yield event('response.in_progress', { response: initial });

  const items = outputItems(input.plan);
  for (const [outputIndex, item] of items.entries()) {
    yield* itemFrames(item, outputIndex, input.chunkChars, event);
  }

  const status = finalStatus(input.plan);
  const final = responseObject(input, envelope, status, items.map(finalItem), usage(input.plan));
  yield event(status === 'completed' ? 'response.completed' : 'response.incomplete', { response: final }, false, true);
}

type EventMaker = (type: string, payload: Json, token?: boolean) => SseFrame;

function* itemFrames(item: OutputItem, output_index: number, chunkChars: number, event: EventMaker): Generator<SseFrame> {
  if (item.kind === 'reasoning') {
    const where = { item_id: item.id, output_index, content_index: 0 };
    const part = (text: string) => ({ text, type: 'reasoning_text' });
    yield event('response.output_item.added', {
      item: { id: item.id, type: 'reasoning', summary: [], content: null, encrypted_content: null, status: 'in_progress' },
      output_index,
    });
    yield event('response.reasoning_part.added', { ...where, part: part('') });
    for (const delta of splitIntoDeltas(item.text, chunkChars)) {
      yield event('response.reasoning_text.delta', { ...where, delta }, true);
    }
    yield event('response.reasoning_text.done', { ...where, text: item.text });
    yield event('response.reasoning_part.done', { ...where, part: part(item.text) });
    yield event('response.output_item.done', {
      item: { id: item.id, type: 'reasoning', summary: [], content: [part(item.text)], encrypted_content: null, status: 'completed' },
      output_index,
    });
    return;
  }

  if (item.kind === 'call') {
    // Streamed function-call items carry a bare hex id, as in the gemma recording; the final
    // response object names the same item `fc_<hex>`.
    const streamed = (args: string, status: string) => ({
      arguments: args,
      call_id: item.callId,
      name: item.name,
      type: 'function_call',
      id: item.hex,
      status,
    });
    yield event('response.output_item.added', { item: streamed('', 'in_progress'), output_index });
    for (const delta of splitIntoDeltas(item.arguments, chunkChars)) {
      yield event('response.function_call_arguments.delta', { delta, item_id: item.hex, output_index }, true);
    }
    yield event('response.function_call_arguments.done', {
      arguments: item.arguments,
      item_id: item.hex,
      name: item.name,
      output_index,
    });
    yield event('response.output_item.done', { item: streamed(item.arguments, 'completed'), output_index });
    return;
  }

  const where = { item_id: item.id, output_index, content_index: 0 };
  yield event('response.output_item.added', {
    item: { id: item.id, type: 'message', role: 'assistant', content: [], status: 'in_progress' },
    output_index,
  });
  yield event('response.content_part.added', { ...where, part: outputText('', []) });
  for (const delta of splitIntoDeltas(item.text, chunkChars)) {
    yield event('response.output_text.delta', { ...where, delta, logprobs: [] }, true);
  }
  yield event('response.output_text.done', { ...where, text: item.text, logprobs: [] });
  yield event('response.content_part.done', { ...where, part: outputText(item.text, null) });
  yield event('response.output_item.done', { item: finalItem(item), output_index });
}
