import http from 'node:http';
import WebSocket from 'ws';
import { startStack, type GatewayStack } from './support/gateway-harness.js';

/**
 * A client that stops reading must hold the upstream back (TCP backpressure
 * through the gateway), not make the gateway buffer the whole answer.
 */
/**
 * How long the client stops reading. That a pause the gateway asked for does
 * not count as the upstream going idle is shown where silence can be scripted
 * (http-transport.spec.ts); here the idle timeout is left at a length no busy
 * machine reaches between two chunks of a live stream.
 */
const PAUSE_MS = 1500;

describe('backpressure from a slow streaming client', () => {
  let stack: GatewayStack;
  beforeAll(async () => {
    stack = await startStack({ config: { timeouts: { idleMs: 30_000 } } });
  });
  afterAll(() => stack.close());

  it('pauses the upstream while the client does not read, then delivers everything', async () => {
    // Tens of megabytes of events: far past every socket buffer and the gateway's high-water marks.
    const tokens = 200_000;
    const before = stack.simulator.stats;
    const url = new URL(`${stack.url}/responses`);
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json' } }, resolve);
      req.on('error', reject);
      req.end(JSON.stringify({ model: 'm', input: `[[tokens ${tokens}]]`, stream: true }));
    });
    expect(res.statusCode).toBe(200);
    res.pause();
    await new Promise((r) => setTimeout(r, PAUSE_MS));
    const during = stack.simulator.stats;
    expect(during.completed).toBe(before.completed);
    expect(during.active).toBe(before.active + 1);

    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => (text += chunk));
    res.resume();
    await new Promise((r) => res.on('end', r));
    const last = text.trimEnd().split('\n\n').at(-1)!;
    expect(last).toContain('event: response.completed');
    const deltas = text.split('event: response.output_text.delta\n').length - 1;
    expect(deltas).toBe(tokens);
    expect(stack.simulator.stats.completed).toBe(before.completed + 1);
  }, 120_000);

  it('holds the upstream back for a WebSocket client that stops reading', async () => {
    // Tens of megabytes of events: far past every socket buffer and the gateway's high-water marks.
    const tokens = 200_000;
    const before = stack.simulator.stats;
    const ws = new WebSocket(`${stack.url.replace(/^http/, 'ws')}/responses`);
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    let deltas = 0;
    let terminal = '';
    // Stop reading at the first delta, from inside the handler: a timer would race a fast machine
    // that has relayed the whole answer into the buffers before it fires.
    let markPaused!: () => void;
    const paused = new Promise<void>((resolve) => (markPaused = resolve));
    const finished = new Promise<void>((resolve) => {
      ws.on('message', (data) => {
        const frame = JSON.parse(data.toString()) as { type: string };
        if (frame.type === 'response.output_text.delta' && deltas++ === 0) {
          ws.pause();
          markPaused();
        }
        if (frame.type === 'response.completed' || frame.type === 'response.failed' || frame.type === 'error') {
          terminal = frame.type;
          resolve();
        }
      });
    });
    ws.send(JSON.stringify({ type: 'response.create', model: 'm', input: `[[tokens ${tokens}]]`, store: false }));
    await paused;
    await new Promise((r) => setTimeout(r, PAUSE_MS));
    const during = stack.simulator.stats;
    expect(during.completed).toBe(before.completed);
    expect(during.active).toBe(before.active + 1);
    ws.resume();
    await finished;
    expect(terminal).toBe('response.completed');
    expect(deltas).toBe(tokens);
    ws.close();
  }, 120_000);
});
