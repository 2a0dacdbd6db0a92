import WebSocket from 'ws';
import type { GatewayStack } from './gateway-harness.js';

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error']);

/** A real WebSocket client with a frame queue the test reads in order. */
export class SocketClient {
  private readonly frames: any[] = [];
  private waiters: Array<() => void> = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.frames.push(JSON.parse(data.toString()));
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  static open(stack: GatewayStack, headers: Record<string, string> = {}): Promise<SocketClient> {
    const ws = new WebSocket(`${stack.url.replace(/^http/, 'ws')}/responses`, { headers });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new SocketClient(ws)));
      ws.once('unexpected-response', (_req, res) => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode, res })));
      ws.once('error', reject);
    });
  }

  send(event: unknown): void {
    this.ws.send(typeof event === 'string' ? event : JSON.stringify(event));
  }

  create(body: Record<string, unknown>): void {
    this.send({ type: 'response.create', ...body });
  }

  async next(timeoutMs = 5000): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    while (this.frames.length === 0) {
      if (Date.now() > deadline) throw new Error('no frame in time');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.frames.shift();
  }

  /** Frames up to and including the next terminal event or error. */
  async untilDone(): Promise<any[]> {
    const out: any[] = [];
    for (;;) {
      const frame = await this.next();
      out.push(frame);
      if (TERMINAL.has(frame.type)) return out;
    }
  }

  close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.close();
    });
  }
}
