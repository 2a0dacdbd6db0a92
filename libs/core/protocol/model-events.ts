import type { ModelItem, FunctionToolDef, ModelToolChoice, Usage, JsonObject } from '#tool-sdk/items.js';

/**
 * What the loop asks of an upstream model, whatever dialect it speaks.
 * Responses-shaped because that is the richer of the two dialects; the chat
 * dialect maps it down.
 */
export interface ModelRequest {
  model: string;
  input: ModelItem[];
  instructions?: string | null;
  tools: readonly FunctionToolDef[];
  tool_choice?: ModelToolChoice;
  parallel_tool_calls?: boolean;
  temperature?: number | null;
  top_p?: number | null;
  max_output_tokens?: number | null;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
  top_logprobs?: number | null;
  /** `text` of the Responses API: `{ format: {type:'text'|'json_object'|'json_schema', ...}, verbosity? }`. */
  text?: JsonObject | null;
  reasoning?: { effort?: string | null; summary?: string | null } | null;
  user?: string | null;
  safety_identifier?: string | null;
  prompt_cache_key?: string | null;
  service_tier?: string | null;
  stream: boolean;
}

/**
 * The upstream's answer, decoded into one dialect-neutral event stream.
 *
 * Both dialects, streamed or not, produce this sequence; a non-streamed
 * upstream answer produces `*.start` and `*.done` without deltas. `key`
 * correlates the events of one output item and is local to one upstream call.
 */
export type ModelEvent =
  | { type: 'message.start'; key: string; phase?: 'commentary' | 'final_answer' | null }
  | { type: 'message.delta'; key: string; delta: string }
  | { type: 'message.done'; key: string; text: string }
  | { type: 'reasoning.start'; key: string }
  /** The reasoning text part opened (vLLM's `response.reasoning_part.added`); deltas open it too when an upstream sends none. */
  | { type: 'reasoning.part'; key: string }
  | { type: 'reasoning.delta'; key: string; delta: string }
  | { type: 'reasoning.done'; key: string; text: string; summary?: string[]; encrypted_content?: string | null }
  | { type: 'call.start'; key: string; call_id: string; name: string }
  | { type: 'call.delta'; key: string; delta: string }
  | { type: 'call.done'; key: string; call_id: string; name: string; arguments: string }
  | { type: 'usage'; usage: Usage }
  | {
      type: 'finish';
      status: 'completed' | 'incomplete';
      reason?: 'max_output_tokens' | 'content_filter' | null;
    };
