import { InvalidRequestError } from '#tool-sdk/errors.js';
import { ThinkingSigner } from '../thinking/thinking-signer.js';
import { mapMessagesRequest } from './messages-request.mapper.js';
import { toAnthropicParam } from './tool-origin.js';

const opts = { signer: new ThinkingSigner(null) };
const base = { model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] };

function refusal(body: Record<string, unknown>): InvalidRequestError {
  try {
    mapMessagesRequest(body, null, opts);
  } catch (err) {
    if (err instanceof InvalidRequestError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('mapMessagesRequest', () => {
  it('maps the top-level fields onto a stateless ResponseRequest', () => {
    const { request } = mapMessagesRequest(
      {
        ...base,
        max_tokens: 4096,
        system: [
          { type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } },
          { type: 'text', text: 'Be kind.' },
        ],
        temperature: 0.2,
        top_p: 0.9,
        stream: true,
        metadata: { user_id: 'u-1' },
        thinking: { type: 'enabled', budget_tokens: 2048 },
        service_tier: 'auto',
        stop_sequences: [],
      },
      'owner-1',
      opts,
    );
    expect(request).toMatchObject({
      model: 'm',
      instructions: 'Be brief.\n\nBe kind.',
      temperature: 0.2,
      topP: 0.9,
      maxOutputTokens: 4096,
      stream: true,
      store: false,
      user: 'u-1',
      owner: 'owner-1',
      reasoning: { effort: 'low', summary: null },
      tools: [],
      toolChoice: 'auto',
      parallelToolCalls: true,
    });
    expect(request.input).toEqual([{ type: 'message', id: expect.stringMatching(/^msg_/), role: 'user', content: [{ type: 'input_text', text: 'hi' }] }]);
  });

  it('maps tool history: tool_use → function_call keyed by its id, tool_result → function_call_output, in block order', () => {
    const { request } = mapMessagesRequest(
      {
        ...base,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'weather?' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
            ],
          },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'let me look', signature: 'sig' },
              { type: 'text', text: 'Checking.' },
              { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'sunny' }] },
              { type: 'text', text: 'and tomorrow?' },
            ],
          },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: 'no data', is_error: true }] },
        ],
      },
      null,
      opts,
    );
    const items = request.input.map(({ id, ...rest }) => rest);
    expect(items).toEqual([
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'weather?' },
          { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'auto' },
        ],
      },
      { type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'let me look' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.', annotations: [] }] },
      { type: 'function_call', call_id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'toolu_1', output: 'sunny' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'and tomorrow?' }] },
      { type: 'function_call', call_id: 'toolu_2', name: 'get_weather', arguments: '{}' },
      { type: 'function_call_output', call_id: 'toolu_2', output: 'Error: no data' },
    ]);
  });

  it('turns a gateway-run MCP call in history back into an mcp_call item', () => {
    const { request } = mapMessagesRequest(
      {
        ...base,
        messages: [
          { role: 'user', content: 'echo' },
          {
            role: 'assistant',
            content: [
              { type: 'mcp_tool_use', id: 'mcp_1', name: 'echo', server_name: 'demo', input: { text: 'x' } },
              { type: 'mcp_tool_result', tool_use_id: 'mcp_1', is_error: false, content: [{ type: 'text', text: 'echo: x' }] },
              { type: 'text', text: 'done' },
            ],
          },
        ],
      },
      null,
      opts,
    );
    expect(request.input[1]).toEqual({
      type: 'mcp_call',
      id: 'mcp_1',
      server_label: 'demo',
      name: 'echo',
      arguments: '{"text":"x"}',
      output: 'echo: x',
      error: null,
      status: 'completed',
    });
    expect(request.input).toHaveLength(3);
  });

  it('maps custom tools to functions, mcp_servers to gateway-run mcp tools, and tool_choice', () => {
    const { request, toolOrigins } = mapMessagesRequest(
      {
        ...base,
        tools: [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: {} }, cache_control: { type: 'ephemeral' } }],
        mcp_servers: [
          { type: 'url', url: 'http://mcp.test/mcp', name: 'demo', authorization_token: 'tok', tool_configuration: { enabled: true, allowed_tools: ['echo'] } },
          { type: 'url', url: 'http://off.test/mcp', name: 'off', tool_configuration: { enabled: false } },
        ],
        tool_choice: { type: 'any', disable_parallel_tool_use: true },
      },
      null,
      opts,
    );
    expect(request.tools).toEqual([
      { type: 'function', name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: {} } },
      { type: 'mcp', server_label: 'demo', server_url: 'http://mcp.test/mcp', require_approval: 'never', authorization: 'tok', allowed_tools: ['echo'] },
    ]);
    expect(request.toolChoice).toBe('required');
    expect(request.parallelToolCalls).toBe(false);
    expect(toAnthropicParam('tools[1].server_url', toolOrigins)).toBe('mcp_servers.0.url');
    expect(toAnthropicParam('tools[0].parameters.properties', toolOrigins)).toBe('tools.0.input_schema.properties');
    expect(mapMessagesRequest({ ...base, tool_choice: { type: 'tool', name: 'get_weather' } }, null, opts).request.toolChoice).toEqual({ type: 'function', name: 'get_weather' });
  });

  it('turns a thinking budget or a named effort into a reasoning effort', () => {
    const effort = (extra: Record<string, unknown>) => mapMessagesRequest({ ...base, max_tokens: 64000, ...extra }, null, opts).request.reasoning?.effort ?? null;
    expect(effort({ thinking: { type: 'enabled', budget_tokens: 8000 } })).toBe('medium');
    expect(effort({ thinking: { type: 'enabled', budget_tokens: 32000 } })).toBe('high');
    expect(effort({ thinking: { type: 'disabled' } })).toBeNull();
    expect(effort({ thinking: { type: 'adaptive' }, output_config: { effort: 'max' } })).toBe('high');
  });

  it('folds system entries: leading and trailing ones into instructions, later ones into the next user turn after its tool results', () => {
    const { request } = mapMessagesRequest(
      {
        ...base,
        system: 'Top.',
        messages: [
          { role: 'system', content: 'Leading.' },
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {} }] },
          { role: 'system', content: [{ type: 'text', text: 'Mode changed.' }] },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 't1', content: 'ok' },
              { type: 'text', text: 'next' },
            ],
          },
          { role: 'assistant', content: 'done' },
          { role: 'system', content: 'Trailing.' },
        ],
      },
      null,
      opts,
    );
    expect(request.instructions).toBe('Top.\n\nLeading.\n\nTrailing.');
    expect(request.input.map((i: any) => [i.type, i.role ?? null])).toEqual([
      ['message', 'user'],
      ['function_call', null],
      ['function_call_output', null],
      ['message', 'user'],
      ['message', 'assistant'],
    ]);
    expect((request.input[3] as any).content).toEqual([
      { type: 'input_text', text: '<system-reminder>\nMode changed.\n</system-reminder>' },
      { type: 'input_text', text: 'next' },
    ]);
    expect(request.input.some((i: any) => i.role === 'system')).toBe(false);
  });

  it('keeps a note Claude Code left after its prompt in the instructions on every round of the turn (2.1.197 keeps it in place)', () => {
    const map = (messages: unknown[]) => mapMessagesRequest({ ...base, system: 'Top.', messages }, null, opts).request;
    const prompt = { role: 'user', content: 'Run it.' };
    const note = { role: 'system', content: 'Agent types: claude, Explore.' };
    const round1 = map([prompt, note]);
    const round2 = map([
      prompt,
      note,
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'a.ts' }] },
    ]);
    expect(round1.instructions).toBe('Top.\n\nAgent types: claude, Explore.');
    expect(round2.instructions).toBe(round1.instructions);
    expect(round2.input.map((i: any) => i.type)).toEqual(['message', 'function_call', 'function_call_output']);
    expect(JSON.stringify(round2.input)).not.toContain('Agent types');
    // Between an assistant turn and the next user turn a note still opens that user turn.
    const later = map([prompt, { role: 'assistant', content: 'ok' }, note, { role: 'user', content: 'next' }]);
    expect(later.instructions).toBe('Top.');
    expect((later.input.at(-1) as any).content[0].text).toBe('<system-reminder>\nAgent types: claude, Explore.\n</system-reminder>');
  });

  it('keeps the history items the same from one request to the next when every request ends with a system note (Claude Code 2.1.3xx)', () => {
    const note = { role: 'system', content: 'Remember the plan.' };
    const round1 = [{ role: 'user', content: 'Fix it.' }];
    const round2 = [
      ...round1,
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'a.ts' }] },
    ];
    const shape = (messages: unknown[]) => {
      const { request } = mapMessagesRequest({ ...base, system: 'S.', messages }, null, opts);
      return { instructions: request.instructions, items: request.input.map(({ id: _id, ...rest }: any) => rest) };
    };
    const first = shape([...round1, note]);
    const second = shape([...round2, note]);
    expect(first.instructions).toBe('S.\n\nRemember the plan.');
    expect(second.instructions).toBe(first.instructions);
    // The second request's items start with exactly the first's: the prefix the model server cached.
    expect(second.items.slice(0, first.items.length)).toEqual(first.items);
    expect(second.items.map((i: any) => i.role ?? i.type)).toEqual(['user', 'function_call', 'function_call_output']);
    // A note the client keeps in its history becomes a note in the turn after it, behind what the model already saw.
    const kept = shape([...round1, note, ...round2.slice(1), note]);
    expect(kept.items.slice(0, first.items.length)).toEqual(first.items);
  });

  it("strips Claude Code's billing line from the system prompt, the rest of the prompt as sent", () => {
    const { request } = mapMessagesRequest(
      {
        ...base,
        system: [
          { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.332.a1f; cc_entrypoint=sdk-cli; cch=4f2e1;' },
          { type: 'text', text: "You are a Claude agent, built on Anthropic's Claude Agent SDK." },
        ],
      },
      null,
      opts,
    );
    expect(request.instructions).toBe("You are a Claude agent, built on Anthropic's Claude Agent SDK.");
    const inline = mapMessagesRequest({ ...base, system: 'x-anthropic-billing-header: cc_version=1;\nBe brief.' }, null, opts);
    expect(inline.request.instructions).toBe('Be brief.');
  });

  it('shows a defer_loading tool to the model only once a tool_reference, a call or tool_choice loaded it', () => {
    const tools = [
      { name: 'ToolSearch', input_schema: { type: 'object' } },
      { name: 'DeferredToolPlaceholder', input_schema: { type: 'object' }, defer_loading: true },
      { name: 'WebFetch', input_schema: { type: 'object' }, defer_loading: true },
    ];
    const names = (body: Record<string, unknown>) => mapMessagesRequest({ ...base, tools, ...body }, null, opts).request.tools.map((t: any) => t.name);
    expect(names({})).toEqual(['ToolSearch']);
    const searched = {
      messages: [
        { role: 'user', content: 'fetch it' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'ToolSearch', input: { query: 'fetch' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'tool_reference', tool_name: 'WebFetch' }] }] },
      ],
    };
    expect(names(searched)).toEqual(['ToolSearch', 'WebFetch']);
    const { request } = mapMessagesRequest({ ...base, tools, ...searched }, null, opts);
    expect((request.input[2] as any).output).toBe('Tool loaded: WebFetch');
    expect(names({ tool_choice: { type: 'tool', name: 'WebFetch' } })).toEqual(['ToolSearch', 'WebFetch']);
  });

  it('replays thinking only with a signature this gateway made, when it has a key', () => {
    const signer = new ThinkingSigner('s'.repeat(32));
    const history = (signature: string | undefined) => ({
      ...base,
      messages: [
        { role: 'user', content: 'q' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'mine', ...(signature === undefined ? {} : { signature }) },
            { type: 'text', text: 'a' },
          ],
        },
        { role: 'user', content: 'q2' },
      ],
    });
    const reasoning = (body: Record<string, unknown>, with_: ThinkingSigner) =>
      mapMessagesRequest(body, null, { signer: with_ }).request.input.filter((i) => i.type === 'reasoning').length;
    expect(reasoning(history(signer.sign('mine')), signer)).toBe(1);
    expect(reasoning(history(signer.sign('other')), signer)).toBe(0);
    expect(reasoning(history(''), signer)).toBe(0);
    expect(reasoning(history(undefined), signer)).toBe(0);
    // Without a key nothing can be checked: the text is passed on as it stands.
    expect(reasoning(history(''), opts.signer)).toBe(1);
  });

  it('maps adaptive and disabled thinking, counting mode without max_tokens, and context_management', () => {
    const adaptive = mapMessagesRequest({ ...base, thinking: { type: 'adaptive' }, output_config: { effort: 'max' } }, null, opts);
    expect(adaptive.request.reasoning).toEqual({ effort: 'high', summary: null });
    expect(adaptive.hideThinking).toBe(false);
    const disabled = mapMessagesRequest({ ...base, thinking: { type: 'disabled' } }, null, opts);
    expect(disabled.request.reasoning).toBeNull();
    expect(disabled.hideThinking).toBe(true);
    const counted = mapMessagesRequest({ model: 'm', messages: base.messages, context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] } }, null, {
      ...opts,
      counting: true,
    });
    expect(counted.request.maxOutputTokens).toBeNull();
    expect(counted.contextManagement).toEqual({ appliedEdits: [] });
    expect(mapMessagesRequest(base, null, opts).contextManagement).toBeNull();
    expect(refusal({ ...base, stream: true, max_tokens: undefined } as any).param).toBe('max_tokens');
  });

  it.each([
    [{ max_tokens: undefined }, 'max_tokens'],
    [{ model: 5 }, 'model'],
    [{ messages: [] }, 'messages'],
    [{ messages: [{ role: 'tool', content: 'x' }] }, 'messages.0.role'],
    [
      {
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'b' },
          { role: 'user', content: [{ type: 'audio' }] },
        ],
      },
      'messages.2.content.0.type',
    ],
    [{ messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'f' } }] }] }, 'messages.0.content.0.source.type'],
    [{ messages: [{ role: 'user', content: [{ type: 'tool_result' }] }] }, 'messages.0.content.0.tool_use_id'],
    [{ tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, 'tools.0.type'],
    [{ tools: [{ name: 'f' }] }, 'tools.0.input_schema'],
    [{ mcp_servers: [{ type: 'stdio', name: 'x', url: 'u' }] }, 'mcp_servers.0.type'],
    [{ tool_choice: { type: 'required' } }, 'tool_choice.type'],
    [{ top_k: 5 }, 'top_k'],
    [{ stop_sequences: ['END'] }, 'stop_sequences'],
    [{ thinking: { type: 'enabled', budget_tokens: 500 } }, 'thinking.budget_tokens'],
    [{ temperature: 1.5 }, 'temperature'],
    [{ container: 'c' }, 'container'],
    [{ frobnicate: true }, 'frobnicate'],
  ])('refuses %j naming %s', (patch, path) => {
    const error = refusal({ ...base, ...patch });
    expect(error.param).toBe(path);
    expect(error.message.startsWith(`${path}: `)).toBe(true);
    expect(error).toBeInstanceOf(InvalidRequestError);
  });

  it('maps a server web search onto the web_search tool when the gateway can search, asking for the results its blocks need', () => {
    const { request, toolOrigins } = mapMessagesRequest(
      {
        ...base,
        tools: [
          { type: 'web_search_20250305', name: 'web_search', max_uses: 5, allowed_domains: ['docs.example'], user_location: { type: 'approximate', country: 'US' } },
          { type: 'web_search_20260209', name: 'web_search', max_uses: 3, allowed_domains: [] },
          { name: 'f', input_schema: { type: 'object' } },
        ],
      },
      null,
      { ...opts, webSearch: true },
    );
    expect(request.tools).toEqual([
      { type: 'web_search', filters: { allowed_domains: ['docs.example'] }, user_location: { type: 'approximate', country: 'US' } },
      { type: 'web_search' },
      { type: 'function', name: 'f', parameters: { type: 'object' } },
    ]);
    expect(request.include).toEqual(['web_search_call.results']);
    // The smallest max_uses limits the turn's gateway-run calls.
    expect(request.maxToolCalls).toBe(3);
    expect(toAnthropicParam('tools[0].filters.allowed_domains[2]', toolOrigins)).toBe('tools.0.allowed_domains.2');
    const blocked = mapMessagesRequest({ ...base, tools: [{ type: 'web_search_20250305', name: 'web_search', blocked_domains: ['ads.example'] }] }, null, {
      ...opts,
      webSearch: true,
    });
    expect(blocked.request.tools).toEqual([{ type: 'web_search', filters: { blocked_domains: ['ads.example'] } }]);
    expect(toAnthropicParam('tools[0].filters.blocked_domains[0]', blocked.toolOrigins)).toBe('tools.0.blocked_domains.0');
    expect(mapMessagesRequest(base, null, { ...opts, webSearch: true }).request).toMatchObject({ include: [], maxToolCalls: null });
  });

  it.each([
    [{ type: 'web_search_20250305', name: 'search' }, 'tools.0.name'],
    [{ type: 'web_search_20250305', name: 'web_search', allowed_domains: ['a.example'], blocked_domains: ['x.example'] }, 'tools.0.blocked_domains'],
    [{ type: 'web_search_20250305', name: 'web_search', blocked_domains: 'x.example' }, 'tools.0.blocked_domains'],
    [{ type: 'web_search_20250305', name: 'web_search', max_uses: 0 }, 'tools.0.max_uses'],
    [{ type: 'code_execution_20250522', name: 'code_execution' }, 'tools.0.type'],
  ])('refuses the server tool %j naming %s even with web search available', (tool, path) => {
    try {
      mapMessagesRequest({ ...base, tools: [tool] }, null, { ...opts, webSearch: true });
    } catch (err) {
      expect((err as InvalidRequestError).param).toBe(path);
      return;
    }
    throw new Error('expected a refusal');
  });
});
