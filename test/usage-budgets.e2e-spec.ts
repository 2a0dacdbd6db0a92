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
      auth: { apiKeys: [SPENDER, OTHER, LOOPER] },
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
    const long = Array.from({ length: 320 }, (_, i) => `w${i}`).join(' ');
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
});
