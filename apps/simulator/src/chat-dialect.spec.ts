import { SimulatedUpstream } from './simulated-upstream.js';
import { postJson, readSse } from './testing/simulator-client.js';

const tools = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Get current weather',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
  {
    type: 'function',
    function: { name: 'get_time', description: 'Current time in a timezone', parameters: { type: 'object', properties: {} } },
  },
];

describe('SimulatedUpstream over /v1/chat/completions', () => {
  let sim: SimulatedUpstream;
  let url: string;

  beforeAll(async () => {
    sim = new SimulatedUpstream();
    ({ url } = await sim.listen());
  });
  afterAll(() => sim.close());

  const complete = async (body: Record<string, unknown>) => {
    const res = await postJson(url, '/chat/completions', { model: 'chat-model', ...body });
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, any>;
  };
  const streamChunks = async (body: Record<string, unknown>) => {
    const res = await postJson(url, '/chat/completions', { model: 'chat-model', stream: true, ...body });
    expect(res.status).toBe(200);
    const blocks = await readSse(res);
    for (const block of blocks) expect(block.raw.startsWith('data: ')).toBe(true);
    expect(blocks.at(-1)?.raw).toBe('data: [DONE]');
    return blocks.slice(0, -1).map((b) => JSON.parse(b.data) as Record<string, any>);
  };

  it('answers text in vLLM shape, reasoning mirrored in both field names', async () => {
    const body = await complete({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Hello [[reason Greeting.]] [[say Hi there!]]' }] },
      ],
    });
    expect(body).toEqual({
      id: expect.stringMatching(/^chatcmpl-[0-9a-f]{32}$/),
      object: 'chat.completion',
      created: expect.any(Number),
      model: 'chat-model',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Hi there!',
            refusal: null,
            annotations: null,
            audio: null,
            function_call: null,
            tool_calls: [],
            reasoning_content: 'Greeting.',
            reasoning: 'Greeting.',
          },
          logprobs: null,
          finish_reason: 'stop',
          stop_reason: null,
        },
      ],
      service_tier: null,
      system_fingerprint: null,
      usage: { prompt_tokens: expect.any(Number), completion_tokens: 3, total_tokens: expect.any(Number), prompt_tokens_details: null },
      prompt_logprobs: null,
      prompt_token_ids: null,
      kv_transfer_params: null,
    });
    expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + 3);
  });

  it('returns tool calls with null content and finish_reason tool_calls', async () => {
    const body = await complete({ messages: [{ role: 'user', content: 'What is the weather in Lisbon?' }], tools });
    const { message, finish_reason } = body.choices[0];
    expect(finish_reason).toBe('tool_calls');
    expect(message.content).toBeNull();
    expect(message.reasoning_content).toBeNull();
    expect(message.tool_calls).toEqual([
      {
        id: expect.stringMatching(/^chatcmpl-tool-[0-9a-f]{16}$/),
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city": "Lisbon"}' },
      },
    ]);
  });

  it('reads chat history: assistant tool_calls and tool messages count as a round', async () => {
    const prompt = 'Time and weather [[call get_time {}]] [[call get_weather {"city": "Oslo"}]] [[call@2 get_time {"tz": "UTC"}]]';
    const messages: unknown[] = [{ role: 'user', content: prompt }];
    const round1 = await complete({ messages, tools });
    expect(round1.choices[0].message.tool_calls.map((c: any) => c.function.name)).toEqual(['get_time', 'get_weather']);

    messages.push(
      { role: 'assistant', content: null, tool_calls: round1.choices[0].message.tool_calls },
      { role: 'tool', tool_call_id: round1.choices[0].message.tool_calls[0].id, content: '12:00' },
      { role: 'tool', tool_call_id: round1.choices[0].message.tool_calls[1].id, content: 'cold' },
    );
    const round2 = await complete({ messages, tools });
    expect(round2.choices[0].message.tool_calls[0].function).toEqual({ name: 'get_time', arguments: '{"tz": "UTC"}' });

    messages.push(
      { role: 'assistant', content: '', tool_calls: round2.choices[0].message.tool_calls },
      { role: 'tool', tool_call_id: 'x', content: [{ type: 'text', text: '12:00 UTC' }] },
    );
    const round3 = await complete({ messages, tools });
    expect(round3.choices[0].message.content).toBe('Based on the tool result: 12:00 UTC');
    expect(round3.choices[0].finish_reason).toBe('stop');
  });

  it('finishes with length when max_tokens or max_completion_tokens cut the answer', async () => {
    for (const limit of [{ max_tokens: 4 }, { max_completion_tokens: 4 }]) {
      const body = await complete({ messages: [{ role: 'user', content: '[[tokens 9]]' }], ...limit });
      expect(body.choices[0].finish_reason).toBe('length');
      expect(body.choices[0].message.content.split(' ')).toHaveLength(4);
      expect(body.usage.completion_tokens).toBe(4);
    }
  });

  it('answers 400 in the vLLM envelope without messages', async () => {
    const res = await postJson(url, '/chat/completions', { model: 'm' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { message: expect.stringMatching(/messages/), type: 'BadRequestError', param: 'messages', code: 400 } });
  });

  describe('streaming', () => {
    it('streams a role chunk, content deltas, a finish chunk and [DONE]', async () => {
      const chunks = await streamChunks({ messages: [{ role: 'user', content: '[[say One two three four five.]]' }] });
      for (const chunk of chunks) {
        expect(chunk).toMatchObject({ object: 'chat.completion.chunk', model: 'chat-model', id: chunks[0].id });
        expect(chunk).not.toHaveProperty('usage');
      }
      expect(chunks[0].choices).toEqual([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]);
      const content = chunks.slice(1, -1).map((c) => c.choices[0].delta.content);
      expect(content.join('')).toBe('One two three four five.');
      expect(content.length).toBeGreaterThan(4);
      expect(chunks.at(-1)?.choices).toEqual([{ index: 0, delta: { content: '' }, logprobs: null, finish_reason: 'stop', stop_reason: null }]);
    });

    it('adds a usage chunk with empty choices when stream_options.include_usage is set', async () => {
      const chunks = await streamChunks({
        messages: [{ role: 'user', content: '[[say a b c]]' }],
        stream_options: { include_usage: true },
      });
      const last = chunks.at(-1)!;
      expect(last.choices).toEqual([]);
      expect(last.usage).toEqual({ prompt_tokens: expect.any(Number), completion_tokens: 3, total_tokens: last.usage.prompt_tokens + 3, prompt_tokens_details: null });
      expect(chunks.at(-2)?.choices[0].finish_reason).toBe('stop');
    });

    it('streams reasoning as reasoning_content deltas before the content', async () => {
      const chunks = await streamChunks({ messages: [{ role: 'user', content: '[[reason Think hard.]] [[say Done.]]' }] });
      const deltas = chunks.map((c) => c.choices[0]?.delta ?? {});
      const reasoning = deltas.filter((d) => 'reasoning_content' in d).map((d) => d.reasoning_content);
      expect(reasoning.join('')).toBe('Think hard.');
      const firstContent = deltas.findIndex((d) => d.content);
      const lastReasoning = deltas.map((d) => 'reasoning_content' in d).lastIndexOf(true);
      expect(lastReasoning).toBeLessThan(firstContent);
    });

    it('streams parallel tool calls as indexed deltas', async () => {
      const chunks = await streamChunks({
        messages: [{ role: 'user', content: '[[call get_time {}]] [[call get_weather {"city": "Nice"}]]' }],
        tools,
      });
      const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
      const headers = calls.filter((c) => 'id' in c);
      expect(headers).toEqual([
        { index: 0, id: expect.stringMatching(/^chatcmpl-tool-[0-9a-f]{16}$/), type: 'function', function: { name: 'get_time', arguments: '' } },
        { index: 1, id: expect.stringMatching(/^chatcmpl-tool-[0-9a-f]{16}$/), type: 'function', function: { name: 'get_weather', arguments: '' } },
      ]);
      const pieces = calls.filter((c) => !('id' in c));
      for (const piece of pieces) expect(Object.keys(piece).sort()).toEqual(['function', 'index']);
      const argsOf = (index: number) =>
        pieces
          .filter((p) => p.index === index)
          .map((p) => p.function.arguments)
          .join('');
      expect(argsOf(0)).toBe('{}');
      expect(argsOf(1)).toBe('{"city": "Nice"}');
      expect(chunks.at(-1)?.choices[0]).toMatchObject({ delta: {}, finish_reason: 'tool_calls' });
    });

    it('streams finish_reason length when the limit cuts the answer', async () => {
      const chunks = await streamChunks({ messages: [{ role: 'user', content: '[[tokens 10]]' }], max_tokens: 3 });
      expect(chunks.at(-1)?.choices[0].finish_reason).toBe('length');
      expect(chunks.filter((c) => c.choices[0]?.delta.content).length).toBe(3);
    });
  });
});
