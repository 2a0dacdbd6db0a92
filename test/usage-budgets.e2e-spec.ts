import Anthropic from '@anthropic-ai/sdk';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { StreamableTestServer } from './support/mcp/mcp-test-servers.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const keyPrefix = `sy-budget:${randomBytes(4).toString('hex')}:`;
const SPENDER = 'sk-budget-spender';
const OTHER = 'sk-budget-other';
const LOOPER = 'sk-budget-looper';
const ESTIMATOR = 'sk-budget-estimator';

/**
 * A day's token budget shared by two gateways through one Redis: what one
 * gateway charged refuses the owner on the other, on the Responses and the
 * Messages surfaces and for background runs, before the upstream is called,
 * with `Retry-After` and OpenAI's `x-ratelimit-*` headers.
 */
describe('per-owner token budgets across two gateways (real Redis)', () => {
  let a: GatewayStack;
  let b: GatewayStack;
  let mcp: StreamableTestServer;

  beforeAll(async () => {
    mcp = await StreamableTestServer.start();
    const config = {
      auth: { apiKeys: [SPENDER, OTHER, LOOPER, ESTIMATOR] },
      limits: { tokensPerMinute: 1_000_000, tokensPerDay: 300, redisUrl, keyPrefix },
      mcp: { allowedHosts: [`127.0.0.1:${mcp.port}`] },
    };
    [a, b] = await Promise.all([startStack({ config }), startStack({ config })]);
  }, 30_000);

  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await mcp?.close();
    const admin = new Redis(redisUrl);
    const found = await admin.keys(`${keyPrefix}*`);
    if (found.length > 0) await admin.del(...found);
    await admin.quit();
  });

  it('charges what a response used on one gateway and refuses the owner on the other, on every surface, before the upstream', async () => {
    const spent = await new OpenAI({ baseURL: a.url, apiKey: SPENDER, maxRetries: 0 }).responses.create({ model: 'm', input: '[[tokens 320]]' });
    expect(spent.usage!.total_tokens).toBeGreaterThan(300);
    // The charge is written as the run ends; give it a moment to land in Redis.
    await new Promise((r) => setTimeout(r, 100));
    const upstreamCalls = b.simulator.requests.length;

    const refused = await new OpenAI({ baseURL: b.url, apiKey: SPENDER, maxRetries: 0 }).responses.create({ model: 'm', input: 'x' }).catch((e) => e);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    expect(refused.message).toMatch(/300 tokens per day/);
    const untilMidnight = 86_400 - (Math.floor(Date.now() / 1000) % 86_400);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(untilMidnight - 5);
    expect(retryAfter).toBeLessThanOrEqual(untilMidnight + 1);
    expect(refused.headers.get('x-ratelimit-limit-tokens')).toBe('300');
    expect(refused.headers.get('x-ratelimit-remaining-tokens')).toBe('0');
    expect(refused.headers.get('x-ratelimit-reset-tokens')).toMatch(/^(\d+h)?(\d+m)?\d+s$/);

    const anthropic = new Anthropic({ baseURL: b.url.replace(/\/v1$/, ''), apiKey: SPENDER, maxRetries: 0 });
    const messages = await anthropic.messages.create({ model: 'm', max_tokens: 16, messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(messages).toBeInstanceOf(Anthropic.RateLimitError);
    expect(messages.headers.get('x-ratelimit-limit-tokens')).toBe('300');
    // The same day's end (a second may have passed since).
    expect(Math.abs(Number(messages.headers.get('retry-after')) - retryAfter)).toBeLessThanOrEqual(1);

    // Neither refused request reached the upstream.
    expect(b.simulator.requests.length).toBe(upstreamCalls);
    // Another owner's budget is its own.
    await expect(new OpenAI({ baseURL: b.url, apiKey: OTHER, maxRetries: 0 }).responses.create({ model: 'm', input: '[[say free]]' })).resolves.toMatchObject({
      output_text: 'free',
    });
  });

  it('a background run of a spent owner ends with the same refusal, without an upstream call', async () => {
    const client = new OpenAI({ baseURL: b.url, apiKey: SPENDER, maxRetries: 0 });
    const upstreamCalls = b.simulator.requests.length;
    const queued = await client.responses.create({ model: 'm', input: 'later', background: true });
    // Queued first (the budget is checked when the run starts), then failed with the refusal.
    expect(queued.status).toBe('queued');
    let done = queued;
    for (let i = 0; i < 200 && (done.status === 'queued' || done.status === 'in_progress'); i++) {
      await new Promise((r) => setTimeout(r, 25));
      done = await client.responses.retrieve(queued.id);
    }
    expect(done).toMatchObject({ status: 'failed', error: { code: 'rate_limit_exceeded', message: expect.stringMatching(/300 tokens per day/) } });
    expect(b.simulator.requests.length).toBe(upstreamCalls);
  });

  it('stops a tool loop before its next upstream call once its own rounds used the budget, and charges them', async () => {
    const client = new OpenAI({ baseURL: a.url, apiKey: LOOPER, maxRetries: 0 });
    const upstreamCalls = a.simulator.requests.length;
    // Short words: the admission estimate (three bytes a token) stays under the budget while the model counts one token a word, over it.
    const long = Array.from({ length: 300 }, () => 'a').join(' ');
    const refused = await client.responses
      .create({
        model: 'm',
        input: `${long} [[call demo__echo {"text":"x"}]]`,
        tools: [{ type: 'mcp', server_label: 'demo', server_url: mcp.url, require_approval: 'never' } as any],
      })
      .catch((e) => e);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    expect(refused.headers.get('x-ratelimit-limit-tokens')).toBe('300');
    // The first round ran (and its tool call), the second never reached the upstream.
    expect(a.simulator.requests.length).toBe(upstreamCalls + 1);
    await new Promise((r) => setTimeout(r, 100));
    // What the first round used was charged: the owner is refused at admission on the other gateway.
    const next = await new OpenAI({ baseURL: b.url, apiKey: LOOPER, maxRetries: 0 }).responses.create({ model: 'm', input: 'x' }).catch((e) => e);
    expect(next).toBeInstanceOf(OpenAI.RateLimitError);
  });

  it('reserves a request’s own estimate at admission on one gateway, refuses what no longer fits on the other, then settles to the actual usage', async () => {
    const onA = new OpenAI({ baseURL: a.url, apiKey: ESTIMATOR, maxRetries: 0 });
    const onB = new OpenAI({ baseURL: b.url, apiKey: ESTIMATOR, maxRetries: 0 });
    const upstreamCalls = a.simulator.requests.length + b.simulator.requests.length;
    // Larger than the whole day's budget by its output bound alone: refused before any upstream call.
    const tooLarge = await onB.responses.create({ model: 'm', input: 'hi', max_output_tokens: 400 }).catch((e) => e);
    expect(tooLarge).toBeInstanceOf(OpenAI.RateLimitError);
    expect(tooLarge.message).toMatch(/tokens per day: Limit 300, Used 0, Requested 4\d\d/);
    expect(tooLarge.headers.get('x-ratelimit-remaining-tokens')).toBe('300');
    expect(Number(tooLarge.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(a.simulator.requests.length + b.simulator.requests.length).toBe(upstreamCalls);

    // One request in flight on A holds its reservation (its prompt's estimate + 200); B cannot admit another of the same size.
    const reachedA = a.simulator.requests.length;
    const held = onA.responses.create({ model: 'm', input: '[[delay ttft=3000]] [[say ok]]', max_output_tokens: 200 });
    while (a.simulator.requests.length === reachedA) await new Promise((r) => setTimeout(r, 20));
    const crowded = await onB.responses.create({ model: 'm', input: '[[say ok]]', max_output_tokens: 200 }).catch((e) => e);
    expect(crowded).toBeInstanceOf(OpenAI.RateLimitError);
    const remaining = Number(crowded.headers.get('x-ratelimit-remaining-tokens'));
    expect(remaining).toBeGreaterThan(0);
    expect(remaining).toBeLessThan(100);
    const done = await held;
    await new Promise((r) => setTimeout(r, 100));
    // Settled: only what A's request used is charged, so the same request now fits on B.
    const fits = await onB.responses.create({ model: 'm', input: '[[say ok]]', max_output_tokens: 200 });
    expect(fits.output_text).toBe('ok');
    await new Promise((r) => setTimeout(r, 100));
    const refused = await onA.responses.create({ model: 'm', input: 'hi', max_output_tokens: 300 }).catch((e) => e);
    expect(Number(refused.headers.get('x-ratelimit-remaining-tokens'))).toBe(300 - done.usage!.total_tokens - fits.usage!.total_tokens);
  });
});
