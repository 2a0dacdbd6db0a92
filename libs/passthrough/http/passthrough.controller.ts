import { Body, Controller, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { GATEWAY_CONFIG, type GatewayConfig } from '#config/gateway-config.js';
import type { RelayPath } from '#core/upstream/upstream-relay.interface.js';
import { forwardedHeaders } from '#edge/request/forwarded-headers.js';
import { requestOwner } from '#tool-sdk/routes/request-owner.js';
import { GatewayRoutes } from '#tool-sdk/routes/gateway-routes.js';
import { parseRelayRequest } from '../relay/relay-request.js';
import { RelayService } from '../relay/relay.service.js';

/**
 * `POST /v1/chat/completions`, `/v1/completions` and `/v1/embeddings`: the
 * rest of an application's OpenAI traffic, on the same base URL as the
 * Responses API, passed to the model servers as written. Thin: route the
 * body, delegate, and let the relay write the answer.
 */
@Controller('v1')
@GatewayRoutes()
export class PassthroughController {
  constructor(
    private readonly relay: RelayService,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  @Post('chat/completions')
  @HttpCode(200)
  chat(@Body() body: unknown, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.pass('/chat/completions', body, req, res);
  }

  @Post('completions')
  @HttpCode(200)
  completions(@Body() body: unknown, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.pass('/completions', body, req, res);
  }

  @Post('embeddings')
  @HttpCode(200)
  embeddings(@Body() body: unknown, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.pass('/embeddings', body, req, res);
  }

  private pass(path: RelayPath, body: unknown, req: Request, res: Response): Promise<void> {
    const request = parseRelayRequest(path, body, this.relay.defaultModel);
    const headers = forwardedHeaders(req.headers, this.config.upstream.forwardHeaders ?? []);
    return this.relay.serve(request, { owner: requestOwner(req), headers, served: req }, res);
  }
}
