import OpenAI from 'openai';
import { startStack, type GatewayStack } from './support/gateway-harness.js';

const SIM = 'switchyard-sim';

/**
 * The chat pass-through fits `max_tokens` to the model's window as the
 * Responses and Messages surfaces do: Qwen Code sends `max_tokens: 32000`
 * whatever the model, which vLLM (and the simulated server) refuse above
 * the context. What the relay makes of the server's 4xx is checked here too,
 * as docs/http-surface.md states it.
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

  it("a budget the gateway's high estimate left as asked: refused by the server, then sent once more with what the server's count leaves, and answered", async () => {
    const before = stack.simulator.requests.length;
    // ~7000 tokens as the server counts them, more than the window by the gateway's estimate: nothing is fitted up front.
    const completion = await client.chat.completions.create({ model: SIM, max_tokens: 32000, messages: [{ role: 'user', content: 'word '.repeat(7000) }] });
    expect(completion.choices[0].finish_reason).toBe('stop');
    const sent = stack.simulator.requests.slice(before).map((r) => (r.body as any).max_tokens);
    expect(sent).toEqual([32000, 8192 - completion.usage!.prompt_tokens]);

    // Streamed alike: the refusal comes before the stream opens.
    const again = stack.simulator.requests.length;
    const stream = await client.chat.completions.create({
      model: SIM,
      max_completion_tokens: 32000,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'word '.repeat(7000) }],
    });
    const chunks: any[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toContain('Switchyard simulator');
    const streamedSent = stack.simulator.requests.slice(again).map((r) => (r.body as any).max_completion_tokens);
    expect(streamedSent).toEqual([32000, 8192 - chunks.at(-1).usage.prompt_tokens]);
  });

  describe('what an upstream 4xx becomes', () => {
    const refusal = async (call: Promise<unknown>): Promise<any> => {
      try {
        await call;
      } catch (err) {
        return err;
      }
      throw new Error('expected a refusal');
    };

    it("a prompt that fills the window: 400 context_length_exceeded naming messages, as OpenAI's chat says it, with the server's words, blocking and streaming", async () => {
      const long = 'word '.repeat(9000);
      for (const stream of [false, true]) {
        const err = await refusal(client.chat.completions.create({ model: SIM, max_tokens: 32000, stream, messages: [{ role: 'user', content: long }] }));
        expect(err).toBeInstanceOf(OpenAI.BadRequestError);
        expect(err).toMatchObject({ status: 400, code: 'context_length_exceeded', param: 'messages', type: 'invalid_request_error' });
        expect(err.message).toMatch(/maximum context length is 8192 tokens\. However, your request has 9003 input tokens/);
      }
    });

    it('a budget refusal that leaves less than the useful floor stands, in the same shape', async () => {
      const before = stack.simulator.requests.length;
      const err = await refusal(client.chat.completions.create({ model: SIM, max_tokens: 32000, messages: [{ role: 'user', content: 'word '.repeat(8000) }] }));
      expect(err).toMatchObject({ status: 400, code: 'context_length_exceeded', param: 'messages' });
      expect(err.message).toContain("'max_tokens' or 'max_completion_tokens' is too large: 32000");
      // 189 tokens would be left: not retried.
      expect(stack.simulator.requests.length - before).toBe(1);
    });

    it('on /v1/completions the prompt is the field named', async () => {
      const err = await refusal(client.completions.create({ model: SIM, prompt: 'word '.repeat(9000), max_tokens: 16 }));
      expect(err).toMatchObject({ status: 400, code: 'context_length_exceeded', param: 'prompt' });
    });

    it("any other 4xx keeps the server's status, words and param; the code says whose it was", async () => {
      const bad = await refusal(client.chat.completions.create({ model: SIM, messages: [{ role: 'user', content: 'hi [[tokens abc]]' }] }));
      expect(bad).toMatchObject({ status: 400, type: 'invalid_request_error', param: 'input', code: 'upstream_400' });
      expect(bad.message).toContain('Invalid simulator directive: [[tokens]]: "abc" is not a whole number');
      const unprocessable = await refusal(
        client.chat.completions.create({ model: SIM, messages: [{ role: 'user', content: 'hi [[fault status=422 message="bad temperature"]]' }] }),
      );
      expect(unprocessable).toMatchObject({ status: 422, param: null, code: 'upstream_422' });
      expect(unprocessable.message).toContain('bad temperature');
    });
  });
});
