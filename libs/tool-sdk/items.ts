/**
 * Item shapes of the Responses API as the gateway handles them.
 *
 * Public items are what clients send and receive; model items are the subset
 * an upstream that only speaks function calling understands. Items are plain
 * JSON objects on purpose: they cross HTTP, storage and the upstream without
 * conversion, and tool modules add their own item types without touching core.
 */

export type JsonObject = Record<string, unknown>;
export type JsonSchema = JsonObject;

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

export interface OutputTextPart {
  type: 'output_text';
  text: string;
  annotations: unknown[];
  logprobs?: unknown[];
}

export interface InputTextPart {
  type: 'input_text';
  text: string;
}

export interface InputImagePart {
  type: 'input_image';
  image_url?: string | null;
  file_id?: string | null;
  detail?: 'low' | 'high' | 'auto';
}

export type ContentPart = OutputTextPart | InputTextPart | InputImagePart | { type: string; [key: string]: unknown };

export interface MessageItem {
  type: 'message';
  id?: string;
  role: 'user' | 'system' | 'developer' | 'assistant';
  content: string | ContentPart[];
  status?: ItemStatus;
  phase?: 'commentary' | 'final_answer' | null;
}

export interface FunctionCallItem {
  type: 'function_call';
  id?: string;
  call_id: string;
  name: string;
  arguments: string;
  /** The Responses protocol's grouping field on a function call: part of the model-side wire shape, which some upstream dialects carry. */
  namespace?: string | null;
  status?: ItemStatus;
}

export interface FunctionCallOutputItem {
  type: 'function_call_output';
  id?: string;
  call_id: string;
  output: string | ContentPart[];
  status?: ItemStatus;
}

export interface ReasoningItem {
  type: 'reasoning';
  id?: string;
  summary: Array<{ type: 'summary_text'; text: string }>;
  content?: Array<{ type: 'reasoning_text'; text: string }>;
  encrypted_content?: string | null;
  status?: ItemStatus;
}

/** Any item a client may send or receive; tool modules contribute more types. */
export type PublicItem = MessageItem | FunctionCallItem | FunctionCallOutputItem | ReasoningItem | ({ type: string; id?: string; status?: ItemStatus } & JsonObject);

/** Items a function-calling-only model is shown. */
export type ModelItem = MessageItem | FunctionCallItem | FunctionCallOutputItem | ReasoningItem;

/** A tool as a function-calling-only model sees it. */
export interface FunctionToolDef {
  type: 'function';
  name: string;
  description?: string | null;
  parameters: JsonSchema;
  strict?: boolean | null;
}

export type ModelToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; name: string };

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens_details: { reasoning_tokens: number };
}

export function emptyUsage(): Usage {
  return {
    input_tokens: 0,
    output_tokens: 0,
    total_tokens: 0,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens_details: { reasoning_tokens: 0 },
  };
}

export function addUsage(into: Usage, more: Usage): Usage {
  into.input_tokens += more.input_tokens;
  into.output_tokens += more.output_tokens;
  into.total_tokens += more.total_tokens;
  into.input_tokens_details.cached_tokens += more.input_tokens_details.cached_tokens;
  into.output_tokens_details.reasoning_tokens += more.output_tokens_details.reasoning_tokens;
  return into;
}
