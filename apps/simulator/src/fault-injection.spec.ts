import { once } from 'node:events';
import { SimulatedUpstream } from './simulated-upstream.js';
import { postJson, readSse, sseBlocks, type SseBlock } from './testing/simulator-client.js';

async function readUntilError(res: Response): Promise<{ blocks: SseBlock[]; error: unknown }> {
  const blocks: SseBlock[] = [];
  try {
    for await (const block of sseBlocks(res)) blocks.push(block);
    return { blocks, error: undefined };
  } catch (error) {
    return { blocks, error };
  }
}

const isJson = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

describe('fault injection', () => {
  let sim: SimulatedUpstream;
  let url: string;

  beforeAll(async () => {
    sim = new SimulatedUpstream();
    ({ url } = await sim.listen());
  });
  afterAll(() => sim.close());

  const responses = (input: string, extra: Record<string, unknown> = {}) => postJson(url, '/responses', { model: 'm', input, ...extra });
  const chat = (content: string, extra: Record<string, unknown> = {}) => postJson(url, '/chat/completions', { model: 'm', messages: [{ role: 'user', content }], ...extra });

  describe('status', () => {
    it('answers the status in the vLLM error envelope, streaming or not', async () => {
      for (const stream of [false, true]) {
        const res = await responses('[[fault status=503 message="engine is warming up"]]', { stream });
        expect(res.status).toBe(503);
        expect(res.headers.get('content-type')).toBe('application/json');
        expect(res.headers.get('retry-after')).toBeNull();
        expect(await res.json()).toEqual({
          error: { message: 'engine is warming up', type: 'ServiceUnavailableError', param: null, code: 503 },
        });
      }
    });

    it('sends retry-after with 429, 1 second unless told otherwise', async () => {
      const plain = await chat('[[fault status=429]]');
      expect(plain.status).toBe(429);
      expect(plain.headers.get('retry-after')).toBe('1');
      expect(((await plain.json()) as any).error).toMatchObject({ type: 'RateLimitError', code: 429 });
      const told = await chat('[[fault status=429 retry_after=7]]', { stream: true });
      expect(told.headers.get('retry-after')).toBe('7');
    });

    it('applies a times=N fault to the first N identical requests only, so a retry succeeds', async () => {
      const prompt = '[[fault status=429 times=1]] [[say recovered]]';
      expect((await responses(prompt)).status).toBe(429);
      const retry = await responses(prompt);
      expect(retry.status).toBe(200);
      expect(((await retry.json()) as any).output[0].content[0].text).toBe('recovered');
    });

    it('takes an instance-wide fault from the option or setFault', async () => {
      const flaky = new SimulatedUpstream({ fault: 'status=500 times=2' });
      const { url: flakyUrl } = await flaky.listen();
      try {
        const call = () => postJson(flakyUrl, '/responses', { model: 'm', input: 'hi' });
        expect((await call()).status).toBe(500);
        expect((await call()).status).toBe(500);
        expect((await call()).status).toBe(200);
        flaky.setFault({ status: 502 });
        expect((await call()).status).toBe(502);
        expect((await postJson(flakyUrl, '/responses', { model: 'm', input: '[[fault status=418]]' })).status).toBe(418);
        flaky.setFault(undefined);
        expect((await call()).status).toBe(200);
        expect(flaky.stats).toMatchObject({ requests: 6, completed: 6, faulted: 4, aborted: 0 });
      } finally {
        await flaky.close();
      }
    });
  });

  it('stall=MS holds back even the headers', async () => {
    const started = performance.now();
    const res = await responses('[[fault stall=150]] [[say late]]', { stream: true });
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    expect((await readSse(res)).length).toBeGreaterThan(0);
  });

  it('stall_after=N ms=MS pauses the stream after N events', async () => {
    const res = await responses('[[fault stall_after=3 ms=1000]] [[say a b c]]', { stream: true });
    const blocks = await readSse(res);
    // The pause sits exactly after the third event: that gap is at least the stall, and every other
    // gap is shorter than it (which holds however slow the machine is, short of 1 s per event).
    const gaps = blocks.slice(1).map((b, i) => b.at - blocks[i].at);
    expect(gaps[2]).toBeGreaterThanOrEqual(950);
    expect(gaps.filter((_, i) => i !== 2).every((gap) => gap < gaps[2])).toBe(true);
    expect(JSON.parse(blocks.at(-1)!.data).type).toBe('response.completed');
  });

  it('reset_after=N destroys the socket after N events, which is not a client abort', async () => {
    const before = sim.stats;
    const { blocks, error } = await readUntilError(await responses('[[fault reset_after=4]] [[say a b c d e f]]', { stream: true }));
    expect(blocks).toHaveLength(4);
    expect(error).toBeDefined();
    const nonStreamed = await responses('[[fault reset_after=0]]').catch((e: unknown) => e);
    expect(nonStreamed).toHaveProperty('message', 'fetch failed');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(sim.stats.aborted).toBe(before.aborted);
    expect(sim.stats.faulted).toBe(before.faulted + 2);
  });

  it('malformed_after=N slips one non-JSON data line in after N events, then carries on', async () => {
    const blocks = await readSse(await chat('[[fault malformed_after=2]] [[say hello world]]', { stream: true }));
    expect(blocks[2].raw.startsWith('data: ')).toBe(true);
    expect(isJson(blocks[2].data)).toBe(false);
    expect(blocks.filter((b) => !isJson(b.data)).map((b) => b.data)).toEqual([blocks[2].data, '[DONE]']);
    expect(blocks.at(-1)!.data).toBe('[DONE]');

    const whole = await responses('[[fault malformed_after=0]]');
    expect(whole.status).toBe(200);
    expect(isJson(await whole.text())).toBe(false);
  });

  it('truncate cuts a JSON body halfway and ends streams before their terminal event', async () => {
    const res = await responses('[[fault truncate]] [[say a fairly long answer to cut]]');
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text.startsWith('{"id":"resp_')).toBe(true);
    expect(isJson(text)).toBe(false);

    const events = (await readSse(await responses('[[fault truncate]] [[say x y]]', { stream: true }))).map((b) => JSON.parse(b.data));
    expect(events.at(-1).type).toBe('response.output_item.done');
    const chunks = await readSse(await chat('[[fault truncate]] [[say x y]]', { stream: true, stream_options: { include_usage: true } }));
    expect(chunks.map((c) => c.data)).not.toContain('[DONE]');
    expect(chunks.every((c) => JSON.parse(c.data).choices[0].finish_reason === null)).toBe(true);
  });

  it('counts a client that goes away mid-stream as aborted', async () => {
    const slow = new SimulatedUpstream({ tokenDelayMs: 20 });
    const { url: slowUrl } = await slow.listen();
    try {
      const aborted = once(slow, 'aborted');
      const controller = new AbortController();
      const res = await postJson(slowUrl, '/responses', { model: 'm', stream: true, input: '[[tokens 500]]' }, controller.signal);
      let seen = 0;
      await expect(
        (async () => {
          for await (const _block of sseBlocks(res)) if (++seen === 5) controller.abort();
        })(),
      ).rejects.toHaveProperty('name', 'AbortError');
      const [record] = await aborted;
      expect(record).toMatchObject({ path: '/v1/responses', body: { input: '[[tokens 500]]' } });
      expect(slow.stats).toMatchObject({ requests: 1, active: 0, aborted: 1, completed: 0 });

      const whole = new AbortController();
      const pending = postJson(slowUrl, '/responses', { model: 'm', input: '[[delay ttft=5000]] hi' }, whole.signal).catch(() => 'gone');
      await new Promise((resolve) => setTimeout(resolve, 30));
      whole.abort();
      expect(await pending).toBe('gone');
      await once(slow, 'aborted');
      expect(slow.stats).toMatchObject({ requests: 2, active: 0, aborted: 2 });
    } finally {
      await slow.close();
    }
  });
});
