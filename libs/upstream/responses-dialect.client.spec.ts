import { Subscription } from 'rxjs';
import type { ModelEvent } from '#core/protocol/model-events.js';
import type { JsonObject, ModelItem } from '#tool-sdk/items.js';
import { ResponsesDialectClient } from './responses-dialect.client.js';
import { deadPort, ScriptedUpstream, sendJson, sendSse, SHORT_MS, sleep, startSse, testTimeouts, upstreamConfig } from './testing/scripted-upstream.server.js';
import { collect, loadVllmFixture, modelRequest } from './testing/upstream-test.helpers.js';
import { answerOf } from '#edge/testing/answered.js';

const gemma = loadVllmFixture('function-call-vllm-gemma4.yaml');
const qwen = loadVllmFixture('tool-call-required-Qwen-Qwen3-30B-A3B-FP8-nonstreaming.yaml');
const gptOss = loadVllmFixture('responses_tool_calls_5turn.yaml');

const zeroDetails = { input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } };

describe('ResponsesDialectClient', () => {
  let upstream: ScriptedUpstream;
  let client: ResponsesDialectClient;

  beforeEach(async () => {
    upstream = await ScriptedUpstream.start();
    client = new ResponsesDialectClient(upstreamConfig(upstream.baseUrl), testTimeouts());
  });

  afterEach(async () => {
    client.close();
    await upstream.close();
  });

  describe('recorded vLLM traffic', () => {
    it('decodes the streamed gemma-4 function call', async () => {
      const lines: string[] = gemma.sse;
      upstream.handler = (_req, res) =>
        sendSse(
          res,
          lines.map((line) => line.replace(/^data: /, '')),
          { gapMs: 1 },
        );

      const events = await collect(client.infer(modelRequest({ model: gemma.model, stream: true })));

      const key = '8c5375b5b08d666c';
      expect(events).toEqual([
        { type: 'call.start', key, call_id: 'call_92fd766dcc21a19c', name: 'get_weather' },
        ...['{"', 'city', '":', ' "', 'San', ' Francisco', '"', '}'].map((delta) => ({ type: 'call.delta', key, delta })),
        {
          type: 'call.done',
          key,
          call_id: 'call_92fd766dcc21a19c',
          name: gemma.expected_function_call.name,
          arguments: gemma.expected_function_call.arguments,
        },
        { type: 'usage', usage: { input_tokens: 66, output_tokens: 21, total_tokens: 87, ...zeroDetails } },
        { type: 'finish', status: 'completed' },
      ]);
    });

    it('decodes the gemma-4 stream however the bytes are split', async () => {
      const raw = (gemma.sse as string[]).map((line) => `${line}\n\n`).join('');
      upstream.handler = async (_req, res) => {
        startSse(res);
        // Seven-byte slices cut through lines, JSON and the blank-line separators.
        for (let at = 0; at < raw.length; at += 7) res.write(raw.slice(at, at + 7));
        res.end();
      };

      const events = await collect(client.infer(modelRequest({ stream: true })));

      expect(events.map((event) => event.type)).toEqual(['call.start', ...Array(8).fill('call.delta'), 'call.done', 'usage', 'finish']);
      expect(events[9]).toMatchObject({ arguments: '{"city": "San Francisco"}' });
    });

    it('decodes the non-streamed Qwen3 answer with two parallel calls', async () => {
      const turn = qwen.turns[0];
      upstream.handler = (_req, res) => sendJson(res, turn.response.status_code, turn.response.body);

      const events = await collect(client.infer(modelRequest()));

      expect(events).toEqual([
        { type: 'call.start', key: 'fc_991de8f73b28e5c2', call_id: 'chatcmpl-tool-8af786ba0a7c7ea4', name: 'calculate' },
        {
          type: 'call.done',
          key: 'fc_991de8f73b28e5c2',
          call_id: 'chatcmpl-tool-8af786ba0a7c7ea4',
          name: 'calculate',
          arguments: '{"expression": "(128 * 0.75) + 42"}',
        },
        { type: 'call.start', key: 'fc_b95e68a771efc2d0', call_id: 'chatcmpl-tool-b0c6df48aaf988c3', name: 'send_email' },
        {
          type: 'call.done',
          key: 'fc_b95e68a771efc2d0',
          call_id: 'chatcmpl-tool-b0c6df48aaf988c3',
          name: 'send_email',
          arguments: '{"to": ["alice@example.com"], "subject": "Daily Report", "body": "All systems nominal."}',
        },
        {
          type: 'usage',
          usage: {
            input_tokens: 1117,
            output_tokens: 91,
            total_tokens: 1208,
            input_tokens_details: { cached_tokens: 1072 },
            output_tokens_details: { reasoning_tokens: 0 },
          },
        },
        { type: 'finish', status: 'completed' },
      ]);
    });

    it('sends the Qwen3 request the way vLLM accepted it', async () => {
      const recorded = qwen.turns[0].request.body;
      upstream.handler = (_req, res) => sendJson(res, 200, qwen.turns[0].response.body);

      await collect(
        client.infer(
          modelRequest({
            model: recorded.model,
            input: [{ type: 'message', role: 'user', content: recorded.input }],
            tools: recorded.tools,
            tool_choice: recorded.tool_choice,
          }),
        ),
      );

      const sent = upstream.requests[0].body as JsonObject;
      expect(upstream.requests[0].url).toBe('/v1/responses');
      expect(sent.tools).toEqual(recorded.tools);
      expect(sent).toMatchObject({ model: recorded.model, tool_choice: 'required', stream: false, store: false });
    });

    const gptOssTurns: Array<{ name: string; index: number }> = gptOss.turns.map((turn: { filename: string }, index: number) => ({
      name: turn.filename,
      index,
    }));

    it.each(gptOssTurns)('decodes gpt-oss turn $name: reasoning with status null, then the call', async ({ index }) => {
      const body = gptOss.turns[index].response.body;
      upstream.handler = (_req, res) => sendJson(res, 200, body);

      const events = await collect(client.infer(modelRequest()));

      const [reasoning, call] = body.output;
      expect(events).toEqual([
        { type: 'reasoning.start', key: reasoning.id },
        { type: 'reasoning.done', key: reasoning.id, text: reasoning.content[0].text },
        { type: 'call.start', key: call.id, call_id: call.call_id, name: call.name },
        { type: 'call.done', key: call.id, call_id: call.call_id, name: call.name, arguments: call.arguments },
        {
          type: 'usage',
          usage: {
            input_tokens: body.usage.input_tokens,
            output_tokens: body.usage.output_tokens,
            total_tokens: body.usage.total_tokens,
            input_tokens_details: { cached_tokens: body.usage.input_tokens_details.cached_tokens },
            output_tokens_details: { reasoning_tokens: body.usage.output_tokens_details.reasoning_tokens },
          },
        },
        { type: 'finish', status: 'completed' },
      ]);
    });

    it('decodes gpt-oss turn t1 to the exact events', async () => {
      upstream.handler = (_req, res) => sendJson(res, 200, gptOss.turns[0].response.body);
      const events = await collect(client.infer(modelRequest()));
      expect(events.slice(0, 4)).toEqual([
        { type: 'reasoning.start', key: 'rs_99dcd006b8361f42' },
        { type: 'reasoning.done', key: 'rs_99dcd006b8361f42', text: 'We need to use get_job_status.' },
        { type: 'call.start', key: 'fc_a8ec7f8606f82fcb', call_id: 'call_a8ec7f8606f82fcb', name: 'get_job_status' },
        {
          type: 'call.done',
          key: 'fc_a8ec7f8606f82fcb',
          call_id: 'call_a8ec7f8606f82fcb',
          name: 'get_job_status',
          arguments: '{"job_id":"job-382"}',
        },
      ]);
      expect(events[4]).toEqual({
        type: 'usage',
        usage: {
          input_tokens: 439,
          output_tokens: 36,
          total_tokens: 475,
          input_tokens_details: { cached_tokens: 432 },
          output_tokens_details: { reasoning_tokens: 18 },
        },
      });
    });

    it('sends gpt-oss continuation input exactly as vLLM received it', async () => {
      const recorded = gptOss.turns[1].request.body;
      upstream.handler = (_req, res) => sendJson(res, 200, gptOss.turns[1].response.body);

      await collect(client.infer(modelRequest({ model: recorded.model, input: recorded.input as ModelItem[], tools: recorded.tools, tool_choice: 'auto' })));

      const sent = upstream.requests[0].body as JsonObject;
      expect(sent.input).toEqual(recorded.input);
      expect(sent.tools).toEqual(recorded.tools);
      expect(sent.previous_response_id).toBeUndefined();
      expect(sent.store).toBe(false);
    });
  });

  describe('streamed events in vLLM shapes', () => {
    const reasoningThenMessage = [
      { type: 'response.created', sequence_number: 0, response: { id: 'resp_1', status: 'in_progress', output: [] } },
      { type: 'response.in_progress', sequence_number: 1, response: { id: 'resp_1', status: 'in_progress' } },
      {
        type: 'response.output_item.added',
        output_index: 0,
        item: { id: 'rs_1', type: 'reasoning', summary: [], content: [], status: 'in_progress' },
      },
      { type: 'response.reasoning_part.added', item_id: 'rs_1', output_index: 0, content_index: 0, part: { type: 'reasoning_text', text: '' } },
      { type: 'response.reasoning_text.delta', item_id: 'rs_1', output_index: 0, content_index: 0, delta: 'User greets' },
      { type: 'response.reasoning_text.delta', item_id: 'rs_1', output_index: 0, content_index: 0, delta: '.' },
      { type: 'response.reasoning_text.done', item_id: 'rs_1', output_index: 0, content_index: 0, text: 'User greets.' },
      { type: 'response.reasoning_part.done', item_id: 'rs_1', output_index: 0, content_index: 0, part: { type: 'reasoning_text', text: 'User greets.' } },
      {
        type: 'response.output_item.done',
        output_index: 0,
        item: {
          id: 'rs_1',
          type: 'reasoning',
          summary: [],
          content: [{ type: 'reasoning_text', text: 'User greets.' }],
          encrypted_content: null,
          status: 'completed',
        },
      },
      {
        type: 'response.output_item.added',
        output_index: 1,
        item: { id: 'msg_1', type: 'message', role: 'assistant', content: [], status: 'in_progress' },
      },
      { type: 'response.content_part.added', item_id: 'msg_1', output_index: 1, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } },
      { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 1, content_index: 0, delta: 'Hel', logprobs: [] },
      { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 1, content_index: 0, delta: 'lo!', logprobs: [] },
      { type: 'response.output_text.done', item_id: 'msg_1', output_index: 1, content_index: 0, text: 'Hello!', logprobs: [] },
      { type: 'response.content_part.done', item_id: 'msg_1', output_index: 1, content_index: 0, part: { type: 'output_text', text: 'Hello!', annotations: [] } },
      {
        type: 'response.output_item.done',
        output_index: 1,
        item: {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Hello!', annotations: [], logprobs: null }],
        },
      },
      {
        type: 'response.completed',
        response: {
          id: 'resp_1',
          status: 'completed',
          kv_transfer_params: { remote_block_ids: [1, 2] },
          usage: {
            input_tokens: 20,
            output_tokens: 9,
            total_tokens: 29,
            input_tokens_details: { cached_tokens: 16, cached_tokens_per_turn: [16] },
            output_tokens_details: { reasoning_tokens: 4, tool_output_tokens: 0 },
          },
        },
      },
    ];

    it('maps reasoning then a message, translating the reasoning part, dropping duplicate events, tolerating [DONE]', async () => {
      upstream.handler = (_req, res) => sendSse(res, [...reasoningThenMessage, '[DONE]']);

      const events = await collect(client.infer(modelRequest({ stream: true })));

      expect(events).toEqual([
        { type: 'reasoning.start', key: 'rs_1' },
        { type: 'reasoning.part', key: 'rs_1' },
        { type: 'reasoning.delta', key: 'rs_1', delta: 'User greets' },
        { type: 'reasoning.delta', key: 'rs_1', delta: '.' },
        { type: 'reasoning.done', key: 'rs_1', text: 'User greets.' },
        { type: 'message.start', key: 'msg_1' },
        { type: 'message.delta', key: 'msg_1', delta: 'Hel' },
        { type: 'message.delta', key: 'msg_1', delta: 'lo!' },
        { type: 'message.done', key: 'msg_1', text: 'Hello!' },
        {
          type: 'usage',
          usage: {
            input_tokens: 20,
            output_tokens: 9,
            total_tokens: 29,
            input_tokens_details: { cached_tokens: 16 },
            output_tokens_details: { reasoning_tokens: 4 },
          },
        },
        { type: 'finish', status: 'completed' },
      ]);
      expect(JSON.stringify(events)).not.toContain('kv_transfer_params');
    });

    it('accepts the spec and summary reasoning delta names, keeping summaries apart', async () => {
      upstream.handler = (_req, res) =>
        sendSse(res, [
          { type: 'response.output_item.added', output_index: 0, item: { id: 'rs_2', type: 'reasoning', summary: [] } },
          { type: 'response.reasoning.delta', item_id: 'rs_2', output_index: 0, delta: 'a' },
          { type: 'response.reasoning_summary_text.delta', item_id: 'rs_2', output_index: 0, summary_index: 0, delta: 'sum' },
          { type: 'response.reasoning_summary_part.added', item_id: 'rs_2', output_index: 0, summary_index: 0 },
          { type: 'response.reasoning_summary.delta', item_id: 'rs_2', output_index: 0, summary_index: 0, delta: 'mary' },
          { type: 'response.completed', response: { status: 'completed' } },
        ]);

      const events = await collect(client.infer(modelRequest({ stream: true })));

      expect(events).toEqual([
        { type: 'reasoning.start', key: 'rs_2' },
        { type: 'reasoning.delta', key: 'rs_2', delta: 'a' },
        { type: 'reasoning.delta', key: 'rs_2', delta: 'sum' },
        { type: 'reasoning.delta', key: 'rs_2', delta: 'mary' },
        { type: 'reasoning.done', key: 'rs_2', text: 'a', summary: ['summary'] },
        { type: 'usage', usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0, ...zeroDetails } },
        { type: 'finish', status: 'completed' },
      ]);
    });

    it('completes items whose output_item.done never came from the terminal response', async () => {
      upstream.handler = (_req, res) =>
        sendSse(res, [
          { type: 'response.output_item.added', output_index: 0, item: { id: 'msg_9', type: 'message', role: 'assistant', content: [] } },
          { type: 'response.output_text.delta', item_id: 'msg_9', output_index: 0, delta: 'The answer is' },
          {
            type: 'response.incomplete',
            response: {
              status: 'incomplete',
              incomplete_details: { reason: 'max_output_tokens' },
              output: [
                { id: 'msg_9', type: 'message', role: 'assistant', status: 'incomplete', content: [{ type: 'output_text', text: 'The answer is', annotations: [] }] },
                { id: 'fc_late', type: 'function_call', call_id: 'call_late', name: 'lookup', arguments: '{}', status: 'completed' },
              ],
              usage: { input_tokens: 5, output_tokens: 3, total_tokens: 8 },
            },
          },
        ]);

      const events = await collect(client.infer(modelRequest({ stream: true })));

      expect(events).toEqual([
        { type: 'message.start', key: 'msg_9' },
        { type: 'message.delta', key: 'msg_9', delta: 'The answer is' },
        { type: 'message.done', key: 'msg_9', text: 'The answer is' },
        { type: 'call.start', key: 'fc_late', call_id: 'call_late', name: 'lookup' },
        { type: 'call.done', key: 'fc_late', call_id: 'call_late', name: 'lookup', arguments: '{}' },
        { type: 'usage', usage: { input_tokens: 5, output_tokens: 3, total_tokens: 8, ...zeroDetails } },
        { type: 'finish', status: 'incomplete', reason: 'max_output_tokens' },
      ]);
    });

    it('keys items without an id by output_index and closes them from their deltas', async () => {
      upstream.handler = (_req, res) =>
        sendSse(res, [
          { type: 'response.output_item.added', output_index: 0, item: { type: 'function_call', call_id: 'call_x', name: 'f', arguments: '' } },
          { type: 'response.function_call_arguments.delta', output_index: 0, delta: '{"a":' },
          { type: 'response.function_call_arguments.delta', output_index: 0, delta: '1}' },
          { type: 'response.completed', response: { status: 'completed', usage: { input_tokens: 1, output_tokens: 2 } } },
        ]);

      const events = await collect(client.infer(modelRequest({ stream: true })));

      expect(events).toEqual([
        { type: 'call.start', key: 'output_0', call_id: 'call_x', name: 'f' },
        { type: 'call.delta', key: 'output_0', delta: '{"a":' },
        { type: 'call.delta', key: 'output_0', delta: '1}' },
        { type: 'call.done', key: 'output_0', call_id: 'call_x', name: 'f', arguments: '{"a":1}' },
        { type: 'usage', usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3, ...zeroDetails } },
        { type: 'finish', status: 'completed' },
      ]);
    });

    it('decodes a JSON answer to a streamed request as a whole response', async () => {
      upstream.handler = (_req, res) => sendJson(res, 200, gptOss.turns[0].response.body);
      const events = await collect(client.infer(modelRequest({ stream: true })));
      expect(events.map((event) => event.type)).toEqual(['reasoning.start', 'reasoning.done', 'call.start', 'call.done', 'usage', 'finish']);
    });
  });

  describe('non-streamed answers', () => {
    it('uses the item id when a function call has no call_id, and reports incomplete', async () => {
      upstream.handler = (_req, res) =>
        sendJson(res, 200, {
          id: 'resp_1',
          object: 'response',
          status: 'incomplete',
          incomplete_details: { reason: 'content_filter' },
          output: [
            {
              id: 'msg_1',
              type: 'message',
              role: 'assistant',
              status: null,
              phase: 'commentary',
              content: [
                { type: 'output_text', text: 'a' },
                { type: 'output_text', text: 'b' },
              ],
            },
            { id: 'fc_1', type: 'function_call', name: 'f', arguments: { x: 1 }, status: null },
            { id: 'ws_1', type: 'web_search_call', status: 'completed' },
            { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 's' }], encrypted_content: 'enc' },
          ],
        });

      const events = await collect(client.infer(modelRequest()));

      expect(events).toEqual([
        { type: 'message.start', key: 'msg_1', phase: 'commentary' },
        { type: 'message.done', key: 'msg_1', text: 'ab' },
        { type: 'call.start', key: 'fc_1', call_id: 'fc_1', name: 'f' },
        { type: 'call.done', key: 'fc_1', call_id: 'fc_1', name: 'f', arguments: '{"x":1}' },
        { type: 'reasoning.start', key: 'rs_1' },
        { type: 'reasoning.done', key: 'rs_1', text: '', summary: ['s'], encrypted_content: 'enc' },
        { type: 'usage', usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0, ...zeroDetails } },
        { type: 'finish', status: 'incomplete', reason: 'content_filter' },
      ]);
    });

    it('fails with upstream_failed when the response status is failed', async () => {
      upstream.handler = (_req, res) => sendJson(res, 200, { object: 'response', status: 'failed', output: [], error: { code: 'server_error', message: 'engine died' } });
      await expect(answerOf(collect(client.infer(modelRequest())))).resolves.toMatchObject({ status: 502, code: 'upstream_failed', message: 'engine died' });
    });
  });

  describe('failures', () => {
    it('errors with upstream_failed and the upstream message on response.failed', async () => {
      upstream.handler = (_req, res) =>
        sendSse(res, [
          { type: 'response.created', response: { status: 'in_progress' } },
          { type: 'response.failed', response: { status: 'failed', error: { code: 'server_error', message: 'CUDA out of memory' } } },
        ]);
      await expect(answerOf(collect(client.infer(modelRequest({ stream: true }))))).resolves.toMatchObject({
        name: 'UpstreamUnavailableError',
        status: 502,
        code: 'upstream_failed',
        message: 'CUDA out of memory',
      });
    });

    it('errors with upstream_failed on an error event', async () => {
      upstream.handler = (_req, res) => sendSse(res, [{ type: 'error', code: 'bad', message: 'context length exceeded' }]);
      await expect(answerOf(collect(client.infer(modelRequest({ stream: true }))))).resolves.toMatchObject({
        status: 502,
        code: 'upstream_failed',
        message: 'context length exceeded',
      });
    });

    it.each([
      ['the body ends', [{ type: 'response.created', response: {} }]],
      ['[DONE] arrives', [{ type: 'response.created', response: {} }, '[DONE]']],
    ])('errors with upstream_stream_error when %s before a terminal event', async (_case, payloads) => {
      upstream.handler = (_req, res) => sendSse(res, payloads as Array<string | object>);
      await expect(answerOf(collect(client.infer(modelRequest({ stream: true }))))).resolves.toMatchObject({
        status: 502,
        code: 'upstream_stream_error',
      });
    });

    it('errors with upstream_stream_error on a malformed chunk', async () => {
      upstream.handler = (_req, res) => sendSse(res, ['{"type":"response.output_text.delta","delta":'], { end: false });
      await expect(answerOf(collect(client.infer(modelRequest({ stream: true }))))).resolves.toMatchObject({
        status: 502,
        code: 'upstream_stream_error',
        message: expect.stringContaining('malformed'),
      });
      await upstream.nextDisconnect();
    });

    it('errors with upstream_stream_error when the upstream resets mid-stream', async () => {
      upstream.handler = async (_req, res) => {
        startSse(res);
        res.write(`data: ${JSON.stringify(reasoningAdded)}\n\n`);
        await sleep(10);
        res.socket?.resetAndDestroy();
      };
      const events: ModelEvent[] = [];
      await expect(
        answerOf(
          new Promise((resolve, reject) =>
            client.infer(modelRequest({ stream: true })).subscribe({ next: (e) => events.push(e), error: reject, complete: () => resolve(undefined) }),
          ),
        ),
      ).resolves.toMatchObject({ status: 502, code: 'upstream_stream_error' });
      expect(events).toEqual([{ type: 'reasoning.start', key: 'rs_1' }]);
    });

    it('errors with 504 when the stream stalls mid-way (idle timeout)', async () => {
      client.close();
      client = new ResponsesDialectClient(upstreamConfig(upstream.baseUrl), testTimeouts({ idleMs: SHORT_MS }));
      upstream.handler = (_req, res) => {
        startSse(res);
        res.write(`data: ${JSON.stringify(reasoningAdded)}\n\n`);
      };
      await expect(answerOf(collect(client.infer(modelRequest({ stream: true }))))).resolves.toMatchObject({
        status: 504,
        message: expect.stringContaining('idle timeout'),
      });
      await upstream.nextDisconnect();
    });

    it('errors with 504 when no headers come (first-byte timeout)', async () => {
      client.close();
      client = new ResponsesDialectClient(upstreamConfig(upstream.baseUrl), testTimeouts({ firstByteMs: SHORT_MS }));
      upstream.handler = () => undefined;
      await expect(answerOf(collect(client.infer(modelRequest())))).resolves.toMatchObject({ status: 504, code: 'upstream_timeout' });
    });

    it('errors with 502 when the upstream port is closed', async () => {
      const port = await deadPort();
      const dead = new ResponsesDialectClient(upstreamConfig(`http://127.0.0.1:${port}/v1`), testTimeouts());
      await expect(answerOf(collect(dead.infer(modelRequest())))).resolves.toMatchObject({
        status: 502,
        message: 'The model server is unreachable.',
      });
      // The URL called is the operator's detail, never the caller's message.
      await expect(collect(dead.infer(modelRequest()))).rejects.toMatchObject({ detail: expect.stringContaining(`http://127.0.0.1:${port}/v1/responses`) });
      dead.close();
    });

    it('passes a 400 through with the upstream message', async () => {
      upstream.handler = (_req, res) =>
        sendJson(res, 400, { object: 'error', message: "'max_output_tokens' is too large: 100000.", type: 'BadRequestError', param: null, code: 400 });
      await expect(answerOf(collect(client.infer(modelRequest({ stream: true }))))).resolves.toMatchObject({
        status: 400,
        message: "'max_output_tokens' is too large: 100000.",
      });
    });

    it('errors with upstream_bad_response on a truncated JSON body', async () => {
      upstream.handler = (_req, res) => sendJson(res, 200, JSON.stringify(gptOss.turns[0].response.body).slice(0, 200));
      await expect(answerOf(collect(client.infer(modelRequest())))).resolves.toMatchObject({ status: 502, code: 'upstream_bad_response' });
    });
  });

  describe('cancellation', () => {
    it('unsubscribing aborts the request: the upstream sees the disconnect', async () => {
      upstream.handler = (_req, res) => {
        startSse(res);
        res.write(`data: ${JSON.stringify(reasoningAdded)}\n\n`);
      };
      const first = new Promise<ModelEvent>((resolve) => {
        const subscription: Subscription = client.infer(modelRequest({ stream: true })).subscribe((event) => {
          resolve(event);
          subscription?.unsubscribe();
        });
      });
      expect(await first).toEqual({ type: 'reasoning.start', key: 'rs_1' });
      await upstream.nextDisconnect();
      expect(upstream.disconnects).toHaveLength(1);
    });

    it('unsubscribing before headers arrive aborts too', async () => {
      upstream.handler = () => undefined;
      const subscription = client.infer(modelRequest()).subscribe();
      while (upstream.requests.length === 0) await sleep(2);
      subscription.unsubscribe();
      await upstream.nextDisconnect();
    });

    it('is cold: nothing is sent until subscription', async () => {
      const events = client.infer(modelRequest());
      await sleep(20);
      expect(upstream.requests).toHaveLength(0);
      upstream.handler = (_req, res) => sendJson(res, 200, { status: 'completed', output: [] });
      await collect(events);
      await collect(events);
      expect(upstream.requests).toHaveLength(2);
    });
  });

  describe('request mapping', () => {
    it('sends every supported field, store false, and drops null and unknown ones', async () => {
      upstream.handler = (_req, res) => sendJson(res, 200, { status: 'completed', output: [] });

      await collect(
        client.infer({
          model: 'google/gemma-4-26B-A4B-it',
          instructions: 'Be brief.',
          input: [
            { type: 'message', role: 'developer', content: 'Use tools.' },
            {
              type: 'message',
              role: 'user',
              content: [
                { type: 'input_text', text: 'Weather?' },
                { type: 'input_image', image_url: 'data:image/png;base64,AA', detail: 'low' },
              ],
            },
            { type: 'reasoning', id: 'rs_1', summary: [], content: [{ type: 'reasoning_text', text: 'Need weather.' }], encrypted_content: null, status: 'completed' },
            { type: 'reasoning', id: 'rs_empty', summary: [], content: [] },
            { type: 'reasoning', summary: [], encrypted_content: 'opaque' },
            { type: 'function_call', id: '', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', namespace: 'weather', status: 'completed' },
            { type: 'function_call', id: 'fc_2', call_id: 'call_2', name: 'get_time', arguments: '{}', status: 'completed' },
            { type: 'function_call_output', id: 'fco_1', call_id: 'call_1', output: '{"temp":21}', status: 'completed' },
            { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', phase: 'final_answer', content: [{ type: 'output_text', text: 'It is 21.', annotations: [] }] },
          ],
          tools: [{ type: 'function', name: 'get_weather', description: null, parameters: { type: 'object' }, strict: true }],
          tool_choice: { type: 'function', name: 'get_weather' },
          parallel_tool_calls: false,
          temperature: 0.2,
          top_p: null,
          max_output_tokens: 512,
          presence_penalty: 0.1,
          frequency_penalty: undefined,
          top_logprobs: 2,
          text: { format: { type: 'json_object' } },
          reasoning: { effort: 'low', summary: null },
          user: 'u1',
          safety_identifier: 'sid',
          prompt_cache_key: 'pck',
          stream: false,
        }),
      );

      const sent = upstream.requests[0].body as JsonObject;
      expect(sent).toEqual({
        model: 'google/gemma-4-26B-A4B-it',
        instructions: 'Be brief.',
        input: [
          { type: 'message', role: 'developer', content: 'Use tools.' },
          {
            type: 'message',
            role: 'user',
            content: [
              { type: 'input_text', text: 'Weather?' },
              { type: 'input_image', image_url: 'data:image/png;base64,AA', detail: 'low' },
            ],
          },
          { type: 'reasoning', id: 'rs_1', summary: [], content: [{ type: 'reasoning_text', text: 'Need weather.' }] },
          { type: 'reasoning', id: expect.stringMatching(/^rs_[0-9a-f]{24}$/), summary: [], encrypted_content: 'opaque' },
          { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
          { type: 'function_call', id: 'fc_2', call_id: 'call_2', name: 'get_time', arguments: '{}' },
          { type: 'function_call_output', call_id: 'call_1', output: '{"temp":21}' },
          { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'It is 21.', annotations: [] }] },
        ],
        tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object' }, strict: true }],
        tool_choice: { type: 'function', name: 'get_weather' },
        parallel_tool_calls: false,
        temperature: 0.2,
        max_output_tokens: 512,
        presence_penalty: 0.1,
        top_logprobs: 2,
        text: { format: { type: 'json_object' } },
        reasoning: { effort: 'low' },
        user: 'u1',
        stream: false,
        store: false,
      });
      expect(upstream.requests[0].headers.accept).toBe('application/json');
    });

    it('omits tools, tool_choice and parallel_tool_calls when there are no tools, and fills the default model', async () => {
      client.close();
      client = new ResponsesDialectClient(upstreamConfig(upstream.baseUrl, { defaultModel: 'fallback-model' }), testTimeouts());
      upstream.handler = (_req, res) => sendSse(res, [{ type: 'response.completed', response: { status: 'completed' } }]);

      await collect(client.infer(modelRequest({ model: '', tool_choice: 'auto', parallel_tool_calls: true, reasoning: { effort: null }, instructions: '', stream: true })));

      expect(upstream.requests[0].body).toEqual({
        model: 'fallback-model',
        input: [{ type: 'message', role: 'user', content: 'Hello' }],
        stream: true,
        store: false,
      });
      expect(upstream.requests[0].headers.accept).toBe('text/event-stream');
    });
  });
});

const reasoningAdded = {
  type: 'response.output_item.added',
  output_index: 0,
  item: { id: 'rs_1', type: 'reasoning', summary: [], status: 'in_progress' },
};
