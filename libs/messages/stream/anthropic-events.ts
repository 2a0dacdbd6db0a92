/** The Anthropic Messages shapes this gateway produces (response side). */

export type StopReason = 'end_turn' | 'max_tokens' | 'tool_use' | 'pause_turn';

export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  /** Searches the gateway ran for the message (Anthropic's server tool count); only when there were any. */
  server_tool_use?: { web_search_requests: number };
}

/** Who called a server tool: always the model itself here (no code-execution callers). */
export interface DirectCaller {
  type: 'direct';
}

export interface WebSearchResult {
  type: 'web_search_result';
  url: string;
  title: string;
  /** Anthropic's key for replaying the page's content; the gateway keeps no content, so it is empty. */
  encrypted_content: string;
  page_age: string | null;
}

export type WebSearchToolResultContent = WebSearchResult[] | { type: 'web_search_tool_result_error'; error_code: 'unavailable' | 'invalid_tool_input' | 'max_uses_exceeded' };

export interface WebSearchCitation {
  type: 'web_search_result_location';
  url: string;
  title: string | null;
  cited_text: string;
  encrypted_index: string;
}

export type ContentBlock =
  | { type: 'text'; text: string; citations?: WebSearchCitation[] }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'mcp_tool_use'; id: string; name: string; server_name: string; input: unknown }
  | { type: 'mcp_tool_result'; tool_use_id: string; is_error: boolean; content: Array<{ type: 'text'; text: string }> }
  | { type: 'server_tool_use'; id: string; name: 'web_search'; input: unknown; caller: DirectCaller }
  | { type: 'web_search_tool_result'; tool_use_id: string; content: WebSearchToolResultContent; caller: DirectCaller };

export type BlockDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'input_json_delta'; partial_json: string }
  | { type: 'signature_delta'; signature: string }
  | { type: 'citations_delta'; citation: WebSearchCitation };

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
