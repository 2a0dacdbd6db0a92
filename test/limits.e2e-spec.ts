import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import type { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import type { GatewayStack } from './support/gateway-harness.js';
import { startProcessPair, type ProcessPair, type ReplicaProcess } from './support/process/gateway-process.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const keyPrefix = `sy-e2e:${randomBytes(4).toString('hex')}:`;
const keys = ['sk-concurrency', 'sk-requests', 'sk-tokens', 'sk-other'];
const config = {
  auth: { apiKeys: keys },
  limits: { concurrentRequests: 1, requestsPerMinute: 3, tokensPerMinute: 300, redisUrl, keyPrefix },
};

/** Per-minute counts reset on the minute: start a counting test early in one. */
async function freshMinute(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 15_000) await new Promise((r) => setTimeout(r, left + 50));
}

describe('per-key limits shared by two gateway processes through Redis', () => {
  let simulator: SimulatedUpstream;
  let p: ReplicaProcess;
  let b: GatewayStack;
  let pair: ProcessPair;
  const on = (url: string, key: string) => new OpenAI({ baseURL: url, apiKey: key, maxRetries: 0 });

  beforeAll(async () => {
    pair = await startProcessPair(config);
    ({ simulator, p, b } = pair);
  }, 60_000);

  afterAll(async () => {
    await pair?.close();
    const admin = new Redis(redisUrl);
    const found = await admin.keys(`${keyPrefix}*`);
    if (found.length > 0) await admin.del(...found);
    await admin.quit();
  });

  it('a request running on one process takes the key’s only place on the other: 429 with Retry-After', async () => {
    const slow = on(p.url, 'sk-concurrency').responses.create({ model: 'm', input: '[[tokens 30]] [[delay token=30]]' });
    // Wait until P has the place (its upstream request is running).
    for (let i = 0; simulator.stats.active === 0 && i < 1_000; i++) await new Promise((r) => setTimeout(r, 10));
    const res = await fetch(`${b.url}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-concurrency' },
      body: JSON.stringify({ model: 'm', input: 'x' }),
    });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(await res.json()).toEqual({
      error: { type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null, message: expect.stringMatching(/1 concurrent requests/) },
    });
    // Another key is not held back.
    await expect(on(b.url, 'sk-other').responses.create({ model: 'm', input: '[[say free]]' })).resolves.toMatchObject({ output_text: 'free' });
    await slow;
    await expect(on(b.url, 'sk-concurrency').responses.create({ model: 'm', input: '[[say my turn]]' })).resolves.toMatchObject({ output_text: 'my turn' });
  });

  it('counts requests per minute across both processes', async () => {
    await freshMinute();
    const clients = [on(p.url, 'sk-requests'), on(b.url, 'sk-requests')];
    for (let i = 0; i < 3; i++) await clients[i % 2].responses.create({ model: 'm', input: '[[say ok]]' });
    const refused = await clients[1].responses.create({ model: 'm', input: 'x' }).catch((e) => e);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    expect(refused.message).toMatch(/3 requests per minute/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  }, 45_000);

  it('charges the tokens a response used and refuses once the minute’s budget is spent', async () => {
    await freshMinute();
    const big = await on(p.url, 'sk-tokens').responses.create({ model: 'm', input: '[[tokens 350]]' });
    expect(big.usage!.total_tokens).toBeGreaterThan(300);
    await new Promise((r) => setTimeout(r, 50));
    const refused = await on(b.url, 'sk-tokens')
      .responses.create({ model: 'm', input: 'x' })
      .catch((e) => e);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    expect(refused.message).toMatch(/300 tokens per minute/);
  }, 45_000);
});
