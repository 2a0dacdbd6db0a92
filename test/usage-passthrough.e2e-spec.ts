import OpenAI, { toFile } from 'openai';
import { startStack, type GatewayStack } from './support/gateway-harness.js';

const KEY = 'sk-pass-usage';
const SMALL = 'sk-pass-small';
const ADMIN = 'sk-pass-admin';

function series(text: string, name: string, match: Record<string, string>): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(match).every(([k, v]) => labels[k] === v)) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/**
 * The pass-through surfaces and batches count their tokens like Responses
 * runs: into `switchyard_tokens_total`, `GET /v1/usage` (surface
 * `chat_completions`, `completions`, `embeddings`, `batch`) and the owner's
 * budget, a stream's from the usage chunk the gateway asks the upstream for
 * (and takes out again when the client did not ask for it).
 */
describe('token usage and budgets of /v1/chat/completions, /v1/completions, /v1/embeddings and batches', () => {
  let stack: GatewayStack;
  let client: OpenAI;
  const told: Record<string, { input: number; output: number }> = {};
  const usage = async (key: string, query = 'group_by=surface') =>
    (await (await fetch(`${stack.url}/usage?${query}`, { headers: { authorization: `Bearer ${key}` } })).json()) as any;

  beforeAll(async () => {
    stack = await startStack({
      config: {
        auth: { apiKeys: [KEY, SMALL, ADMIN] },
        usage: { adminKeys: [ADMIN] },
        limits: { tokensPerDay: 2_000 },
        batches: { pollMs: 50 },
      },
    });
    client = new OpenAI({ baseURL: stack.url, apiKey: KEY, maxRetries: 0 });
    const chat = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: '[[say one two three]]' }] });
    told.chat = { input: chat.usage!.prompt_tokens, output: chat.usage!.completion_tokens };
    const text = await client.completions.create({ model: 'm', prompt: '[[say four five]]' });
    told.completions = { input: text.usage!.prompt_tokens, output: text.usage!.completion_tokens };
    const embedded = await client.embeddings.create({ model: 'switchyard-sim', encoding_format: 'float', input: ['six seven', 'eight'] });
    told.embeddings = { input: embedded.usage.prompt_tokens, output: 0 };
  }, 30_000);
  afterAll(() => stack?.close());

  it('counts a stream’s usage chunk, asked of the upstream and kept from a client that did not ask for it', async () => {
    const messages = [{ role: 'user' as const, content: '[[say a streamed answer]]' }];
    const plain = [];
    for await (const chunk of await client.chat.completions.create({ model: 'm', messages, stream: true })) plain.push(chunk);
    expect(plain.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('a streamed answer');
    expect(plain.every((c) => c.choices.length > 0 && !c.usage)).toBe(true);
    expect(stack.simulator.requests.at(-1)!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    const asked = [];
    for await (const chunk of await client.chat.completions.create({ model: 'm', messages, stream: true, stream_options: { include_usage: true } })) asked.push(chunk);
    const last = asked.at(-1)!;
    expect(last.choices).toEqual([]);
    // The same prompt and answer: the stripped stream was charged what this one reports.
    told.streams = { input: 2 * last.usage!.prompt_tokens, output: 2 * last.usage!.completion_tokens };

    const byKind = await (await fetch(stack.url.replace(/\/v1$/, '/metrics'), { headers: { authorization: `Bearer ${ADMIN}` } })).text();
    expect(series(byKind, 'switchyard_tokens_total', { kind: 'input', surface: 'chat_completions' })).toBe(told.chat.input + told.streams.input);
    expect(series(byKind, 'switchyard_tokens_total', { kind: 'output', surface: 'chat_completions' })).toBe(told.chat.output + told.streams.output);
    expect(series(byKind, 'switchyard_tokens_total', { kind: 'output', surface: 'completions' })).toBe(told.completions.output);
    expect(series(byKind, 'switchyard_tokens_total', { kind: 'input', surface: 'embeddings', model: 'switchyard-sim' })).toBe(told.embeddings.input);

    const surfaces = Object.fromEntries((await usage(KEY)).data.at(-1).results.map((r: any) => [r.surface, r]));
    expect(surfaces.chat_completions).toMatchObject({
      num_model_requests: 3,
      input_tokens: told.chat.input + told.streams.input,
      output_tokens: told.chat.output + told.streams.output,
    });
    expect(surfaces.completions).toMatchObject({ num_model_requests: 1, input_tokens: told.completions.input, output_tokens: told.completions.output });
    expect(surfaces.embeddings).toMatchObject({ num_model_requests: 1, input_tokens: told.embeddings.input, output_tokens: 0 });
  });

  it('refuses a call whose own estimate does not fit the budget left, before the upstream, with OpenAI’s headers', async () => {
    const small = new OpenAI({ baseURL: stack.url, apiKey: SMALL, maxRetries: 0 });
    const calls = stack.simulator.requests.length;
    const refused = await small.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1_000, n: 2 }).catch((e) => e);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    expect(refused.message).toMatch(/Limit 2000, Used 0, Requested 20\d\d/);
    expect(refused.headers.get('x-ratelimit-limit-tokens')).toBe('2000');
    expect(refused.headers.get('x-ratelimit-remaining-tokens')).toBe('2000');
    expect(refused.headers.get('x-ratelimit-reset-tokens')).toMatch(/^(\d+h)?(\d+m)?\d+s$/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(stack.simulator.requests.length).toBe(calls);
    // Within the bound it is admitted, and charged what it used, not what it reserved.
    const fits = await small.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: '[[say ok]]' }], max_tokens: 1_900 });
    const after = (await usage(SMALL)).data.at(-1).results;
    expect(after).toEqual([expect.objectContaining({ surface: 'chat_completions', input_tokens: fits.usage!.prompt_tokens, output_tokens: fits.usage!.completion_tokens })]);
  });

  it('charges batch work to its owner under surface batch, and a spent owner’s batch lines fail with the rate-limit error', async () => {
    const lines = ['[[say alpha]]', '[[tokens 2100]]'].map((content, i) =>
      JSON.stringify({ custom_id: `r${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'm', messages: [{ role: 'user', content }] } }),
    );
    const run = async (body: string) => {
      const file = await client.files.create({ file: await toFile(Buffer.from(`${body}\n`), 'in.jsonl'), purpose: 'batch' });
      let batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      while (!['completed', 'failed'].includes(batch.status)) {
        await new Promise((r) => setTimeout(r, 50));
        batch = await client.batches.retrieve(batch.id);
      }
      return batch;
    };
    const before = (await usage(KEY)).data.at(-1).results.reduce((n: number, r: any) => n + r.input_tokens + r.output_tokens, 0);
    const first = await run(lines.join('\n'));
    expect(first.request_counts).toMatchObject({ completed: 2, failed: 0 });
    const out = (await (await client.files.content(first.output_file_id!)).text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).response.body.usage);
    const batch = (await usage(KEY)).data.at(-1).results.find((r: any) => r.surface === 'batch');
    expect(batch).toMatchObject({
      num_model_requests: 2,
      input_tokens: out[0].prompt_tokens + out[1].prompt_tokens,
      output_tokens: out[0].completion_tokens + out[1].completion_tokens,
    });
    expect(before + batch.input_tokens + batch.output_tokens).toBeGreaterThan(2_000);

    const spent = await run(lines[0]);
    expect(spent.request_counts).toMatchObject({ completed: 0, failed: 1 });
    const error = JSON.parse((await (await client.files.content(spent.error_file_id!)).text()).trim());
    expect(error.response).toMatchObject({ status_code: 429, body: { error: { code: 'rate_limit_exceeded', message: expect.stringMatching(/2000 tokens per day/) } } });
  });
});
