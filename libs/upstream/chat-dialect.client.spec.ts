import type { JsonObject } from '#tool-sdk/items.js';
import type { ModelEvent } from '#core/protocol/model-events.js';
import { ChatDialectClient } from './chat-dialect.client.js';
import { ScriptedUpstream, sendJson, sendSse, SHORT_MS, sleep, startSse, testTimeouts, upstreamConfig } from './testing/scripted-upstream.server.js';
import { collect, modelRequest } from './testing/upstream-test.helpers.js';
import { answerOf } from '#edge/testing/answered.js';

const zeroDetails = { input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } };
const zeroUsage = { input_tokens: 0, output_tokens: 0, total_tokens: 0, ...zeroDetails };

/** A chat.completion.chunk as vLLM, SGLang and llama.cpp frame it. */
function chunk(delta: JsonObject, finishReason: string | null = null, extra: JsonObject = {}): JsonObject {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1781048957,
    model: 'test-model',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    ...extra,
  };
}

describe('ChatDialectClient', () => {
  let upstream: ScriptedUpstream;
  let client: ChatDialectClient;

  beforeEach(async () => {
    upstream = await ScriptedUpstream.start();
    client = new ChatDialectClient(upstreamConfig(upstream.baseUrl, { dialect: 'chat' }), testTimeouts());
  });

  afterEach(async () => {
    client.close();
    await upstream.close();
  });

  describe('streamed completions', () => {
    it('vLLM: reasoning, text, then indexed tool-call deltas and a usage chunk', async () => {
      upstream.handler = (_req, res) =>
        sendSse(res, [
          chunk({ role: 'assistant', content: '' }),
          chunk({ reasoning_content: 'Need the' }),
          chunk({ reasoning_content: ' weather.' }),
          chunk({ content: 'Checking' }),
          chunk({ content: ' now.' }),
          chunk({ tool_calls: [{ id: 'chatcmpl-tool-a1', type: 'function', index: 0, function: { name: 'get_weather', arguments: '' } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city": ' } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
          chunk({ tool_calls: [{ id: 'chatcmpl-tool-b2', type: 'function', index: 1, function: { name: 'get_time', arguments: '' } }] }),
          chunk({ tool_calls: [{ index: 1, function: { arguments: '{}' } }] }),
          chunk({ content: '' }, 'tool_calls'),
          {
            id: 'chatcmpl-1',
            object: 'chat.completion.chunk',
            choices: [],
            usage: {
              prompt_tokens: 50,
              completion_tokens: 30,
              total_tokens: 80,
              prompt_tokens_details: { cached_tokens: 32 },
              completion_tokens_details: { reasoning_tokens: 5 },
            },
          },
          '[DONE]',
        ]);

      const events = await collect(client.infer(modelRequest({ stream: true })));

      expect(events).toEqual([
        { type: 'reasoning.start', key: 'reasoning_0' },
        { type: 'reasoning.delta', key: 'reasoning_0', delta: 'Need the' },
        { type: 'reasoning.delta', key: 'reasoning_0', delta: ' weather.' },
        { type: 'reasoning.done', key: 'reasoning_0', text: 'Need the weather.' },
        { type: 'message.start', key: 'message_0' },
        { type: 'message.delta', key: 'message_0', delta: 'Checking' },
        { type: 'message.delta', key: 'message_0', delta: ' now.' },
        { type: 'message.done', key: 'message_0', text: 'Checking now.' },
        { type: 'call.start', key: 'call_0', call_id: 'chatcmpl-tool-a1', name: 'get_weather' },
        { type: 'call.delta', key: 'call_0', delta: '{"city": ' },
        { type: 'call.delta', key: 'call_0', delta: '"Paris"}' },
        // A call is complete once the next begins: done before it starts, as on the Responses dialect.
        { type: 'call.done', key: 'call_0', call_id: 'chatcmpl-tool-a1', name: 'get_weather', arguments: '{"city": "Paris"}' },
        { type: 'call.start', key: 'call_1', call_id: 'chatcmpl-tool-b2', name: 'get_time' },
        { type: 'call.delta', key: 'call_1', delta: '{}' },
        { type: 'call.done', key: 'call_1', call_id: 'chatcmpl-tool-b2', name: 'get_time', arguments: '{}' },
        {
          type: 'usage',
          usage: {
            input_tokens: 50,
            output_tokens: 30,
            total_tokens: 80,
            input_tokens_details: { cached_tokens: 32 },
            output_tokens_details: { reasoning_tokens: 5 },
          },
        },
        { type: 'finish', status: 'completed' },
      ]);
    });

    it('newer vLLM: reasoning arrives as `reasoning`', async () => {
      upstream.handler = (_req, res) => sendSse(res, [chunk({ reasoning: 'Hmm.' }), chunk({ content: 'Hi' }), chunk({}, 'stop'), '[DONE]']);

      const events = await collect(client.infer(modelRequest({ stream: true })));

      expect(events).toEqual([
        { type: 'reasoning.start', key: 'reasoning_0' },
        { type: 'reasoning.delta', key: 'reasoning_0', delta: 'Hmm.' },
        { type: 'reasoning.done', key: 'reasoning_0', text: 'Hmm.' },
        { type: 'message.start', key: 'message_0' },
        { type: 'message.delta', key: 'message_0', delta: 'Hi' },
        { type: 'message.done', key: 'message_0', text: 'Hi' },
        { type: 'usage', usage: zeroUsage },
        { type: 'finish', status: 'completed' },
      ]);
    });

    it('llama.cpp: whole call in one chunk, id repeated later, usage on the final chunk', async () => {
      upstream.handler = (_req, res) =>
        sendSse(res, [
          chunk({ role: 'assistant', content: null }),
          chunk({ tool_calls: [{ index: 0, id: 'Xa9kQ2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] }),
          chunk({ tool_calls: [{ index: 0, id: 'Xa9kQ2', type: 'function', function: { arguments: '' } }] }),
          chunk({}, 'tool_calls', {
            usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
            timings: { prompt_n: 12, predicted_n: 7 },
          }),
          '[DONE]',
        ]);

      const events = await collect(client.infer(modelRequest({ stream: true })));

      expect(events).toEqual([
        { type: 'call.start', key: 'call_0', call_id: 'Xa9kQ2', name: 'get_weather' },
        { type: 'call.delta', key: 'call_0', delta: '{"city":"Paris"}' },
        { type: 'call.done', key: 'call_0', call_id: 'Xa9kQ2', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'usage', usage: { input_tokens: 12, output_tokens: 7, total_tokens: 19, ...zeroDetails } },
        { type: 'finish', status: 'completed' },
      ]);
    });

    it('Ollama: calls without index or id, arguments as objects', async () => {
      upstream.handler = (_req, res) =>
        sendSse(res, [
          {
            id: 'chatcmpl-540',
            object: 'chat.completion.chunk',
            model: 'llama3.1',
            system_fingerprint: 'fp_ollama',
            choices: [
              {
                index: 0,
                delta: {
                  role: 'assistant',
                  content: '',
                  tool_calls: [
                    { type: 'function', function: { name: 'get_weather', arguments: { city: 'Paris' } } },
                    { type: 'function', function: { name: 'get_time', arguments: { tz: 'UTC' } } },
                  ],
                },
                finish_reason: null,
              },
            ],
          },
          { id: 'chatcmpl-540', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: 'stop' }] },
          { id: 'chatcmpl-540', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } },
          '[DONE]',
        ]);

      const events = await collect(client.infer(modelRequest({ stream: true })));

      const starts = events.filter((event): event is Extract<ModelEvent, { type: 'call.start' }> => event.type === 'call.start');
      expect(starts).toHaveLength(2);
      for (const start of starts) expect(start.call_id).toMatch(/^call_[0-9a-f]{24}$/);
      expect(starts[0].call_id).not.toBe(starts[1].call_id);
      expect(events).toEqual([
        { type: 'call.start', key: 'call_0', call_id: starts[0].call_id, name: 'get_weather' },
        { type: 'call.delta', key: 'call_0', delta: '{"city":"Paris"}' },
        { type: 'call.done', key: 'call_0', call_id: starts[0].call_id, name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'call.start', key: 'call_1', call_id: starts[1].call_id, name: 'get_time' },
        { type: 'call.delta', key: 'call_1', delta: '{"tz":"UTC"}' },
        { type: 'call.done', key: 'call_1', call_id: starts[1].call_id, name: 'get_time', arguments: '{"tz":"UTC"}' },
        { type: 'usage', usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15, ...zeroDetails } },
        { type: 'finish', status: 'completed' },
      ]);
    });

    it('TGI 2.x and Mistral-style shapes: a tool call as an object, content as parts', async () => {
      upstream.handler = (_req, res) =>
        sendSse(res, [
          chunk({ role: 'assistant', content: [{ type: 'text', text: 'Sure.' }] }),
          chunk({ tool_calls: { index: 0, id: '', type: 'function', function: { name: 'f', arguments: { q: 1 } } } }),
          chunk({}, 'tool_calls'),
          '[DONE]',
        ]);

      const events = await collect(client.infer(modelRequest({ stream: true })));

      expect(events).toEqual([
        { type: 'message.start', key: 'message_0' },
        { type: 'message.delta', key: 'message_0', delta: 'Sure.' },
        { type: 'message.done', key: 'message_0', text: 'Sure.' },
        { type: 'call.start', key: 'call_0', call_id: expect.stringMatching(/^call_[0-9a-f]{24}$/), name: 'f' },
        { type: 'call.delta', key: 'call_0', delta: '{"q":1}' },
        { type: 'call.done', key: 'call_0', call_id: expect.stringMatching(/^call_/), name: 'f', arguments: '{"q":1}' },
        { type: 'usage', usage: zeroUsage },
        { type: 'finish', status: 'completed' },
      ]);
    });

    it('continues an unindexed call by id and by position', async () => {
      upstream.handler = (_req, res) =>
        sendSse(res, [
          chunk({ tool_calls: [{ id: 'c1', function: { name: 'f', arguments: '{"a"' } }] }),
          chunk({ tool_calls: [{ id: 'c1', function: { arguments: ':1' } }] }),
          chunk({ tool_calls: [{ function: { arguments: '}' } }] }),
          chunk({}, 'tool_calls'),
          '[DONE]',
        ]);

      const events = await collect(client.infer(modelRequest({ stream: true })));

      expect(events.filter((event) => event.type === 'call.done')).toEqual([{ type: 'call.done', key: 'call_0', call_id: 'c1', name: 'f', arguments: '{"a":1}' }]);
    });

    it('refuses arguments that continue a call after the next began (the earlier call was handed on as complete)', async () => {
      upstream.handler = (_req, res) =>
        sendSse(res, [
          chunk({ tool_calls: [{ index: 0, id: 'a', function: { name: 'f', arguments: '{"a"' } }] }),
          chunk({ tool_calls: [{ index: 1, id: 'b', function: { name: 'g', arguments: '{}' } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }),
          chunk({}, 'tool_calls'),
          '[DONE]',
        ]);
      await expect(answerOf(collect(client.infer(modelRequest({ stream: true }))))).resolves.toMatchObject({ status: 502, code: 'upstream_bad_response' });
    });

    it.each([
      ['length', { status: 'incomplete', reason: 'max_output_tokens' }],
      ['content_filter', { status: 'incomplete', reason: 'content_filter' }],
      ['stop', { status: 'completed' }],
    ])('maps finish_reason %s', async (reason, finish) => {
      upstream.handler = (_req, res) => sendSse(res, [chunk({ content: 'Once upon' }), chunk({ content: ' a' }, reason), '[DONE]']);
      const events = await collect(client.infer(modelRequest({ stream: true })));
      expect(events.at(-3)).toEqual({ type: 'message.done', key: 'message_0', text: 'Once upon a' });
      expect(events.at(-1)).toEqual({ type: 'finish', ...finish });
    });

    it('keeps the last usage when the server reports cumulative usage on every chunk', async () => {
      upstream.handler = (_req, res) =>
        sendSse(res, [
          chunk({ content: 'a' }, null, { usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } }),
          chunk({ content: 'b' }, 'stop', { usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } }),
          '[DONE]',
        ]);
      const events = await collect(client.infer(modelRequest({ stream: true })));
      expect(events.at(-2)).toEqual({ type: 'usage', usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5, ...zeroDetails } });
    });

    it('accepts a body that ends without [DONE] once a finish_reason was sent', async () => {
      upstream.handler = (_req, res) => sendSse(res, [chunk({ content: 'ok' }, 'stop')]);
      const events = await collect(client.infer(modelRequest({ stream: true })));
      expect(events.map((event) => event.type)).toEqual(['message.start', 'message.delta', 'message.done', 'usage', 'finish']);
    });
  });

  describe('non-streamed completions', () => {
    it('vLLM: reasoning, content and a tool call, without deltas', async () => {
      upstream.handler = (_req, res) =>
        sendJson(res, 200, {
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1,
          model: 'Qwen/Qwen3-30B-A3B-FP8',
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: 'Checking.',
                reasoning_content: 'Think.',
                tool_calls: [{ id: 'chatcmpl-tool-1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
              },
              logprobs: null,
              finish_reason: 'tool_calls',
              stop_reason: null,
            },
          ],
          usage: { prompt_tokens: 10, total_tokens: 20, completion_tokens: 10, prompt_tokens_details: null },
          prompt_logprobs: null,
          kv_transfer_params: null,
        });

      const events = await collect(client.infer(modelRequest()));

      expect(events).toEqual([
        { type: 'reasoning.start', key: 'reasoning_0' },
        { type: 'reasoning.done', key: 'reasoning_0', text: 'Think.' },
        { type: 'message.start', key: 'message_0' },
        { type: 'message.done', key: 'message_0', text: 'Checking.' },
        { type: 'call.start', key: 'call_0', call_id: 'chatcmpl-tool-1', name: 'get_weather' },
        { type: 'call.done', key: 'call_0', call_id: 'chatcmpl-tool-1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'usage', usage: { input_tokens: 10, output_tokens: 10, total_tokens: 20, ...zeroDetails } },
        { type: 'finish', status: 'completed' },
      ]);
    });

    it('Ollama/llama.cpp: object arguments and missing ids', async () => {
      upstream.handler = (_req, res) =>
        sendJson(res, 200, {
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: '',
                tool_calls: [{ function: { name: 'a', arguments: { x: 1 } } }, { function: { name: 'b', arguments: { y: [2] } } }],
              },
              finish_reason: 'length',
            },
          ],
        });

      const events = await collect(client.infer(modelRequest()));

      expect(events).toEqual([
        { type: 'call.start', key: 'call_0', call_id: expect.stringMatching(/^call_[0-9a-f]{24}$/), name: 'a' },
        { type: 'call.done', key: 'call_0', call_id: expect.stringMatching(/^call_/), name: 'a', arguments: '{"x":1}' },
        { type: 'call.start', key: 'call_1', call_id: expect.stringMatching(/^call_[0-9a-f]{24}$/), name: 'b' },
        { type: 'call.done', key: 'call_1', call_id: expect.stringMatching(/^call_/), name: 'b', arguments: '{"y":[2]}' },
        { type: 'usage', usage: zeroUsage },
        { type: 'finish', status: 'incomplete', reason: 'max_output_tokens' },
      ]);
    });
  });

  describe('failures', () => {
    it('errors with upstream_failed on an error chunk mid-stream', async () => {
      upstream.handler = (_req, res) => sendSse(res, [chunk({ content: 'a' }), { error: { object: 'error', message: 'Engine crashed', type: 'InternalServerError', code: 500 } }]);
      await expect(answerOf(collect(client.infer(modelRequest({ stream: true }))))).resolves.toMatchObject({
        status: 502,
        code: 'upstream_failed',
        message: 'Engine crashed',
      });
    });

    it('errors with upstream_stream_error when the body ends with no [DONE] and no finish_reason', async () => {
      upstream.handler = (_req, res) => sendSse(res, [chunk({ content: 'a' })]);
      await expect(answerOf(collect(client.infer(modelRequest({ stream: true }))))).resolves.toMatchObject({ status: 502, code: 'upstream_stream_error' });
    });

    it('errors with upstream_stream_error on a malformed chunk', async () => {
      upstream.handler = (_req, res) => sendSse(res, [chunk({ content: 'a' }), '{"choices":[{"delta":{"content":"b"}]'], { end: false });
      await expect(answerOf(collect(client.infer(modelRequest({ stream: true }))))).resolves.toMatchObject({ status: 502, code: 'upstream_stream_error' });
      await upstream.nextDisconnect();
    });

    it('errors with upstream_stream_error when the upstream resets mid-stream', async () => {
      upstream.handler = async (_req, res) => {
        startSse(res);
        res.write(`data: ${JSON.stringify(chunk({ content: 'a' }))}\n\n`);
        await sleep(10);
        res.socket?.resetAndDestroy();
      };
      await expect(answerOf(collect(client.infer(modelRequest({ stream: true }))))).resolves.toMatchObject({ status: 502, code: 'upstream_stream_error' });
    });

    it('errors with 504 when the stream stalls (idle timeout)', async () => {
      client.close();
      client = new ChatDialectClient(upstreamConfig(upstream.baseUrl, { dialect: 'chat' }), testTimeouts({ idleMs: SHORT_MS }));
      upstream.handler = (_req, res) => {
        startSse(res);
        res.write(`data: ${JSON.stringify(chunk({ content: 'a' }))}\n\n`);
      };
      await expect(answerOf(collect(client.infer(modelRequest({ stream: true }))))).resolves.toMatchObject({
        status: 504,
        message: expect.stringContaining('idle timeout'),
      });
    });

    it('passes an Ollama 404 through with its message', async () => {
      upstream.handler = (_req, res) => sendJson(res, 404, { error: { message: 'model "llama9" not found, try pulling it first', type: 'api_error', param: null, code: null } });
      await expect(answerOf(collect(client.infer(modelRequest({ stream: true }))))).resolves.toMatchObject({
        status: 404,
        message: 'model "llama9" not found, try pulling it first',
      });
    });

    it('errors with upstream_bad_response on a truncated JSON body', async () => {
      upstream.handler = (_req, res) => sendJson(res, 200, '{"choices":[{"message":{"content":"Hel');
      await expect(answerOf(collect(client.infer(modelRequest())))).resolves.toMatchObject({ status: 502, code: 'upstream_bad_response' });
    });
  });

  it('unsubscribing aborts the request: the upstream sees the disconnect', async () => {
    upstream.handler = (_req, res) => {
      startSse(res);
      res.write(`data: ${JSON.stringify(chunk({ content: 'a' }))}\n\n`);
    };
    const subscription = client.infer(modelRequest({ stream: true })).subscribe((event) => {
      if (event.type === 'message.delta') subscription.unsubscribe();
    });
    await upstream.nextDisconnect();
    expect(upstream.disconnects).toHaveLength(1);
    expect(subscription.closed).toBe(true);
  });

  describe('request mapping', () => {
    it('maps instructions, roles, parts, merged tool calls, outputs and every option', async () => {
      upstream.handler = (_req, res) => sendJson(res, 200, { choices: [{ index: 0, message: { content: 'ok' }, finish_reason: 'stop' }] });

      await collect(
        client.infer({
          model: 'llama3.1',
          instructions: 'Be brief.',
          input: [
            { type: 'message', role: 'developer', content: 'Use metric units.' },
            {
              type: 'message',
              role: 'user',
              content: [
                { type: 'input_text', text: 'What is this?' },
                { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'high' },
              ],
            },
            {
              type: 'message',
              role: 'user',
              content: [
                { type: 'input_text', text: 'Line one' },
                { type: 'input_text', text: 'Line two' },
              ],
            },
            { type: 'reasoning', id: 'rs_1', summary: [], content: [{ type: 'reasoning_text', text: 'hidden' }] },
            { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Let me check.', annotations: [] }] },
            { type: 'reasoning', id: 'rs_2', summary: [], content: [{ type: 'reasoning_text', text: 'hidden too' }] },
            { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
            { type: 'function_call', call_id: 'call_2', name: 'get_time', arguments: '{}' },
            { type: 'function_call_output', call_id: 'call_1', output: '{"temp":21}' },
            { type: 'function_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: '12:00' }] },
            { type: 'function_call', call_id: 'call_3', name: 'get_time', arguments: '{"tz":"UTC"}' },
            { type: 'function_call_output', call_id: 'call_3', output: '13:00' },
          ],
          tools: [
            { type: 'function', name: 'get_weather', description: 'Weather now', parameters: { type: 'object', properties: {} }, strict: true },
            { type: 'function', name: 'get_time', description: null, parameters: { type: 'object' }, strict: null },
          ],
          tool_choice: { type: 'function', name: 'get_weather' },
          parallel_tool_calls: true,
          temperature: 0.7,
          top_p: 0.9,
          max_output_tokens: 256,
          presence_penalty: null,
          frequency_penalty: 0.5,
          top_logprobs: 3,
          text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true }, verbosity: 'low' },
          reasoning: { effort: 'high', summary: 'auto' },
          user: 'u1',
          stream: false,
        }),
      );

      expect(upstream.requests[0].url).toBe('/v1/chat/completions');
      expect(upstream.requests[0].body).toEqual({
        model: 'llama3.1',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'system', content: 'Use metric units.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'high' } },
            ],
          },
          { role: 'user', content: 'Line one\nLine two' },
          {
            role: 'assistant',
            content: 'Let me check.',
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
              { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
          { role: 'tool', tool_call_id: 'call_2', content: '12:00' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_3', type: 'function', function: { name: 'get_time', arguments: '{"tz":"UTC"}' } }],
          },
          { role: 'tool', tool_call_id: 'call_3', content: '13:00' },
        ],
        tools: [
          { type: 'function', function: { name: 'get_weather', description: 'Weather now', parameters: { type: 'object', properties: {} }, strict: true } },
          { type: 'function', function: { name: 'get_time', parameters: { type: 'object' } } },
        ],
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
        parallel_tool_calls: true,
        temperature: 0.7,
        top_p: 0.9,
        max_tokens: 256,
        frequency_penalty: 0.5,
        logprobs: true,
        top_logprobs: 3,
        response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } },
        reasoning_effort: 'high',
        user: 'u1',
        stream: false,
      });
    });

    it('streams with include_usage, maps json_object and plain tool_choice, omits tool fields without tools', async () => {
      upstream.handler = (_req, res) => sendSse(res, [chunk({ content: 'ok' }, 'stop'), '[DONE]']);

      await collect(client.infer(modelRequest({ stream: true, tool_choice: 'auto', text: { format: { type: 'json_object' } } })));
      await collect(
        client.infer(
          modelRequest({
            stream: true,
            tools: [{ type: 'function', name: 'f', parameters: {} }],
            tool_choice: 'required',
            text: { format: { type: 'text' } },
          }),
        ),
      );

      expect(upstream.requests[0].body).toEqual({
        model: 'test-model',
        messages: [{ role: 'user', content: 'Hello' }],
        response_format: { type: 'json_object' },
        stream: true,
        stream_options: { include_usage: true },
      });
      expect(upstream.requests[0].headers.accept).toBe('text/event-stream');
      expect(upstream.requests[1].body).toMatchObject({ tool_choice: 'required', tools: [{ type: 'function', function: { name: 'f', parameters: {} } }] });
      expect(upstream.requests[1].body).not.toHaveProperty('response_format');
    });
  });
});
