import http from 'node:http';
import { startStack } from '../gateway-harness.js';
import { until } from '../until.js';

/**
 * Run with `--expose-gc` through the test loader (`test/idle-stream-memory.e2e-spec.ts`): the
 * simulated upstream and a gateway in this fresh process, idle open streams held at 10 and then
 * 100 straight to the upstream and then through the gateway, and the heap per stream of each
 * printed as JSON. A process of its own: a Jest worker that ran other files first may carry
 * their hooks and timers (an async hook stores context on every async resource a stream makes),
 * which the heap would count as the gateway's.
 */
const MODEL = 'switchyard-sim';
const FEW = Number(process.argv[2] ?? 10);
const MANY = Number(process.argv[3] ?? 100);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

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
  gc!();
  gc!();
  return process.memoryUsage().heapUsed;
}

const stack = await startStack({ config: { upstream: { maxSockets: MANY + 16 }, timeouts: { idleMs: 600_000 } } });
try {
  const open = async (responsesUrl: string, count: number, held: HeldStream[]) => {
    const batch = Array.from({ length: count }, () => holdStream(responsesUrl));
    held.push(...batch);
    for (const chunk of await Promise.all(batch.map((stream) => stream.started))) {
      if (!chunk.includes('response.created')) throw new Error(`a stream started with ${JSON.stringify(chunk.slice(0, 80))}`);
    }
  };

  /** Heap per stream from FEW to MANY idle streams at `responsesUrl`, and the heap once they closed against that at FEW. */
  const heldHeap = async (responsesUrl: string) => {
    const held: HeldStream[] = [];
    await open(responsesUrl, FEW, held);
    const atFew = liveHeap();
    await open(responsesUrl, MANY - FEW, held);
    const atMany = liveHeap();
    const activeAtMany = stack.simulator.stats.active;
    for (const stream of held) stream.close();
    await until(
      () => stack.simulator.stats.active,
      (active) => active === 0,
      'every upstream request let go',
    );
    return { perStream: (atMany - atFew) / (MANY - FEW), keptAfterClose: liveHeap() - atFew, activeAtMany };
  };

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
    for (const text of await Promise.all(warm)) if (!text.includes('response.completed')) throw new Error('a warm-up stream did not complete');
  }
  const direct = await heldHeap(upstreamUrl);
  const through = await heldHeap(gatewayUrl);
  process.stdout.write(`${JSON.stringify({ direct, through })}\n`);
} finally {
  await stack.close();
}
