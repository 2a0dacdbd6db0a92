import http from 'node:http';
import { parseSse, startStack, type GatewayStack } from './support/gateway-harness.js';
import { upstreamPool, waitFor } from './support/robustness/leak-probe.js';
import { rawPost } from './support/robustness/raw-http.js';

/**
 * A bounded burst: 300 streams opened at once through one gateway (more than
 * its 256 upstream sockets, so some wait for a socket), each with its own
 * text. Every stream must complete, and every stream must carry exactly its
 * own text, in order, with gap-free sequence numbers.
 */
const STREAMS = 300;

describe('concurrent streams', () => {
  let stack: GatewayStack;

  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.close());

  it(`${STREAMS} concurrent streams complete with zero errors, each with its own text`, async () => {
    const before = stack.simulator.stats;
    const agent = new http.Agent({ keepAlive: false, maxSockets: STREAMS });
    const expected = (i: number) => `stream ${i} says ${'abc'.repeat(i % 7)} done-${i}.`;
    // Every stream waits for its first token until the pool is full and the rest are queued: measured, not timed.
    const release = stack.simulator.holdFirstTokens();
    const maxSockets = stack.config.upstream.maxSockets;
    const peak = { active: 0, queued: 0 };
    try {
      const replies = Promise.all(
        Array.from({ length: STREAMS }, (_, i) =>
          rawPost(`${stack.url}/responses`, JSON.stringify({ model: 'm', stream: true, input: `[[delay token=2]] [[say ${expected(i)}]]` }), {
            agent,
            timeoutMs: 120_000,
          }),
        ),
      );
      const full = await waitFor(() => {
        const pool = upstreamPool(stack);
        peak.active = Math.max(peak.active, pool.active);
        peak.queued = Math.max(peak.queued, pool.queued);
        return pool.active === maxSockets && pool.queued === STREAMS - maxSockets;
      }, 60_000);
      expect(full).toBe(true);
      release();
      const results = await replies;
      const problems: string[] = [];
      results.forEach((res, i) => {
        if (res.status !== 200) return problems.push(`#${i}: HTTP ${res.status} ${res.text.slice(0, 120)}`);
        const events = parseSse(res.text).map((e) => e.data);
        const deltas = events
          .filter((e) => e.type === 'response.output_text.delta')
          .map((e) => e.delta)
          .join('');
        const last = events[events.length - 1];
        const finalText = last?.response?.output?.at(-1)?.content?.[0]?.text;
        if (last?.type !== 'response.completed') return problems.push(`#${i}: ended with ${last?.type}`);
        if (deltas !== expected(i)) return problems.push(`#${i}: deltas "${deltas}"`);
        if (finalText !== expected(i)) return problems.push(`#${i}: final text "${finalText}"`);
        if (!events.every((e, n) => e.sequence_number === n)) return problems.push(`#${i}: sequence numbers out of order`);
        return undefined;
      });
      expect(problems).toEqual([]);
    } finally {
      release();
      agent.destroy();
    }
    // Really concurrent: the upstream pool hit its cap and the rest waited for a socket.
    expect(peak).toEqual({ active: maxSockets, queued: STREAMS - maxSockets });
    const after = stack.simulator.stats;
    expect(after.requests - before.requests).toBe(STREAMS);
    expect(after.aborted).toBe(before.aborted);
    expect(await waitFor(() => stack.simulator.stats.active === 0 && upstreamPool(stack).active === 0, 10_000)).toBe(true);
  }, 180_000);
});
