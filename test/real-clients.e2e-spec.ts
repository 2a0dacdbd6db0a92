import { createOpenAI } from '@ai-sdk/openai';
import { Agent, OpenAIConversationsSession, OpenAIResponsesModel, run, setTracingDisabled, tool as agentTool } from '@openai/agents';
import { generateText, stepCountIs, streamText, tool as aiTool } from 'ai';
import { z } from 'zod';
import { startStack, type GatewayStack } from './support/gateway-harness.js';

/**
 * Clients people run against a Responses gateway, unmodified, against the
 * simulated upstream: the OpenAI Agents SDK (sessions on the Conversations
 * API, `previousResponseId` chains) and the Vercel AI SDK (`store: true`
 * continuations made of `item_reference` items).
 */

// The Agents SDK would otherwise export traces to api.openai.com.
setTracingDisabled(true);

const MODEL = 'switchyard-sim';

/** Every upstream request's input item types, as the gateway sent them. */
function upstreamInputs(stack: GatewayStack, dialect: 'responses' | 'chat'): string[][] {
  return stack.simulator.requests.map((r) => {
    const body = r.body as any;
    return dialect === 'responses' ? body.input.map((i: any) => i.type) : body.messages.map((m: any) => m.role);
  });
}

describe.each(['responses', 'chat'] as const)('real clients, unmodified (%s dialect)', (dialect) => {
  let stack: GatewayStack;
  beforeAll(async () => {
    stack = await startStack({ dialect });
  });
  afterAll(() => stack.close());
  beforeEach(() => stack.simulator.requests.splice(0));

  describe('@openai/agents', () => {
    const weatherCalls: string[] = [];
    const weather = agentTool({
      name: 'get_weather',
      description: 'Get current weather for a city',
      parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => {
        weatherCalls.push(city);
        return `sunny in ${city}`;
      },
    });
    const agent = () => new Agent({ name: 'Forecaster', instructions: 'Answer briefly.', model: new OpenAIResponsesModel(stack.openai as any, MODEL), tools: [weather] });

    it('keeps a conversation in OpenAIConversationsSession across runs, reading canonical items back', async () => {
      const session = new OpenAIConversationsSession({ client: stack.openai as any });
      const first = await run(agent(), 'What is the weather in "Paris"?', { session });
      expect(first.finalOutput).toBe('Based on the tool result: sunny in Paris');
      expect(weatherCalls.at(-1)).toBe('Paris');

      // The session reads the stored items back through the Conversations API and replays them.
      const history = await session.getItems();
      expect(history.map((i: any) => i.type ?? 'message')).toEqual(['message', 'function_call', 'function_call_result', 'message']);
      expect((history[0] as any).content).toEqual([{ type: 'input_text', text: 'What is the weather in "Paris"?' }]);

      const second = await run(agent(), '[[say Noted, thanks.]]', { session });
      expect(second.finalOutput).toBe('Noted, thanks.');
      // The second turn reached the model with the whole first turn before it.
      const last = upstreamInputs(stack, dialect).at(-1)!;
      expect(last.length).toBeGreaterThanOrEqual(5);

      const conversationId = await session.getSessionId();
      const items = await stack.openai.conversations.items.list(conversationId, { order: 'asc' });
      expect(items.data.every((i: any) => typeof i.id === 'string' && i.status === 'completed')).toBe(true);
      expect(items.data.filter((i: any) => i.type === 'message').map((i: any) => Array.isArray(i.content))).toEqual([true, true, true, true]);
    });

    it('streams a run with reasoning and a tool call', async () => {
      const streamed = await run(agent(), '[[reason Check the forecast.]] What is the weather in "Turku"?', { stream: true });
      const kinds = new Set<string>();
      for await (const event of streamed) kinds.add(event.type === 'run_item_stream_event' ? `item:${event.item.type}` : event.type);
      await streamed.completed;
      expect(streamed.finalOutput).toBe('Based on the tool result: sunny in Turku');
      expect([...kinds]).toEqual(
        expect.arrayContaining(['raw_model_stream_event', 'item:reasoning_item', 'item:tool_call_item', 'item:tool_call_output_item', 'item:message_output_item']),
      );
    });

    it('chains runs with previousResponseId', async () => {
      const first = await run(agent(), 'What is the weather in "Lisbon"?');
      expect(first.finalOutput).toBe('Based on the tool result: sunny in Lisbon');
      expect(first.lastResponseId).toMatch(/^resp_/);
      const second = await run(agent(), '[[say Still sunny?]]', { previousResponseId: first.lastResponseId });
      expect(second.finalOutput).toBe('Still sunny?');
      const stored = await stack.openai.responses.retrieve(second.lastResponseId!);
      expect(stored.previous_response_id).toBe(first.lastResponseId);
      // Only the new user message was sent; the model still saw the earlier call and its output.
      const lastBody = stack.simulator.requests.at(-1)!.body as any;
      const seen = JSON.stringify(dialect === 'responses' ? lastBody.input : lastBody.messages);
      expect(seen).toContain('sunny in Lisbon');
    });
  });

  describe('Vercel AI SDK (ai + @ai-sdk/openai)', () => {
    /** Bodies the AI SDK sent to the gateway, to see its item references on the wire. */
    const sent: any[] = [];
    const provider = () =>
      createOpenAI({
        baseURL: stack.url,
        apiKey: 'sk-test',
        fetch: async (url, init) => {
          if (typeof init?.body === 'string') sent.push(JSON.parse(init.body));
          return fetch(url, init);
        },
      });
    const referencesIn = (body: any): string[] => body.input.filter((i: any) => i.type === 'item_reference').map((i: any) => i.id);
    beforeEach(() => sent.splice(0));
    const weatherTool = () =>
      aiTool({
        description: 'Get current weather for a city',
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }) => `rain in ${city}`,
      });

    it('generateText with a tool, store on: the second step continues through item references', async () => {
      const result = await generateText({
        model: provider().responses(MODEL),
        prompt: '[[reason The weather tool knows.]] What is the weather in "Bergen"?',
        tools: { get_weather: weatherTool() },
        stopWhen: stepCountIs(3),
      });
      expect(result.text).toBe('Based on the tool result: rain in Bergen');
      expect(result.steps).toHaveLength(2);
      expect(result.steps[0].toolCalls.map((c) => c.toolName)).toEqual(['get_weather']);
      expect(result.steps[0].reasoning.length).toBeGreaterThan(0);
      // Step 2 named the first step's reasoning by reference; the gateway sent the stored item to the model.
      expect(sent).toHaveLength(2);
      expect(sent[1].store).not.toBe(false);
      expect(referencesIn(sent[1])).toEqual([expect.stringMatching(/^rs_/)]);
      const step2 = stack.simulator.requests.at(-1)!.body as any;
      const seen = JSON.stringify(dialect === 'responses' ? step2.input : step2.messages);
      expect(seen).toContain('The weather tool knows.');
      expect(seen).not.toContain('item_reference');
    });

    it('continues a finished exchange whose assistant text and reasoning are sent as item references', async () => {
      const openai = provider();
      const first = await generateText({ model: openai.responses(MODEL), prompt: '[[reason Thinking first.]] [[say The first answer.]]' });
      expect(first.text).toBe('The first answer.');
      const second = await generateText({
        model: openai.responses(MODEL),
        messages: [
          { role: 'user', content: '[[reason Thinking first.]] [[say The first answer.]]' },
          ...first.response.messages,
          { role: 'user', content: '[[say The second answer.]]' },
        ],
      });
      expect(second.text).toBe('The second answer.');
      expect(referencesIn(sent[1])).toEqual([expect.stringMatching(/^rs_/), expect.stringMatching(/^msg_/)]);
      const body = stack.simulator.requests.at(-1)!.body as any;
      const seen = JSON.stringify(dialect === 'responses' ? body.input : body.messages);
      expect(seen).toContain('The first answer.');
      expect(seen).not.toContain('item_reference');
    });

    it('a reasoning model id with reasoning options: effort and summary reach the model, references resolve', async () => {
      const openai = provider();
      // The AI SDK treats gpt-5* ids as reasoning models: it sends `reasoning` and references text only after reasoning.
      const model = openai.responses('gpt-5-switchyard');
      const providerOptions = { openai: { reasoningEffort: 'low', reasoningSummary: 'auto' } };
      const first = await generateText({
        model,
        prompt: '[[reason Plan it.]] What is the weather in "Oulu"?',
        tools: { get_weather: weatherTool() },
        stopWhen: stepCountIs(3),
        providerOptions,
      });
      expect(first.text).toBe('Based on the tool result: rain in Oulu');
      expect(sent[0].reasoning).toEqual({ effort: 'low', summary: 'auto' });
      const upstreamBody = stack.simulator.requests.at(-1)!.body as any;
      // Each dialect's own field: `reasoning.effort` for /v1/responses, `reasoning_effort` for chat.
      expect(dialect === 'responses' ? upstreamBody.reasoning?.effort : upstreamBody.reasoning_effort).toBe('low');
      const second = await generateText({
        model,
        messages: [{ role: 'user', content: '[[reason Plan it.]] What is the weather in "Oulu"?' }, ...first.response.messages, { role: 'user', content: '[[say And tomorrow?]]' }],
        tools: { get_weather: weatherTool() },
        providerOptions,
      });
      expect(second.text).toBe('And tomorrow?');
      expect(referencesIn(sent.at(-1)).length).toBeGreaterThanOrEqual(2);
    });

    it('streamText with a tool and with reasoning', async () => {
      const result = streamText({
        model: provider().responses(MODEL),
        prompt: '[[reason Use the tool.]] What is the weather in "Tromsø"?',
        tools: { get_weather: weatherTool() },
        stopWhen: stepCountIs(3),
      });
      let streamedText = '';
      const partTypes = new Set<string>();
      for await (const part of result.fullStream) {
        partTypes.add(part.type);
        if (part.type === 'text-delta') streamedText += part.text;
        if (part.type === 'error') throw part.error;
      }
      expect(streamedText).toBe('Based on the tool result: rain in Tromsø');
      expect(await result.text).toBe(streamedText);
      expect([...partTypes]).toEqual(expect.arrayContaining(['reasoning-start', 'tool-call', 'tool-result', 'text-delta', 'finish']));
      expect((await result.steps).length).toBe(2);
      expect(sent.map((body) => body.stream)).toEqual([true, true]);
      expect(referencesIn(sent[1])).toEqual([expect.stringMatching(/^rs_/)]);
    });

    it('an unknown item reference is a 400 naming it', async () => {
      const response = await fetch(`${stack.url}/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: MODEL,
          input: [
            { role: 'user', content: 'hi' },
            { type: 'item_reference', id: 'rs_does_not_exist' },
          ],
        }),
      });
      expect(response.status).toBe(400);
      const body: any = await response.json();
      expect(body.error).toMatchObject({ type: 'invalid_request_error', param: 'input[1].id', code: 'item_not_found' });
      expect(body.error.message).toContain('rs_does_not_exist');
    });
  });
});

describe.each(['responses', 'chat'] as const)('reasoning summaries clients can show (%s dialect)', (dialect) => {
  let stack: GatewayStack;
  beforeAll(async () => {
    stack = await startStack({ dialect });
  });
  afterAll(() => stack.close());
  const provider = () => createOpenAI({ baseURL: stack.url, apiKey: 'sk-test' });
  const prompt = '[[reason Check the forecast first.]] [[say Rain.]]';

  it('the AI SDK shows the reasoning as its summary, blocking and streaming', async () => {
    const openai = provider();
    // The AI SDK sends `reasoning` only for ids it takes for reasoning models (gpt-5*).
    const blocking = await generateText({ model: openai.responses('gpt-5-switchyard'), prompt, providerOptions: { openai: { reasoningSummary: 'auto' } } });
    expect(blocking.text).toBe('Rain.');
    expect(blocking.reasoningText).toBe('Check the forecast first.');

    const streamed = streamText({ model: openai.responses('gpt-5-switchyard'), prompt, providerOptions: { openai: { reasoningSummary: 'detailed' } } });
    const deltas: string[] = [];
    for await (const part of streamed.fullStream) if (part.type === 'reasoning-delta') deltas.push(part.text);
    expect(deltas.join('')).toBe('Check the forecast first.');
    expect(await streamed.text).toBe('Rain.');
  });

  it("the openai SDK's stream accumulates the summary parts; without a summary asked, none", async () => {
    const stream = stack.openai.responses.stream({ model: MODEL, input: prompt, reasoning: { summary: 'concise' } });
    const names: string[] = [];
    stream.on('event', (e) => names.push(e.type));
    const final = await stream.finalResponse();
    const reasoning = final.output[0] as any;
    expect(reasoning.summary).toEqual([{ type: 'summary_text', text: 'Check the forecast first.' }]);
    expect(names.filter((n) => n.startsWith('response.reasoning_summary'))).toEqual([
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
    ]);
    expect(names.indexOf('response.reasoning_summary_part.done')).toBeLessThan(names.indexOf('response.output_item.done'));
    const plain = await stack.openai.responses.create({ model: MODEL, input: prompt });
    expect((plain.output[0] as any).summary).toEqual([]);
  });
});
