import { randomUUID } from 'node:crypto';
import type { ClientProxy } from '@nestjs/microservices';
import { Observable } from 'rxjs';
import type { ResponseStreamEvent } from '#core/loop/response-events.js';
import type { ResponseCaller, ResponseObject } from '../service/responses.service.js';
import { HEARTBEAT_TYPE, type ResponsesPatterns, type ResponsesRpcRequest, responsesPatterns } from './responses-rpc.patterns.js';
import { isRpcErrorPayload, type RpcErrorPayload } from '#edge/errors/rpc-error.js';

/** A failed call, carrying the OpenAI envelope the gateway sent and its HTTP-equivalent status. */
export class SwitchyardRpcError extends Error {
  override readonly name = 'SwitchyardRpcError';
  readonly status: number;
  readonly error: RpcErrorPayload['error'];
  /** What HTTP would have sent with the error: `retry-after` and the `x-ratelimit-*` of a 429. */
  readonly headers: Readonly<Record<string, string>>;

  constructor(payload: RpcErrorPayload) {
    super(payload.error.message);
    this.status = payload.status;
    this.error = payload.error;
    this.headers = payload.headers ?? {};
  }
}

export interface SwitchyardRpcClientOptions {
  /** As given to `GatewayMicroserviceModule.forRoot({ prefix })` (or `transports.patternPrefix`). */
  prefix?: string;
  /** The API key or OIDC token every call carries (the gateway checks it when it has keys or OIDC set). */
  apiKey?: string;
  /**
   * A call that hears nothing (no frame, no heartbeat) for this long fails with
   * `gateway_unreachable`: the gateway died or never got the request. Several of
   * the gateway's heartbeat intervals (`transports.heartbeatMs`, 2 s by default). 0: never.
   */
  silenceMs?: number;
}

const DEFAULT_SILENCE_MS = 10_000;

function unreachable(silenceMs: number): SwitchyardRpcError {
  return new SwitchyardRpcError({
    status: 503,
    error: {
      message: `No answer and no heartbeat from the gateway for ${silenceMs} ms: it stopped, lost its broker connection, or no gateway serves this pattern. The run is cancelled; retry the request.`,
      type: 'server_error',
      param: null,
      code: 'gateway_unreachable',
    },
  });
}

/**
 * Calls a gateway over a Nest `ClientProxy` (NATS, Redis, ...). Each call gets
 * a run id and asks for heartbeats; unsubscribing before the answer ends sends
 * `responses.cancel`, so that the gateway aborts the run (a broker has no
 * connection whose closing would say so), and a silence longer than
 * `silenceMs` fails the call with `gateway_unreachable`.
 */
export class SwitchyardRpcClient {
  private readonly patterns: ResponsesPatterns;
  private readonly apiKey?: string;
  private readonly silenceMs: number;

  constructor(
    private readonly client: ClientProxy,
    options: SwitchyardRpcClientOptions = {},
  ) {
    this.patterns = responsesPatterns(options.prefix);
    this.apiKey = options.apiKey;
    this.silenceMs = options.silenceMs ?? DEFAULT_SILENCE_MS;
  }

  /** The final response object (`responses.create`). */
  create(body: unknown, caller: ResponseCaller & { apiKey?: string } = {}): Observable<ResponseObject> {
    return this.call<ResponseObject>(this.patterns.create, body, caller, true);
  }

  /** The response's events in order, as SSE would carry them (`responses.stream`). */
  stream(body: unknown, caller: ResponseCaller & { apiKey?: string } = {}): Observable<ResponseStreamEvent> {
    return this.call<ResponseStreamEvent>(this.patterns.stream, body, caller, false);
  }

  private call<T>(pattern: string, body: unknown, caller: ResponseCaller & { apiKey?: string }, single: boolean): Observable<T> {
    return new Observable<T>((subscriber) => {
      const runId = randomUUID();
      const apiKey = caller.apiKey ?? this.apiKey;
      const message: ResponsesRpcRequest = { body, owner: caller.owner ?? null, headers: caller.headers, runId, heartbeat: true, ...(apiKey ? { apiKey } : {}) };
      // Set once the gateway has nothing more to do for this run: no cancel is due then.
      let finished = false;
      let silence: NodeJS.Timeout | undefined;
      const cancel = () => {
        // Fire and forget: a caller that has left has nobody to report a failed cancel to.
        if (!finished) this.client.emit(this.patterns.cancel, { runId }).subscribe({ error: () => undefined });
        finished = true;
      };
      const listen = () => {
        if (this.silenceMs <= 0) return;
        clearTimeout(silence);
        silence = setTimeout(() => {
          inner.unsubscribe();
          cancel();
          subscriber.error(unreachable(this.silenceMs));
        }, this.silenceMs);
      };
      const inner = this.client.send<T | { type?: unknown }>(pattern, message).subscribe({
        next: (value) => {
          listen();
          if ((value as { type?: unknown } | null)?.type === HEARTBEAT_TYPE) return;
          // `create` answers once: the run is over when its answer arrives (firstValueFrom unsubscribes right after).
          if (single) finished = true;
          subscriber.next(value as T);
        },
        error: (err: unknown) => {
          finished = true;
          clearTimeout(silence);
          subscriber.error(isRpcErrorPayload(err) ? new SwitchyardRpcError(err) : err);
        },
        complete: () => {
          finished = true;
          clearTimeout(silence);
          subscriber.complete();
        },
      });
      listen();
      return () => {
        clearTimeout(silence);
        inner.unsubscribe();
        cancel();
      };
    });
  }
}
