import { Body, Controller, HttpCode, Inject, Post, Req, Res, UseFilters } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Subscription } from 'rxjs';
import { GATEWAY_CONFIG, GatewayConfig } from '../../config/gateway-config.js';
import { LoopService } from '../../core/loop/loop.service.js';
import { FlowGate } from '../../core/protocol/flow-gate.js';
import { forwardedHeaders } from '../../responses/http/forwarded-headers.js';
import { requestOwner } from '../../responses/http/request-owner.js';
import { SseWriter } from '../../responses/sse/sse-writer.js';
import { mapMessagesRequest } from '../request/messages-request.mapper.js';
import { MessageFolder } from '../stream/message-folder.js';
import { MessagesEventTranslator } from '../stream/messages-event.translator.js';
import { toAnthropicError } from './anthropic-error.js';
import { AnthropicExceptionFilter } from './anthropic-exception.filter.js';
import { cancelWhenClientLeaves } from '../../responses/http/client-disconnect.js';
import { sendJson } from '../../responses/http/send-json.js';
import { GatewayRoutes } from '../../responses/http/gateway-routes.decorator.js';

/**
 * The Anthropic Messages API on the same loop as `/v1/responses`: map the
 * body to a `ResponseRequest`, run it, translate the events once, and write
 * them as Anthropic SSE or fold them into one message.
 */
@Controller('v1/messages')
@GatewayRoutes({ envelope: false })
@UseFilters(AnthropicExceptionFilter)
export class MessagesController {
  constructor(
    private readonly loop: LoopService,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  @Post()
  @HttpCode(200)
  create(@Body() body: unknown, @Req() req: Request, @Res() res: Response): void {
    const { request, toolOrigins } = mapMessagesRequest(body, requestOwner(req));
    request.forwardedHeaders = forwardedHeaders(req.headers, this.config.upstream.forwardHeaders ?? []);
    const flow = request.stream ? new FlowGate() : undefined;
    const events = this.loop.run(request, { flow });
    const translator = new MessagesEventTranslator();
    const sse = request.stream ? new SseWriter(res, this.config.server.keepAliveMs, this.config.server.sseWrites, flow) : undefined;
    let subscription: Subscription | undefined;
    cancelWhenClientLeaves(res, () => subscription, sse);

    if (sse) {
      subscription = events.subscribe({
        next: (event) => {
          for (const out of translator.push(event)) sse.event(out.type, out);
        },
        error: (err: unknown) => {
          const { status, body: envelope } = toAnthropicError(err, toolOrigins);
          if (!sse.headersSent) {
            sse.stop();
            res.status(status).json(envelope);
            return;
          }
          sse.event('error', { type: 'error', error: { type: 'api_error', message: envelope.error.message } });
          sse.end();
        },
        complete: () => sse.end(),
      });
      return;
    }

    const folder = new MessageFolder();
    subscription = events.subscribe({
      next: (event) => {
        for (const out of translator.push(event)) folder.add(out);
      },
      error: (err: unknown) => {
        const { status, body: envelope } = toAnthropicError(err, toolOrigins);
        if (!res.headersSent) res.status(status).json(envelope);
      },
      complete: () => {
        if (res.headersSent) return;
        if (folder.error || !folder.result) res.status(500).json({ type: 'error', error: folder.error ?? { type: 'api_error', message: 'The run ended without a message.' } });
        else sendJson(res, 200, folder.result);
      },
    });
  }
}
