import { RateLimitError } from '#tool-sdk/errors.js';
import type { Usage } from '#tool-sdk/items.js';
import type { LimitsSettings } from './limits.settings.js';
import { resetDuration } from './limit-refusal.js';
import { MemoryLimiter } from './memory.limiter.js';
import { answered, answerOf } from '#edge/testing/answered.js';

const settings = (over: Partial<LimitsSettings>): LimitsSettings => ({
  concurrentRequests: null,
  requestsPerMinute: null,
  tokensPerMinute: null,
  tokensPerDay: null,
  redisUrl: null,
  keyPrefix: 't:',
  admissionEstimate: 'prompt_and_output',
  ...over,
});
const usage = (total: number) => ({ total_tokens: total }) as Usage;
/** An estimate of `n` tokens, half prompt, half output bound. */
const cost = (n: number) => ({ prompt: Math.ceil(n / 2), output: Math.floor(n / 2) });

describe('MemoryLimiter', () => {
  let now = 1_800_000_000_000 - (1_800_000_000_000 % 60_000);
  const clock = () => now;

  it('holds concurrent places per owner until released', async () => {
    const limiter = new MemoryLimiter(settings({ concurrentRequests: 2 }), clock);
    const a = await limiter.acquire('a');
    await limiter.acquire('a');
    await expect(answerOf(limiter.acquire('a'))).resolves.toMatchObject({ status: 429, headers: { 'retry-after': '1' } });
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
    await expect(answerOf(limiter.acquire(null))).resolves.toMatchObject({
      status: 429,
      headers: { 'retry-after': '45' },
      message: expect.stringMatching(/2 requests per minute/),
    });
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
    await expect(answerOf(limiter.acquire('a'))).resolves.toMatchObject({ status: 429, message: expect.stringMatching(/100 tokens per minute/) });
    now += 60_000;
    await expect(limiter.acquire('a')).resolves.toBeDefined();
  });

  it('keeps a day’s token budget past the minute, and refuses with OpenAI’s x-ratelimit headers until the UTC day ends', async () => {
    now += 60_000 - (now % 60_000) + 10_000;
    const limiter = new MemoryLimiter(settings({ tokensPerMinute: 1_000, tokensPerDay: 150 }), clock);
    (await limiter.acquire('a')).release(usage(100));
    now += 60_000; // a new minute: the minute's count is back to zero, the day's is not
    (await limiter.acquire('a')).release(usage(60));
    now += 60_000;
    const refused = await limiter.acquire('a').catch((e) => e);
    const untilMidnight = 86_400_000 - (now % 86_400_000);
    expect(answered(refused)).toMatchObject({ status: 429, message: expect.stringMatching(/150 tokens per day/) });
    expect(refused.headers).toEqual({
      'retry-after': String(Math.ceil(untilMidnight / 1000)),
      'x-ratelimit-limit-tokens': '150',
      'x-ratelimit-remaining-tokens': '0',
      'x-ratelimit-reset-tokens': resetDuration(untilMidnight),
    });
    await expect(limiter.acquire('b')).resolves.toBeDefined();
    now += untilMidnight;
    await expect(limiter.acquire('a')).resolves.toBeDefined();
  });

  it('names the minute’s request limit in the request headers', async () => {
    const limiter = new MemoryLimiter(settings({ requestsPerMinute: 1 }), clock);
    await limiter.acquire('a');
    const refused = await limiter.acquire('a').catch((e) => e);
    expect(refused.headers).toMatchObject({
      'x-ratelimit-limit-requests': '1',
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-reset-requests': expect.stringMatching(/^\d+s$|^1m0s$/),
    });
  });
});

describe('MemoryLimiter.check (between rounds of one run)', () => {
  it('refuses the next upstream call once what was charged plus what the run used reaches a budget', async () => {
    let now = 1_800_000_000_000 - (1_800_000_000_000 % 86_400_000) + 1_000;
    const limiter = new MemoryLimiter(settings({ tokensPerMinute: 100 }), () => now);
    (await limiter.acquire('a')).release(usage(30));
    const run = await limiter.acquire('a');
    await expect(run.check!(usage(60))).resolves.toBeUndefined();
    await expect(answerOf(run.check!(usage(70)))).resolves.toMatchObject({ status: 429, headers: { 'x-ratelimit-limit-tokens': '100', 'x-ratelimit-remaining-tokens': '0' } });
    now += 60_000; // a new minute: only the run's own tokens count
    await expect(run.check!(usage(70))).resolves.toBeUndefined();
  });
});

describe('MemoryLimiter reservations (a request’s own estimated cost)', () => {
  it('refuses a request whose estimate does not fit what is left, reserves an admitted one and settles it to the actual usage', async () => {
    const now = 1_800_000_000_000 - (1_800_000_000_000 % 86_400_000) + 1_000;
    const limiter = new MemoryLimiter(settings({ tokensPerMinute: 100 }), () => now);
    (await limiter.acquire('a', cost(10))).release(usage(30));
    const refused = await limiter.acquire('a', cost(80)).catch((e) => e);
    expect(answered(refused)).toMatchObject({ status: 429, message: expect.stringMatching(/Limit 100, Used 30, Requested 80/) });
    expect(refused.headers).toMatchObject({ 'x-ratelimit-limit-tokens': '100', 'x-ratelimit-remaining-tokens': '70', 'x-ratelimit-reset-tokens': '59s' });
    // 30 charged + 60 reserved: a second request of 20 no longer fits, though nothing more was charged.
    const running = await limiter.acquire('a', cost(60));
    await expect(limiter.acquire('a', cost(20))).rejects.toMatchObject({ headers: { 'x-ratelimit-remaining-tokens': '10' } });
    // Between rounds the run's reservation is not counted twice beside what it used.
    await expect(running.check!(usage(60))).resolves.toBeUndefined();
    running.release(usage(5)); // settled: 30 + 5
    await expect(limiter.acquire('a', cost(65))).resolves.toBeDefined();
  });

  it('takes back the reservation of a request that used nothing, and not in a minute it was never made in', async () => {
    let now = 1_800_000_000_000 - (1_800_000_000_000 % 86_400_000) + 1_000;
    const limiter = new MemoryLimiter(settings({ tokensPerMinute: 100, tokensPerDay: 150 }), () => now);
    (await limiter.acquire('a', cost(90))).release(null);
    const late = await limiter.acquire('a', cost(90));
    now += 60_000; // ends in the next minute: charged there, its reservation gone with its minute but still in the day
    late.release(usage(40));
    const refused = await limiter.acquire('a', cost(120)).catch((e) => e);
    expect(refused).toMatchObject({ message: expect.stringMatching(/tokens per day: Limit 150, Used 40, Requested 120/) });
    await expect(limiter.acquire('a', cost(60))).resolves.toBeDefined();
  });
});

describe('limits.admissionEstimate', () => {
  it('reserves the prompt only, or nothing, as set', async () => {
    const now = () => 1_800_000_000_000;
    const prompt = new MemoryLimiter(settings({ tokensPerDay: 100, admissionEstimate: 'prompt' }), now);
    const held = await prompt.acquire('a', { prompt: 60, output: 1_000 });
    await expect(prompt.acquire('a', { prompt: 50, output: 0 })).rejects.toMatchObject({ headers: { 'x-ratelimit-remaining-tokens': '40' } });
    held.release(usage(10));
    const none = new MemoryLimiter(settings({ tokensPerDay: 100, admissionEstimate: 'none' }), now);
    await none.acquire('a', { prompt: 500, output: 500 });
    await expect(none.acquire('a', { prompt: 500, output: 500 })).resolves.toBeDefined();
  });
});

describe('resetDuration', () => {
  it('writes durations as OpenAI does', () => {
    expect([resetDuration(20), resetDuration(1_000), resetDuration(59_500), resetDuration(360_000), resetDuration(3_723_000)]).toEqual(['20ms', '1s', '1m0s', '6m0s', '1h2m3s']);
  });
});
