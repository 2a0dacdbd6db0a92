import { Body, Controller, HttpCode, Inject, Optional, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { defer, switchMap } from 'rxjs';
import { GATEWAY_CONFIG, GatewayConfig } from '#config/gateway-config.js';
import { InvalidRequestError } from '#tool-sdk/errors.js';
import { BACKGROUND_RUNNER, type BackgroundRunner } from '#core/loop/background-runner.interface.js';
import { LoopService } from '#core/loop/loop.service.js';
import { SERVED_REQUEST, type ResponseRequest } from '#core/loop/response-request.js';
import { FlowGate } from '#core/protocol/flow-gate.js';
import { answerOverHttp, respondOverHttp, type HttpExchange } from '#edge/responder/respond-over-http.js';
import { responsesSurface } from '#edge/responder/responses.surface.js';
import { forwardedHeaders } from '#edge/request/forwarded-headers.js';
import { requestOwner } from '#tool-sdk/routes/request-owner.js';
import { scannedBodyOf } from '#tool-sdk/routes/scanned-body.js';
import { GatewayRoutes } from '#tool-sdk/routes/gateway-routes.js';
import { sendJson } from '#edge/response/send-json.js';
import { reasoningEventsFor } from '#edge/request/reasoning-events.js';
import { InputTokensCounter } from '../count-tokens/input-tokens.counter.js';
import { CreateResponseParser } from '../request/create-response.parser.js';

/**
 * Thin edge: parse, delegate to the loop, and hand the run's events to the
 * responder, which writes the reply as JSON or SSE; the handler returns the
 * exchange as an Observable, so that a host's interceptors see each event
 * and the outcome, and can stop the run (`respondOverHttp`).
 */
@Controller('v1/responses')
@GatewayRoutes()
export class ResponsesController {
  constructor(
    private readonly parser: CreateResponseParser,
    private readonly loop: LoopService,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly counter: InputTokensCounter,
    @Optional() @Inject(BACKGROUND_RUNNER) private readonly background?: BackgroundRunner,
  ) {}

  /**
   * `responses.inputTokens.count`: the body of a create request (without
   * generation-only fields), answered `{object: "response.input_tokens",
   * input_tokens}`; `x-switchyard-token-count` says whether the model
   * server counted (`upstream`) or the gateway estimated (`estimate`).
   */
  @Post('input_tokens')
  @HttpCode(200)
  async inputTokens(@Body() body: unknown, @Req() req: Request, @Res() res: Response): Promise<void> {
    const request = this.parser.parse(body, requestOwner(req), scannedBodyOf(req));
    const ac = new AbortController();
    res.on('close', () => ac.abort());
    const count = await this.counter.count(request, ac.signal);
    res.setHeader('x-switchyard-token-count', count.source);
    sendJson(res, 200, { object: 'response.input_tokens', input_tokens: count.inputTokens });
  }

  @Post()
  @HttpCode(200)
  create(@Body() body: unknown, @Req() req: Request, @Res() res: Response): HttpExchange {
    const request = this.parser.parse(body, requestOwner(req), scannedBodyOf(req));
    request.forwardedHeaders = forwardedHeaders(req.headers, this.config.upstream.forwardHeaders ?? []);
    request[SERVED_REQUEST] = req;
    const reasoningEvents = reasoningEventsHeader(req);
    if (reasoningEvents) request.reasoningEvents = reasoningEvents;
    else if (this.config.server.reasoningEvents === 'auto') request.reasoningEvents = reasoningEventsFor(req.headers);
    if (request.background) return this.createInBackground(request, res);
    const flow = request.stream ? new FlowGate() : undefined;
    return respondOverHttp(res, this.loop.run(request, { flow }), responsesSurface, { stream: request.stream, server: this.config.server, flow });
  }

  /**
   * The run belongs to the gateway, not to this connection: a blocking
   * request gets the `queued` response at once, a streaming one follows the
   * run's stored events, and leaving stops only the following.
   */
  private createInBackground(request: ResponseRequest, res: Response): HttpExchange {
    const runner = this.background;
    if (!runner) {
      throw new InvalidRequestError(
        "'background' is not supported: background responses need the gateway's state module; send the request without it.",
        'background',
        'unsupported_parameter',
      );
    }
    if (!request.stream)
      return answerOverHttp(
        res,
        defer(() => runner.start(request)),
        responsesSurface,
      );
    const events = defer(() => runner.start(request)).pipe(switchMap((queued) => runner.follow(queued.id as string, request.owner, -1)));
    return respondOverHttp(res, events, responsesSurface, { stream: true, server: this.config.server });
  }
}

/**
 * `x-switchyard-reasoning-events: openresponses | openai`: the reasoning
 * stream event names for this request. The `openai` SDK's `responses.stream()`
 * reads `response.reasoning_text.*`; the Open Responses specification names
 * `response.reasoning.*`. One gateway serves both: the deployment's default
 * (`server.reasoningEvents`; `auto`, the default, chooses by what the client
 * declares: `reasoningEventsFor`), and each client may ask for the other.
 */
export const REASONING_EVENTS_HEADER = 'x-switchyard-reasoning-events';

function reasoningEventsHeader(req: Request): 'openai' | 'openresponses' | null {
  const value = req.headers[REASONING_EVENTS_HEADER];
  if (value === undefined) return null;
  if (value === 'openai' || value === 'openresponses') return value;
  throw new InvalidRequestError(`The ${REASONING_EVENTS_HEADER} header must be "openai" or "openresponses".`, REASONING_EVENTS_HEADER, 'invalid_header');
}
