import Anthropic from '@anthropic-ai/sdk';
import { validateGatewayConfig } from '#src/gateway-config.loader.js';
import { configSectionsOf } from '#config/config-section.js';
import { UpstreamModule } from '#upstream/upstream.module.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';

const SIM = 'switchyard-sim';
const MODELS = {
  'gpt-5-mini': { upstreamModel: SIM, contextWindow: 16384, maxOutputTokens: 2048, inputModalities: ['text', 'image'], reasoning: ['low', 'medium', 'high'] },
  small: { upstreamModel: SIM, contextWindow: 2048 },
};

/**
 * The `models` section: public names served by an upstream model, with the
 * metadata clients size requests by, on both upstream dialects. The upstream
 * bodies checked are the ones the simulated model server received.
 */
describe.each(['responses', 'chat'] as const)('model catalog, upstream dialect %s', (dialect) => {
  let stack: GatewayStack;
  const upstreamBody = (): any => stack.simulator.requests.at(-1)!.body;
  const budgetSent = (): number => (dialect === 'responses' ? upstreamBody().max_output_tokens : upstreamBody().max_tokens);

  beforeAll(async () => {
    stack = await startStack({ dialect, simulator: { maxModelLen: 32768 }, config: { models: MODELS } });
  });
  afterAll(() => stack.close());

  it('/v1/models lists the catalog with its metadata, then what the server lists with its max_model_len', async () => {
    const models = (await stack.openai.models.list()).data as any[];
    expect(models.map((m) => m.id)).toEqual(['gpt-5-mini', 'small', SIM]);
    expect(models[0]).toMatchObject({
      object: 'model',
      context_window: 16384,
      max_model_len: 16384,
      max_output_tokens: 2048,
      input_modalities: ['text', 'image'],
      reasoning: ['low', 'medium', 'high'],
    });
    expect(models[1]).toMatchObject({ context_window: 2048, max_output_tokens: 2048, input_modalities: ['text'], reasoning: false });
    expect(models[2]).toMatchObject({ id: SIM, max_model_len: 32768, context_window: 32768, max_output_tokens: 32768, input_modalities: null, reasoning: null });
  });

  it('a request names the public model; the upstream gets its own name; the response shows the public one', async () => {
    const response = await stack.openai.responses.create({ model: 'gpt-5-mini', input: '[[say hi]]' });
    expect(response.model).toBe('gpt-5-mini');
    expect(response.output_text).toBe('hi');
    expect(upstreamBody().model).toBe(SIM);
    // No budget asked: the catalog's output bound is sent.
    expect(budgetSent()).toBe(2048);

    const stream = stack.openai.responses.stream({ model: 'gpt-5-mini', input: '[[say streamed]]', max_output_tokens: 100_000 });
    const final = await stream.finalResponse();
    expect(final.model).toBe('gpt-5-mini');
    expect(upstreamBody().model).toBe(SIM);
    expect(budgetSent()).toBe(2048);
  });

  it("budgets are fitted to the catalog's window, not the server's", async () => {
    await stack.openai.responses.create({ model: 'small', input: '[[say ok]]', max_output_tokens: 2048 });
    expect(upstreamBody().model).toBe(SIM);
    // The server's 32768 would have left 2048 as asked.
    expect(budgetSent()).toBeLessThan(2048);
    expect(budgetSent()).toBeGreaterThan(1800);
  });

  it('the chat pass-through sends the upstream name and answers with the public one, blocking and streaming', async () => {
    const completion = await stack.openai.chat.completions.create({ model: 'gpt-5-mini', messages: [{ role: 'user', content: '[[say relayed]]' }] });
    const relayed = stack.simulator.requests.at(-1)!;
    expect(relayed.path).toBe('/v1/chat/completions');
    expect((relayed.body as any).model).toBe(SIM);
    expect(completion.model).toBe('gpt-5-mini');
    expect(completion.choices[0].message.content).toBe('relayed');

    const stream = await stack.openai.chat.completions.create({
      model: 'gpt-5-mini',
      messages: [{ role: 'user', content: '[[say streamed through the relay]]' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: any[] = [];
    for await (const c of stream) chunks.push(c);
    expect((stack.simulator.requests.at(-1)!.body as any).model).toBe(SIM);
    // Every chunk, the role chunk and the usage chunk included.
    expect(chunks.length).toBeGreaterThan(3);
    expect(new Set(chunks.map((c) => c.model))).toEqual(new Set(['gpt-5-mini']));
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('streamed through the relay');
    expect(chunks.at(-1).usage).toMatchObject({ completion_tokens: expect.any(Number) });
  });

  it('the completions and embeddings pass-throughs answer with the public name too', async () => {
    const completion = await stack.openai.completions.create({ model: 'gpt-5-mini', prompt: '[[say done]]', max_tokens: 16 });
    expect((stack.simulator.requests.at(-1)!.body as any).model).toBe(SIM);
    expect(completion.model).toBe('gpt-5-mini');
    const streamed: any[] = [];
    for await (const c of await stack.openai.completions.create({ model: 'gpt-5-mini', prompt: '[[say done]]', max_tokens: 16, stream: true })) streamed.push(c);
    expect(streamed.length).toBeGreaterThan(1);
    expect(new Set(streamed.map((c) => c.model))).toEqual(new Set(['gpt-5-mini']));

    const embeddings = await stack.openai.embeddings.create({ model: 'gpt-5-mini', input: 'hello' });
    expect(embeddings.model).toBe('gpt-5-mini');
    expect(embeddings.data[0].embedding.length).toBeGreaterThan(0);
  });

  it('a model the catalog does not map is relayed under its own name, both ways', async () => {
    const completion = await stack.openai.chat.completions.create({ model: SIM, messages: [{ role: 'user', content: '[[say as-is]]' }] });
    expect((stack.simulator.requests.at(-1)!.body as any).model).toBe(SIM);
    expect(completion.model).toBe(SIM);
  });

  it('Messages: the public name in and out', async () => {
    const anthropic = new Anthropic({ baseURL: stack.url.replace(/\/v1$/, ''), apiKey: 'x', maxRetries: 0, timeout: 20_000 });
    const message = await anthropic.messages.create({ model: 'gpt-5-mini', max_tokens: 64_000, messages: [{ role: 'user', content: '[[say hello]]' }] });
    expect(message.model).toBe('gpt-5-mini');
    expect(upstreamBody().model).toBe(SIM);
    expect(budgetSent()).toBe(2048);
  });
});

describe('models section validation', () => {
  const sections = configSectionsOf([UpstreamModule.forRoot()]);
  const validate = (models: unknown) => () => validateGatewayConfig({ models } as Record<string, unknown>, { sections });

  it('accepts a minimal entry', () => {
    expect(validate({ 'gpt-5-mini': { upstreamModel: 'Qwen/Qwen3-30B-A3B', contextWindow: 32768 } })).not.toThrow();
  });

  it.each([
    [{ m: {} }, 'models.m.upstreamModel'],
    [{ m: { upstreamModel: 'x', contextWindow: 0 } }, 'models.m.contextWindow'],
    [{ m: { upstreamModel: 'x', contextWindow: 100, maxOutputTokens: 200 } }, 'models.m.maxOutputTokens'],
    [{ m: { upstreamModel: 'x', inputModalities: ['audio'] } }, 'models.m.inputModalities'],
    [{ m: { upstreamModel: 'x', reasoning: 'high' } }, 'models.m.reasoning'],
    [{ m: { upstreamModel: 'x', contextWindo: 1 } }, 'models.m.contextWindow'],
  ])('refuses %j naming %s', (models, field) => {
    expect(validate(models)).toThrow(field);
  });
});
