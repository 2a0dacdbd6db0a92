import type { Response } from 'express';
import type { GatewayConfig } from '#config/gateway-config.js';
import type { FlowGate } from '#core/protocol/flow-gate.js';
import { noteErrorForLog } from '../errors/error-envelope.js';
import { onClientGone } from '../response/client-disconnect.js';
import { writeJson } from '../response/send-json.js';
import { SseWriter } from '../sse/sse-writer.js';
import type { EdgeSink } from './edge-sink.js';
import type { EdgeAnswer, EdgeFrame } from './edge-surface.js';

/** Whole answers over HTTP: what the blocking routes send, and every error sent before a stream began. */
abstract class HttpSink implements EdgeSink {
  protected answered?: { status: number; bytes: number };

  constructor(protected readonly res: Response) {}

  abstract readonly started: boolean;
  abstract readonly bytes: number;
  abstract frame(frame: EdgeFrame): void;
  abstract end(): void;
  abstract stop(): void;

  get status(): number | undefined {
    return this.answered?.status ?? (this.started ? this.res.statusCode : undefined);
  }

  answer(answer: EdgeAnswer, cause?: unknown): void {
    if (this.res.headersSent || this.res.destroyed) return;
    if (cause !== undefined) noteErrorForLog(this.res, cause);
    for (const [name, value] of Object.entries(answer.headers ?? {})) this.res.setHeader(name, value);
    // Success bodies skip express's ETag hashing (send-json.ts) and are serialized once; error
    // bodies go out as they always have.
    if (answer.status < 300) {
      this.answered = { status: answer.status, bytes: writeJson(this.res, answer.status, answer.body) };
      return;
    }
    this.answered = { status: answer.status, bytes: Buffer.byteLength(JSON.stringify(answer.body) ?? '') };
    this.res.status(answer.status).json(answer.body);
  }

  get gone(): boolean {
    return this.res.destroyed || this.res.socket?.destroyed === true;
  }

  onGone(callback: () => void): () => void {
    return onClientGone(this.res, callback);
  }
}

/** A stream of Server-Sent Events, one event per frame, named by the frame's `type`. */
export class SseSink extends HttpSink {
  private readonly sse: SseWriter;

  constructor(res: Response, server: GatewayConfig['server'], flow?: FlowGate) {
    super(res);
    this.sse = new SseWriter(res, server.keepAliveMs, server.sseWrites, flow);
  }

  get started(): boolean {
    return this.sse.headersSent;
  }

  get bytes(): number {
    return this.answered?.bytes ?? this.sse.bytes;
  }

  frame(frame: EdgeFrame): void {
    this.sse.event(frame.type, frame);
  }

  end(): void {
    this.sse.end();
  }

  stop(): void {
    this.sse.stop();
  }
}

/** One JSON body: frames are folded before they reach a sink, so only whole answers come here. */
export class JsonSink extends HttpSink {
  readonly started = false;

  get bytes(): number {
    return this.answered?.bytes ?? 0;
  }

  frame(frame: EdgeFrame): void {
    throw new Error(`A JSON answer cannot carry the frame ${frame.type}; fold the run first.`);
  }

  end(): void {
    if (!this.res.headersSent && !this.res.destroyed) this.res.end();
  }

  stop(): void {}
}
