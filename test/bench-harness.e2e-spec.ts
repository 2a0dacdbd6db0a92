import http from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { bodyOf, messageAt } from '../bench/lib/http1-framing.js';
import { ReplayUpstream } from '../bench/lib/replay-upstream.js';
import { runSocketLoad } from '../bench/lib/socket-load.js';
import { median, pairedRatio } from '../bench/lib/stats.js';

/**
 * The lean harness of `bench/scale.bench.ts`: its two-worker ratio is only as
 * true as these pieces, so they are checked against real servers: the
 * simulated upstream behind the replay, `node:http` under the load generator.
 */
describe('bench harness: HTTP/1.1 framing', () => {
  const bytes = (text: string) => Buffer.from(text, 'latin1');

  it('ends a content-length message at its length, and waits while it is short', () => {
    const whole = bytes('HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhelloHTTP/1.1 204 No Content\r\n\r\n');
    const first = messageAt(whole, 0, true)!;
    expect(bodyOf(whole, first).toString()).toBe('hello');
    const second = messageAt(whole, first.end, true)!;
    expect(second.end).toBe(whole.length);
    expect(messageAt(whole.subarray(0, first.end - 1), 0, true)).toBeUndefined();
  });

  it('walks chunked bodies, across reads, and removes the framing', () => {
    const whole = bytes('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\na;ext=1\r\n0123456789\r\n0\r\n\r\n');
    for (let cut = 0; cut < whole.length; cut++) expect(messageAt(whole.subarray(0, cut), 0, true)).toBeUndefined();
    const message = messageAt(whole, 0, true)!;
    expect(message.end).toBe(whole.length);
    expect(bodyOf(whole, message).toString()).toBe('abc0123456789');
  });

  it('refuses a response framed by closing the connection', () => {
    expect(() => messageAt(bytes('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nuntil close'), 0, true)).toThrow(/content-length or chunked/);
  });
});

describe('bench harness: the paired ratio of `cpu-ratios`', () => {
  it("is the median of each round's own ratio, not the ratio of the two sides' medians", () => {
    // Round 3's denominator ran high and round 2's numerator too: the medians come from different rounds.
    const chain = [110, 230, 160];
    const stored = [100, 200, 170];
    expect(pairedRatio(chain, stored)).toBeCloseTo(1.1, 10);
    expect(median(chain) / median(stored)).toBeCloseTo(160 / 170, 10);
  });

  it('cancels a drift that scales both sides of a round alike', () => {
    const drift = [1, 2.5, 0.7, 1.8, 1.2];
    const num = drift.map((f, i) => 1.08 * 500 * f * (i === 2 ? 1.02 : 1));
    const den = drift.map((f) => 500 * f);
    expect(pairedRatio(num, den)).toBeCloseTo(1.08, 10);
  });

  it('leaves out a round whose either side is missing or not positive, and is NaN when none is left', () => {
    expect(pairedRatio([110, NaN, 120, 90, 100], [100, 100, 0, 100, 100])).toBeCloseTo(1, 10);
    expect(pairedRatio([NaN], [100])).toBeNaN();
    expect(pairedRatio([], [])).toBeNaN();
  });

  it('refuses sides with different numbers of rounds: index i must be round i on both', () => {
    expect(() => pairedRatio([1, 2, 3], [1, 2])).toThrow(/3 rounds against 2/);
  });
});

describe('bench harness: the replay of the simulated upstream', () => {
  let simulator: SimulatedUpstream;
  let replay: ReplayUpstream;
  let url: string;

  beforeAll(async () => {
    simulator = new SimulatedUpstream({});
    const origin = await simulator.listen(0, '127.0.0.1');
    replay = new ReplayUpstream(origin.url);
    url = (await replay.listen()).url;
  });
  afterAll(async () => {
    await replay.close();
    await simulator.close();
  });

  const post = async (body: unknown) => {
    const answer = await fetch(`${url}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: answer.status, type: answer.headers.get('content-type'), text: await answer.text() };
  };

  it('asks the simulator once per distinct request, then answers with its bytes and fresh ids of the same length', async () => {
    const before = simulator.stats.requests;
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await post({ model: 'bench', input: '[[tokens 20]]' }));
    expect(simulator.stats.requests - before).toBe(1);
    expect(replay.stats).toMatchObject({ recorded: 1, replayed: 2 });
    const parsed = answers.map((a) => JSON.parse(a.text));
    for (const a of answers) expect(a).toMatchObject({ status: 200, type: 'application/json' });
    for (const p of parsed) {
      expect(p).toMatchObject({ object: 'response', status: 'completed', output: [{ type: 'message', role: 'assistant' }] });
      expect(p.id).toMatch(/^resp_[0-9a-f]{16}$/);
      expect(p.output[0].id).toMatch(/^msg_[0-9a-f]{16}$/);
    }
    const ids = parsed.flatMap((p) => [p.id, p.output[0].id]);
    expect(new Set(ids).size).toBe(ids.length);
    // Everything but the ids is the simulator's answer as it gave it.
    const withoutIds = (text: string) => text.replace(/(resp|msg)_[0-9a-f]{16}/g, '$1_*');
    expect(new Set(answers.map((a) => withoutIds(a.text))).size).toBe(1);
  });

  it('records a different request on the same route apart, and keeps an id repeated in a streamed answer one id', async () => {
    const recorded = replay.stats.recorded;
    const stream = await post({ model: 'bench', input: '[[tokens 5]]', stream: true });
    const again = await post({ model: 'bench', input: '[[tokens 5]]', stream: true });
    expect(replay.stats.recorded - recorded).toBe(1);
    for (const answer of [stream, again]) {
      expect(answer.type).toMatch(/^text\/event-stream/);
      const responseIds = new Set([...answer.text.matchAll(/"id":"(resp_[0-9a-f]{16})"/g)].map((m) => m[1]));
      expect(responseIds.size).toBe(1);
      expect(answer.text).toContain('"type":"response.completed"');
    }
    expect(stream.text.match(/resp_[0-9a-f]{16}/)![0]).not.toBe(again.text.match(/resp_[0-9a-f]{16}/)![0]);
  });

  it('answers pipelined requests in order while a recording is on its way', async () => {
    const { port } = new URL(url);
    const request = (input: string) => {
      const body = JSON.stringify({ model: 'bench', input: `[[say ${input}]]` });
      return `POST /v1/responses HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
    };
    // One new request (recorded), one already recorded, then both again: all four in one write.
    await post({ model: 'bench', input: '[[say known]]' });
    const texts = await new Promise<string[]>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => socket.write(['fresh', 'known', 'fresh', 'known'].map(request).join('')));
      let received = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        const answers: string[] = [];
        for (let from = 0, message; (message = messageAt(received, from, true)); from = message.end) answers.push(bodyOf(received, message).toString());
        if (answers.length === 4) {
          socket.destroy();
          resolve(answers);
        }
      });
      socket.on('error', reject);
    });
    expect(texts.map((t) => JSON.parse(t).output[0].content[0].text)).toEqual(['fresh', 'known', 'fresh', 'known']);
  });
});

describe('bench harness: the raw-socket load generator', () => {
  let server: http.Server;
  let base: string;
  let served = 0;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        served++;
        const body = Buffer.concat(chunks).toString();
        if (req.url === '/fail') return res.writeHead(500).end('{"error":"no"}');
        // Chunked, in two writes: the generator must frame it itself.
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(`{"echo":${body},`);
        res.end('"status":"completed"}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends the count it is given over keep-alive connections and checks every answer', async () => {
    served = 0;
    const result = await runSocketLoad({ url: `${base}/ok`, body: '{"n":1}', concurrency: 4, maxRequests: 40, maxDurationMs: 30_000, warmupRequests: 8, expect: '"completed"' });
    expect(result).toMatchObject({ requests: 40, errors: 0 });
    expect(served).toBe(48);
    expect(result.rps).toBeGreaterThan(0);
  });

  it('counts a non-200 answer and one without the expected text as errors', async () => {
    const failing = await runSocketLoad({ url: `${base}/fail`, body: '{}', concurrency: 2, maxRequests: 6, maxDurationMs: 30_000 });
    expect(failing).toMatchObject({ requests: 6, errors: 6 });
    expect(failing.firstError).toMatch(/^HTTP 500/);
    const missing = await runSocketLoad({ url: `${base}/ok`, body: '{}', concurrency: 2, maxRequests: 4, maxDurationMs: 30_000, expect: '"incomplete"' });
    expect(missing).toMatchObject({ requests: 4, errors: 4 });
    expect(missing.firstError).toContain('body without ""incomplete""');
  });
});
