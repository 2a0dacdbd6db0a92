import type { ResponseStreamEvent } from '#core/loop/response-events.js';
import type { AnthropicStreamEvent } from './anthropic-events.js';
import { MessageFolder } from './message-folder.js';
import { ThinkingSigner } from '../thinking/thinking-signer.js';
import { MessagesEventTranslator } from './messages-event.translator.js';

const usage = { input_tokens: 30, output_tokens: 7, total_tokens: 37, input_tokens_details: { cached_tokens: 10 }, output_tokens_details: { reasoning_tokens: 0 } };

function events(...list: Array<{ type: string; [k: string]: unknown }>): ResponseStreamEvent[] {
  return list.map((e, i) => ({ ...e, sequence_number: i }));
}

const created = { type: 'response.created', response: { id: 'resp_abc', model: 'm', status: 'in_progress' } };
const completed = (extra: Record<string, unknown> = {}) => ({ type: 'response.completed', response: { id: 'resp_abc', status: 'completed', usage, ...extra } });

function translate(list: ResponseStreamEvent[]): AnthropicStreamEvent[] {
  const translator = new MessagesEventTranslator();
  return list.flatMap((e) => translator.push(e));
}

function fold(out: AnthropicStreamEvent[]) {
  const folder = new MessageFolder();
  out.forEach((e) => folder.add(e));
  return folder;
}

describe('MessagesEventTranslator', () => {
  it('translates reasoning, text and a client call into Anthropic blocks, stop_reason tool_use', () => {
    const out = translate(
      events(
        created,
        { type: 'response.in_progress' },
        { type: 'response.output_item.added', output_index: 0, item: { type: 'reasoning' } },
        { type: 'response.reasoning_text.delta', output_index: 0, delta: 'hmm' },
        { type: 'response.output_item.done', output_index: 0, item: { type: 'reasoning' } },
        { type: 'response.output_item.added', output_index: 1, item: { type: 'message' } },
        { type: 'response.content_part.added', output_index: 1 },
        { type: 'response.output_text.delta', output_index: 1, delta: 'Hel' },
        { type: 'response.output_text.delta', output_index: 1, delta: 'lo' },
        { type: 'response.output_item.done', output_index: 1, item: { type: 'message' } },
        { type: 'response.output_item.added', output_index: 2, item: { type: 'function_call', call_id: 'call_1', name: 'get_weather' } },
        { type: 'response.function_call_arguments.delta', output_index: 2, delta: '{"city":' },
        { type: 'response.function_call_arguments.delta', output_index: 2, delta: '"Paris"}' },
        { type: 'response.function_call_arguments.done', output_index: 2 },
        { type: 'response.output_item.done', output_index: 2, item: { type: 'function_call' } },
        completed(),
      ),
    );
    expect(out.map((e) => e.type + ('index' in e ? `:${e.index}` : ''))).toEqual([
      'message_start',
      'content_block_start:0',
      'content_block_delta:0',
      'content_block_stop:0',
      'content_block_start:1',
      'content_block_delta:1',
      'content_block_delta:1',
      'content_block_stop:1',
      'content_block_start:2',
      'content_block_delta:2',
      'content_block_delta:2',
      'content_block_stop:2',
      'message_delta',
      'message_stop',
    ]);
    expect(out[0]).toMatchObject({ message: { id: 'msg_abc', model: 'm', content: [], stop_reason: null } });
    expect(out.at(-2)).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { input_tokens: 20, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 10 },
    });
    expect(fold(out).result).toMatchObject({
      id: 'msg_abc',
      stop_reason: 'tool_use',
      content: [
        { type: 'thinking', thinking: 'hmm', signature: '' },
        { type: 'text', text: 'Hello' },
        { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
      ],
    });
  });

  it('shows a gateway MCP call as mcp_tool_use + mcp_tool_result, holding a late result until the live text block ends', () => {
    const out = translate(
      events(
        created,
        { type: 'response.output_item.added', output_index: 0, item: { type: 'mcp_list_tools' } },
        { type: 'response.output_item.done', output_index: 0, item: { type: 'mcp_list_tools' } },
        { type: 'response.output_item.added', output_index: 1, item: { type: 'mcp_call', id: 'mcp_1', name: 'echo', server_label: 'demo' } },
        { type: 'response.mcp_call_arguments.delta', output_index: 1, delta: '{"text":"hi"}' },
        { type: 'response.mcp_call_arguments.done', output_index: 1 },
        { type: 'response.output_item.added', output_index: 2, item: { type: 'message' } },
        { type: 'response.output_text.delta', output_index: 2, delta: 'wait' },
        { type: 'response.output_item.done', output_index: 1, item: { type: 'mcp_call', id: 'mcp_1', status: 'completed', output: 'echo: hi' } },
        { type: 'response.output_text.delta', output_index: 2, delta: 'ing' },
        { type: 'response.output_item.done', output_index: 2, item: { type: 'message' } },
        { type: 'response.output_item.added', output_index: 3, item: { type: 'test_tool_call' } },
        { type: 'response.output_item.done', output_index: 3, item: { type: 'test_tool_call' } },
        completed(),
      ),
    );
    const starts = out.filter((e) => e.type === 'content_block_start');
    expect(starts.map((e) => [e.index, e.content_block.type])).toEqual([
      [0, 'mcp_tool_use'],
      [1, 'text'],
      [2, 'mcp_tool_result'],
    ]);
    // Blocks never overlap: every start follows the previous block's stop.
    let open = -1;
    for (const e of out) {
      if (e.type === 'content_block_start') {
        expect(open).toBe(-1);
        open = e.index;
      }
      if (e.type === 'content_block_delta') expect(e.index).toBe(open);
      if (e.type === 'content_block_stop') {
        expect(e.index).toBe(open);
        open = -1;
      }
    }
    expect(fold(out).result).toMatchObject({
      stop_reason: 'end_turn',
      content: [
        { type: 'mcp_tool_use', id: 'mcp_1', name: 'echo', server_name: 'demo', input: { text: 'hi' } },
        { type: 'text', text: 'waiting' },
        { type: 'mcp_tool_result', tool_use_id: 'mcp_1', is_error: false, content: [{ type: 'text', text: 'echo: hi' }] },
      ],
    });
  });

  it('shows a web search as server_tool_use + web_search_tool_result and its url_citation annotations as citations', () => {
    const search = { type: 'web_search_call', id: 'ws_1', status: 'in_progress', action: { type: 'search', query: 'q' } };
    const results = [
      { type: 'url', url: 'https://a.example/1', title: 'A', date: '2025-01-15' },
      { type: 'url', url: 'https://b.example/2', title: 'B' },
    ];
    const text = 'See https://a.example/1 now.';
    const out = translate(
      events(
        created,
        { type: 'response.output_item.added', output_index: 0, item: search },
        { type: 'response.output_item.done', output_index: 0, item: { ...search, status: 'completed', results } },
        { type: 'response.output_item.added', output_index: 1, item: { type: 'message' } },
        { type: 'response.output_text.delta', output_index: 1, delta: text },
        {
          type: 'response.output_item.done',
          output_index: 1,
          item: {
            type: 'message',
            content: [{ type: 'output_text', text, annotations: [{ type: 'url_citation', url: 'https://a.example/1', title: 'A', start_index: 4, end_index: 23 }] }],
          },
        },
        completed(),
      ),
    );
    expect(out.filter((e) => e.type.startsWith('content_block')).map((e) => [e.type, (e as { index?: number }).index, (e as { delta?: { type: string } }).delta?.type])).toEqual([
      ['content_block_start', 0, undefined],
      ['content_block_delta', 0, 'input_json_delta'],
      ['content_block_stop', 0, undefined],
      ['content_block_start', 1, undefined],
      ['content_block_stop', 1, undefined],
      ['content_block_start', 2, undefined],
      ['content_block_delta', 2, 'text_delta'],
      ['content_block_delta', 2, 'citations_delta'],
      ['content_block_stop', 2, undefined],
    ]);
    const citation = { type: 'web_search_result_location', url: 'https://a.example/1', title: 'A', cited_text: 'https://a.example/1', encrypted_index: '' };
    const message = fold(out).result!;
    expect(message.content).toEqual([
      { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'q' }, caller: { type: 'direct' } },
      {
        type: 'web_search_tool_result',
        tool_use_id: 'srvtoolu_1',
        content: [
          { type: 'web_search_result', url: 'https://a.example/1', title: 'A', encrypted_content: '', page_age: '2025-01-15' },
          { type: 'web_search_result', url: 'https://b.example/2', title: 'B', encrypted_content: '', page_age: null },
        ],
        caller: { type: 'direct' },
      },
      { type: 'text', text, citations: [citation] },
    ]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage.server_tool_use).toEqual({ web_search_requests: 1 });
  });

  it('shows a failed search as a web_search_tool_result_error', () => {
    const search = { type: 'web_search_call', id: 'ws_2', status: 'in_progress', action: { type: 'search', query: 'q', queries: ['q', 'r'] } };
    const out = translate(
      events(
        created,
        { type: 'response.output_item.added', output_index: 0, item: search },
        { type: 'response.output_item.done', output_index: 0, item: { ...search, status: 'failed' } },
        completed(),
      ),
    );
    expect(fold(out).result!.content).toEqual([
      { type: 'server_tool_use', id: 'srvtoolu_2', name: 'web_search', input: { query: 'q', queries: ['q', 'r'] }, caller: { type: 'direct' } },
      { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_2', content: { type: 'web_search_tool_result_error', error_code: 'unavailable' }, caller: { type: 'direct' } },
    ]);
  });

  it('maps incomplete reasons to max_tokens and pause_turn, and a failure to an error event', () => {
    const stop = (reason: string) =>
      fold(translate(events(created, { type: 'response.incomplete', response: { status: 'incomplete', incomplete_details: { reason }, usage } }))).result?.stop_reason;
    expect(stop('max_output_tokens')).toBe('max_tokens');
    expect(stop('max_rounds')).toBe('pause_turn');

    const failed = translate(events(created, { type: 'response.failed', response: { status: 'failed', error: { code: 'upstream_error', message: 'upstream went away' } } }));
    expect(failed.at(-1)).toEqual({ type: 'error', error: { type: 'api_error', message: 'upstream went away' } });
  });

  it('folds unparseable tool arguments into an empty input', () => {
    const out = translate(
      events(
        created,
        { type: 'response.output_item.added', output_index: 0, item: { type: 'function_call', call_id: 'c', name: 'f' } },
        { type: 'response.function_call_arguments.delta', output_index: 0, delta: '{"broken' },
        { type: 'response.output_item.done', output_index: 0, item: { type: 'function_call' } },
        completed(),
      ),
    );
    expect(fold(out).result?.content).toEqual([{ type: 'tool_use', id: 'c', name: 'f', input: {} }]);
  });

  it('signs a thinking block with a signature_delta before it stops, hides thinking when asked, reports context edits', () => {
    const signer = new ThinkingSigner('t'.repeat(32));
    const list = events(
      created,
      { type: 'response.output_item.added', output_index: 0, item: { type: 'reasoning' } },
      { type: 'response.reasoning_text.delta', output_index: 0, delta: 'think ' },
      { type: 'response.reasoning_text.delta', output_index: 0, delta: 'twice' },
      { type: 'response.output_item.done', output_index: 0, item: { type: 'reasoning' } },
      { type: 'response.output_item.added', output_index: 1, item: { type: 'message' } },
      { type: 'response.output_text.delta', output_index: 1, delta: 'ok' },
      { type: 'response.output_item.done', output_index: 1, item: { type: 'message' } },
      completed(),
    );
    const contextManagement = { applied_edits: [{ type: 'clear_thinking_20251015', cleared_thinking_turns: 2, cleared_input_tokens: 40 }] };
    const translator = new MessagesEventTranslator({ signer, contextManagement });
    const out = list.flatMap((e) => translator.push(e));
    const deltas = out.filter((e) => e.type === 'content_block_delta' && e.index === 0).map((e: any) => e.delta.type);
    expect(deltas).toEqual(['thinking_delta', 'thinking_delta', 'signature_delta']);
    const stopAt = out.findIndex((e) => e.type === 'content_block_stop' && e.index === 0);
    expect(out.findIndex((e: any) => e.delta?.type === 'signature_delta')).toBe(stopAt - 1);
    const folded = fold(out).result!;
    expect(folded.content[0]).toEqual({ type: 'thinking', thinking: 'think twice', signature: signer.sign('think twice') });
    expect(folded.context_management).toEqual(contextManagement);

    const hidden = new MessagesEventTranslator({ hideThinking: true });
    expect(fold(list.flatMap((e) => hidden.push(e))).result!.content).toEqual([{ type: 'text', text: 'ok' }]);
  });
});
