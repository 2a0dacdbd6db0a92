import { Controller, type Type, UseFilters } from '@nestjs/common';
import { EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { type Observable, defer, map } from 'rxjs';
import type { ResponseStreamEvent } from '#core/loop/response-events.js';
import { relay } from '#http/responder/relay.js';
import { ResponsesService, type ResponseObject } from '../service/responses.service.js';
import { OpenAiRpcExceptionFilter } from './openai-rpc-exception.filter.js';
import { RESPONSES_PATTERNS, type ResponsesPatterns } from './responses-rpc.patterns.js';
import { asValueFrame } from '#http/responder/value-frame.js';
import { rpcSurface } from './rpc.surface.js';
import { RpcRunRegistry } from './rpc-run.registry.js';
import { parseCancel, parseRpcRequest } from './rpc-request.parser.js';

/** What the RPC controller exposes, whichever patterns it was built for. */
export interface ResponsesRpcHandlers {
  create(data: unknown): Observable<ResponseObject>;
  stream(data: unknown): Observable<ResponseStreamEvent>;
  cancel(data: unknown): void;
}

/**
 * The Responses API over Nest microservice transports (NATS, Redis, ...):
 * thin, like the HTTP controller; the service runs the same parser and loop.
 * Handlers return the Observables themselves so that the host's
 * interceptors and guards see the exchange. Built per pattern set because
 * Nest reads patterns from decorators, at class definition.
 */
export function responsesRpcController(patterns: ResponsesPatterns): Type<ResponsesRpcHandlers> {
  @Controller()
  @UseFilters(OpenAiRpcExceptionFilter)
  class ResponsesRpcController implements ResponsesRpcHandlers {
    constructor(
      readonly responses: ResponsesService,
      readonly runs: RpcRunRegistry,
    ) {}

    @MessagePattern(patterns.create)
    create(@Payload() data: unknown): Observable<ResponseObject> {
      return defer(() => {
        const { body, caller, runId } = parseRpcRequest(data);
        return this.runs.track(runId, relay<ResponseObject>(this.responses.create(body, caller).pipe(map(asValueFrame)), rpcSurface, 'fold'));
      });
    }

    @MessagePattern(patterns.stream)
    stream(@Payload() data: unknown): Observable<ResponseStreamEvent> {
      return defer(() => {
        const { body, caller, runId } = parseRpcRequest(data);
        return this.runs.track(runId, relay<ResponseStreamEvent>(this.responses.stream(body, caller), rpcSurface, 'stream'));
      });
    }

    @EventPattern(patterns.cancel)
    cancel(@Payload() data: unknown): void {
      const runId = parseCancel(data);
      if (runId) this.runs.cancel(runId);
    }
  }
  return ResponsesRpcController;
}

/** The controller for the default patterns (`responses.create`, `responses.stream`, `responses.cancel`). */
export const ResponsesRpcController = responsesRpcController(RESPONSES_PATTERNS);
