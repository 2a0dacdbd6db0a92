import OpenAI from 'openai';
import { startStack, type GatewayStack } from './support/gateway-harness.js';

const SIM = 'switchyard-sim';

/**
 * The chat pass-through fits `max_tokens` to the model's window as the
 * Responses and Messages surfaces do: Qwen Code sends `max_tokens: 32000`
 * whatever the model, which vLLM (and the simulated server) refuse above
 * the context.
 */
describe('chat relay budget fitting', () => {
  let stack: GatewayStack;
  let client: OpenAI;
  const lastBody = (): any => stack.simulator.requests.at(-1)!.body;

  beforeAll(async () => {
    stack = await startStack({ simulator: { maxModelLen: 8192 }, config: { models: { 'qwen-small': { upstreamModel: SIM, contextWindow: 4096 } } } });
    client = new OpenAI({ baseURL: stack.url, apiKey: 'sk-test', maxRetries: 0, timeout: 20_000 });
  });
  afterAll(() => stack.close());

  it("Qwen Code's default max_tokens: 32000 is fitted to the server's window and answered", async () => {
    const completion = await client.chat.completions.create({ model: SIM, max_tokens: 32000, messages: [{ role: 'user', content: '[[say fitted]]' }] });
    expect(completion.choices[0].message.content).toBe('fitted');
    expect(lastBody().max_tokens).toBeLessThan(8192);
    expect(lastBody().max_tokens).toBeGreaterThan(8000);
  });

  it("streamed, with max_completion_tokens, and to the catalog's window", async () => {
    const stream = await client.chat.completions.create({
      model: 'qwen-small',
      max_completion_tokens: 32000,
      stream: true,
      messages: [{ role: 'user', content: '[[say streamed]]' }],
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('streamed');
    expect(lastBody().model).toBe(SIM);
    expect(lastBody().max_completion_tokens).toBeLessThan(4096);
    expect(lastBody().max_completion_tokens).toBeGreaterThan(3900);
  });

  it('a budget that fits goes as asked; none stays none', async () => {
    await client.chat.completions.create({ model: SIM, max_tokens: 100, messages: [{ role: 'user', content: '[[say small]]' }] });
    expect(lastBody().max_tokens).toBe(100);
    await client.chat.completions.create({ model: SIM, messages: [{ role: 'user', content: '[[say none]]' }] });
    expect(lastBody()).not.toHaveProperty('max_tokens');
  });

  it('a prompt that fills the window still gets the server refusal, with its words', async () => {
    const long = 'word '.repeat(9000);
    await expect(client.chat.completions.create({ model: SIM, max_tokens: 32000, messages: [{ role: 'user', content: long }] })).rejects.toMatchObject({ status: 400 });
  });
});
