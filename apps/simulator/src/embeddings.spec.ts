import { SimulatedUpstream } from './simulated-upstream.js';
import { embedText } from './embeddings.js';
import { until } from '../../../test/support/until.js';

const cosine = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i], 0);

describe('simulated upstream /v1/embeddings', () => {
  let sim: SimulatedUpstream;
  let url: string;
  beforeAll(async () => {
    sim = new SimulatedUpstream();
    ({ url } = await sim.listen());
  });
  afterAll(() => sim.close());

  const post = async (body: unknown) => {
    const res = await fetch(`${url}/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as any };
  };

  it("answers in vLLM's shape, one unit vector per input, in input order", async () => {
    const { status, body } = await post({ model: 'switchyard-sim', input: ['kettle warranty', 'courier delivery'] });
    expect(status).toBe(200);
    expect(body).toEqual({
      id: expect.stringMatching(/^embd-[0-9a-f]{32}$/),
      object: 'list',
      created: expect.any(Number),
      model: 'switchyard-sim',
      data: [
        { index: 0, object: 'embedding', embedding: expect.any(Array) },
        { index: 1, object: 'embedding', embedding: expect.any(Array) },
      ],
      usage: { prompt_tokens: 4, total_tokens: 4, completion_tokens: 0, prompt_tokens_details: null },
    });
    const [a, b] = body.data.map((d: any) => d.embedding as number[]);
    expect(a).toHaveLength(256);
    expect(cosine(a, a)).toBeCloseTo(1, 5);
    expect(a).toEqual(embedText('kettle warranty'));
    expect(cosine(a, b)).toBeLessThan(0.5);
    expect(sim.embeddingRequests.at(-1)!.body).toMatchObject({ input: ['kettle warranty', 'courier delivery'] });
    expect(sim.stats.requests).toBe(0);
  });

  it('counts the requests in flight from arrival to reply and tells each as it comes', async () => {
    const seen: Array<[unknown, number]> = [];
    const listener = (r: { body: unknown }) => void seen.push([(r.body as { input: unknown }).input, sim.embeddingsActive]);
    sim.on('embedding', listener);
    try {
      expect((await post({ model: 'switchyard-sim', input: 'one' })).status).toBe(200);
      expect((await post({ model: 'other', input: 'two' })).status).toBe(400);
      // Each was the only one in flight when it came; the reply's end takes it off the count.
      expect(seen).toEqual([
        ['one', 1],
        ['two', 1],
      ]);
      await until(
        () => sim.embeddingsActive,
        (n) => n === 0,
        'the replies to end',
      );
    } finally {
      sim.off('embedding', listener);
    }
  });

  it('with embeddingDelayMs, holds each reply that long: requests overlap, and one whose client leaves stops counting', async () => {
    const slow = new SimulatedUpstream({ embeddingDelayMs: 120_000 });
    const { url: slowUrl } = await slow.listen();
    const seen: number[] = [];
    slow.on('embedding', () => void seen.push(slow.embeddingsActive));
    const leave = new AbortController();
    const send = (input: string) =>
      fetch(`${slowUrl}/embeddings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'switchyard-sim', input }),
        signal: leave.signal,
      }).catch((err: unknown) => err);
    try {
      const first = send('one');
      await until(
        () => seen.length,
        (n) => n === 1,
        'the first request',
      );
      const second = send('two');
      await until(
        () => seen.length,
        (n) => n === 2,
        'the second request',
      );
      expect(seen).toEqual([1, 2]);
      leave.abort();
      expect(await first).toMatchObject({ name: 'AbortError' });
      expect(await second).toMatchObject({ name: 'AbortError' });
      await until(
        () => slow.embeddingsActive,
        (n) => n === 0,
        'the two to stop counting',
      );
    } finally {
      await slow.close();
    }
  });

  it('is deterministic and puts texts sharing words or stems close together', () => {
    expect(embedText('passwordless sign-in')).toEqual(embedText('passwordless sign-in'));
    const near = cosine(embedText('password'), embedText('passwordless sign-in with keys'));
    const far = cosine(embedText('password'), embedText('orders ship from the warehouse'));
    expect(near).toBeGreaterThan(far + 0.2);
  });

  it('serves base64 and shortened (Matryoshka) vectors', async () => {
    const b64 = await post({ model: 'switchyard-sim', input: 'hello', encoding_format: 'base64' });
    const floats = new Float32Array(Uint8Array.from(Buffer.from(b64.body.data[0].embedding, 'base64')).buffer);
    expect(Array.from(floats)).toEqual(embedText('hello'));
    const short = await post({ model: 'switchyard-sim', input: 'hello', dimensions: 32 });
    expect(short.body.data[0].embedding).toHaveLength(32);
    expect(cosine(short.body.data[0].embedding, short.body.data[0].embedding)).toBeCloseTo(1, 5);
  });

  it("refuses bad requests with vLLM's error envelope", async () => {
    for (const [body, param] of [
      [{ input: 'x' }, 'model'],
      [{ model: 'other', input: 'x' }, 'model'],
      [{ model: 'switchyard-sim' }, 'input'],
      [{ model: 'switchyard-sim', input: [1, 'a'] }, 'input'],
      [{ model: 'switchyard-sim', input: 'x', encoding_format: 'int8' }, 'encoding_format'],
      [{ model: 'switchyard-sim', input: 'x', dimensions: 100000 }, 'dimensions'],
    ] as const) {
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'BadRequestError', param, code: 400 });
    }
  });
});
