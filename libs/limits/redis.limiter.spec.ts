import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Usage } from '#tool-sdk/items.js';
import type { LimitsSettings } from './limits.settings.js';
import { RedisLimiter } from './redis.limiter.js';
import { windowOf } from './limit-refusal.js';
import { answered, answerOf } from '#edge/testing/answered.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('RedisLimiter (real Redis)', () => {
  const prefix = `sy-test:${randomBytes(4).toString('hex')}:`;
  const limiters: RedisLimiter[] = [];
  const make = async (over: Partial<LimitsSettings>, leaseMs?: number) => {
    const limiter = new RedisLimiter(
      {
        concurrentRequests: null,
        requestsPerMinute: null,
        tokensPerMinute: null,
        tokensPerDay: null,
        redisUrl: url,
        keyPrefix: prefix + randomBytes(2).toString('hex') + ':',
        admissionEstimate: 'prompt_and_output',
        ...over,
      },
      { leaseMs },
    );
    await limiter.connect();
    limiters.push(limiter);
    return limiter;
  };
  /** Two limiters on one key prefix: two replicas sharing Redis. */
  const pair = async (over: Partial<LimitsSettings>, leaseMs?: number) => {
    const a = await make(over, leaseMs);
    const b = new RedisLimiter({ ...(a as any).settings }, { leaseMs });
    await b.connect();
    limiters.push(b);
    return [a, b] as const;
  };

  /** Counts live in fixed minutes: a test that crossed into the next one would start from zero. */
  const awayFromMinuteEdge = async () => {
    const { remainingMs } = windowOf(Date.now());
    if (remainingMs < 5_000) await new Promise((r) => setTimeout(r, remainingMs + 50));
  };

  afterAll(async () => {
    await Promise.all(limiters.map((l) => l.close()));
    const admin = new Redis(url);
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.del(...keys);
    await admin.quit();
  });

  it('shares concurrent places between replicas', async () => {
    const [a, b] = await pair({ concurrentRequests: 1 });
    const lease = await a.acquire('o');
    await expect(answerOf(b.acquire('o'))).resolves.toMatchObject({ status: 429 });
    await expect(b.acquire('other')).resolves.toBeDefined();
    lease.release(null);
    await a.flushed();
    await expect(b.acquire('o')).resolves.toBeDefined();
  });

  it('frees the places of a replica that died once their lease lapses', async () => {
    const [a, b] = await pair({ concurrentRequests: 1 }, 300);
    await a.acquire('o');
    await a.close(); // no release, no renewal: as a crash
    limiters.splice(limiters.indexOf(a), 1);
    await expect(answerOf(b.acquire('o'))).resolves.toMatchObject({ status: 429 });
    await new Promise((r) => setTimeout(r, 400));
    await expect(b.acquire('o')).resolves.toBeDefined();
  });

  it('counts requests and tokens per minute across replicas', async () => {
    await awayFromMinuteEdge();
    const [a, b] = await pair({ requestsPerMinute: 3, tokensPerMinute: 50 });
    (await a.acquire('o')).release({ total_tokens: 20 } as Usage);
    (await b.acquire('o')).release(null);
    const third = await a.acquire('o');
    await expect(answerOf(b.acquire('o'))).resolves.toMatchObject({ status: 429, message: expect.stringMatching(/3 requests per minute/) });
    third.release({ total_tokens: 40 } as Usage);
    await a.flushed();
    const [c, d] = await pair({ tokensPerMinute: 50 });
    (await c.acquire('o')).release({ total_tokens: 60 } as Usage);
    await c.flushed();
    await expect(answerOf(d.acquire('o'))).resolves.toMatchObject({ status: 429, message: expect.stringMatching(/50 tokens per minute/) });
  });

  it('counts a day’s tokens across replicas and names the limit in x-ratelimit headers', async () => {
    const [a, b] = await pair({ tokensPerMinute: 10_000, tokensPerDay: 100 });
    (await a.acquire('o')).release({ total_tokens: 70 } as Usage);
    await a.flushed();
    (await b.acquire('o')).release({ total_tokens: 40 } as Usage);
    await b.flushed();
    const refused = await a.acquire('o').catch((e) => e);
    expect(answered(refused)).toMatchObject({ status: 429, message: expect.stringMatching(/100 tokens per day/) });
    expect(refused.headers).toMatchObject({
      'x-ratelimit-limit-tokens': '100',
      'x-ratelimit-remaining-tokens': '0',
      'x-ratelimit-reset-tokens': expect.stringMatching(/^(\d+h)?(\d+m)?\d+s$/),
    });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(86_400);
    await expect(b.acquire('other')).resolves.toBeDefined();
    // Between rounds: the run's own tokens count beside what the other replica charged.
    const [c, d] = await pair({ tokensPerDay: 100 });
    (await c.acquire('o')).release({ total_tokens: 50 } as Usage);
    await c.flushed();
    const running = await d.acquire('o');
    await expect(running.check!({ total_tokens: 40 } as Usage)).resolves.toBeUndefined();
    await expect(answerOf(running.check!({ total_tokens: 50 } as Usage))).resolves.toMatchObject({ status: 429, headers: { 'x-ratelimit-limit-tokens': '100' } });
  });

  it('reserves a request’s estimate atomically across replicas and settles it to the actual usage', async () => {
    const [a, b] = await pair({ tokensPerMinute: 100_000, tokensPerDay: 100 });
    // Ten admissions of 30 at once on two replicas: the day's 100 holds three of them, never more.
    const tries = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).acquire('o', { prompt: 10, output: 20 })));
    const admitted = tries.filter((t): t is PromiseFulfilledResult<Awaited<ReturnType<RedisLimiter['acquire']>>> => t.status === 'fulfilled');
    expect(admitted).toHaveLength(3);
    const refused = (tries.find((t) => t.status === 'rejected') as PromiseRejectedResult).reason;
    expect(answered(refused)).toMatchObject({ status: 429, message: expect.stringMatching(/Requested 30/) });
    expect(Number(refused.headers['x-ratelimit-remaining-tokens'])).toBeLessThan(30);
    // Settled to what each used: 3 × 5 charged, so 85 are left.
    for (const lease of admitted) lease.value.release({ total_tokens: 5 } as Usage);
    await Promise.all([a.flushed(), b.flushed()]);
    await expect(a.acquire('o', { prompt: 86, output: 0 })).rejects.toMatchObject({ headers: { 'x-ratelimit-remaining-tokens': '85' } });
    await expect(b.acquire('o', { prompt: 5, output: 80 })).resolves.toBeDefined();
  });

  it('refuses with a 503 when Redis cannot be reached, rather than admitting unlimited', async () => {
    const limiter = new RedisLimiter({
      concurrentRequests: 1,
      requestsPerMinute: null,
      tokensPerMinute: null,
      tokensPerDay: null,
      redisUrl: 'redis://127.0.0.1:1',
      keyPrefix: prefix,
      admissionEstimate: 'prompt_and_output',
    });
    await expect(limiter.connect()).rejects.toBeDefined();
    await expect(answerOf(limiter.acquire('o'))).resolves.toMatchObject({ status: 503, code: 'limits_unavailable' });
    await limiter.close();
  });

  it('closes without leaving a timer that holds the process open when Redis was never reached', async () => {
    const refTimers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = refTimers();
    const limiter = new RedisLimiter({
      concurrentRequests: 1,
      requestsPerMinute: null,
      tokensPerMinute: null,
      tokensPerDay: null,
      redisUrl: 'redis://127.0.0.1:1',
      keyPrefix: prefix,
      admissionEstimate: 'prompt_and_output',
    });
    await expect(limiter.connect()).rejects.toBeDefined();
    await limiter.close();
    // The socket's destroy timer, if any, is due at once; a 2 s one would still be pending here.
    await new Promise((r) => setTimeout(r, 20));
    expect(refTimers()).toBeLessThanOrEqual(before);
  });
});
