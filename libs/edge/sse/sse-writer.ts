import type { ServerResponse } from 'node:http';
import type { FlowGate } from '#core/protocol/flow-gate.js';
import { stringifyJson } from '#tool-sdk/helpers/frozen-json.js';

/**
 * Writes Server-Sent Events to one HTTP response (`event:` line + `data:`
 * line, `\n` endings), headers committed only with the first event so that
 * errors before it can still be plain HTTP errors, and a keep-alive comment
 * whenever the stream has been quiet too long.
 *
 * Two write modes (`server.sseWrites`):
 * - `event` (default): each event is exactly one HTTP chunk, never split or
 *   merged, so anything reading chunk by chunk sees whole events. The events
 *   of one tick (one upstream chunk) still leave in one socket write: on a
 *   chunked response the writer frames each event as its chunk itself and
 *   hands the tick's frames over in one `write` (the same bytes Node would
 *   frame, without Node's four socket writes per event); on a response Node
 *   does not chunk (an HTTP/1.0 client) each event is one `write` on a socket
 *   corked for the rest of the tick.
 * - `tick`: the events of one tick are joined into one `write`. About twice
 *   the relay throughput on long streams (bench/README.md), for deployments
 *   that do not need write-per-event framing.
 * Either way nothing waits past the current tick.
 */
export class SseWriter {
  private committed = false;
  private lastWrite = Date.now();
  private keepAlive?: NodeJS.Timeout;
  private corked = false;
  private pending = '';
  private written = 0;
  /** `event` mode on a chunked response: `pending` holds the tick's events framed as HTTP chunks. */
  private framed = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly keepAliveMs: number,
    private readonly mode: 'event' | 'tick' = 'event',
    /** Paused while the client's socket buffer is full, resumed on `drain`. */
    private readonly flow?: FlowGate,
  ) {}

  /** Backpressure: a client that reads slower than the model writes holds the upstream back. */
  private checkBackpressure(): void {
    if (!this.flow || this.flow.paused || !this.res.writableNeedDrain) return;
    this.flow.pause();
    this.res.once('drain', () => this.flow?.resume());
  }

  /** Body bytes handed to the response so far, keep-alive comments included. */
  get bytes(): number {
    return this.written;
  }

  get headersSent(): boolean {
    return this.committed;
  }

  commit(): void {
    if (this.committed) return;
    this.committed = true;
    // No flushHeaders(): the first event follows in this tick and carries the headers in the same write.
    this.res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      // Reverse proxies (nginx) otherwise buffer the whole stream.
      'X-Accel-Buffering': 'no',
    });
    // Node decided on chunked framing as it stored the head; from here the writer frames the body itself.
    const node = this.res as ServerResponse & { chunkedEncoding?: boolean };
    if (this.mode === 'event' && node.chunkedEncoding === true) {
      node.chunkedEncoding = false;
      this.framed = true;
    }
    this.res.socket?.setNoDelay(true);
    this.keepAlive = setInterval(
      () => {
        if (Date.now() - this.lastWrite >= this.keepAliveMs) this.raw(': keep-alive\n\n');
      },
      Math.max(50, Math.floor(this.keepAliveMs / 2)),
    );
    this.keepAlive.unref();
  }

  event(type: string, payload: unknown): void {
    this.commit();
    // The response events echo the declared tools, and `response.completed` holds the output items, a
    // kept tool listing among them (`response.output[i].tools`, four levels down): a kept list's text is
    // spliced in (frozen-json.ts).
    this.raw(`event: ${type}\ndata: ${stringifyJson(payload, 4)}\n\n`);
  }

  end(): void {
    this.stop();
    if (this.res.writableEnded || this.res.destroyed) return;
    // The last chunk of a body the writer frames: Node no longer writes it.
    const rest = this.framed ? `${this.pending}0\r\n\r\n` : this.pending;
    this.pending = '';
    // The last events (joined, framed or corked) and the end of the chunked body leave together.
    if (rest) this.res.end(rest);
    else this.res.end();
  }

  stop(): void {
    if (this.keepAlive) clearInterval(this.keepAlive);
    this.keepAlive = undefined;
  }

  private raw(chunk: string): void {
    if (this.res.writableEnded || this.res.destroyed) return;
    this.lastWrite = Date.now();
    const length = Buffer.byteLength(chunk);
    this.written += length;
    if (this.framed) {
      if (!this.pending) process.nextTick(this.flush);
      this.pending += `${length.toString(16)}\r\n${chunk}\r\n`;
      return;
    }
    if (this.mode === 'tick') {
      if (!this.pending) process.nextTick(this.flush);
      this.pending += chunk;
      return;
    }
    if (!this.corked) {
      this.corked = true;
      this.res.cork();
      process.nextTick(this.uncork);
    }
    this.res.write(chunk);
    this.checkBackpressure();
  }

  private readonly uncork = (): void => {
    this.corked = false;
    if (!this.res.writableEnded && !this.res.destroyed) this.res.uncork();
  };

  private readonly flush = (): void => {
    const chunk = this.pending;
    this.pending = '';
    if (chunk && !this.res.writableEnded && !this.res.destroyed) {
      this.res.write(chunk);
      this.checkBackpressure();
    }
  };
}
