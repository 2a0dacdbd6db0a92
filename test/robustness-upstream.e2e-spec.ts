import { startStack, parseSse, type GatewayStack } from './support/gateway-harness.js';
import { activeTimeouts, settleAndReport, upstreamPool } from './support/robustness/leak-probe.js';
import { rawPost } from './support/robustness/raw-http.js';

/**
 * Upstream faults that test/errors.e2e-spec.ts does not cover, each checked
 * for its answer, for its time bound, and for what it leaves behind: no
 * upstream socket still in use, nothing the simulator is still answering, no
 * extra live timers.
 */
/** Short enough to test, long enough that a loaded machine's simulator answers the other cases within it. */
const FIRST_BYTE_MS = 3000;
const IDLE_MS = 300;

describe('upstream faults leave nothing behind', () => {
  let stack: GatewayStack;
  /** Live timers at rest, once, before any fault: a per-case baseline would absorb an earlier case's leak. */
  let baseline: number;

  beforeAll(async () => {
    stack = await startStack({ config: { timeouts: { firstByteMs: FIRST_BYTE_MS, idleMs: IDLE_MS, totalMs: 5000 } } });
    // A first exchange opens the pool, so the baseline counts only what lives for good.
    expect((await rawPost(`${stack.url}/responses`, JSON.stringify({ model: 'm', input: 'warm up' }))).status).toBe(200);
    baseline = activeTimeouts();
  });
  afterAll(() => stack.close());

  async function run(input: string, stream: boolean) {
    const started = Date.now();
    const res = await rawPost(`${stack.url}/responses`, JSON.stringify({ model: 'm', input, stream }));
    const elapsedMs = Date.now() - started;
    const leaks = await settleAndReport(stack, baseline);
    return { res, elapsedMs, leaks };
  }

  function expectClean(leaks: Awaited<ReturnType<typeof settleAndReport>>) {
    expect(leaks.simulatorActive).toBe(0);
    expect(leaks.upstream).toMatchObject({ active: 0, queued: 0 });
    expect(leaks.timeouts).toBeLessThanOrEqual(leaks.baselineTimeouts);
  }

  it.each([false, true])('429 from the upstream → 429 in the envelope before any SSE byte (stream=%s)', async (stream) => {
    const { res, leaks } = await run('[[fault status=429 message="slow down" retry_after=3]]', stream);
    expect(res.status).toBe(429);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(JSON.parse(res.text).error).toMatchObject({ message: 'slow down', code: 'upstream_429', type: 'invalid_request_error' });
    expectClean(leaks);
    // The error body was read to the end, so its socket went back to the pool instead of being dropped.
    expect(upstreamPool(stack).idle).toBeGreaterThan(0);
  });

  it.each([false, true])('stall before the first byte → 504 within the first-byte timeout (stream=%s)', async (stream) => {
    const abortedBefore = stack.simulator.stats.aborted;
    // The stall outlasts the first-byte timeout many times over: only the gateway's timeout can answer.
    const { res, elapsedMs, leaks } = await run('[[fault stall=60000]]', stream);
    expect(res.status).toBe(504);
    expect(JSON.parse(res.text).error).toMatchObject({ type: 'timeout_error', code: 'upstream_timeout' });
    expect(res.text).toMatch(/first-byte/);
    expect(elapsedMs).toBeGreaterThanOrEqual(FIRST_BYTE_MS - 20);
    expectClean(leaks);
    // The gateway hung up on the stalled request: the simulator saw it go.
    expect(stack.simulator.stats.aborted).toBe(abortedBefore + 1);
  });

  it('truncated stream (ends cleanly before the terminal event) → response.failed, then the stream closes', async () => {
    const { res, leaks } = await run('[[fault truncate]] [[tokens 40]]', true);
    expect(res.status).toBe(200);
    const events = parseSse(res.text);
    const last = events[events.length - 1].data;
    expect(last.type).toBe('response.failed');
    expect(last.response.error).toMatchObject({ code: 'upstream_stream_error' });
    expect(last.response.error.message).toMatch(/ended the stream before the response finished/);
    // The text that did arrive was relayed before the failure.
    expect(events.filter((e) => e.data.type === 'response.output_text.delta').length).toBe(40);
    expectClean(leaks);
  });

  it('truncated JSON inside a streamed event → response.failed naming the bad event', async () => {
    const { res, leaks } = await run('[[fault malformed_after=3 truncate]] [[tokens 10]]', true);
    expect(res.status).toBe(200);
    const last = parseSse(res.text).at(-1)!.data;
    expect(last.type).toBe('response.failed');
    expect(last.response.error.message).toMatch(/malformed stream event/);
    expectClean(leaks);
  });

  it('reset before any header (blocking) → 502 naming no address, retried at most once', async () => {
    const requestsBefore = stack.simulator.stats.requests;
    const { res, leaks } = await run('[[fault reset_after=0]]', false);
    expect(res.status).toBe(502);
    const { error } = JSON.parse(res.text);
    expect(error).toMatchObject({ type: 'upstream_error' });
    expect(error.message).toMatch(/^The model server (is unreachable|closed the connection)/);
    expect(error.message).not.toMatch(/127\.0\.0\.1|http:/);
    // Only a reset on a reused keep-alive socket is retried (it may have gone stale), and only once.
    expect(stack.simulator.stats.requests - requestsBefore).toBeLessThanOrEqual(2);
    expectClean(leaks);
  });

  it('reset after the headers but before any event (streaming) → a plain 502, not a broken SSE stream', async () => {
    const { res, leaks } = await run('[[fault reset_after=0]]', true);
    expect(res.status).toBe(502);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(JSON.parse(res.text).error.message).toMatch(/closed the connection in the middle of the response/);
    expectClean(leaks);
  });

  it('a good request still succeeds after all of the above', async () => {
    const res = await rawPost(`${stack.url}/responses`, JSON.stringify({ model: 'm', input: '[[say still here]]' }));
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text).output.at(-1).content[0].text).toBe('still here');
  });
});
