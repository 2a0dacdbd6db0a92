import type { Subscription } from 'rxjs';
import WebSocket from 'ws';
import { InvalidRequestError, TooManyInFlightError } from '#tool-sdk/errors.js';
import type { LoopService } from '#core/loop/loop.service.js';
import type { ResponseRequest } from '#core/loop/response-request.js';
import { FlowGate } from '#core/protocol/flow-gate.js';
import type { JsonObject } from '#tool-sdk/items.js';
import { toErrorEnvelope } from '#edge/errors/error-envelope.js';
import { scanJsonShape, shapeError } from '#responses/request/json-shape.scanner.js';
import type { CreateResponseParser } from '#responses/request/create-response.parser.js';
import { respond } from '#edge/responder/edge-responder.js';
import type { EdgeSink } from '#edge/responder/edge-sink.js';
import type { EdgeAnswer, EdgeFrame, EdgeSurface } from '#edge/responder/edge-surface.js';
import type { SocketScopedResponseState } from './socket-scoped.response-state.js';

export interface SocketSessionDeps {
  parser: CreateResponseParser;
  loop: LoopService;
  state: SocketScopedResponseState;
  owner: string | null;
  /** The upgrade request's headers named in `upstream.forwardHeaders`, sent with every model call of this socket. */
  forwardedHeaders?: Record<string, string>;
}

/**
 * Frames waiting behind the running response. Responses on one socket run
 * one after another (a continuation needs its predecessor finished); a client
 * that queues more than this is refused rather than buffered without bound.
 */
const MAX_QUEUED = 16;

/**
 * Send-buffer bounds for backpressure: above the high mark the running
 * response stops reading its upstream; it resumes once the client has taken
 * the buffer below the low mark. A client that stops reading then holds the
 * model back instead of making the gateway buffer the whole answer.
 */
const HIGH_WATER_BYTES = 256 * 1024;
const LOW_WATER_BYTES = 64 * 1024;

/**
 * `{type:"error", status, error:{...}}`, the spec's WebSocket error event;
 * with `headers` when HTTP would have sent some with the error (`retry-after`
 * and the `x-ratelimit-*` of a 429), as broker replies carry them: a socket
 * has no status line to put them in.
 */
export function errorFrame(err: unknown): {
  type: 'error';
  status: number;
  error: { type: string; code: string; message: string; param: string | null };
  headers?: Record<string, string>;
} {
  const { status, body, headers } = toErrorEnvelope(err);
  const frame = { type: 'error' as const, status, error: { ...body.error, code: body.error.code ?? body.error.type } };
  return headers && Object.keys(headers).length > 0 ? { ...frame, headers: { ...headers } } : frame;
}

/**
 * WebSocket mode of the Responses API: the SSE stream's events, one per
 * frame, and every error (there is no status line to send) as the spec's
 * error event.
 */
const socketSurface: EdgeSurface<EdgeFrame> = {
  name: 'Responses WebSocket',
  frames: (event) => [event],
  errorAnswer: (err) => ({ status: toErrorEnvelope(err).status, body: errorFrame(err) }),
  errorFrame,
};

/** The running response's frames onto the socket; the socket's own `close` handling cancels the run. */
class SocketSink implements EdgeSink {
  readonly started = true;
  readonly status = 101;
  private sent = 0;

  constructor(private readonly send: (payload: unknown) => number) {}

  get bytes(): number {
    return this.sent;
  }

  frame(frame: EdgeFrame): void {
    this.sent += this.send(frame);
  }

  answer(answer: EdgeAnswer): void {
    this.sent += this.send(answer.body);
  }

  end(): void {}

  stop(): void {}

  onGone(): () => void {
    return () => undefined;
  }
}

/**
 * One WebSocket in Responses WebSocket mode: each `response.create` frame
 * runs like `POST /v1/responses` with `stream: true`, and every event goes
 * back as one JSON text frame, the same objects the SSE stream carries.
 * Closing the socket aborts the response in flight.
 */
export class ResponsesSocketSession {
  private readonly queue: unknown[] = [];
  private running?: Subscription;
  private finishRunning?: () => void;
  /** The running response's flow gate (see HIGH_WATER_BYTES). */
  private flow?: FlowGate;
  private busy = false;
  private closed = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly deps: SocketSessionDeps,
  ) {
    ws.on('message', (data, isBinary) => this.onFrame(data, isBinary));
    ws.on('close', () => this.onClose());
    // A protocol error is followed by `close`; handled there.
    ws.on('error', () => undefined);
  }

  private onFrame(data: WebSocket.RawData, isBinary: boolean): void {
    if (isBinary) return this.send(errorFrame(new InvalidRequestError('Send events as JSON text frames, not binary ones.', null, 'invalid_frame')));
    let event: unknown;
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    // As for HTTP bodies: too deep or too wide frames are refused before they are parsed.
    const shape = scanJsonShape(bytes);
    if (shape) return this.send(errorFrame(shapeError(shape)));
    try {
      event = JSON.parse(bytes.toString('utf8'));
    } catch {
      return this.send(errorFrame(new InvalidRequestError('The frame is not valid JSON.', null, 'invalid_json')));
    }
    if (!event || typeof event !== 'object' || Array.isArray(event)) {
      return this.send(errorFrame(new InvalidRequestError('An event must be a JSON object.', null, 'invalid_event')));
    }
    const type = (event as JsonObject).type;
    if (type !== 'response.create') {
      return this.send(
        errorFrame(new InvalidRequestError(`Unknown event type ${JSON.stringify(type ?? null)}; this socket accepts "response.create".`, 'type', 'unknown_event_type')),
      );
    }
    if (this.queue.length >= MAX_QUEUED) {
      return this.send(
        errorFrame(new TooManyInFlightError(`Too many response.create events waiting (limit ${MAX_QUEUED}); wait for a response to finish.`, null, 'too_many_pending_requests')),
      );
    }
    this.queue.push(event);
    this.pump();
  }

  private pump(): void {
    if (this.busy || this.closed) return;
    const next = this.queue.shift();
    if (next === undefined) return;
    this.busy = true;
    void this.runOne(next as JsonObject).finally(() => {
      this.busy = false;
      this.pump();
    });
  }

  private runOne(event: JsonObject): Promise<void> {
    let request: ResponseRequest;
    try {
      request = this.deps.parser.parse(this.body(event), this.deps.owner);
      request.forwardedHeaders = this.deps.forwardedHeaders ?? {};
      // A socket is its own long-lived connection; background runs are an HTTP feature.
      if (request.background) {
        throw new InvalidRequestError("'background' is not supported in WebSocket mode; use POST /v1/responses.", 'background', 'unsupported_parameter');
      }
    } catch (err) {
      this.send(errorFrame(err));
      return Promise.resolve();
    }
    const flow = new FlowGate();
    this.flow = flow;
    return new Promise<void>((resolve) => {
      this.finishRunning = resolve;
      const events = this.deps.loop.run(request, { state: this.deps.state, flow });
      this.running = respond(events, socketSurface, new SocketSink(this.sendCounted), {
        mode: 'stream',
        // A continuation that failed before it started evicts its predecessor too.
        onError: () => this.deps.state.evict(request),
      }).subscribe({ complete: () => resolve() });
    }).finally(() => {
      this.running = undefined;
      this.finishRunning = undefined;
      this.flow = undefined;
    });
  }

  /** The create body: the event minus `type`, always streamed. */
  private body(event: JsonObject): JsonObject {
    const { type: _type, stream, stream_options: _streamOptions, ...body } = event;
    // `stream` has no meaning here (a socket always streams); only a request for the opposite is refused.
    if (stream !== undefined && stream !== null && stream !== true) {
      throw new InvalidRequestError("'stream' must not be sent over a WebSocket: every response is streamed.", 'stream', 'unsupported_parameter');
    }
    return { ...body, stream: true };
  }

  private send(payload: unknown): void {
    this.sendCounted(payload);
  }

  /** Sends one frame; returns the bytes sent (none once the socket is closing). */
  private readonly sendCounted = (payload: unknown): number => {
    if (this.ws.readyState !== WebSocket.OPEN) return 0;
    const text = JSON.stringify(payload);
    this.ws.send(text, this.onSent);
    if (this.flow && !this.flow.paused && this.ws.bufferedAmount > HIGH_WATER_BYTES) this.flow.pause();
    return Buffer.byteLength(text);
  };

  /** Each frame's write callback: the moment to see whether the client caught up. */
  private readonly onSent = (): void => {
    if (this.flow?.paused && this.ws.bufferedAmount <= LOW_WATER_BYTES) this.flow.resume();
  };

  private onClose(): void {
    this.closed = true;
    this.queue.length = 0;
    // Unsubscribing aborts the upstream request and in-flight tool calls.
    this.running?.unsubscribe();
    this.finishRunning?.();
  }
}
