import { createOpenAI } from '@ai-sdk/openai';
import { Agent, OpenAIResponsesModel, run, setTracingDisabled, tool as agentTool } from '@openai/agents';
import { generateText, stepCountIs, streamText, tool as aiTool, type ModelMessage } from 'ai';
import OpenAI from 'openai';
import { z } from 'zod';
import { startStack, type GatewayStack } from './support/gateway-harness.js';

/**
 * `include: ["reasoning.encrypted_content"]` with `store: false`: the
 * gateway stores nothing, so the reasoning travels with the client as an
 * encrypted, authenticated token (keyed by `state.compactionKey`), and comes
 * back to the model as the model wrote it. The AI SDK drops reasoning
 * without it ("Reasoning parts without encrypted content are not supported
 * when store is false").
 */
const MODEL = 'switchyard-sim';
/** The AI SDK sends `reasoning` and `include` only for ids it takes for reasoning models. */
const REASONING_MODEL = 'gpt-5-switchyard';
const KEY = 'reasoning-test-key-0123456789';

// The Agents SDK would otherwise export traces to api.openai.com.
setTracingDisabled(true);

describe('reasoning round-trips through store:false clients as encrypted_content', () => {
  let stack: GatewayStack;
  beforeAll(async () => {
    stack = await startStack({ config: { state: { compactionKey: KEY } } });
  });
  afterAll(() => stack.close());

  /** What the model was shown on the latest upstream request, as text. */
  const upstreamSaw = (): string => JSON.stringify((stack.simulator.requests.at(-1)!.body as any).input);
  const upstreamReasoning = (): any[] => (stack.simulator.requests.at(-1)!.body as any).input.filter((i: any) => i.type === 'reasoning');

  describe('AI SDK (ai + @ai-sdk/openai)', () => {
    const sent: any[] = [];
    beforeEach(() => sent.splice(0));
    const provider = () =>
      createOpenAI({
        baseURL: stack.url,
        apiKey: 'sk-test',
        fetch: async (url, init) => {
          if (typeof init?.body === 'string') sent.push(JSON.parse(init.body));
          return fetch(url, init);
        },
      });
    const storeFalse = { openai: { store: false, include: ['reasoning.encrypted_content'] } };
    const sentReasoning = (body: any) => body.input.filter((i: any) => i.type === 'reasoning');

    it('a tool loop: step two sends the sealed reasoning back and the model sees its own reasoning again, not a summary', async () => {
      const result = await generateText({
        model: provider().responses(REASONING_MODEL),
        prompt: '[[reason Bergen needs the weather tool.]] What is the weather in "Bergen"?',
        tools: { get_weather: aiTool({ description: 'Get the weather', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `rain in ${city}` }) },
        stopWhen: stepCountIs(3),
        providerOptions: storeFalse,
      });
      expect(result.text).toBe('Based on the tool result: rain in Bergen');
      expect(result.warnings ?? []).toEqual([]);
      expect(result.steps.flatMap((s) => s.warnings ?? [])).toEqual([]);
      expect(sent).toHaveLength(2);
      expect(sent[1].store).toBe(false);
      // No summary was asked for: the client holds only the token, and the model still sees the text.
      expect(sentReasoning(sent[1])).toEqual([{ type: 'reasoning', id: expect.stringMatching(/^rs_/), encrypted_content: expect.stringMatching(/^syr1\./), summary: [] }]);
      expect(sent[1].input.some((i: any) => i.type === 'item_reference')).toBe(false);
      expect(upstreamReasoning()).toEqual([expect.objectContaining({ content: [{ type: 'reasoning_text', text: 'Bergen needs the weather tool.' }] })]);
    });

    it('a second turn built from the first turn’s messages, streamed, with a summary shown', async () => {
      const openai = provider();
      const first = streamText({
        model: openai.responses(REASONING_MODEL),
        prompt: '[[reason The user likes short answers.]] [[say Noted.]]',
        providerOptions: { openai: { ...storeFalse.openai, reasoningSummary: 'auto' } },
      });
      expect(await first.text).toBe('Noted.');
      expect(await first.reasoningText).toBe('The user likes short answers.');
      const messages: ModelMessage[] = [
        { role: 'user', content: 'Remember my preference.' },
        ...(await first.response).messages,
        { role: 'user', content: 'And now? [[say Short.]]' },
      ];
      const second = await generateText({ model: openai.responses(REASONING_MODEL), messages, providerOptions: storeFalse });
      expect(second.text).toBe('Short.');
      expect(second.warnings ?? []).toEqual([]);
      expect(sentReasoning(sent[1])).toEqual([
        {
          type: 'reasoning',
          id: expect.any(String),
          encrypted_content: expect.stringMatching(/^syr1\./),
          summary: [{ type: 'summary_text', text: 'The user likes short answers.' }],
        },
      ]);
      expect(upstreamSaw()).toContain('The user likes short answers.');
    });
  });

  describe('@openai/agents', () => {
    it('a store:false tool loop, streamed: the second model call carries the sealed reasoning and the model reads it', async () => {
      const sent: any[] = [];
      const client = new OpenAI({
        baseURL: stack.url,
        apiKey: 'sk-test',
        maxRetries: 0,
        fetch: async (url, init) => {
          if (typeof init?.body === 'string') sent.push(JSON.parse(init.body));
          return fetch(url, init);
        },
      });
      const weather = agentTool({ name: 'get_weather', description: 'Get the weather', parameters: z.object({ city: z.string() }), execute: async ({ city }) => `fog in ${city}` });
      const agent = new Agent({
        name: 'Forecaster',
        instructions: 'Answer briefly.',
        model: new OpenAIResponsesModel(client as any, MODEL),
        tools: [weather],
        modelSettings: { store: false, reasoning: { summary: 'auto' }, providerData: { include: ['reasoning.encrypted_content'] } },
      });
      const streamed = await run(agent, '[[reason Fog is likely.]] What is the weather in "Leeds"?', { stream: true });
      for await (const _event of streamed);
      await streamed.completed;
      expect(streamed.finalOutput).toBe('Based on the tool result: fog in Leeds');
      expect(sent).toHaveLength(2);
      expect(sent[0]).toMatchObject({ store: false, include: ['reasoning.encrypted_content'] });
      const reasoning = sent[1].input.find((i: any) => i.type === 'reasoning');
      expect(reasoning.encrypted_content).toMatch(/^syr1\./);
      expect(upstreamReasoning()).toEqual([expect.objectContaining({ content: [{ type: 'reasoning_text', text: 'Fog is likely.' }] })]);
    });
  });

  describe('openai SDK', () => {
    let client: OpenAI;
    beforeAll(() => {
      client = stack.openai;
    });

    it('blocking: the token is opaque (the text is not readable in it), goes back as input, and reaches the model as its reasoning', async () => {
      const first = await client.responses.create({
        model: MODEL,
        input: '[[reason Secret plan: add 2 and 2.]] [[say 4]]',
        store: false,
        include: ['reasoning.encrypted_content'],
      });
      const reasoning = first.output[0] as OpenAI.Responses.ResponseReasoningItem;
      expect(reasoning).toMatchObject({ type: 'reasoning', encrypted_content: expect.stringMatching(/^syr1\.[A-Za-z0-9_-]+$/) });
      expect(Buffer.from(reasoning.encrypted_content!.slice(5), 'base64url').toString('latin1')).not.toContain('Secret plan');
      // Sent back as a client that stores nothing does: the output items, then the next message.
      const second = await client.responses.create({
        model: MODEL,
        store: false,
        input: [
          { type: 'reasoning', id: reasoning.id, summary: [], encrypted_content: reasoning.encrypted_content },
          ...first.output.slice(1),
          { role: 'user', content: 'Again? [[say 4 again]]' },
        ] as any,
      });
      expect(second.output_text).toBe('4 again');
      expect(upstreamReasoning()).toEqual([expect.objectContaining({ content: [{ type: 'reasoning_text', text: 'Secret plan: add 2 and 2.' }] })]);
    });

    it('streaming: the done item carries the token the completed response has', async () => {
      const stream = client.responses.stream({ model: MODEL, input: '[[reason Stream it.]] [[say ok]]', store: false, include: ['reasoning.encrypted_content'] });
      const done: any[] = [];
      stream.on('response.output_item.done', (e) => done.push(e.item));
      const final = await stream.finalResponse();
      const token = (final.output[0] as any).encrypted_content;
      expect(token).toMatch(/^syr1\./);
      expect(done[0].encrypted_content).toBe(token);
    });

    it('without the include, no encrypted_content field at all (as OpenAI omits it)', async () => {
      const plain = await client.responses.create({ model: MODEL, input: '[[reason Nothing to seal.]] [[say ok]]', store: false });
      expect(plain.output[0]).not.toHaveProperty('encrypted_content');
    });

    it('a tampered token is a 400 naming the field, and nothing reaches the model', async () => {
      const first = await client.responses.create({ model: MODEL, input: '[[reason Honest.]] [[say ok]]', store: false, include: ['reasoning.encrypted_content'] });
      const token = (first.output[0] as any).encrypted_content as string;
      const bytes = Buffer.from(token.slice(5), 'base64url');
      bytes[20] ^= 0x01;
      const before = stack.simulator.requests.length;
      const error = await client.responses
        .create({
          model: MODEL,
          store: false,
          input: [
            { role: 'user', content: 'hi' },
            { type: 'reasoning', summary: [], encrypted_content: `syr1.${bytes.toString('base64url')}` },
          ] as any,
        })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ param: 'input[1].encrypted_content', code: 'invalid_encrypted_content' });
      expect(stack.simulator.requests.length).toBe(before);
    });
  });
});
