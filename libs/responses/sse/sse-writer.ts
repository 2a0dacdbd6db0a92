import type { ServerResponse } from 'node:http';

/**
 * Writes Server-Sent Events to one HTTP response: one `write` per event
 * (`event:` line + `data:` line, `\n` endings), headers committed only with
 * the first event so that errors before it can still be plain HTTP errors,
 * and a keep-alive comment whenever the stream has been quiet too long.
 */
export class SseWriter {
  private committed = false;
  private lastWrite = Date.now();
  private keepAlive?: NodeJS.Timeout;

  constructor(
    private readonly res: ServerResponse,
    private readonly keepAliveMs: number,
  ) {}

  get headersSent(): boolean {
    return this.committed;
  }

  commit(): void {
    if (this.committed) return;
    this.committed = true;
    this.res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      // Reverse proxies (nginx) otherwise buffer the whole stream.
      'X-Accel-Buffering': 'no',
    });
    this.res.flushHeaders();
    this.res.socket?.setNoDelay(true);
    this.keepAlive = setInterval(() => {
      if (Date.now() - this.lastWrite >= this.keepAliveMs) this.raw(': keep-alive\n\n');
    }, Math.max(50, Math.floor(this.keepAliveMs / 2)));
    this.keepAlive.unref();
  }

  event(type: string, payload: unknown): void {
    this.commit();
    this.raw(`event: ${type}\ndata: ${JSON.stringify(payload)}\n\n`);
  }

  end(): void {
    this.stop();
    if (!this.res.writableEnded) this.res.end();
  }

  stop(): void {
    if (this.keepAlive) clearInterval(this.keepAlive);
    this.keepAlive = undefined;
  }

  private raw(chunk: string): void {
    if (this.res.writableEnded || this.res.destroyed) return;
    this.lastWrite = Date.now();
    this.res.write(chunk);
  }
}
