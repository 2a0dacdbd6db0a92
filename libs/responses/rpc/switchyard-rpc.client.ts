import { randomUUID } from 'node:crypto';
import type { ClientProxy } from '@nestjs/microservices';
import { Observable, defer, retry, throwError, timer } from 'rxjs';
import type { ResponseStreamEvent } from '#core/loop/response-events.js';
import type { ResponseCaller, ResponseObject } from '../service/responses.service.js';
import { HEARTBEAT_TYPE, type ResponsesPatterns, type ResponsesRpcRequest, responsesPatterns } from './responses-rpc.patterns.js';
import { isRpcErrorPayload, type RpcErrorPayload } from '#edge/errors/rpc-error.js';

/**
 * A failed call, carrying the OpenAI envelope the gateway sent and its HTTP-equivalent status.
 * The same shape on every transport, for the gateway's own errors and for the broker's:
 * `status` and `code` on the error itself (`err.code === 'gateway_unreachable'`), the envelope's
 * fields also under `error`.
 */
export class SwitchyardRpcError extends Error {
  override readonly name = 'SwitchyardRpcError';
  readonly status: number;
  readonly code: string | null;
  readonly type: string;
  readonly param: string | null;
  readonly error: RpcErrorPayload['error'];
  /** What HTTP would have sent with the error: `retry-after` and the `x-ratelimit-*` of a 429. */
  readonly headers: Readonly<Record<string, string>>;
  /** Whether the gateway had started the run (it had sent a frame) when the call failed; if not, nothing ran. */
  runStarted = false;

  constructor(payload: RpcErrorPayload, options?: { cause?: unknown }) {
    super(payload.error.message, options);
    this.status = payload.status;
    this.error = payload.error;
    this.code = payload.error.code ?? null;
    this.type = payload.error.type;
    this.param = payload.error.param ?? null;
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
  /**
   * Retries of a call refused before its run started: `gateway_draining` (the gateway
   * that got it is shutting down), `gateway_unreachable` with nothing heard at all (no
   * gateway serves the pattern right now, or none answered). A run that started (the
   * gateway's first heartbeat says so) is never retried, so no request runs twice.
   * `attempts` more tries (default 4), `delayMs` before the first (default 250), doubling.
   * `{ attempts: 0 }`: none.
   */
  retry?: { attempts?: number; delayMs?: number };
}

const DEFAULT_SILENCE_MS = 10_000;
const DEFAULT_RETRY = { attempts: 4, delayMs: 250 };
/** Refusals that leave nothing behind: the run had not started, so another try is safe. */
const BEFORE_START = new Set(['gateway_draining', 'gateway_unreachable']);

function unreachable(message: string, cause?: unknown): SwitchyardRpcError {
  return new SwitchyardRpcError({ status: 503, error: { message, type: 'server_error', param: null, code: 'gateway_unreachable' } }, { cause });
}

function silent(silenceMs: number): SwitchyardRpcError {
  return unreachable(
    `No answer and no heartbeat from the gateway for ${silenceMs} ms: it stopped, lost its broker connection, or no gateway serves this pattern. The run is cancelled; retry the request.`,
  );
}

/**
 * A failure the transport itself produced, in the gateway's shape: NATS answers
 * "no responders" at once (Nest's `EmptyResponseException`), a server without
 * the handler says so, a broker connection fails. Each means no gateway took the request.
 */
function fromTransport(err: unknown, pattern: string): SwitchyardRpcError {
  if (isRpcErrorPayload(err)) return new SwitchyardRpcError(err);
  const reason = err instanceof Error ? err.message : String(err);
  return unreachable(`No gateway took the request on '${pattern}' (${reason}); retry the request.`, err);
}

/** Whether a failed call may be tried again: refused before its run started. */
function retryable(err: unknown): boolean {
  return err instanceof SwitchyardRpcError && BEFORE_START.has(err.code ?? '') && !err.runStarted;
}

/**
 * Calls a gateway over a Nest `ClientProxy` (NATS, Redis, ...). Each call gets
 * a run id and asks for heartbeats; unsubscribing before the answer ends sends
 * `responses.cancel`, so that the gateway aborts the run (a broker has no
 * connection whose closing would say so), and a silence longer than
 * `silenceMs` fails the call with `gateway_unreachable`. Refusals before the
 * run started are retried (`retry`).
 */
export class SwitchyardRpcClient {
  private readonly patterns: ResponsesPatterns;
  private readonly apiKey?: string;
  private readonly silenceMs: number;
  private readonly retry: { attempts: number; delayMs: number };

  constructor(
    private readonly client: ClientProxy,
    options: SwitchyardRpcClientOptions = {},
  ) {
    this.patterns = responsesPatterns(options.prefix);
    this.apiKey = options.apiKey;
    this.silenceMs = options.silenceMs ?? DEFAULT_SILENCE_MS;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
  }

  /** The final response object (`responses.create`). */
  create(body: unknown, caller: ResponseCaller & { apiKey?: string } = {}): Observable<ResponseObject> {
    return this.withRetry(() => this.call<ResponseObject>(this.patterns.create, body, caller, true));
  }

  /** The response's events in order, as SSE would carry them (`responses.stream`). */
  stream(body: unknown, caller: ResponseCaller & { apiKey?: string } = {}): Observable<ResponseStreamEvent> {
    return this.withRetry(() => this.call<ResponseStreamEvent>(this.patterns.stream, body, caller, false));
  }

  private withRetry<T>(attempt: () => Observable<T>): Observable<T> {
    const { attempts, delayMs } = this.retry;
    return defer(attempt).pipe(
      retry({
        count: Math.max(0, attempts),
        delay: (err: unknown, n: number) => (retryable(err) ? timer(delayMs * 2 ** (n - 1)) : throwError(() => err)),
      }),
    );
  }

  private call<T>(pattern: string, body: unknown, caller: ResponseCaller & { apiKey?: string }, single: boolean): Observable<T> {
    return new Observable<T>((subscriber) => {
      const runId = randomUUID();
      const apiKey = caller.apiKey ?? this.apiKey;
      const message: ResponsesRpcRequest = { body, owner: caller.owner ?? null, headers: caller.headers, runId, heartbeat: true, ...(apiKey ? { apiKey } : {}) };
      // Set once the gateway has nothing more to do for this run: no cancel is due then.
      let finished = false;
      // Set by the first frame, the gateway's heartbeat included: the run started, so it is not retried.
      let heard = false;
      let silence: NodeJS.Timeout | undefined;
      const fail = (err: SwitchyardRpcError) => {
        err.runStarted = heard;
        subscriber.error(err);
      };
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
          fail(silent(this.silenceMs));
        }, this.silenceMs);
      };
      const inner = this.client.send<T | { type?: unknown }>(pattern, message).subscribe({
        next: (value) => {
          heard = true;
          listen();
          if ((value as { type?: unknown } | null)?.type === HEARTBEAT_TYPE) return;
          // `create` answers once: the run is over when its answer arrives (firstValueFrom unsubscribes right after).
          if (single) finished = true;
          subscriber.next(value as T);
        },
        error: (err: unknown) => {
          finished = true;
          clearTimeout(silence);
          fail(fromTransport(err, pattern));
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
