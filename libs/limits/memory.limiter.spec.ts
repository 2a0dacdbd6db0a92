import { RateLimitError } from '#tool-sdk/errors.js';
import type { Usage } from '#tool-sdk/items.js';
import type { LimitsSettings } from './limits.settings.js';
import { MemoryLimiter } from './memory.limiter.js';

const settings = (over: Partial<LimitsSettings>): LimitsSettings => ({
  concurrentRequests: null,
  requestsPerMinute: null,
  tokensPerMinute: null,
  redisUrl: null,
  keyPrefix: 't:',
  ...over,
});
const usage = (total: number) => ({ total_tokens: total }) as Usage;

describe('MemoryLimiter', () => {
  let now = 1_800_000_000_000 - (1_800_000_000_000 % 60_000);
  const clock = () => now;

  it('holds concurrent places per owner until released', async () => {
    const limiter = new MemoryLimiter(settings({ concurrentRequests: 2 }), clock);
    const a = await limiter.acquire('a');
    await limiter.acquire('a');
    await expect(limiter.acquire('a')).rejects.toMatchObject({ status: 429, headers: { 'retry-after': '1' } });
    await expect(limiter.acquire('b')).resolves.toBeDefined();
    a.release(null);
    a.release(null); // idempotent
    await expect(limiter.acquire('a')).resolves.toBeDefined();
    await expect(limiter.acquire('a')).rejects.toBeInstanceOf(RateLimitError);
  });

  it('counts requests per fixed minute and says when the minute ends', async () => {
    const limiter = new MemoryLimiter(settings({ requestsPerMinute: 2 }), clock);
    now += 15_000;
    (await limiter.acquire(null)).release(null);
    (await limiter.acquire(null)).release(null);
    await expect(limiter.acquire(null)).rejects.toMatchObject({ status: 429, headers: { 'retry-after': '45' }, message: expect.stringMatching(/2 requests per minute/) });
    now += 45_000;
    await expect(limiter.acquire(null)).resolves.toBeDefined();
  });

  it('charges tokens when a request ends and refuses once the minute’s budget is spent', async () => {
    const limiter = new MemoryLimiter(settings({ tokensPerMinute: 100 }), clock);
    const first = await limiter.acquire('a');
    const second = await limiter.acquire('a'); // admitted: nothing charged yet
    first.release(usage(70));
    await expect(limiter.acquire('a')).resolves.toBeDefined();
    second.release(usage(40));
    await expect(limiter.acquire('a')).rejects.toMatchObject({ status: 429, message: expect.stringMatching(/100 tokens per minute/) });
    now += 60_000;
    await expect(limiter.acquire('a')).resolves.toBeDefined();
  });
});
