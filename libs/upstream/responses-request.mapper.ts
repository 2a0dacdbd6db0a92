import { randomBytes } from 'node:crypto';
import type { ContentPart, FunctionToolDef, JsonObject, ModelItem, ReasoningItem } from '#tool-sdk/items.js';
import type { ModelRequest } from '#core/protocol/model-events.js';
import { freezeJson, frozenForms, mapFrozenOnce } from '#tool-sdk/helpers/frozen-json.js';
import { omitNullish } from './wire-values.js';

/**
 * The body of `POST /responses` for vLLM. Always `store: false`: the gateway
 * keeps conversation state itself and never sends `previous_response_id`.
 */
export function toResponsesRequest(request: ModelRequest, defaultModel?: string): JsonObject {
  const hasTools = request.tools.length > 0;
  return omitNullish({
    model: request.model || defaultModel,
    input: request.input.map(wireItemOf).filter((item): item is JsonObject => item !== undefined),
    instructions: request.instructions || undefined,
    tools: hasTools ? mapFrozenOnce(wireTools, request.tools, (tool) => omitNullish({ ...tool })) : undefined,
    // vLLM rejects `tool_choice` without `tools`; without tools neither means anything.
    tool_choice: hasTools ? request.tool_choice : undefined,
    parallel_tool_calls: hasTools ? request.parallel_tool_calls : undefined,
    temperature: request.temperature,
    top_p: request.top_p,
    max_output_tokens: request.max_output_tokens,
    presence_penalty: request.presence_penalty,
    frequency_penalty: request.frequency_penalty,
    top_logprobs: request.top_logprobs,
    text: request.text,
    reasoning: toReasoningOptions(request.reasoning),
    user: request.user,
    stream: request.stream,
    store: false,
  });
}

/**
 * The wire form of each kept (frozen) tool list, made once: see `mapFrozenOnce`.
 * A cache keyed by the sealed registry's frozen function list (or by a frozen
 * function in a request's own list), not a note on a request: what is not
 * frozen is mapped afresh, and a miss only maps again. What it saves is in bench/README.md ("Kept tool lists' wire forms").
 */
const wireTools = frozenForms<FunctionToolDef, JsonObject>();

/**
 * The wire form of each kept (frozen) model item, made once: a continued chain's earlier items are
 * the same frozen objects on every turn (`PreparedChainCache`), so their wire forms are not rebuilt
 * per turn and per earlier turn. A cache keyed by the item: a request's own (unfrozen) items are
 * mapped afresh, and a miss only maps again. Null: the item has no wire form (it is left out).
 */
const wireItems = new WeakMap<ModelItem, JsonObject | null>();

function wireItemOf(item: ModelItem): JsonObject | undefined {
  // A reasoning item without an id gets one made per mapping: not a form to keep.
  if (!Object.isFrozen(item) || (item.type === 'reasoning' && !item.id)) return toInputItem(item);
  let wire = wireItems.get(item);
  if (wire === undefined) {
    wire = freezeJson(toInputItem(item)) ?? null;
    wireItems.set(item, wire);
  }
  return wire ?? undefined;
}

function toReasoningOptions(reasoning: ModelRequest['reasoning']): JsonObject | undefined {
  const options = reasoning ? omitNullish({ ...reasoning }) : {};
  return Object.keys(options).length ? options : undefined;
}

function toInputItem(item: ModelItem): JsonObject | undefined {
  switch (item.type) {
    case 'message':
      return omitNullish({
        type: 'message',
        // vLLM validates an assistant message with output parts as an output
        // message, which requires `id` and `status`: keep them when known.
        id: item.id || undefined,
        role: item.role,
        content: typeof item.content === 'string' ? item.content : item.content.map(toContentPart),
        status: item.status,
      });
    case 'function_call':
      // `namespace` is a public-side concept and `status` is meaningless to the model.
      return omitNullish({
        type: 'function_call',
        id: item.id || undefined,
        call_id: item.call_id,
        name: item.name,
        arguments: item.arguments,
      });
    case 'function_call_output':
      return { type: 'function_call_output', call_id: item.call_id, output: typeof item.output === 'string' ? item.output : item.output.map(toContentPart) };
    case 'reasoning':
      return toReasoningInput(item);
    default:
      return undefined;
  }
}

function toContentPart(part: ContentPart): JsonObject {
  // The output-text param type requires `annotations`; stored items may lack it.
  if (part.type === 'output_text' && !Array.isArray((part as JsonObject).annotations)) {
    return { ...part, annotations: [] };
  }
  // OpenAI's full-resolution `original` is newer than what model servers take (`low`, `high`, `auto`): `high` is nearest.
  if (part.type === 'input_image' && (part as JsonObject).detail === 'original') return { ...part, detail: 'high' };
  return { ...part };
}

/** A reasoning item with neither text nor encrypted content tells the model nothing. */
function toReasoningInput(item: ReasoningItem): JsonObject | undefined {
  const content = (item.content ?? []).filter((part) => typeof part.text === 'string' && part.text !== '');
  const summary = (item.summary ?? []).filter((part) => typeof part.text === 'string' && part.text !== '');
  if (!content.length && !summary.length && !item.encrypted_content) return undefined;
  return omitNullish({
    type: 'reasoning',
    // vLLM's reasoning item type requires an id.
    id: item.id || `rs_${randomBytes(12).toString('hex')}`,
    summary,
    content: content.length ? content : undefined,
    encrypted_content: item.encrypted_content || undefined,
  });
}
