import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { DrainState } from '#observability/lifecycle/drain-state.service.js';
import { parseSse, startStack } from './support/gateway-harness.js';
import { startGatewayProcess } from './support/process/gateway-process.js';

/** Opens a streaming response and reads it as it comes; `firstDelta` resolves on the first text delta. */
function openStream(url: string, input: string) {
  let text = '';
  let onDelta!: () => void;
  const firstDelta = new Promise<void>((resolve) => (onDelta = resolve));
  const done = (async () => {
    const res = await fetch(`${url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', input, stream: true }),
    });
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        text += decoder.decode(chunk, { stream: true });
        if (text.includes('response.output_text.delta')) onDelta();
      }
    } catch {
      // A stream cut at the deadline ends the body with an error: what was read is the result.
    }
    return text;
  })();
  return { firstDelta, done };
}

describe('graceful drain on SIGTERM', () => {
  let simulator: SimulatedUpstream;
  let upstreamUrl: string;

  beforeAll(async () => {
    // 40 ms between tokens: long enough that SIGTERM lands mid-stream.
    simulator = new SimulatedUpstream({ tokenDelayMs: 40, chunkChars: 4 });
    ({ url: upstreamUrl } = await simulator.listen(0, '127.0.0.1'));
  });
  afterAll(() => simulator.close());

  it('a stream open at SIGTERM finishes within the deadline; new connections are refused; the process exits', async () => {
    const gateway = await startGatewayProcess({ UPSTREAM_URL: upstreamUrl, STORAGE_DRIVER: 'memory', SHUTDOWN_GRACE_MS: '60000' });
    try {
      // 150 tokens at 40 ms each: seconds of stream left when SIGTERM lands, even on a busy machine.
      const stream = openStream(gateway.url, 'Talk for a while. [[tokens 150]]');
      await stream.firstDelta;
      gateway.child.kill('SIGTERM');
      const draining = JSON.parse(await gateway.waitForLine((l) => l.includes('"msg":"draining"')));
      expect(draining).toMatchObject({ in_flight: 1, grace_ms: 60000 });
      // The listener is closed: nobody new gets in while the stream finishes.
      await expect(fetch(`${gateway.url}/health`)).rejects.toThrow();
      const events = parseSse(await stream.done).map((e) => e.event);
      expect(events[events.length - 1]).toBe('response.completed');
      const exit = await gateway.exited;
      expect({ exit, stderr: gateway.stderr() }).toEqual({ exit: { code: 0, signal: null }, stderr: '' });
      // Its request was logged as a completed 200.
      const logged = gateway.stdout.filter((l) => l.includes('"msg":"request"')).map((l) => JSON.parse(l));
      expect(logged).toEqual([expect.objectContaining({ status: 200, response_status: 'completed', stream: true })]);
    } finally {
      await gateway.kill();
    }
  }, 90_000);

  it('the usage of a run that ends during the drain is on disk when the process exits', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-drain-usage-'));
    const path = join(dir, 'state.sqlite');
    const gateway = await startGatewayProcess({ UPSTREAM_URL: upstreamUrl, STORAGE_DRIVER: 'sqlite', SQLITE_PATH: path, SHUTDOWN_GRACE_MS: '60000' });
    try {
      const stream = openStream(gateway.url, 'Talk for a bit. [[tokens 30]]');
      await stream.firstDelta;
      gateway.child.kill('SIGTERM');
      const completed = parseSse(await stream.done).find((e) => e.event === 'response.completed');
      const told = completed?.data.response.usage;
      const exit = await gateway.exited;
      expect({ exit, stderr: gateway.stderr() }).toEqual({ exit: { code: 0, signal: null }, stderr: '' });
      // The run ended inside the usage batch's window: shutdown wrote it rather than leaving it to a timer.
      const db = new Database(path, { readonly: true });
      try {
        expect(db.prepare('SELECT SUM(requests) AS requests, SUM(input_tokens) AS input, SUM(output_tokens) AS output FROM usage_minutes').get()).toEqual({
          requests: 1,
          input: told.input_tokens,
          output: told.output_tokens,
        });
      } finally {
        db.close();
      }
    } finally {
      await gateway.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);

  it('a stream still open at the deadline is cut, its upstream call aborted, and the process exits', async () => {
    const gateway = await startGatewayProcess({ UPSTREAM_URL: upstreamUrl, STORAGE_DRIVER: 'memory', SHUTDOWN_GRACE_MS: '300' });
    try {
      const abortedBefore = simulator.stats.aborted;
      // 2000 tokens at 40 ms each: far longer than the 300 ms deadline.
      const stream = openStream(gateway.url, 'Talk for a long while. [[tokens 2000]]');
      await stream.firstDelta;
      gateway.child.kill('SIGTERM');
      const text = await stream.done;
      // Only whole events: the cut may fall inside one.
      const events = parseSse(text.slice(0, text.lastIndexOf('\n\n') + 2)).map((e) => e.event);
      expect(events).not.toContain('response.completed');
      const exit = await gateway.exited;
      expect({ exit, stderr: gateway.stderr() }).toEqual({ exit: { code: 0, signal: null }, stderr: '' });
      // The upstream sees its request abandoned (the gateway's run was cancelled with the socket).
      for (let i = 0; i < 100 && simulator.stats.aborted <= abortedBefore; i++) await new Promise((r) => setTimeout(r, 100));
      expect(simulator.stats.aborted).toBeGreaterThan(abortedBefore);
    } finally {
      await gateway.kill();
    }
  }, 90_000);

  it('a second signal during the drain exits at once, without waiting for the open stream', async () => {
    const gateway = await startGatewayProcess({ UPSTREAM_URL: upstreamUrl, STORAGE_DRIVER: 'memory', SHUTDOWN_GRACE_MS: '600000' });
    try {
      const stream = openStream(gateway.url, 'Talk for a long while. [[tokens 2000]]');
      await stream.firstDelta;
      gateway.child.kill('SIGTERM');
      await gateway.waitForLine((l) => l.includes('"msg":"draining"'));
      gateway.child.kill('SIGTERM');
      expect(await gateway.exited).toEqual({ code: 130, signal: null });
      expect(gateway.stdout.some((l) => l.includes('second signal'))).toBe(true);
      expect(parseSse((await stream.done).split('\n\n').slice(0, -1).join('\n\n') + '\n\n').map((e) => e.event)).not.toContain('response.completed');
    } finally {
      await gateway.kill();
    }
  }, 90_000);
});

describe('readiness while draining', () => {
  it('/ready answers 503 on a connection still open once the drain has begun, and answers close the connection', async () => {
    const stack = await startStack();
    try {
      const base = stack.url.replace(/\/v1$/, '');
      expect((await fetch(`${base}/ready`)).status).toBe(200);
      stack.app.get(DrainState).draining = true;
      const res = await fetch(`${base}/ready`);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ status: 'draining' });
      expect(res.headers.get('connection')).toBe('close');
    } finally {
      await stack.close();
    }
  });
});
