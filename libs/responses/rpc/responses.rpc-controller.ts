import { Controller, Inject, Optional, type Type, UseFilters } from '@nestjs/common';
import { EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { Observable, defer, map, of, switchMap, tap } from 'rxjs';
import type { ResponseStreamEvent } from '#core/loop/response-events.js';
import { relay } from '#edge/responder/relay.js';
import { ResponsesService, type ResponseCaller, type ResponseObject } from '../service/responses.service.js';
import { OpenAiRpcExceptionFilter } from './openai-rpc-exception.filter.js';
import { HEARTBEAT_TYPE, RESPONSES_PATTERNS, SERVED_RESPONSES_PATTERNS, type HeartbeatFrame, type ResponsesPatterns } from './responses-rpc.patterns.js';
import { RPC_RUN_CONTEXT, type RpcRunContext } from './rpc-run-context.js';
import { RPC_CALLER_AUTHENTICATOR, type RpcCallerAuthenticator } from './rpc-caller-auth.js';
import { TRANSPORTS_SETTINGS, type TransportsConfig } from './transports.config-section.js';
import { asValueFrame } from '#edge/responder/value-frame.js';
import { rpcSurface } from './rpc.surface.js';
import { type GatewayShutdownError, RpcRunRegistry } from './rpc-run.registry.js';
import { parseCancel, parseRpcRequest } from './rpc-request.parser.js';

/** What the RPC controller exposes, whichever patterns it was built for. */
export interface ResponsesRpcHandlers {
  /** The answer; heartbeat frames before it when the message asked for them. */
  create(data: unknown): Observable<ResponseObject | HeartbeatFrame>;
  stream(data: unknown): Observable<ResponseStreamEvent | HeartbeatFrame>;
  cancel(data: unknown): void;
}

/**
 * The Responses API over Nest microservice transports (NATS, Redis, ...):
 * thin, like the HTTP controller; the service runs the same parser and loop.
 * Handlers return the Observables themselves so that the host's
 * interceptors and guards see the exchange. Built per pattern set because
 * Nest reads patterns from decorators: a class per module, whose patterns
 * are pointed at the served ones (`SERVED_RESPONSES_PATTERNS`) once the
 * config is known, before Nest registers the listeners.
 */
export function responsesRpcController(defaults: ResponsesPatterns): Type<ResponsesRpcHandlers> {
  @Controller()
  @UseFilters(OpenAiRpcExceptionFilter)
  class ResponsesRpcController implements ResponsesRpcHandlers {
    private readonly heartbeatMs: number;
    private readonly patterns: ResponsesPatterns;

    constructor(
      readonly responses: ResponsesService,
      readonly runs: RpcRunRegistry,
      @Optional() @Inject(TRANSPORTS_SETTINGS) transports?: TransportsConfig,
      @Optional() @Inject(RPC_CALLER_AUTHENTICATOR) private readonly auth?: RpcCallerAuthenticator,
      @Optional() @Inject(SERVED_RESPONSES_PATTERNS) served?: ResponsesPatterns,
      @Optional() @Inject(RPC_RUN_CONTEXT) private readonly context?: RpcRunContext,
    ) {
      this.heartbeatMs = transports?.heartbeatMs ?? 2000;
      this.patterns = served ?? defaults;
      // The prefix may come from config, known only now: Nest reads the patterns when it registers
      // the listeners, after the controllers are built, so the decorators are applied again here.
      if (served && served.create !== defaults.create) servePatterns(ResponsesRpcController.prototype, served);
    }

    @MessagePattern(defaults.create)
    create(@Payload() data: unknown): Observable<ResponseObject | HeartbeatFrame> {
      return this.serve(this.patterns.create, data, (body, caller) => relay<ResponseObject>(this.responses.create(body, caller).pipe(map(asValueFrame)), rpcSurface, 'fold'));
    }

    @MessagePattern(defaults.stream)
    stream(@Payload() data: unknown): Observable<ResponseStreamEvent | HeartbeatFrame> {
      let last: ResponseStreamEvent | undefined;
      return this.serve(
        this.patterns.stream,
        data,
        (body, caller) => relay<ResponseStreamEvent>(this.responses.stream(body, caller), rpcSurface, 'stream').pipe(tap((event) => (last = event))),
        (err) => of(shutdownFailure(last, err)),
      );
    }

    /**
     * One broker request: envelope, credential (as HTTP checks it, when keys or OIDC are set:
     * the owner is then the credential's, never the message's), the run, tracked for cancel
     * and drain, heartbeats when asked for.
     */
    private serve<T>(
      pattern: string,
      data: unknown,
      run: (body: unknown, caller: ResponseCaller) => Observable<T>,
      cut?: (err: GatewayShutdownError) => Observable<T>,
    ): Observable<T | HeartbeatFrame> {
      return defer(() => {
        const parsed = parseRpcRequest(data);
        const { body, runId, heartbeat, apiKey } = parsed;
        const caller: ResponseCaller = { ...parsed.caller, edge: { method: 'RPC', path: pattern } };
        const tracked = this.runs.track(
          runId,
          defer(async () => (this.auth?.enabled ? { ...caller, owner: await this.auth.authenticate(apiKey ? `Bearer ${apiKey}` : undefined) } : caller)).pipe(
            switchMap((checked) => run(body, checked)),
          ),
          cut,
        );
        const answered = heartbeat ? withHeartbeats(tracked, this.heartbeatMs) : tracked;
        return this.context ? this.context.around(pattern, answered) : answered;
      });
    }

    // Not in the queue group (an empty queue subscribes plainly): every gateway hears a cancel and the
    // one running the run stops it, wherever its request landed. Other transports ignore the extra.
    @EventPattern(defaults.cancel, CANCEL_EXTRAS)
    cancel(@Payload() data: unknown): void {
      const runId = parseCancel(data);
      if (runId) this.runs.cancel(runId);
    }
  }
  return ResponsesRpcController;
}

// Not in the queue group (an empty queue subscribes plainly): see `cancel`.
const CANCEL_EXTRAS = { queue: '' };

/** Points the controller's handlers at `patterns` (the decorators' own metadata, written again). */
function servePatterns(prototype: ResponsesRpcHandlers, patterns: ResponsesPatterns): void {
  const apply = (key: keyof ResponsesRpcHandlers, decorator: MethodDecorator) => decorator(prototype, key, Object.getOwnPropertyDescriptor(prototype, key)!);
  apply('create', MessagePattern(patterns.create));
  apply('stream', MessagePattern(patterns.stream));
  apply('cancel', EventPattern(patterns.cancel, CANCEL_EXTRAS) as MethodDecorator);
}

/**
 * The terminal event of a stream the drain cut short: `response.failed`, next
 * in sequence, naming the response the stream was building, as a client
 * reading SSE would expect a run's end to look.
 */
function shutdownFailure(last: ResponseStreamEvent | undefined, err: GatewayShutdownError): ResponseStreamEvent {
  const response = ((last as { response?: Record<string, unknown> } | undefined)?.response ?? {}) as Record<string, unknown>;
  return {
    type: 'response.failed',
    sequence_number: typeof last?.sequence_number === 'number' ? last.sequence_number + 1 : 0,
    response: { ...response, object: 'response', status: 'failed', error: { code: err.code, message: err.message } },
  } as unknown as ResponseStreamEvent;
}

/**
 * The run's frames with a heartbeat every `everyMs` while it is alive: a caller
 * that hears nothing for longer than a few beats knows the gateway is gone.
 */
function withHeartbeats<T>(run: Observable<T>, everyMs: number): Observable<T | HeartbeatFrame> {
  return new Observable<T | HeartbeatFrame>((subscriber) => {
    const timer = setInterval(() => subscriber.next({ type: HEARTBEAT_TYPE }), everyMs);
    const inner = run.subscribe({
      next: (value) => subscriber.next(value),
      error: (err: unknown) => (clearInterval(timer), subscriber.error(err)),
      complete: () => (clearInterval(timer), subscriber.complete()),
    });
    // The first beat, once the run is accepted (a draining gateway refuses synchronously, above):
    // a caller that heard nothing at all knows the run never started, so retrying cannot run it twice.
    if (!subscriber.closed) subscriber.next({ type: HEARTBEAT_TYPE });
    return () => {
      clearInterval(timer);
      inner.unsubscribe();
    };
  });
}

/** The controller for the default patterns (`responses.create`, `responses.stream`, `responses.cancel`). */
export const ResponsesRpcController = responsesRpcController(RESPONSES_PATTERNS);
