import { Body, Controller, HttpCode, Inject, Optional, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Subscription } from 'rxjs';
import { GATEWAY_CONFIG, GatewayConfig } from '#config/gateway-config.js';
import { InvalidRequestError } from '#core/errors/gateway-error.js';
import { BACKGROUND_RUNNER, type BackgroundRunner } from '#core/loop/background-runner.interface.js';
import { LoopService, TERMINAL_EVENTS } from '#core/loop/loop.service.js';
import type { ResponseRequest } from '#core/loop/response-request.js';
import type { ResponseStreamEvent } from '#core/loop/response-events.js';
import { FlowGate } from '#core/protocol/flow-gate.js';
import { CreateResponseParser } from '../request/create-response.parser.js';
import { streamEvents } from '../sse/stream-events.js';
import { sendErrorEnvelope } from './error-envelope.js';
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
    @Optional() @Inject(BACKGROUND_RUNNER) private readonly background?: BackgroundRunner,
  ) {}

  @Post()
  @HttpCode(200)
  create(@Body() body: unknown, @Req() req: Request, @Res() res: Response): void {
    const request = this.parser.parse(body, requestOwner(req));
    request.forwardedHeaders = forwardedHeaders(req.headers, this.config.upstream.forwardHeaders ?? []);
    if (request.background) return this.createInBackground(request, res);
    const flow = request.stream ? new FlowGate() : undefined;
    const events = this.loop.run(request, { flow });
    if (request.stream) return streamEvents(res, events, this.config.server, flow);

    let subscription: Subscription | undefined;
    cancelWhenClientLeaves(res, () => subscription);
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

  /**
   * The run belongs to the gateway, not to this connection: a blocking
   * request gets the `queued` response at once, a streaming one follows the
   * run's stored events, and leaving stops only the following.
   */
  private createInBackground(request: ResponseRequest, res: Response): void {
    const runner = this.background;
    if (!runner) {
      throw new InvalidRequestError(
        "'background' is not supported: background responses need the gateway's state module; send the request without it.",
        'background',
        'unsupported_parameter',
      );
    }
    runner.start(request).then(
      (queued) => {
        if (!request.stream) return sendJson(res, 200, queued);
        streamEvents(res, runner.follow(queued.id as string, request.owner, -1), this.config.server);
      },
      (err: unknown) => {
        if (!res.headersSent) sendErrorEnvelope(res, err);
      },
    );
  }
}
