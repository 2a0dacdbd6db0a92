import type { Worker } from 'node:cluster';
import { limitsPrimaryService } from './primary.limiter.js';

const worker = (id: number) => ({ id }) as Worker;
const settings = {
  concurrentRequests: 2,
  requestsPerMinute: null,
  tokensPerMinute: 100,
  tokensPerDay: null,
  redisUrl: null,
  keyPrefix: 't:',
  admissionEstimate: 'prompt_and_output' as const,
};

describe('the primary’s limits service (worker mode)', () => {
  it('counts one owner’s places across workers, and refuses past the limit with the 429’s words', async () => {
    const service = limitsPrimaryService(settings);
    const a = (await service.handle({ op: 'acquire', owner: 'o' }, worker(1))) as { lease: number };
    await service.handle({ op: 'acquire', owner: 'o' }, worker(2));
    expect(await service.handle({ op: 'acquire', owner: 'o' }, worker(2))).toEqual({
      refused: { message: expect.stringMatching(/2 concurrent requests/), retryAfter: 1, headers: {} },
    });
    await service.handle({ op: 'release', lease: a.lease, tokens: 0 }, worker(1));
    expect(await service.handle({ op: 'acquire', owner: 'o' }, worker(2))).toEqual({ lease: expect.any(Number) });
  });

  it('charges the tokens a worker reports on release', async () => {
    const service = limitsPrimaryService({ ...settings, concurrentRequests: null });
    const lease = (await service.handle({ op: 'acquire', owner: 'o' }, worker(1))) as { lease: number };
    await service.handle({ op: 'release', lease: lease.lease, tokens: 150 }, worker(1));
    expect(await service.handle({ op: 'acquire', owner: 'o' }, worker(1))).toMatchObject({
      refused: { message: expect.stringMatching(/100 tokens per minute/), headers: { 'x-ratelimit-limit-tokens': '100', 'x-ratelimit-remaining-tokens': '0' } },
    });
  });

  it('counts a day’s tokens for every worker: what one worker charged refuses the other', async () => {
    const service = limitsPrimaryService({ ...settings, concurrentRequests: null, tokensPerMinute: null, tokensPerDay: 500 });
    for (const [w, tokens] of [
      [1, 300],
      [2, 250],
    ]) {
      const lease = (await service.handle({ op: 'acquire', owner: 'o' }, worker(w))) as { lease: number };
      await service.handle({ op: 'release', lease: lease.lease, tokens }, worker(w));
    }
    expect(await service.handle({ op: 'acquire', owner: 'o' }, worker(1))).toMatchObject({
      refused: { message: expect.stringMatching(/500 tokens per day/), headers: { 'x-ratelimit-limit-tokens': '500' } },
    });
  });

  it('checks a running lease against the shared budget between rounds', async () => {
    const service = limitsPrimaryService({ ...settings, concurrentRequests: null });
    const spent = (await service.handle({ op: 'acquire', owner: 'o' }, worker(1))) as { lease: number };
    await service.handle({ op: 'release', lease: spent.lease, tokens: 60 }, worker(1));
    const running = (await service.handle({ op: 'acquire', owner: 'o' }, worker(2))) as { lease: number };
    expect(await service.handle({ op: 'check', lease: running.lease, tokens: 30 }, worker(2))).toEqual({ ok: true });
    expect(await service.handle({ op: 'check', lease: running.lease, tokens: 40 }, worker(2))).toMatchObject({
      refused: { message: expect.stringMatching(/100 tokens per minute/) },
    });
  });

  it('reserves an estimate for every worker and gives it back when the worker dies', async () => {
    const service = limitsPrimaryService({ ...settings, concurrentRequests: null });
    expect(await service.handle({ op: 'acquire', owner: 'o', cost: { prompt: 20, output: 50 } }, worker(1))).toHaveProperty('lease');
    expect(await service.handle({ op: 'acquire', owner: 'o', cost: { prompt: 10, output: 30 } }, worker(2))).toMatchObject({
      refused: { message: expect.stringMatching(/Used 70, Requested 40/), headers: { 'x-ratelimit-remaining-tokens': '30' } },
    });
    service.workerExited!(worker(1));
    expect(await service.handle({ op: 'acquire', owner: 'o', cost: { prompt: 10, output: 30 } }, worker(2))).toHaveProperty('lease');
  });

  it('gives back the places of a worker that died', async () => {
    const service = limitsPrimaryService(settings);
    await service.handle({ op: 'acquire', owner: 'o' }, worker(1));
    await service.handle({ op: 'acquire', owner: 'o' }, worker(1));
    expect(await service.handle({ op: 'acquire', owner: 'o' }, worker(2))).toHaveProperty('refused');
    service.workerExited!(worker(1));
    expect(await service.handle({ op: 'acquire', owner: 'o' }, worker(2))).toHaveProperty('lease');
  });
});
