import { randomUUID } from 'node:crypto';
import type { ClientProxy } from '@nestjs/microservices';
import { Observable } from 'rxjs';
import type { ResponseStreamEvent } from '#core/loop/response-events.js';
import type { ResponseCaller, ResponseObject } from '../service/responses.service.js';
import { type ResponsesPatterns, type ResponsesRpcRequest, responsesPatterns } from './responses-rpc.patterns.js';
import { isRpcErrorPayload, type RpcErrorPayload } from '#http/errors/rpc-error.js';

/** A failed call, carrying the OpenAI envelope the gateway sent and its HTTP-equivalent status. */
export class SwitchyardRpcError extends Error {
  override readonly name = 'SwitchyardRpcError';
  readonly status: number;
  readonly error: RpcErrorPayload['error'];

  constructor(payload: RpcErrorPayload) {
    super(payload.error.message);
    this.status = payload.status;
    this.error = payload.error;
  }
}

/**
 * Calls a gateway over a Nest `ClientProxy` (NATS, Redis, ...). Each call gets
 * a run id, and unsubscribing before the answer ends sends
 * `responses.cancel`, so that the gateway aborts the run (a broker has no
 * connection whose closing would say so).
 */
export class SwitchyardRpcClient {
  private readonly patterns: ResponsesPatterns;

  /** `prefix` as given to `GatewayMicroserviceModule.forRoot({ prefix })` (or `transports.patternPrefix`). */
  constructor(
    private readonly client: ClientProxy,
    options: { prefix?: string } = {},
  ) {
    this.patterns = responsesPatterns(options.prefix);
  }

  /** The final response object (`responses.create`). */
  create(body: unknown, caller: ResponseCaller = {}): Observable<ResponseObject> {
    return this.call<ResponseObject>(this.patterns.create, body, caller);
  }

  /** The response's events in order, as SSE would carry them (`responses.stream`). */
  stream(body: unknown, caller: ResponseCaller = {}): Observable<ResponseStreamEvent> {
    return this.call<ResponseStreamEvent>(this.patterns.stream, body, caller);
  }

  private call<T>(pattern: string, body: unknown, caller: ResponseCaller): Observable<T> {
    return new Observable<T>((subscriber) => {
      const runId = randomUUID();
      const message: ResponsesRpcRequest = { body, owner: caller.owner ?? null, headers: caller.headers, runId };
      let finished = false;
      const inner = this.client.send<T>(pattern, message).subscribe({
        next: (value) => subscriber.next(value),
        error: (err: unknown) => {
          finished = true;
          subscriber.error(isRpcErrorPayload(err) ? new SwitchyardRpcError(err) : err);
        },
        complete: () => {
          finished = true;
          subscriber.complete();
        },
      });
      return () => {
        inner.unsubscribe();
        // Fire and forget: a caller that has left has nobody to report a failed cancel to.
        if (!finished) this.client.emit(this.patterns.cancel, { runId }).subscribe({ error: () => undefined });
      };
    });
  }
}
