import http from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { until } from './support/until.js';

// A collection on demand, so that the heap is read with only what is live in it.
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

const MODEL = 'switchyard-sim';
/** Streams held at 10x and 100x. */
const FEW = 10;
const MANY = 100;
/**
 * What the gateway may keep per idle open stream: its exchange with the
 * client, the run waiting on its model and its upstream request. Read as
 * the heap per stream held through the gateway less the heap per stream
 * held straight against the simulated upstream, measured the same way in
 * this process (the simulator's exchange and this test's client request are
 * in both). Measured here (Node 20): 60-70 KiB when the run was a chain of
 * standard RxJS operators, each keeping its own subscriber and closures
 * while it waits, and 50-55 KiB with the run's stages as the relays of
 * `libs/core/loop/run-operators.ts` (the round keeps its fold of standard
 * operators, `scan` over `roundReducer`). The bound sits between the two:
 * every reading of the chain trips it, the relays pass it with a few KiB
 * to spare.
 */
const MAX_GATEWAY_BYTES_PER_STREAM = 58 * 1024;

interface HeldStream {
  /** The first bytes of the body: the stream has started. */
  started: Promise<string>;
  close(): void;
}

/** A streaming request whose first token is five minutes away: once the stream has started nothing comes. */
function holdStream(responsesUrl: string): HeldStream {
  const body = JSON.stringify({ model: MODEL, input: '[[delay ttft=300000]] [[tokens 5]]', stream: true, store: false });
  const request = http.request(responsesUrl, {
    method: 'POST',
    agent: false,
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
  });
  const started = new Promise<string>((resolve, reject) => {
    request.once('response', (response) => {
      response.setEncoding('utf8');
      response.once('data', (chunk: string) => resolve(chunk));
    });
    request.once('error', reject);
  });
  request.end(body);
  return { started, close: () => request.destroy() };
}

/** Heap in use once everything unreachable is collected (twice: finalizers free more). */
function liveHeap(): number {
  collect();
  collect();
  return process.memoryUsage().heapUsed;
}

/**
 * Idle open streams, grown 10x and 100x: what each keeps while it waits on
 * its model is read as the heap's growth from 10 to 100 streams, so that
 * what the first streams make once (compiled code, pooled buffers, lazily
 * made module state) is not counted. A run that holds a chain of operators
 * per stream (the regression this guards) shows up as bytes per stream;
 * closing every stream gives the heap back.
 */
describe('Idle open streams, 10x and 100x (memory per stream)', () => {
  let stack: GatewayStack;
  const held: HeldStream[] = [];

  beforeAll(async () => {
    stack = await startStack({ config: { upstream: { maxSockets: MANY + 16 }, timeouts: { idleMs: 600_000 } } });
  });

  afterAll(async () => {
    for (const stream of held) stream.close();
    await stack?.close();
  });

  const open = async (responsesUrl: string, count: number) => {
    const batch = Array.from({ length: count }, () => holdStream(responsesUrl));
    held.push(...batch);
    return Promise.all(batch.map((stream) => stream.started));
  };

  const closeAll = async () => {
    for (const stream of held.splice(0)) stream.close();
    await until(
      () => stack.simulator.stats.active,
      (active) => active === 0,
      'every upstream request let go',
    );
  };

  /** Heap per stream from FEW to MANY idle streams at `responsesUrl`, and the heap once they closed against that at FEW. */
  const heldHeap = async (responsesUrl: string, started: string) => {
    for (const chunk of await open(responsesUrl, FEW)) expect(chunk).toContain(started);
    const atFew = liveHeap();
    for (const chunk of await open(responsesUrl, MANY - FEW)) expect(chunk).toContain(started);
    const atMany = liveHeap();
    expect(stack.simulator.stats.active).toBe(MANY);
    await closeAll();
    return { perStream: (atMany - atFew) / (MANY - FEW), keptAfterClose: liveHeap() - atFew };
  };

  it(`keeps under ${MAX_GATEWAY_BYTES_PER_STREAM / 1024} KiB per idle stream in the gateway, and lets it go once the streams close`, async () => {
    const upstreamUrl = `${stack.config.upstream.baseUrl}/responses`;
    const gatewayUrl = `${stack.url}/responses`;
    // Warm-up: streams run to their end, so that code and pools exist before anything is read.
    for (const url of [upstreamUrl, gatewayUrl, upstreamUrl, gatewayUrl]) {
      const warm = Array.from({ length: 25 }, () =>
        fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: MODEL, input: '[[tokens 20]]', stream: true, store: false }),
        }).then((response) => response.text()),
      );
      for (const text of await Promise.all(warm)) expect(text).toContain('response.completed');
    }

    const direct = await heldHeap(upstreamUrl, 'response.created');
    const through = await heldHeap(gatewayUrl, 'response.created');
    const gatewayShare = through.perStream - direct.perStream;
    console.log(
      `idle open streams, heap per stream: ${(through.perStream / 1024).toFixed(1)} KiB through the gateway, ` +
        `${(direct.perStream / 1024).toFixed(1)} KiB straight to the upstream, the gateway's share ${(gatewayShare / 1024).toFixed(1)} KiB`,
    );
    expect(direct.perStream).toBeGreaterThan(0);
    expect(gatewayShare).toBeGreaterThan(0);
    expect(gatewayShare).toBeLessThan(MAX_GATEWAY_BYTES_PER_STREAM);
    // What 100 streams held is given back (up to what 10 of them would hold).
    expect(through.keptAfterClose).toBeLessThan(FEW * through.perStream);
  });
});
