import WebSocket from 'ws';

/** A WebSocket to the gateway's `/v1/responses` that hands frames over in order. */
export class FrameSocket {
  private readonly frames: any[] = [];
  private wake?: () => void;
  closed = false;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.frames.push(JSON.parse(data.toString()));
      this.wake?.();
    });
    ws.on('close', () => {
      this.closed = true;
      this.wake?.();
    });
  }

  /** Opens the socket, or rejects with the upgrade's HTTP status and body. */
  static open(httpBase: string, headers: Record<string, string> = {}): Promise<FrameSocket> {
    const ws = new WebSocket(`${httpBase.replace(/^http/, 'ws')}/v1/responses`, { headers });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new FrameSocket(ws)));
      ws.once('unexpected-response', (_req, res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode, body: text })));
      });
      ws.once('error', reject);
    });
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  async next(timeoutMs = 10_000): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    while (this.frames.length === 0) {
      if (this.closed) throw new Error('socket closed');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no frame in time');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return this.frames.shift();
  }

  /** Frames up to and including the first terminal one (a response's end or an `error`). */
  async untilTerminal(timeoutMs = 10_000): Promise<any[]> {
    const seen: any[] = [];
    for (;;) {
      const frame = await this.next(timeoutMs);
      seen.push(frame);
      if (['response.completed', 'response.incomplete', 'response.failed', 'error'].includes(frame.type)) return seen;
    }
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.close();
    });
  }
}
