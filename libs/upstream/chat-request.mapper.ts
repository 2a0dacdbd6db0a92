import type { ContentPart, FunctionToolDef, JsonObject, ModelItem, ModelToolChoice } from '#tool-sdk/items.js';
import type { ModelRequest } from '#core/protocol/model-events.js';
import { frozenForms, mapFrozenOnce } from '#tool-sdk/helpers/frozen-json.js';
import { isJsonObject, omitNullish } from './wire-values.js';

type ChatContent = string | JsonObject[] | null;

interface ChatMessage extends JsonObject {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: ChatContent;
}

/**
 * Where the chat dialect puts the images of a tool's output. OpenAI's chat
 * API takes text only in a `tool` message and many chat templates render a
 * tool message's content as a string, so by default (`user-message`) the
 * tool message keeps the text and the images follow, after the run of tool
 * messages, in one user message that says whose output they are: every
 * vision model reads images there. `tool-message` sends them as content parts
 * of the tool message itself, for servers and templates that take that.
 */
export type ChatToolOutputMedia = 'user-message' | 'tool-message';

export interface ChatMapperOptions {
  defaultModel?: string;
  toolOutputMedia?: ChatToolOutputMedia;
}

/**
 * The body of `POST /chat/completions`, the dialect SGLang, llama.cpp server,
 * Ollama and TGI share. Only widely supported fields are sent: `max_tokens`
 * rather than `max_completion_tokens`, plain-string content whenever the
 * content is text only (several servers reject content arrays for some roles).
 */
export function toChatCompletionRequest(request: ModelRequest, options: ChatMapperOptions = {}): JsonObject {
  const hasTools = request.tools.length > 0;
  const logprobs = typeof request.top_logprobs === 'number';
  return omitNullish({
    model: request.model || options.defaultModel,
    messages: toChatMessages(request.instructions, request.input, options.toolOutputMedia),
    tools: hasTools ? mapFrozenOnce(chatTools, request.tools, toChatTool) : undefined,
    // Servers reject `tool_choice` without `tools` (vLLM) and it means nothing there.
    tool_choice: hasTools && request.tool_choice ? toChatToolChoice(request.tool_choice) : undefined,
    parallel_tool_calls: hasTools ? request.parallel_tool_calls : undefined,
    temperature: request.temperature,
    top_p: request.top_p,
    max_tokens: request.max_output_tokens,
    presence_penalty: request.presence_penalty,
    frequency_penalty: request.frequency_penalty,
    logprobs: logprobs ? true : undefined,
    top_logprobs: logprobs ? request.top_logprobs : undefined,
    response_format: toResponseFormat(request.text),
    reasoning_effort: request.reasoning?.effort,
    user: request.user,
    stream: request.stream,
    // Without it a streamed completion carries no token counts at all.
    stream_options: request.stream ? { include_usage: true } : undefined,
  });
}

export function toChatMessages(instructions: string | null | undefined, input: readonly ModelItem[], toolOutputMedia: ChatToolOutputMedia = 'user-message'): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (instructions) messages.push({ role: 'system', content: instructions });
  // The assistant message that the next `function_call` may join: set right
  // after an assistant message or a tool call, cleared by anything else.
  let openAssistant: ChatMessage | undefined;
  // Tool names by call id, to say whose output the images are.
  const callNames = new Map<string, string>();
  // Images of the current run of tool messages (user-message placement):
  // a user message between two tool messages would split the calls' answers.
  let pendingMedia: JsonObject[] = [];
  const flushMedia = (): void => {
    if (pendingMedia.length === 0) return;
    messages.push({ role: 'user', content: pendingMedia });
    pendingMedia = [];
  };

  for (const item of input) {
    if (item.type !== 'function_call_output' && item.type !== 'reasoning') flushMedia();
    switch (item.type) {
      case 'message': {
        const role = item.role === 'developer' ? 'system' : item.role;
        const message: ChatMessage = { role, content: toChatContent(item.content) };
        messages.push(message);
        openAssistant = role === 'assistant' ? message : undefined;
        break;
      }
      case 'function_call': {
        if (!openAssistant) {
          openAssistant = { role: 'assistant', content: null };
          messages.push(openAssistant);
        }
        const calls = (openAssistant.tool_calls as JsonObject[] | undefined) ?? [];
        calls.push({ id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } });
        openAssistant.tool_calls = calls;
        callNames.set(item.call_id, item.name);
        break;
      }
      case 'function_call_output': {
        const content = toChatContent(item.output) ?? '';
        if (typeof content === 'string' || toolOutputMedia === 'tool-message') {
          messages.push({ role: 'tool', tool_call_id: item.call_id, content });
        } else {
          const text = content.filter((part) => part.type === 'text').map((part) => part.text as string);
          const media = content.filter((part) => part.type !== 'text');
          const name = callNames.get(item.call_id);
          const whose = `the ${name ? `${name} ` : ''}call ${item.call_id}`;
          text.push(`(${media.length === 1 ? 'An image' : `${media.length} images`} of this output follow${media.length === 1 ? 's' : ''} in the next user message.)`);
          messages.push({ role: 'tool', tool_call_id: item.call_id, content: text.join('\n') });
          pendingMedia.push({ type: 'text', text: `Output of ${whose}:` }, ...media);
        }
        openAssistant = undefined;
        break;
      }
      case 'reasoning':
        // Chat servers take no reasoning input; it is transparent for adjacency.
        break;
    }
  }
  flushMedia();
  return messages;
}

function toChatContent(content: string | ContentPart[]): ChatContent {
  if (typeof content === 'string') return content;
  const parts: JsonObject[] = [];
  for (const part of content) {
    if ((part.type === 'input_text' || part.type === 'output_text') && typeof part.text === 'string') {
      parts.push({ type: 'text', text: part.text });
    } else if (part.type === 'input_image' && typeof part.image_url === 'string' && part.image_url) {
      // Chat completions know `low`, `high` and `auto`; OpenAI's full-resolution `original` is nearest to `high`.
      parts.push({ type: 'image_url', image_url: omitNullish({ url: part.image_url, detail: part.detail === 'original' ? 'high' : part.detail }) });
    }
    // Other parts (files, refusals, images known only by file id) have no chat equivalent.
  }
  if (parts.every((part) => part.type === 'text')) {
    // vLLM joins text-only part lists with newlines too.
    return parts.map((part) => part.text as string).join('\n');
  }
  return parts;
}

/**
 * The chat form of each kept (frozen) tool list, made once: see `mapFrozenOnce`.
 * A cache keyed by the sealed registry's frozen function list (or by a frozen
 * function in a request's own list), not a note on a request: what is not
 * frozen is mapped afresh, and a miss only maps again. What it saves is in bench/README.md ("Kept tool lists' wire forms").
 */
const chatTools = frozenForms<FunctionToolDef, JsonObject>();

export function toChatTool(tool: FunctionToolDef): JsonObject {
  return {
    type: 'function',
    function: omitNullish({
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      strict: tool.strict,
    }),
  };
}

function toChatToolChoice(choice: ModelToolChoice): string | JsonObject {
  if (typeof choice === 'string') return choice;
  return { type: 'function', function: { name: choice.name } };
}

function toResponseFormat(text: JsonObject | null | undefined): JsonObject | undefined {
  const format = text && isJsonObject(text.format) ? text.format : undefined;
  if (!format) return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type === 'json_schema') {
    return {
      type: 'json_schema',
      json_schema: omitNullish({
        name: format.name ?? 'response',
        description: format.description,
        schema: format.schema,
        strict: format.strict,
      }),
    };
  }
  return undefined;
}
