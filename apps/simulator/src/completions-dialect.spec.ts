import { SimulatedUpstream } from './simulated-upstream.js';
import { postJson, readSse } from './testing/simulator-client.js';

describe('SimulatedUpstream over /v1/completions (vLLM text_completion)', () => {
  let sim: SimulatedUpstream;
  let url: string;

  beforeAll(async () => {
    sim = new SimulatedUpstream();
    ({ url } = await sim.listen());
  });
  afterAll(() => sim.close());

  it('answers a prompt as one user turn, in vLLM’s shape', async () => {
    const res = await postJson(url, '/completions', { model: 'text-model', prompt: '[[say plain words]]' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, any>;
    expect(body).toMatchObject({
      id: expect.stringMatching(/^cmpl-/),
      object: 'text_completion',
      model: 'text-model',
      choices: [{ index: 0, text: 'plain words', logprobs: null, finish_reason: 'stop', stop_reason: null }],
      usage: { prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number), total_tokens: expect.any(Number) },
    });
  });

  it('streams text deltas, the finish chunk, the usage chunk when asked, then [DONE]', async () => {
    const res = await postJson(url, '/completions', { model: 'text-model', prompt: '[[say one two three]]', stream: true, stream_options: { include_usage: true } });
    const blocks = await readSse(res);
    expect(blocks.at(-1)?.raw).toBe('data: [DONE]');
    const chunks = blocks.slice(0, -1).map((b) => JSON.parse(b.data) as Record<string, any>);
    const withChoices = chunks.filter((c) => c.choices.length > 0);
    expect(withChoices.map((c) => c.choices[0].text).join('')).toBe('one two three');
    expect(withChoices.at(-1)?.choices[0].finish_reason).toBe('stop');
    expect(withChoices.slice(0, -1).every((c) => c.choices[0].finish_reason === null)).toBe(true);
    expect(chunks.at(-1)).toMatchObject({ object: 'text_completion', choices: [], usage: { completion_tokens: expect.any(Number) } });
  });

  it('refuses a request without a prompt, naming it', async () => {
    const res = await postJson(url, '/completions', { model: 'text-model' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.param).toBe('prompt');
  });
});
