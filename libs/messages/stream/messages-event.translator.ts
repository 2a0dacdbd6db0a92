import type { ResponseStreamEvent } from '#core/loop/response-events.js';
import type { JsonObject, Usage } from '#tool-sdk/items.js';
import type { ThinkingSigner } from '../thinking/thinking-signer.js';
import type { AnthropicStreamEvent, AnthropicUsage, ContextManagementResult, StopReason, WebSearchCitation, WebSearchToolResultContent } from './anthropic-events.js';
import { BlockSequencer, type BlockLane } from './block-sequencer.js';

/** Both reasoning event styles (`server.reasoningEvents`) carry the same text. */
const REASONING_DELTAS = new Set(['response.reasoning_text.delta', 'response.reasoning.delta']);

/**
 * The one translation of the loop's Responses stream events into Anthropic
 * Messages stream events. The streaming path writes its output as SSE; the
 * blocking path folds the same output into a message (`MessageFolder`), so
 * the two cannot disagree.
 *
 * Client-owned calls become `tool_use` blocks; gateway-run MCP calls become
 * `mcp_tool_use` + `mcp_tool_result` (what Anthropic's MCP connector
 * returns), so they never look like calls the client must answer; web
 * searches become `server_tool_use` + `web_search_tool_result` and the
 * answer's `url_citation` annotations `web_search_result_location`
 * citations (what Anthropic's server web search returns). Other gateway
 * items (`mcp_list_tools`, test tool types) have no Messages form the client
 * could use and are left out.
 */
export interface TranslatorOptions {
  /** Signs each thinking block; without a key blocks carry an empty signature. */
  signer?: ThinkingSigner;
  /** Leave reasoning out of the reply (the client disabled thinking). */
  hideThinking?: boolean;
  /** What the gateway's context edits did, reported in `message_delta` as Anthropic does. */
  contextManagement?: ContextManagementResult | null;
}

export class MessagesEventTranslator {
  private readonly out: AnthropicStreamEvent[] = [];
  /** Thinking text streamed so far, by `output_index`, for its signature. */
  private readonly thinking = new Map<number, string>();

  constructor(private readonly options: TranslatorOptions = {}) {}

  private readonly blocks = new BlockSequencer((event) => this.out.push(event));
  /** Open blocks by the Responses item's `output_index`. */
  private readonly lanes = new Map<number, BlockLane>();
  private clientCalls = 0;
  private webSearches = 0;
  /** The prompt's size as the model server counted it before the run, for `message_start` (else 0 there; the count follows in `message_delta`). */
  private inputTokens = 0;

  knownInputTokens(count: number): void {
    this.inputTokens = count;
  }

  push(event: ResponseStreamEvent): AnthropicStreamEvent[] {
    this.translate(event);
    return this.out.splice(0);
  }

  private translate(event: ResponseStreamEvent): void {
    const index = event.output_index as number;
    switch (event.type) {
      case 'response.created':
        return this.start(event.response as JsonObject);
      case 'response.output_item.added':
        return this.itemAdded(index, event.item as JsonObject);
      case 'response.output_text.delta':
        return this.delta(index, { type: 'text_delta', text: String(event.delta) });
      case 'response.function_call_arguments.delta':
      case 'response.mcp_call_arguments.delta':
        return this.delta(index, { type: 'input_json_delta', partial_json: String(event.delta) });
      case 'response.mcp_call_arguments.done':
        // The call's input is complete; its result follows as a block of its own.
        return this.closeLane(index);
      case 'response.output_item.done':
        return this.itemDone(index, event.item as JsonObject);
      case 'response.completed':
      case 'response.incomplete':
        return this.finish(event.response as JsonObject);
      case 'response.failed': {
        const error = (event.response as JsonObject).error as { message?: string } | null;
        this.out.push({ type: 'error', error: { type: 'api_error', message: error?.message ?? 'The gateway failed while producing this message.' } });
        return;
      }
      default:
        if (REASONING_DELTAS.has(event.type) && this.thinking.has(index)) {
          this.thinking.set(index, this.thinking.get(index)! + String(event.delta));
          this.delta(index, { type: 'thinking_delta', thinking: String(event.delta) });
        }
    }
  }

  private start(response: JsonObject): void {
    this.out.push({
      type: 'message_start',
      message: {
        id: messageId(String(response.id)),
        type: 'message',
        role: 'assistant',
        model: String(response.model),
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...anthropicUsage(null), input_tokens: this.inputTokens },
      },
    });
  }

  private itemAdded(index: number, item: JsonObject): void {
    switch (item.type) {
      case 'message':
        this.lanes.set(index, this.blocks.open({ type: 'text', text: '' }));
        return;
      case 'reasoning':
        if (this.options.hideThinking) return;
        // The signature follows as a `signature_delta` once the text is complete, as Anthropic streams it.
        this.thinking.set(index, '');
        this.lanes.set(index, this.blocks.open({ type: 'thinking', thinking: '', signature: '' }));
        return;
      case 'function_call':
        this.clientCalls++;
        this.lanes.set(index, this.blocks.open({ type: 'tool_use', id: String(item.call_id), name: String(item.name), input: {} }));
        return;
      case 'mcp_call':
        this.lanes.set(index, this.blocks.open({ type: 'mcp_tool_use', id: String(item.id), name: String(item.name), server_name: String(item.server_label), input: {} }));
        return;
      case 'web_search_call': {
        // The query is known when the search starts: the call's block is complete before its result.
        this.webSearches++;
        const use = this.blocks.open({ type: 'server_tool_use', id: serverToolUseId(item), name: 'web_search', input: {}, caller: { type: 'direct' } });
        this.blocks.delta(use, { type: 'input_json_delta', partial_json: JSON.stringify(searchInput(item)) });
        this.blocks.close(use);
        return;
      }
    }
  }

  private itemDone(index: number, item: JsonObject): void {
    const thinking = this.thinking.get(index);
    if (thinking !== undefined && this.options.signer?.enabled) {
      this.delta(index, { type: 'signature_delta', signature: this.options.signer.sign(thinking) });
    }
    if (item.type === 'message') for (const citation of webSearchCitations(item)) this.delta(index, { type: 'citations_delta', citation });
    this.closeLane(index);
    if (item.type === 'web_search_call') {
      const result = this.blocks.open({ type: 'web_search_tool_result', tool_use_id: serverToolUseId(item), content: searchResultContent(item), caller: { type: 'direct' } });
      this.blocks.close(result);
      return;
    }
    if (item.type !== 'mcp_call') return;
    const failed = item.status !== 'completed';
    const text = failed ? (item.error ?? item.output) : item.output;
    const result = this.blocks.open({
      type: 'mcp_tool_result',
      tool_use_id: String(item.id),
      is_error: failed,
      content: [{ type: 'text', text: typeof text === 'string' ? text : '' }],
    });
    this.blocks.close(result);
  }

  private delta(index: number, delta: Parameters<BlockSequencer['delta']>[1]): void {
    const lane = this.lanes.get(index);
    if (lane) this.blocks.delta(lane, delta);
  }

  private closeLane(index: number): void {
    const lane = this.lanes.get(index);
    if (lane) this.blocks.close(lane);
  }

  private finish(response: JsonObject): void {
    this.blocks.closeAll();
    this.out.push({
      type: 'message_delta',
      delta: { stop_reason: this.stopReason(response), stop_sequence: null },
      usage: { ...anthropicUsage(response.usage as Usage | null), ...(this.webSearches > 0 ? { server_tool_use: { web_search_requests: this.webSearches } } : {}) },
      ...(this.options.contextManagement ? { context_management: this.options.contextManagement } : {}),
    });
    this.out.push({ type: 'message_stop' });
  }

  private stopReason(response: JsonObject): StopReason {
    if (response.status === 'incomplete') {
      // The gateway's own tool loop ran out of rounds: like Anthropic's server-tool
      // loop limit, the client may send the turn back to carry on.
      const reason = (response.incomplete_details as { reason?: string } | null)?.reason;
      return reason === 'max_rounds' ? 'pause_turn' : 'max_tokens';
    }
    return this.clientCalls > 0 ? 'tool_use' : 'end_turn';
  }
}

/** A search's block id under Anthropic's prefix for server tools; the result block names the same id. */
function serverToolUseId(item: JsonObject): string {
  return `srvtoolu_${String(item.id).replace(/^ws_/, '')}`;
}

/** Anthropic's web search input is `{query}`; further queries the module ran at once ride along. */
function searchInput(item: JsonObject): JsonObject {
  const action = (item.action ?? {}) as JsonObject;
  const input: JsonObject = { query: typeof action.query === 'string' ? action.query : '' };
  if (Array.isArray(action.queries) && action.queries.length > 1) input.queries = action.queries;
  return input;
}

/**
 * The pages the search showed the model (the item's `results`, asked for by
 * the request mapper), or Anthropic's error object for a failed search. The
 * gateway keeps no page content to replay, so `encrypted_content` is empty.
 */
function searchResultContent(item: JsonObject): WebSearchToolResultContent {
  if (item.status !== 'completed') return { type: 'web_search_tool_result_error', error_code: 'unavailable' };
  const results = Array.isArray(item.results) ? (item.results as JsonObject[]) : [];
  return results.map((r) => ({
    type: 'web_search_result',
    url: String(r.url),
    title: typeof r.title === 'string' ? r.title : String(r.url),
    encrypted_content: '',
    page_age: typeof r.date === 'string' ? r.date : null,
  }));
}

/**
 * The answer's `url_citation` annotations as Anthropic's citations. An
 * annotation marks where the answer gives a page's URL; that span is the
 * cited text (the gateway keeps no page text to quote).
 */
function webSearchCitations(item: JsonObject): WebSearchCitation[] {
  const citations: WebSearchCitation[] = [];
  for (const part of Array.isArray(item.content) ? (item.content as JsonObject[]) : []) {
    if (part.type !== 'output_text' || !Array.isArray(part.annotations)) continue;
    const text = String(part.text ?? '');
    for (const a of part.annotations as JsonObject[]) {
      if (a.type !== 'url_citation') continue;
      citations.push({
        type: 'web_search_result_location',
        url: String(a.url),
        title: typeof a.title === 'string' ? a.title : null,
        cited_text: text.slice(Number(a.start_index), Number(a.end_index)),
        encrypted_index: '',
      });
    }
  }
  return citations;
}

/** The run's response id under Anthropic's prefix, so logs on both sides still match. */
function messageId(responseId: string): string {
  return `msg_${responseId.replace(/^resp_/, '')}`;
}

/** Anthropic counts cached prompt tokens apart from `input_tokens`; OpenAI counts them inside. */
export function anthropicUsage(usage: Usage | null): AnthropicUsage {
  const cached = usage?.input_tokens_details?.cached_tokens ?? 0;
  return {
    input_tokens: Math.max(0, (usage?.input_tokens ?? 0) - cached),
    output_tokens: usage?.output_tokens ?? 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cached,
  };
}
