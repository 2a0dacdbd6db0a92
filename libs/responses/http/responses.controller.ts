import { Body, Controller, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Subscription } from 'rxjs';
import { GATEWAY_CONFIG, GatewayConfig } from '../../config/gateway-config.js';
import { LoopService, TERMINAL_EVENTS } from '../../core/loop/loop.service.js';
import type { ResponseStreamEvent } from '../../core/loop/response-events.js';
import { FlowGate } from '../../core/protocol/flow-gate.js';
import { CreateResponseParser } from '../request/create-response.parser.js';
import { SseWriter } from '../sse/sse-writer.js';
import { sendErrorEnvelope, toErrorEnvelope } from './error-envelope.js';
import { cancelWhenClientLeaves } from './client-disconnect.js';
import { forwardedHeaders } from './forwarded-headers.js';
import { requestOwner } from './request-owner.js';
import { sendJson } from './send-json.js';
import { GatewayRoutes } from './gateway-routes.decorator.js';

/** Thin edge: parse, delegate to the loop, shape the reply as JSON or SSE. */
@Controller('v1/responses')
@GatewayRoutes()
export class ResponsesController {
  constructor(
    private readonly parser: CreateResponseParser,
    private readonly loop: LoopService,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  @Post()
  @HttpCode(200)
  create(@Body() body: unknown, @Req() req: Request, @Res() res: Response): void {
    const request = this.parser.parse(body, requestOwner(req));
    request.forwardedHeaders = forwardedHeaders(req.headers, this.config.upstream.forwardHeaders ?? []);
    const flow = request.stream ? new FlowGate() : undefined;
    const events = this.loop.run(request, { flow });
    let subscription: Subscription | undefined;
    const sse = request.stream ? new SseWriter(res, this.config.server.keepAliveMs, this.config.server.sseWrites, flow) : undefined;
    cancelWhenClientLeaves(res, () => subscription, sse);

    if (sse) {
      subscription = events.subscribe({
        next: (event) => sse.event(event.type, event),
        error: (err: unknown) => {
          if (!sse.headersSent) {
            sse.stop();
            sendErrorEnvelope(res, err);
            return;
          }
          const { body: envelope } = toErrorEnvelope(err);
          sse.event('error', { type: 'error', sequence_number: -1, error: { ...envelope.error } });
          sse.end();
        },
        complete: () => sse.end(),
      });
      return;
    }

    let terminal: ResponseStreamEvent | undefined;
    subscription = events.subscribe({
      next: (event) => {
        if (TERMINAL_EVENTS.has(event.type)) terminal = event;
      },
      error: (err: unknown) => {
        if (!res.headersSent) sendErrorEnvelope(res, err);
      },
      complete: () => {
        if (!res.headersSent) sendJson(res, 200, terminal?.response ?? {});
      },
    });
  }
}
