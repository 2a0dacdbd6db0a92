/** The Anthropic Messages shapes this gateway produces (response side). */

export type StopReason = 'end_turn' | 'max_tokens' | 'tool_use' | 'pause_turn';

export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'mcp_tool_use'; id: string; name: string; server_name: string; input: unknown }
  | { type: 'mcp_tool_result'; tool_use_id: string; is_error: boolean; content: Array<{ type: 'text'; text: string }> };

export type BlockDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'input_json_delta'; partial_json: string }
  | { type: 'signature_delta'; signature: string };

/** `context_management` on a reply: the edits the gateway ran before calling the model. */
export interface ContextManagementResult {
  applied_edits: Array<{ type: string; [figure: string]: unknown }>;
}

export interface AnthropicMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ContentBlock[];
  stop_reason: StopReason | null;
  stop_sequence: null;
  usage: AnthropicUsage;
  context_management?: ContextManagementResult;
}

export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string };
}

export type AnthropicStreamEvent =
  | { type: 'message_start'; message: AnthropicMessage }
  | { type: 'content_block_start'; index: number; content_block: ContentBlock }
  | { type: 'content_block_delta'; index: number; delta: BlockDelta }
  | { type: 'content_block_stop'; index: number }
  | { type: 'message_delta'; delta: { stop_reason: StopReason; stop_sequence: null }; usage: AnthropicUsage; context_management?: ContextManagementResult }
  | { type: 'message_stop' }
  | AnthropicErrorBody;
