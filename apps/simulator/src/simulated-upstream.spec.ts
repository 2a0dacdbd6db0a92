import { SimulatedUpstream, type RecordedRequest } from './simulated-upstream.js';
import { postJson, readSse, readSseJson } from './testing/simulator-client.js';

const weatherTool = {
  type: 'function',
  name: 'get_weather',
  description: 'Get current weather',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const emailTool = {
  type: 'function',
  name: 'send_email',
  description: 'Send an email to one or more recipients',
  parameters: {
    type: 'object',
    properties: { to: { type: 'array', items: { type: 'string' } }, subject: { type: 'string' } },
    required: ['to', 'subject'],
  },
};

// Every top-level field of the recorded vLLM response object (shared/fixtures/vllm).
const VLLM_RESPONSE_FIELDS = [
  'background',
  'created_at',
  'frequency_penalty',
  'id',
  'incomplete_details',
  'input_messages',
  'instructions',
  'kv_transfer_params',
  'max_output_tokens',
  'max_tool_calls',
  'metadata',
  'model',
  'object',
  'output',
  'output_messages',
  'parallel_tool_calls',
  'presence_penalty',
  'previous_response_id',
  'prompt',
  'reasoning',
  'service_tier',
  'status',
  'temperature',
  'text',
  'tool_choice',
  'tools',
  'top_logprobs',
  'top_p',
  'truncation',
  'usage',
  'user',
].sort();

describe('SimulatedUpstream over /v1/responses', () => {
  let sim: SimulatedUpstream;
  let url: string;

  beforeAll(async () => {
    sim = new SimulatedUpstream();
    ({ url } = await sim.listen());
  });
  afterAll(() => sim.close());

  const respond = async (body: Record<string, unknown>) => {
    const res = await postJson(url, '/responses', { model: 'sim-model', ...body });
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, any>;
  };
  const stream = async (body: Record<string, unknown>) => {
    const res = await postJson(url, '/responses', { model: 'sim-model', stream: true, ...body });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    return readSse(res);
  };

  it('listens on 127.0.0.1 and reports a /v1 base url', () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(sim.url).toBe(url);
  });

  it('answers text with the full vLLM response object', async () => {
    const body = await respond({ input: 'Tell me about tides', temperature: 0.3, tools: [weatherTool], tool_choice: 'none' });
    expect(Object.keys(body).sort()).toEqual(VLLM_RESPONSE_FIELDS);
    expect(body).toMatchObject({
      object: 'response',
      model: 'sim-model',
      status: 'completed',
      incomplete_details: null,
      temperature: 0.3,
      tool_choice: 'none',
      service_tier: 'auto',
      truncation: 'disabled',
      kv_transfer_params: null,
      input_messages: null,
      output_messages: null,
      tools: [{ ...weatherTool, defer_loading: null, strict: null }],
    });
    expect(body.id).toMatch(/^resp_[0-9a-f]{16}$/);
    expect(body.output).toHaveLength(1);
    const [message] = body.output;
    expect(message).toEqual({
      id: expect.stringMatching(/^msg_[0-9a-f]{16}$/),
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: expect.stringContaining('Tell me about tides'), annotations: [], logprobs: null }],
    });
    expect(message.content[0].text).toContain('Switchyard simulator');
    const { usage } = body;
    expect(usage.input_tokens_details).toEqual({ cached_tokens: 0, cached_tokens_per_turn: [], input_tokens_per_turn: [] });
    expect(usage.output_tokens_details).toEqual({
      reasoning_tokens: 0,
      tool_output_tokens: 0,
      output_tokens_per_turn: [],
      tool_output_tokens_per_turn: [],
    });
    expect(usage.total_tokens).toBe(usage.input_tokens + usage.output_tokens);
    expect(usage.output_tokens).toBe(message.content[0].text.split(/\s+/).length);
  });

  it('is deterministic apart from ids and timestamps', async () => {
    const strip = (b: Record<string, any>) => JSON.stringify(b, (k, v) => (k === 'id' || k === 'created_at' ? undefined : v));
    const request = { input: 'same question [[reason Why not.]]', tools: [weatherTool, emailTool] };
    expect(strip(await respond(request))).toBe(strip(await respond(request)));
  });

  it('puts a reasoning item before the answer on [[reason]]', async () => {
    const body = await respond({ input: 'Hi [[reason Let me think.]] [[say Hello!]]' });
    expect(body.output.map((i: any) => i.type)).toEqual(['reasoning', 'message']);
    expect(body.output[0]).toEqual({
      id: expect.stringMatching(/^rs_[0-9a-f]{16}$/),
      type: 'reasoning',
      summary: [],
      content: [{ type: 'reasoning_text', text: 'Let me think.' }],
      encrypted_content: null,
      status: null,
    });
    expect(body.output[1].content[0].text).toBe('Hello!');
    expect(body.usage.output_tokens_details.reasoning_tokens).toBe(3);
    expect(body.usage.output_tokens).toBe(4);
  });

  it('makes parallel calls from several [[call]] directives, in order', async () => {
    const body = await respond({
      input: 'Do both [[call get_weather {"city": "Oslo [north]"}]] [[call send_email {"to": ["a@b.c"], "subject": "Hi"}]]',
      tools: [weatherTool, emailTool],
    });
    expect(body.output).toEqual([
      {
        id: expect.stringMatching(/^fc_[0-9a-f]{16}$/),
        type: 'function_call',
        call_id: expect.stringMatching(/^call_[0-9a-f]{16}$/),
        name: 'get_weather',
        arguments: '{"city": "Oslo [north]"}',
        namespace: null,
        status: 'completed',
      },
      expect.objectContaining({ name: 'send_email', arguments: '{"to": ["a@b.c"], "subject": "Hi"}' }),
    ]);
    expect(body.output[0].call_id).not.toBe(body.output[1].call_id);
  });

  it('scripts multi-round chains with [[call@N]] and answers after the last round', async () => {
    const prompt = 'Plan a trip [[call get_weather {"city": "Rome"}]] [[call@2 send_email {"to": ["x@y.z"], "subject": "Rome"}]] [[say Trip planned.]]';
    const round1 = await respond({ input: prompt, tools: [weatherTool, emailTool] });
    expect(round1.output.map((i: any) => i.name)).toEqual(['get_weather']);

    const history: unknown[] = [
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: prompt }] },
      { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city": "Rome"}' },
      { type: 'function_call_output', call_id: 'c1', output: 'Sunny, 25C' },
    ];
    const round2 = await respond({ input: history, tools: [weatherTool, emailTool] });
    expect(round2.output.map((i: any) => i.name)).toEqual(['send_email']);

    history.push(
      { type: 'function_call', call_id: 'c2', name: 'send_email', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c2', output: [{ type: 'input_text', text: 'sent' }] },
    );
    const round3 = await respond({ input: history, tools: [weatherTool, emailTool] });
    expect(round3.output).toHaveLength(1);
    expect(round3.output[0].content[0].text).toBe('Trip planned.');
  });

  it('quotes every tool output of the last call group when no answer is scripted', async () => {
    const body = await respond({
      input: [
        { role: 'user', content: 'Weather in Oslo and Rome?' },
        { type: 'function_call', call_id: 'a', name: 'get_weather', arguments: '{}' },
        { type: 'function_call', call_id: 'b', name: 'get_weather', arguments: '{}' },
        { type: 'function_call_output', call_id: 'a', output: 'Oslo: 3C' },
        { type: 'function_call_output', call_id: 'b', output: 'Rome: 25C' },
      ],
      tools: [weatherTool],
    });
    expect(body.output[0].content[0].text).toBe('Based on the tool result: Oslo: 3C\nRome: 25C');
  });

  it('calls [[always]] tools in every round', async () => {
    const input: unknown[] = [{ role: 'user', content: 'loop [[always get_weather {"city": "X"}]]' }];
    for (let round = 1; round <= 3; round++) {
      const body = await respond({ input });
      expect(body.output.map((i: any) => i.name)).toEqual(['get_weather']);
      input.push(
        { type: 'function_call', call_id: `c${round}`, name: 'get_weather', arguments: '{"city": "X"}' },
        { type: 'function_call_output', call_id: `c${round}`, output: 'ok' },
      );
    }
  });

  describe('tool_choice', () => {
    const tools = [weatherTool, emailTool];

    it('auto calls a tool that matches the prompt, with schema-valid arguments', async () => {
      const body = await respond({ input: 'What is the weather in San Francisco?', tools });
      expect(body.output).toEqual([expect.objectContaining({ name: 'get_weather', arguments: '{"city": "San Francisco"}' })]);
    });

    it('auto answers in text when nothing matches meaningfully', async () => {
      const body = await respond({ input: 'Tell me a joke', tools });
      expect(body.output[0].type).toBe('message');
    });

    it('required picks the best match, else the first tool', async () => {
      const matched = await respond({ input: 'email Bob about lunch', tools, tool_choice: 'required' });
      expect(matched.output[0].name).toBe('send_email');
      const first = await respond({ input: 'Tell me a joke', tools, tool_choice: 'required' });
      expect(first.output[0].name).toBe('get_weather');
      expect(JSON.parse(first.output[0].arguments)).toEqual({ city: 'joke' });
    });

    it('a named function is called in round 1 only, in either dialect style', async () => {
      const named = await respond({ input: 'weather please', tools, tool_choice: { type: 'function', name: 'send_email' } });
      expect(named.output[0].name).toBe('send_email');
      const chatStyle = await respond({ input: 'hi', tools, tool_choice: { type: 'function', function: { name: 'send_email' } } });
      expect(chatStyle.output[0].name).toBe('send_email');
      const after = await respond({
        input: [
          { role: 'user', content: 'weather please' },
          { type: 'function_call', call_id: 'c', name: 'send_email', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c', output: 'done' },
        ],
        tools,
        tool_choice: { type: 'function', name: 'send_email' },
      });
      expect(after.output[0].type).toBe('message');
    });

    it('none never calls, not even scripted calls', async () => {
      const body = await respond({ input: 'weather [[call get_weather {}]]', tools, tool_choice: 'none' });
      expect(body.output.map((i: any) => i.type)).toEqual(['message']);
    });
  });

  it('stops at max_output_tokens with status incomplete', async () => {
    const body = await respond({ input: '[[tokens 50]]', max_output_tokens: 7 });
    expect(body.status).toBe('incomplete');
    expect(body.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(body.max_output_tokens).toBe(7);
    expect(body.output[0].content[0].text.split(' ')).toHaveLength(7);
    expect(body.usage.output_tokens).toBe(7);
  });

  describe('streaming', () => {
    it('streams text exactly like vLLM: data-only lines, sequence numbers, paired events', async () => {
      const blocks = await stream({ input: 'Stream this [[say The quick brown fox jumps.]]' });
      for (const block of blocks) expect(block.raw.startsWith('data: {')).toBe(true);
      const events = blocks.map((b) => JSON.parse(b.data));
      expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
      const types = events.map((e) => e.type);
      const deltas = events.filter((e) => e.type === 'response.output_text.delta');
      expect(types).toEqual([
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        ...deltas.map(() => 'response.output_text.delta'),
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ]);
      expect(deltas.length).toBeGreaterThan(3);
      const itemId = events[2].item.id;
      expect(events[2].item).toEqual({ id: itemId, type: 'message', role: 'assistant', content: [], status: 'in_progress' });
      for (const d of deltas) {
        expect(d).toEqual({
          type: 'response.output_text.delta',
          delta: expect.any(String),
          item_id: itemId,
          output_index: 0,
          content_index: 0,
          logprobs: [],
          sequence_number: expect.any(Number),
        });
        expect(d.delta.length).toBeLessThanOrEqual(4);
      }
      expect(deltas.map((d) => d.delta).join('')).toBe('The quick brown fox jumps.');
      expect(events.at(-4).text).toBe('The quick brown fox jumps.');
      expect(events[0].response).toMatchObject({ status: 'in_progress', output: [], usage: null, object: 'response' });
      const final = events.at(-1).response;
      expect(final.id).toBe(events[0].response.id);
      expect(final.status).toBe('completed');
      expect(final.output[0]).toMatchObject({ id: itemId, content: [{ text: 'The quick brown fox jumps.' }] });
      expect(final.usage.total_tokens).toBe(final.usage.input_tokens + final.usage.output_tokens);
    });

    it("streams reasoning with vLLM's vendor-only reasoning_part events", async () => {
      const events = (await stream({ input: '[[reason Because it is.]] [[say Yes.]]' })).map((b) => JSON.parse(b.data));
      const reasoningTypes = events.filter((e) => e.output_index === 0).map((e) => e.type);
      expect([...new Set(reasoningTypes)]).toEqual([
        'response.output_item.added',
        'response.reasoning_part.added',
        'response.reasoning_text.delta',
        'response.reasoning_text.done',
        'response.reasoning_part.done',
        'response.output_item.done',
      ]);
      const added = events.find((e) => e.type === 'response.reasoning_part.added');
      expect(added.part).toEqual({ text: '', type: 'reasoning_text' });
      const text = events
        .filter((e) => e.type === 'response.reasoning_text.delta')
        .map((e) => e.delta)
        .join('');
      expect(text).toBe('Because it is.');
      expect(events.find((e) => e.type === 'response.reasoning_part.done').part.text).toBe('Because it is.');
      expect(events.find((e) => e.type === 'response.output_item.added' && e.output_index === 1).item.type).toBe('message');
    });

    it('streams function calls like the gemma recording, bare item ids included', async () => {
      const events = (await stream({ input: 'What is the weather in San Francisco?', tools: [weatherTool], tool_choice: 'required' })).map((b) => JSON.parse(b.data));
      const added = events.find((e) => e.type === 'response.output_item.added');
      expect(added.item).toEqual({
        arguments: '',
        call_id: expect.stringMatching(/^call_[0-9a-f]{16}$/),
        name: 'get_weather',
        type: 'function_call',
        id: expect.stringMatching(/^[0-9a-f]{16}$/),
        status: 'in_progress',
      });
      const deltas = events.filter((e) => e.type === 'response.function_call_arguments.delta');
      expect(deltas.map((d) => d.delta)).toEqual(['{"', 'city', '": "', 'San', ' Fra', 'ncis', 'co"}']);
      for (const d of deltas) expect(Object.keys(d).sort()).toEqual(['delta', 'item_id', 'output_index', 'sequence_number', 'type']);
      const done = events.find((e) => e.type === 'response.function_call_arguments.done');
      expect(done).toMatchObject({ arguments: '{"city": "San Francisco"}', name: 'get_weather', item_id: added.item.id });
      const itemDone = events.find((e) => e.type === 'response.output_item.done');
      expect(itemDone.item).toMatchObject({ status: 'completed', arguments: '{"city": "San Francisco"}', id: added.item.id });
      const final = events.at(-1).response;
      expect(final.output[0]).toMatchObject({ id: `fc_${added.item.id}`, call_id: added.item.call_id, status: 'completed' });
    });

    it('streams parallel calls as consecutive output items', async () => {
      const events = (await stream({ input: '[[call a {"x": 1}]] [[call b {"y": [1, 2]}]]' })).map((b) => JSON.parse(b.data));
      const items = events.filter((e) => e.type === 'response.output_item.done').map((e) => [e.output_index, e.item.name, e.item.arguments]);
      expect(items).toEqual([
        [0, 'a', '{"x": 1}'],
        [1, 'b', '{"y": [1, 2]}'],
      ]);
      for (const index of [0, 1]) {
        const args = events
          .filter((e) => e.type === 'response.function_call_arguments.delta' && e.output_index === index)
          .map((e) => e.delta)
          .join('');
        expect(args).toBe(items[index][2]);
      }
    });

    it('ends with response.incomplete when max_output_tokens cuts the answer', async () => {
      const events = (await stream({ input: '[[tokens 30]]', max_output_tokens: 5 })).map((b) => JSON.parse(b.data));
      const last = events.at(-1);
      expect(last.type).toBe('response.incomplete');
      expect(last.response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
      expect(events.filter((e) => e.type === 'response.output_text.delta')).toHaveLength(5);
    });

    it('streams [[tokens N]] as N deltas at the default chunk size', async () => {
      const events = (await stream({ input: '[[tokens 2000]]' })).map((b) => JSON.parse(b.data));
      expect(events.filter((e) => e.type === 'response.output_text.delta')).toHaveLength(2000);
      expect(events.at(-1).response.usage.output_tokens).toBe(2000);
    });

    it('waits for [[delay]] before the first delta and between deltas', async () => {
      // Times count from sending the request: the headers may reach a busy client late, but never
      // before the server started waiting, so these lower bounds hold however slow the machine is.
      const sent = performance.now();
      const res = await postJson(url, '/responses', { model: 'm', stream: true, input: '[[delay ttft=120 token=15]] [[tokens 4]]' });
      const headersAt = performance.now() - sent;
      const blocks = await readSse(res);
      const deltaTimes = blocks.filter((b) => b.data.includes('output_text.delta')).map((b) => headersAt + b.at);
      expect(deltaTimes[0]).toBeGreaterThanOrEqual(115);
      expect(deltaTimes[3] - deltaTimes[0]).toBeGreaterThanOrEqual(40);
    });
  });

  describe('errors and other endpoints', () => {
    const expectVllmError = async (res: Response, status: number, message: RegExp, param: string | null = null) => {
      expect(res.status).toBe(status);
      expect(await res.json()).toEqual({
        error: { message: expect.stringMatching(message), type: 'BadRequestError', param, code: status },
      });
    };

    it.each([
      ['invalid JSON', '{"model": ', /not valid JSON/, null],
      ['a missing model', { input: 'hi' }, /model/, 'model'],
      ['a missing input', { model: 'm' }, /input/, 'input'],
      ['an unparsable directive', { model: 'm', input: 'x [[call f {"a": }]]' }, /directive.*not valid JSON/, 'input'],
      ['a bad max_output_tokens', { model: 'm', input: 'x', max_output_tokens: -1 }, /max_output_tokens/, 'max_output_tokens'],
    ])('answers 400 for %s', async (_label, body, message, param) => {
      await expectVllmError(await postJson(url, '/responses', body), 400, message, param);
    });

    it('lists one model that says it is simulated', async () => {
      const res = await fetch(`${url}/models`);
      const body = (await res.json()) as any;
      expect(body.object).toBe('list');
      expect(body.data).toEqual([
        expect.objectContaining({
          id: 'switchyard-sim',
          object: 'model',
          owned_by: 'switchyard-simulator',
          simulated: true,
          description: expect.stringMatching(/simulated.*not a real model/i),
        }),
      ]);
      expect(res.headers.get('x-switchyard-simulator')).toBe('true');
    });

    it('answers /health, unknown paths and wrong methods like vLLM', async () => {
      const base = url.replace(/\/v1$/, '');
      expect((await fetch(`${base}/health`)).status).toBe(200);
      const missing = await fetch(`${url}/nothing`);
      expect(missing.status).toBe(404);
      expect(await missing.json()).toEqual({ detail: 'Not Found' });
      expect((await fetch(`${url}/responses`)).status).toBe(405);
    });
  });

  it('records requests, bounded to the last 200, and emits a request event', async () => {
    const seen: RecordedRequest[] = [];
    const listener = (r: RecordedRequest) => seen.push(r);
    sim.on('request', listener);
    const before = sim.stats.requests;
    await Promise.all(Array.from({ length: 210 }, (_, i) => respond({ input: `[[say ${i}]]` })));
    sim.off('request', listener);
    expect(seen).toHaveLength(210);
    expect(sim.stats.requests - before).toBe(210);
    expect(sim.requests).toHaveLength(200);
    expect(sim.requests.at(-1)).toMatchObject({ path: '/v1/responses', body: { model: 'sim-model' } });
    expect(sim.stats.active).toBe(0);
  });
});

describe('SimulatedUpstream options', () => {
  it('adds reasoning to every answer, honours chunkChars, and can write event: lines', async () => {
    const sim = new SimulatedUpstream({ reasoning: true, chunkChars: 12, sseEventLines: true, model: 'custom' });
    const { url } = await sim.listen();
    try {
      const models = (await (await fetch(`${url}/models`)).json()) as any;
      expect(models.data[0].id).toBe('custom');
      const blocks = await readSse(await postJson(url, '/responses', { model: 'm', stream: true, input: 'hello there' }));
      for (const block of blocks) {
        const type = JSON.parse(block.data).type;
        expect(block.raw.startsWith(`event: ${type}\ndata: `)).toBe(true);
      }
      const events = blocks.map((b) => JSON.parse(b.data));
      expect(events[2].item.type).toBe('reasoning');
      const deltas = events.filter((e) => e.type.endsWith('_text.delta'));
      expect(Math.max(...deltas.map((d) => d.delta.length))).toBeLessThanOrEqual(12);
      expect(deltas.some((d) => d.delta.length > 4)).toBe(true);
    } finally {
      await sim.close();
    }
  });

  it('close() ends open streams and leaves no timers behind', async () => {
    const sim = new SimulatedUpstream({ tokenDelayMs: 1_000 });
    const { url } = await sim.listen();
    const res = await postJson(url, '/responses', { model: 'm', stream: true, input: '[[tokens 100]]' });
    const reading = readSseJson(res).catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(sim.stats.active).toBe(1);
    // The open stream has ~100 s of tokens left: close() resolving at all shows it did not wait for them.
    await sim.close();
    // fetch's errors come from another realm than Jest's, so `toBeInstanceOf(Error)` cannot be used.
    expect(await reading).toHaveProperty('message', 'terminated');
    expect(sim.stats).toMatchObject({ active: 0, aborted: 0 });
  });
});

describe('SimulatedUpstream POST /tokenize (vLLM, at the server root)', () => {
  let sim: SimulatedUpstream;
  let url: string;
  let root: string;

  beforeAll(async () => {
    sim = new SimulatedUpstream({ maxModelLen: 8192 });
    ({ url } = await sim.listen());
    root = url.replace(/\/v1$/, '');
  });
  afterAll(() => sim.close());

  const messages = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'What is the weather in Paris today?' },
  ];

  it('counts a chat prompt as vLLM answers it, equal to the input_tokens of the same chat completion', async () => {
    const res = await postJson(root, '/tokenize', {
      model: 'switchyard-sim',
      messages,
      tools: [{ type: 'function', function: weatherTool }],
      add_generation_prompt: true,
      return_token_strs: true,
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { count: number; max_model_len: number; tokens: number[]; token_strs: string[] };
    expect(Object.keys(body).sort()).toEqual(['count', 'max_model_len', 'token_strs', 'tokens']);
    expect(body.max_model_len).toBe(8192);
    expect(body.tokens).toHaveLength(body.count);
    expect(body.token_strs).toHaveLength(body.count);
    expect(body.tokens.every((t) => Number.isInteger(t) && t >= 0)).toBe(true);
    expect(body.token_strs.slice(0, 3)).toEqual(['<|im_start|>', 'system', 'Be']);

    const completion = await postJson(url, '/chat/completions', { model: 'switchyard-sim', messages, tools: [{ type: 'function', function: weatherTool }], max_tokens: 20 });
    const usage = ((await completion.json()) as { usage: { prompt_tokens: number } }).usage;
    expect(usage.prompt_tokens).toBe(body.count);
    expect(sim.tokenizeRequests.at(-1)?.body).toMatchObject({ add_generation_prompt: true });
  });

  it('counts a completion prompt, answers 404 under /v1 and for an unknown model, 400 without a prompt', async () => {
    const plain = (await (await postJson(root, '/tokenize', { prompt: 'one two  three' })).json()) as { count: number; token_strs?: string[] };
    expect(plain.count).toBe(3);
    expect(plain.token_strs).toBeUndefined();
    expect((await postJson(url, '/tokenize', { prompt: 'x' })).status).toBe(404);
    const unknown = await postJson(root, '/tokenize', { model: 'other', prompt: 'x' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { param: 'model', code: 404 } });
    expect((await postJson(root, '/tokenize', { model: 'switchyard-sim' })).status).toBe(400);
    expect((await postJson(root, '/tokenize', '{not json')).status).toBe(400);
  });

  it('answers 404 when configured as a server without a tokenizer route', async () => {
    const bare = new SimulatedUpstream({ tokenize: false });
    const { url: bareUrl } = await bare.listen();
    try {
      expect((await postJson(bareUrl.replace(/\/v1$/, ''), '/tokenize', { prompt: 'x' })).status).toBe(404);
    } finally {
      await bare.close();
    }
  });
});

describe('SimulatedUpstream context length (max_model_len)', () => {
  let sim: SimulatedUpstream;
  let url: string;

  beforeAll(async () => {
    sim = new SimulatedUpstream({ maxModelLen: 100 });
    ({ url } = await sim.listen());
  });
  afterAll(() => sim.close());

  it('reports max_model_len in /v1/models, as vLLM does', async () => {
    const body = (await (await fetch(`${url}/models`)).json()) as { data: Array<Record<string, unknown>> };
    expect(body.data[0]).toMatchObject({ max_model_len: 100 });
  });

  it('refuses an output budget the prompt leaves no room for, naming the field, in both dialects', async () => {
    const responses = await postJson(url, '/responses', { model: 'sim-model', input: 'three short words', max_output_tokens: 98 });
    expect(responses.status).toBe(400);
    const error = ((await responses.json()) as any).error;
    expect(error).toMatchObject({ param: 'max_output_tokens', code: 400 });
    expect(error.message).toMatch(/maximum context length is 100 tokens and your request has \d+ input tokens/);

    const chat = await postJson(url, '/chat/completions', { model: 'sim-model', messages: [{ role: 'user', content: 'hi' }], max_completion_tokens: 99 });
    expect(chat.status).toBe(400);
    expect(((await chat.json()) as any).error.param).toBe('max_completion_tokens');
  });

  it('accepts a budget that fits, and refuses an input that fills the context alone', async () => {
    expect((await postJson(url, '/responses', { model: 'sim-model', input: 'hi', max_output_tokens: 50 })).status).toBe(200);
    const long = await postJson(url, '/responses', { model: 'sim-model', input: 'word '.repeat(200) });
    expect(long.status).toBe(400);
    expect(((await long.json()) as any).error.message).toContain('your request has');
  });
});
