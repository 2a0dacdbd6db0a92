import Anthropic from '@anthropic-ai/sdk';
import { CLAUDE_CODE_BETAS, CLAUDE_CODE_HEADERS, claudeCodeFirstRequest, claudeCodeSecondRequest, claudeCodeTools } from './support/claude-code/claude-code-request.js';
import { parseSse, startStack, type GatewayStack } from './support/gateway-harness.js';
import { StreamableTestServer } from './support/mcp/mcp-test-servers.js';

const MODEL = 'switchyard-sim';
const CLI_HEADERS = { 'x-app': 'cli', 'user-agent': CLAUDE_CODE_HEADERS['user-agent'] };

function anthropicClient(stack: GatewayStack): Anthropic {
  // The SDK appends `/v1/messages` to its base URL itself.
  return new Anthropic({ baseURL: stack.url.replace(/\/v1$/, ''), apiKey: 'x', maxRetries: 0, timeout: 10_000 });
}

const lastUpstream = (stack: GatewayStack): any => stack.simulator.requests.at(-1)?.body;
/** The upstream request's history as plain text, whichever dialect carried it. */
const upstreamText = (stack: GatewayStack): string => JSON.stringify(lastUpstream(stack).input ?? lastUpstream(stack).messages);

/** A Claude Code conversation after `n` Bash round trips, each with thinking, a tool_use and its tool_result. */
function sessionWithToolUses(n: number, signatures: (thinking: string) => string = () => ''): any[] {
  const messages: any[] = [{ role: 'user', content: 'Fix the build.' }];
  for (let i = 0; i < n; i++) {
    const thinking = `Step ${i}: look at the log.`;
    messages.push({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking, signature: signatures(thinking) },
        { type: 'tool_use', id: `toolu_${i}`, name: i % 3 === 2 ? 'Read' : 'Bash', input: { command: `step-${i} --verbose` } },
      ],
    });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: `output of step ${i} `.repeat(20) }] });
  }
  messages.push({ role: 'user', content: 'Go on. [[say done]]' });
  return messages;
}

describe.each(['responses', 'chat'] as const)("Claude Code's default request, official Anthropic client (%s upstream dialect)", (dialect) => {
  let stack: GatewayStack;
  let client: Anthropic;

  beforeAll(async () => {
    stack = await startStack({ dialect, simulator: { reasoning: true } });
    client = anthropicClient(stack);
  });
  afterAll(() => stack.close());

  it('answers the first request as sent (adaptive thinking, effort, context_management, betas, CLI headers)', async () => {
    const body = claudeCodeFirstRequest('Run the tests. [[reason The tests come first.]] [[call Bash {"command":"npm test","description":"Run the test suite"}]]');
    // Older Claude Code versions also send fine-grained tool streaming: accepted like the rest.
    const stream = client.beta.messages.stream({ ...body, betas: [...CLAUDE_CODE_BETAS, 'fine-grained-tool-streaming-2025-05-14'] } as any, { headers: CLI_HEADERS });
    const thinking: string[] = [];
    stream.on('thinking', (delta) => thinking.push(delta));
    const message = await stream.finalMessage();
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'The tests come first.', signature: '' },
      { type: 'tool_use', id: expect.any(String), name: 'Bash', input: { command: 'npm test', description: 'Run the test suite' } },
    ]);
    expect(thinking.join('')).toBe('The tests come first.');
    // Nothing was cleared (keep: "all"), and the reply says so as Anthropic's does.
    expect(message.context_management).toEqual({ applied_edits: [] });

    const upstream = lastUpstream(stack);
    const names = claudeCodeTools().map((t) => t.name);
    expect(names).toHaveLength(22);
    if (dialect === 'responses') {
      expect(upstream.reasoning).toEqual({ effort: 'medium' });
      expect(upstream.instructions).toContain("You are a Claude agent, built on Anthropic's Claude Agent SDK.");
      expect(upstream.tools.map((t: any) => t.name)).toEqual(names);
    } else {
      expect(upstream.reasoning_effort).toBe('medium');
      expect(upstream.messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining('Claude Agent SDK') });
      expect(upstream.tools.map((t: any) => t.function.name)).toEqual(names);
    }
  });

  it('accepts the exact wire request: every Claude Code header, `?beta=true`, SSE in Anthropic order', async () => {
    const body = claudeCodeFirstRequest('Say hi. [[say hi]]');
    const res = await fetch(`${stack.url}/messages?beta=true`, {
      method: 'POST',
      headers: { ...CLAUDE_CODE_HEADERS, 'content-type': 'application/json', 'x-api-key': 'x', accept: 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    const events = parseSse(await res.text());
    const names = events.map((e) => e.event).filter((name, i, all) => !(name === 'content_block_delta' && all[i - 1] === name));
    expect(names).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(events.find((e) => e.event === 'message_delta')?.data).toMatchObject({ delta: { stop_reason: 'end_turn' }, context_management: { applied_edits: [] } });
  });

  it('answers the recorded second turn (thinking with a foreign signature, tool_use, tool_result) exactly as sent', async () => {
    const res = await fetch(`${stack.url}/messages?beta=true`, {
      method: 'POST',
      headers: { ...CLAUDE_CODE_HEADERS, 'content-type': 'application/json' },
      body: JSON.stringify(claudeCodeSecondRequest()),
    });
    expect(res.status).toBe(200);
    const events = parseSse(await res.text());
    expect(events.at(-1)?.event).toBe('message_stop');
    const text = events
      .filter((e) => e.data.delta?.type === 'text_delta')
      .map((e) => e.data.delta.text)
      .join('');
    expect(text).toBe('Based on the tool result: 1\thello\n2\t');
    // Without a signing key the recorded thinking is passed on as it stands (responses dialect carries it).
    if (dialect === 'responses') expect(upstreamText(stack)).toContain('Open it first.');
  });

  it('continues the session: tool_result answered, a mid-conversation system entry folded into the user turn', async () => {
    const body = claudeCodeFirstRequest('Run the tests.');
    body.messages.push(
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Run them.', signature: '' },
          { type: 'tool_use', id: 'toolu_01A', name: 'Bash', input: { command: 'npm test' } },
        ],
      },
      { role: 'system', content: 'The user switched to plan mode.' },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_01A', content: '3 passing, 1 failing' },
          { type: 'text', text: 'What failed? [[say The fourth one.]]' },
        ],
      },
    );
    const message = await client.beta.messages.create({ ...body, stream: false, betas: CLAUDE_CODE_BETAS } as any, { headers: CLI_HEADERS });
    expect(message.stop_reason).toBe('end_turn');
    const upstream = lastUpstream(stack);
    const history: any[] = upstream.input ?? upstream.messages;
    const roles = history.map((i: any) => i.role ?? i.type);
    // Exactly one system message, and it comes first (or is the top-level instructions).
    expect(roles.filter((r: string) => r === 'system').length).toBe(dialect === 'chat' ? 1 : 0);
    if (dialect === 'chat') expect(roles[0]).toBe('system');
    const last = history.at(-1);
    expect(last.role).toBe('user');
    const lastText = JSON.stringify(last.content);
    expect(lastText).toContain('<system-reminder>\\nThe user switched to plan mode.\\n</system-reminder>');
    expect(lastText.indexOf('plan mode')).toBeLessThan(lastText.indexOf('What failed?'));
    // The tool output still follows the call it answers.
    expect(upstreamText(stack).indexOf('3 passing, 1 failing')).toBeGreaterThan(upstreamText(stack).indexOf('npm test'));
  });

  it('runs clear_tool_uses_20250919 before the model call: old results cleared, newest and excluded tools kept', async () => {
    const edit = {
      type: 'clear_tool_uses_20250919',
      trigger: { type: 'tool_uses', value: 3 },
      keep: { type: 'tool_uses', value: 2 },
      exclude_tools: ['Read'],
      clear_tool_inputs: true,
    };
    const message = await client.beta.messages.create({
      model: MODEL,
      max_tokens: 1000,
      messages: sessionWithToolUses(6),
      context_management: { edits: [edit] },
      betas: ['context-management-2025-06-27'],
    } as any);
    // Uses 0..3 are candidates (4 and 5 are kept); 2 is a Read, excluded: 0, 1 and 3 are cleared.
    expect(message.context_management).toEqual({
      applied_edits: [{ type: 'clear_tool_uses_20250919', cleared_tool_uses: 3, cleared_input_tokens: expect.any(Number) }],
    });
    expect((message.context_management as any).applied_edits[0].cleared_input_tokens).toBeGreaterThan(0);
    const text = upstreamText(stack);
    for (const i of [0, 1, 3]) {
      expect(text).not.toContain(`output of step ${i} `);
      expect(text).not.toContain(`step-${i} --verbose`);
    }
    for (const i of [2, 4, 5]) expect(text).toContain(`output of step ${i} `);
    expect(text.split('This tool result was cleared').length - 1).toBe(3);
  });

  it('edits sessions 10x and 100x as long, every old result cleared, while other requests are served', async () => {
    for (const n of [3, 30, 300]) {
      const from = stack.simulator.requests.length;
      const [edited, other] = await Promise.all([
        client.beta.messages.create({
          model: MODEL,
          max_tokens: 1000,
          messages: sessionWithToolUses(n),
          context_management: {
            edits: [{ type: 'clear_thinking_20251015' }, { type: 'clear_tool_uses_20250919', trigger: { type: 'tool_uses', value: 1 }, keep: { type: 'tool_uses', value: 1 } }],
          },
          betas: ['context-management-2025-06-27'],
        } as any),
        client.messages.create({ model: MODEL, max_tokens: 50, messages: [{ role: 'user', content: '[[say still here]]' }] }),
      ]);
      expect(other.content.at(-1)).toEqual({ type: 'text', text: 'still here' });
      expect((edited.context_management as any).applied_edits.map((e: any) => e.cleared_thinking_turns ?? e.cleared_tool_uses)).toEqual([n - 1, n - 1]);
      const sent = stack.simulator.requests.slice(from).find((r) => JSON.stringify(r.body).includes(`step-${n - 1} --verbose`) && !JSON.stringify(r.body).includes('still here'));
      expect(JSON.stringify(sent?.body).split('This tool result was cleared').length - 1).toBe(n - 1);
    }
  });

  it('runs clear_thinking_20251015: only the newest assistant turns keep their thinking', async () => {
    const streamed = await client.beta.messages
      .stream({
        model: MODEL,
        max_tokens: 1000,
        thinking: { type: 'adaptive' },
        messages: sessionWithToolUses(4),
        context_management: { edits: [{ type: 'clear_thinking_20251015', keep: { type: 'thinking_turns', value: 1 } }] },
        betas: ['context-management-2025-06-27'],
      } as any)
      .finalMessage();
    expect(streamed.context_management).toEqual({
      applied_edits: [{ type: 'clear_thinking_20251015', cleared_thinking_turns: 3, cleared_input_tokens: expect.any(Number) }],
    });
    const text = upstreamText(stack);
    for (const i of [0, 1, 2]) expect(text).not.toContain(`Step ${i}: look at the log.`);
    // The chat dialect carries no reasoning in history at all; the responses dialect keeps the newest.
    if (dialect === 'responses') expect(text).toContain('Step 3: look at the log.');
  });

  it('leaves thinking out of the reply when the client disables it', async () => {
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 500,
      thinking: { type: 'disabled' },
      messages: [{ role: 'user', content: '[[reason hidden]] [[say visible]]' }],
    });
    expect(message.content).toEqual([{ type: 'text', text: 'visible' }]);
  });

  it('counts tokens through the upstream tokenizer: messages.countTokens and beta countTokens', async () => {
    const params = { model: MODEL, system: 'Be brief.', messages: [{ role: 'user' as const, content: 'How many tokens is this sentence here?' }] };
    const before = stack.simulator.tokenizeRequests.length;
    const counted = await client.messages.countTokens(params);
    expect(counted.input_tokens).toBeGreaterThan(0);
    expect(stack.simulator.tokenizeRequests.length).toBe(before + 1);
    expect(stack.simulator.tokenizeRequests.at(-1)?.body).toMatchObject({ model: MODEL, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user' }] });

    // What Claude Code counts: its request without the generation-only fields.
    const { max_tokens: _max, stream: _stream, metadata: _metadata, ...countable } = claudeCodeFirstRequest('How many tokens?');
    const withTools = await client.beta.messages.countTokens({ ...countable, betas: CLAUDE_CODE_BETAS } as any);
    expect(withTools.input_tokens).toBeGreaterThan(counted.input_tokens + 50);
    expect(withTools.context_management).toEqual({ original_input_tokens: withTools.input_tokens });

    // The count is the prompt the model reads: a blocking call with the same prompt reports the same input tokens.
    const answered = await client.messages.create({ ...params, max_tokens: 50, messages: [{ role: 'user', content: 'How many tokens is this sentence here?' }] });
    if (dialect === 'chat') expect(answered.usage.input_tokens).toBe(counted.input_tokens);
    else expect(Math.abs(answered.usage.input_tokens - counted.input_tokens)).toBeLessThanOrEqual(8);

    const raw = await fetch(`${stack.url}/messages/count_tokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(params) });
    expect(raw.headers.get('x-switchyard-token-count')).toBe('upstream');
  });

  it('counts what the context edits leave, reporting the original count beside it', async () => {
    const counted = await client.beta.messages.countTokens({
      model: MODEL,
      messages: sessionWithToolUses(6),
      context_management: { edits: [{ type: 'clear_tool_uses_20250919', trigger: { type: 'tool_uses', value: 1 }, keep: { type: 'tool_uses', value: 1 } }] },
      betas: ['context-management-2025-06-27'],
    } as any);
    expect(counted.context_management!.original_input_tokens).toBeGreaterThan(counted.input_tokens + 50);
  });

  it("answers every other /v1/messages path in Anthropic's error envelope", async () => {
    for (const [method, path] of [
      ['GET', '/messages'],
      ['POST', '/messages/batches'],
      ['GET', '/messages/batches/msgbatch_1/results'],
      ['PUT', '/messages/count_tokens'],
    ]) {
      const res = await fetch(`${stack.url}${path}`, { method, headers: { 'content-type': 'application/json' }, body: method === 'GET' ? undefined : '{}' });
      expect([method, path, res.status]).toEqual([method, path, 404]);
      expect(await res.json()).toEqual({ type: 'error', error: { type: 'not_found_error', message: expect.stringContaining(path.split('?')[0]) } });
    }
    await expect(client.messages.batches.list()).rejects.toMatchObject({ status: 404, error: { type: 'error', error: { type: 'not_found_error' } } });
  });

  it('refuses only what it cannot honour, naming the field', async () => {
    const refused = async (body: Record<string, unknown>, path = '/messages') => {
      const res = await fetch(`${stack.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(res.status).toBe(400);
      return ((await res.json()) as any).error.message as string;
    };
    const base = { model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'x' }] };
    expect(await refused({ ...base, context_management: { edits: [{ type: 'compact_20260112' }] } })).toMatch(/^context_management\.edits\.0\.type: not supported/);
    expect(await refused({ ...base, context_management: { edits: [{ type: 'clear_thinking_20251015', keep: { type: 'thinking_turns', value: 0 } }] } })).toMatch(
      /^context_management\.edits\.0\.keep\.value/,
    );
    expect(await refused({ ...base, context_management: { edits: [{ type: 'clear_tool_uses_20250919', trigger: { type: 'messages', value: 3 } }] } })).toMatch(
      /^context_management\.edits\.0\.trigger\.type/,
    );
    expect(await refused({ model: MODEL, messages: [{ role: 'user', content: 'x' }], stream: true }, '/messages/count_tokens')).toMatch(/^stream: Extra inputs/);
  });
});

describe('count_tokens with mcp_servers', () => {
  let stack: GatewayStack;
  let mcp: StreamableTestServer;
  beforeAll(async () => {
    mcp = await StreamableTestServer.start();
    stack = await startStack({ dialect: 'chat', config: { mcp: { allowedHosts: [`127.0.0.1:${mcp.port}`] } } });
  });
  afterAll(async () => {
    await stack.close();
    await mcp.close();
  });

  it("counts the MCP server's tools as the model would see them, running none of them", async () => {
    const client = anthropicClient(stack);
    const messages = [{ role: 'user' as const, content: 'Echo hello.' }];
    const plain = await client.messages.countTokens({ model: MODEL, messages });
    const calls = mcp.log.calls.length;
    const withServer = await client.beta.messages.countTokens({
      model: MODEL,
      messages,
      mcp_servers: [{ type: 'url', url: mcp.url, name: 'demo' }],
      betas: ['mcp-client-2025-04-04'],
    } as any);
    expect(withServer.input_tokens).toBeGreaterThan(plain.input_tokens);
    const tokenized = stack.simulator.tokenizeRequests.at(-1)?.body as any;
    expect(tokenized.tools.map((t: any) => t.function.name)).toContain('demo__echo');
    expect(mcp.log.calls.length).toBe(calls);
  });
});

describe('count_tokens against an upstream without /tokenize', () => {
  let stack: GatewayStack;
  beforeAll(async () => {
    stack = await startStack({ dialect: 'chat', simulator: { tokenize: false } });
  });
  afterAll(() => stack.close());

  it('answers a documented estimate (characters / 4) and says so', async () => {
    const text = 'word '.repeat(400);
    const res = await fetch(`${stack.url}/messages/count_tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: text }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-switchyard-token-count')).toBe('estimate');
    const { input_tokens } = (await res.json()) as { input_tokens: number };
    expect(input_tokens).toBeGreaterThanOrEqual(text.length / 4);
    // Plus the JSON framing of one message item.
    expect(input_tokens).toBeLessThan(text.length / 4 + 60);
  });
});

describe('thinking signatures with a signing key', () => {
  let stack: GatewayStack;
  let client: Anthropic;
  beforeAll(async () => {
    stack = await startStack({ simulator: { reasoning: true }, config: { state: { compactionKey: 'k'.repeat(32) } } });
    client = anthropicClient(stack);
  });
  afterAll(() => stack.close());

  it('signs thinking blocks, replays verified ones to the model, and leaves out changed ones', async () => {
    const params = {
      model: MODEL,
      max_tokens: 1000,
      thinking: { type: 'adaptive' as const },
      messages: [{ role: 'user' as const, content: '[[reason Check the lockfile.]] [[call Bash {"command":"ls"}]]' }],
    };
    const replayedReasoning = (): string[] => (lastUpstream(stack).input as any[]).filter((i) => i.type === 'reasoning').map((i) => i.content.map((c: any) => c.text).join(''));
    const streamed = await client.beta.messages.stream(params as any).finalMessage();
    const blocking = await client.messages.create(params as any);
    const thinking = streamed.content[0] as Anthropic.Beta.BetaThinkingBlock;
    expect(thinking).toEqual({ type: 'thinking', thinking: 'Check the lockfile.', signature: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    expect(blocking.content[0]).toEqual(thinking);

    const continueWith = (block: Anthropic.Beta.BetaThinkingBlock) =>
      client.messages.create({
        model: MODEL,
        max_tokens: 1000,
        messages: [
          params.messages[0],
          { role: 'assistant', content: [block, streamed.content[1] as any] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: (streamed.content[1] as any).id, content: 'package-lock.json' }] },
        ],
      });
    await continueWith(thinking);
    expect(replayedReasoning()).toEqual(['Check the lockfile.']);
    await continueWith({ ...thinking, thinking: 'Delete the repository.' });
    expect(replayedReasoning()).toEqual([]);
    await continueWith({ ...thinking, signature: '' });
    expect(replayedReasoning()).toEqual([]);
    await continueWith({ ...thinking, signature: 'EqQBCkgIBxABGAIqQK' });
    expect(replayedReasoning()).toEqual([]);
    // The recorded turn carries a signature from another gateway's key: left out, the turn still answered.
    const recorded = await client.beta.messages.create({ ...claudeCodeSecondRequest(), stream: false } as any);
    expect(recorded.stop_reason).toBe('end_turn');
    expect(replayedReasoning()).toEqual([]);
  });
});

/**
 * What Claude Code 2.1.3xx sends beyond 2.1.100's recording: a billing line as the first system text,
 * a `system` message after the last user message on every request, and deferred tools
 * (`DeferredToolPlaceholder`, `defer_loading: true`) beside a ToolSearch tool. The bodies are built from
 * the recorded 2.1.100 request with exactly those additions.
 */
describe.each(['responses', 'chat'] as const)('Claude Code 2.1.3xx requests, official Anthropic client (%s upstream dialect)', (dialect) => {
  let stack: GatewayStack;
  let client: Anthropic;
  const NOTE = { role: 'system', content: 'Plan mode is off. Keep answers short.' };
  const BILLING = { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.332.e41; cc_entrypoint=sdk-cli; cch=9a3c1;' };

  function newerRequest(messages: any[]): Record<string, any> {
    const body = claudeCodeFirstRequest('unused');
    body.system = [BILLING, ...body.system.slice(1)];
    body.messages = [...messages, NOTE];
    body.tools = [
      ...body.tools,
      { name: 'ToolSearch', description: 'Fetches full schema definitions for deferred tools.', input_schema: { type: 'object', properties: { query: { type: 'string' } } } },
      { name: 'DeferredToolPlaceholder', description: 'placeholder', input_schema: { type: 'object', properties: {} }, defer_loading: true },
      { name: 'RemoteTrigger', description: 'Trigger a remote run.', input_schema: { type: 'object', properties: { id: { type: 'string' } } }, defer_loading: true },
    ];
    return body;
  }
  /** The upstream history with ids and the instructions dropped: what must not change between requests. */
  const history = (body: any): unknown[] =>
    (dialect === 'responses' ? body.input : body.messages.slice(1)).map(({ id: _id, ...rest }: any) =>
      JSON.parse(JSON.stringify(rest).replace(/"(call_id|tool_call_id|id)":"[^"]*"/g, '"$1":"x"')),
    );
  const toolNames = (body: any): string[] => body.tools.map((t: any) => t.name ?? t.function.name);

  beforeAll(async () => {
    stack = await startStack({ dialect, simulator: { reasoning: true } });
    client = anthropicClient(stack);
  });
  afterAll(() => stack.close());

  it('answers the prompt, not the trailing system note; history stable from one request to the next; billing line and deferred tools kept from the model', async () => {
    const prompt = { role: 'user', content: [{ type: 'text', text: 'List the files. [[call Bash {"command":"ls"}]]' }] };
    const first = await client.beta.messages.create({ ...newerRequest([prompt]), stream: false, betas: CLAUDE_CODE_BETAS } as any, { headers: CLI_HEADERS });
    expect(first.stop_reason).toBe('tool_use');
    const sent1 = lastUpstream(stack);
    const call = first.content.find((b: any) => b.type === 'tool_use') as any;

    const second = await client.beta.messages.create(
      {
        ...newerRequest([
          { ...prompt, content: [{ type: 'text', text: 'List the files. [[say Two files.]]' }] },
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'a.ts\nb.ts' }] },
        ]),
        stream: false,
        betas: CLAUDE_CODE_BETAS,
      } as any,
      { headers: CLI_HEADERS },
    );
    expect(second.content.at(-1)).toEqual({ type: 'text', text: 'Two files.' });
    const sent2 = lastUpstream(stack);

    for (const sent of [sent1, sent2]) {
      const text = JSON.stringify(sent);
      expect(text).not.toContain('x-anthropic-billing-header');
      // The note is part of the instructions, never a turn of its own.
      const instructions = dialect === 'responses' ? sent.instructions : sent.messages[0].content;
      expect(instructions).toContain('Plan mode is off.');
      expect(instructions.startsWith("You are a Claude agent, built on Anthropic's Claude Agent SDK.")).toBe(true);
      expect(JSON.stringify(history(sent))).not.toContain('Plan mode is off.');
      const roles = history(sent).map((i: any) => i.role ?? i.type);
      for (let i = 1; i < roles.length; i++) expect([roles[i - 1], roles[i]]).not.toEqual(['user', 'user']);
      expect(toolNames(sent)).toContain('ToolSearch');
      expect(toolNames(sent)).not.toContain('DeferredToolPlaceholder');
      expect(toolNames(sent)).not.toContain('RemoteTrigger');
    }
    // The first request's user turn is the last thing the model read; the second request starts with the same history.
    expect((history(sent1).at(-1) as any).role).toBe('user');
    expect(JSON.stringify(history(sent1).at(-1))).toContain('List the files.');
    const h1 = history(sent1).map((i: any) => JSON.stringify(i).replace(/\[\[[^\]]*\]\]/g, ''));
    const h2 = history(sent2).map((i: any) => JSON.stringify(i).replace(/\[\[[^\]]*\]\]/g, ''));
    expect(h2.slice(0, h1.length)).toEqual(h1);
  });

  it('shows a deferred tool once ToolSearch answered with a tool_reference to it', async () => {
    const body = newerRequest([
      { role: 'user', content: 'Fetch example.org. [[say ok]]' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_s', name: 'ToolSearch', input: { query: 'select:RemoteTrigger' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_s', content: [{ type: 'tool_reference', tool_name: 'RemoteTrigger' }] }] },
    ]);
    const message = await client.beta.messages.create({ ...body, stream: false, betas: CLAUDE_CODE_BETAS } as any);
    expect(message.stop_reason).toBe('end_turn');
    expect(toolNames(lastUpstream(stack))).toContain('RemoteTrigger');
    expect(toolNames(lastUpstream(stack))).not.toContain('DeferredToolPlaceholder');
  });

  it('gives requestID, a real input_tokens in message_start, and a model list the Anthropic SDK reads', async () => {
    const { data, request_id, response } = await client.messages.create({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: '[[say hi]]' }] }).withResponse();
    expect(request_id).toMatch(/^req_/);
    expect(response.headers.get('request-id')).toBe(request_id);
    expect(data.id).toBe(`msg_${request_id!.slice(4)}`);

    const before = stack.simulator.tokenizeRequests.length;
    const stream = client.messages.stream({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'Count these six words please. [[say hi]]' }] });
    const starts: any[] = [];
    stream.on('streamEvent', (event) => {
      if (event.type === 'message_start') starts.push(event.message.usage);
    });
    const final = await stream.finalMessage();
    expect(stack.simulator.tokenizeRequests.length).toBe(before + 1);
    expect(starts[0].input_tokens).toBeGreaterThan(6);
    if (dialect === 'chat') expect(starts[0].input_tokens).toBe(final.usage.input_tokens);
    else expect(Math.abs(starts[0].input_tokens - final.usage.input_tokens)).toBeLessThanOrEqual(8);

    const models = await client.models.list();
    const listed = models.data.find((m) => m.id === MODEL)!;
    expect(listed).toMatchObject({ type: 'model', id: MODEL, display_name: MODEL, created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) });
    expect(Number.isNaN(Date.parse(listed.created_at))).toBe(false);
  });
});

describe.each(['responses', 'chat'] as const)('Claude Code near the context limit (%s upstream dialect)', (dialect) => {
  let stack: GatewayStack;
  let client: Anthropic;
  const CONTEXT = 32_768;
  /** `n` simulator tokens in ~11n bytes: the 3-bytes-a-token estimate counts them ~3.7 times over. */
  const words = (n: number) => 'abcdefghij '.repeat(n);
  const budgetSent = () => {
    const body = lastUpstream(stack);
    return dialect === 'responses' ? body.max_output_tokens : body.max_tokens;
  };

  beforeAll(async () => {
    stack = await startStack({ dialect, simulator: { maxModelLen: CONTEXT } });
    client = anthropicClient(stack);
  });
  afterAll(() => stack.close());

  it("fits Claude Code's 32000 to the upstream's own count of a 15,000-token prompt, not to an estimate that fills the context", async () => {
    const params = { model: MODEL, max_tokens: 32_000, messages: [{ role: 'user' as const, content: `${words(15_000)} [[say fits]]` }] };
    const counted = await client.messages.countTokens({ model: MODEL, messages: params.messages });
    const message = await client.messages.create(params);
    expect(message.content).toEqual([{ type: 'text', text: 'fits' }]);
    // The count with the fit's 1% headroom (at least 32 tokens).
    expect(budgetSent()).toBeLessThan(CONTEXT - counted.input_tokens);
    expect(budgetSent()).toBeGreaterThanOrEqual(CONTEXT - counted.input_tokens - Math.ceil(counted.input_tokens / 100) - 10);
    expect(budgetSent()).toBeGreaterThan(17_000);
  });

  it('says an overflow as Claude Code acts on it: the budget retry, then the compaction message', async () => {
    const messages = [{ role: 'user' as const, content: `${words(32_100)} [[say squeezed]]` }];
    const refused = await client.messages.create({ model: MODEL, max_tokens: 32_000, messages }).catch((err: unknown) => err as InstanceType<typeof Anthropic.APIError>);
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    const message = (refused as any).error.error.message as string;
    const figures = /^input length and `max_tokens` exceed context limit: (\d+) \+ (\d+) > (\d+), decrease input length or `max_tokens` and try again$/.exec(message);
    expect(figures).not.toBeNull();
    const [input, output, limit] = figures!.slice(1).map(Number);
    expect([output, limit]).toEqual([32_000, CONTEXT]);
    // Claude Code's retry: what the figures leave.
    const retried = await client.messages.create({ model: MODEL, max_tokens: limit - input, messages });
    expect(retried.content).toEqual([{ type: 'text', text: 'squeezed' }]);

    const tooLong = await client.messages.create({ model: MODEL, max_tokens: 1000, messages: [{ role: 'user', content: words(33_000) }] }).catch((err: unknown) => err as any);
    expect(tooLong.status).toBe(400);
    expect(tooLong.error.error).toEqual({ type: 'invalid_request_error', message: expect.stringMatching(/^prompt is too long: \d+ tokens > 32768 maximum$/) });
  });

  it("answers /v1/responses overflows with OpenAI's context_length_exceeded", async () => {
    const refused = await stack.openai.responses.create({ model: MODEL, input: words(33_000), max_output_tokens: 100 }).catch((err: unknown) => err as any);
    expect(refused.status).toBe(400);
    expect(refused.code).toBe('context_length_exceeded');
    expect(refused.param).toBe('input');
    const streamed = await stack.openai.responses.create({ model: MODEL, input: words(33_000), stream: true }).catch((err: unknown) => err as any);
    expect(streamed.code).toBe('context_length_exceeded');
  });
});
