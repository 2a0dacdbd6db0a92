import { All, Body, Controller, HttpCode, Inject, Post, Req, Res, UseFilters } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Subscription } from 'rxjs';
import { GATEWAY_CONFIG, GatewayConfig } from '#config/gateway-config.js';
import { LoopService } from '#core/loop/loop.service.js';
import { FlowGate } from '#core/protocol/flow-gate.js';
import { forwardedHeaders } from '#responses/http/forwarded-headers.js';
import { requestOwner } from '#responses/http/request-owner.js';
import { SseWriter } from '#responses/sse/sse-writer.js';
import { NotFoundError } from '#core/errors/gateway-error.js';
import { MessagesTokenCounter } from '../count-tokens/messages-token-counter.service.js';
import { mapMessagesRequest, type MappedMessagesRequest } from '../request/messages-request.mapper.js';
import { ThinkingSigner } from '../thinking/thinking-signer.js';
import { MessageFolder } from '../stream/message-folder.js';
import { MessagesEventTranslator } from '../stream/messages-event.translator.js';
import { toAnthropicError } from './anthropic-error.js';
import { AnthropicExceptionFilter } from './anthropic-exception.filter.js';
import { cancelWhenClientLeaves } from '#responses/http/client-disconnect.js';
import { sendJson } from '#responses/http/send-json.js';
import { GatewayRoutes } from '#responses/http/gateway-routes.decorator.js';

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
    private readonly signer: ThinkingSigner,
    private readonly counter: MessagesTokenCounter,
  ) {}

  // `anthropic-beta` headers need no handling: every beta this gateway
  // serves is always on, and the fields a beta unlocks are checked like any
  // other field, so a request relying on one this gateway lacks is refused by name.
  @Post()
  @HttpCode(200)
  create(@Body() body: unknown, @Req() req: Request, @Res() res: Response): void {
    const { request, toolOrigins, contextManagement, hideThinking } = mapMessagesRequest(body, requestOwner(req), { signer: this.signer });
    request.forwardedHeaders = forwardedHeaders(req.headers, this.config.upstream.forwardHeaders ?? []);
    const flow = request.stream ? new FlowGate() : undefined;
    const events = this.loop.run(request, { flow });
    const translator = new MessagesEventTranslator({
      signer: this.signer,
      hideThinking,
      contextManagement: contextManagement ? { applied_edits: contextManagement.appliedEdits } : null,
    });
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

  /**
   * Anthropic's token count. The answer says where the figure came from in
   * `x-switchyard-token-count`: `upstream` (the model server's tokenizer) or
   * `estimate` (no `/tokenize` there; characters / 4).
   */
  @Post('count_tokens')
  @HttpCode(200)
  async countTokens(@Body() body: unknown, @Req() req: Request, @Res() res: Response): Promise<void> {
    const owner = requestOwner(req);
    const mapped = mapMessagesRequest(body, owner, { signer: this.signer, counting: true });
    const edited = (mapped.contextManagement?.appliedEdits.length ?? 0) > 0;
    const original: MappedMessagesRequest | null = edited
      ? mapMessagesRequest({ ...(body as object), context_management: null }, owner, { signer: this.signer, counting: true })
      : null;
    const ac = new AbortController();
    res.on('close', () => ac.abort());
    try {
      const count = await this.counter.count(mapped, original, ac.signal);
      res.setHeader('x-switchyard-token-count', count.source);
      const answer: Record<string, unknown> = { input_tokens: count.inputTokens };
      if (mapped.contextManagement) answer.context_management = { original_input_tokens: count.originalInputTokens };
      sendJson(res, 200, answer);
    } catch (err) {
      const { status, body: envelope } = toAnthropicError(err, mapped.toolOrigins);
      if (!res.headersSent) res.status(status).json(envelope);
    }
  }

  /** Every other path under `/v1/messages` (batches, typos, wrong methods) answers in Anthropic's envelope. */
  @All(['*path', '/'])
  notFound(@Req() req: Request): never {
    throw new NotFoundError(`${req.method} ${req.path} is not served by this gateway's Messages API (POST /v1/messages and POST /v1/messages/count_tokens are).`);
  }
}
