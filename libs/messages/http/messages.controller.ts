import { All, Body, Controller, HttpCode, Inject, Post, Req, Res, UseFilters } from '@nestjs/common';
import { SERVED_REQUEST } from '#core/loop/response-request.js';
import type { Request, Response } from 'express';
import { defer, from, switchMap } from 'rxjs';
import { GATEWAY_CONFIG, GatewayConfig } from '#config/gateway-config.js';
import { newId } from '#tool-sdk/ids.js';
import { LoopService } from '#core/loop/loop.service.js';
import { ToolHandlerExplorer } from '#core/handlers/tool-handler.explorer.js';
import { ModelContextService, estimateItemTokens } from '#core/loop/model-context.service.js';
import { FlowGate } from '#core/protocol/flow-gate.js';
import { forwardedHeaders } from '#edge/request/forwarded-headers.js';
import { requestOwner } from '#tool-sdk/routes/request-owner.js';
import { respondOverHttp, type HttpExchange } from '#edge/responder/respond-over-http.js';
import { NotFoundError } from '#tool-sdk/errors.js';
import { MessagesTokenCounter } from '../count-tokens/messages-token-counter.service.js';
import { mapMessagesRequest, type MappedMessagesRequest } from '../request/messages-request.mapper.js';
import { ThinkingSigner } from '../thinking/thinking-signer.js';
import { MessagesEventTranslator } from '../stream/messages-event.translator.js';
import { toAnthropicError } from './anthropic-error.js';
import { AnthropicExceptionFilter } from './anthropic-exception.filter.js';
import { messagesSurface } from './messages.surface.js';
import { sendJson } from '#edge/response/send-json.js';
import { GatewayRoutes } from '#tool-sdk/routes/gateway-routes.js';

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
    private readonly contexts: ModelContextService,
    private readonly explorer: ToolHandlerExplorer,
  ) {}

  /**
   * Anthropic's server web search runs on the gateway's `web_search` module
   * when one is loaded with an executor and says it can search (a provider is
   * configured); otherwise a declaration is refused by name. Asked per
   * request: the module's own status is the one source of truth.
   */
  private webSearchRuns(): boolean {
    const handler = this.explorer.handlerForType('web_search');
    if (!handler?.gatewayOwned || !this.explorer.executorForType('web_search')) return false;
    return handler.describe?.().runs ?? true;
  }

  // `anthropic-beta` headers need no handling: every beta this gateway
  // serves is always on, and the fields a beta unlocks are checked like any
  // other field, so a request relying on one this gateway lacks is refused by name.
  @Post()
  @HttpCode(200)
  create(@Body() body: unknown, @Req() req: Request, @Res() res: Response): HttpExchange {
    // Anthropic's SDKs expose this header as `requestID`; the message id is derived from the same id.
    const responseId = newId('resp');
    res.setHeader('request-id', `req_${responseId.replace(/^resp_/, '')}`);
    const mapped = mapMessagesRequest(body, requestOwner(req), { signer: this.signer, webSearch: this.webSearchRuns() });
    const { request, toolOrigins, contextManagement, hideThinking } = mapped;
    request.responseId = responseId;
    request.forwardedHeaders = forwardedHeaders(req.headers, this.config.upstream.forwardHeaders ?? []);
    request[SERVED_REQUEST] = req;
    const flow = request.stream ? new FlowGate() : undefined;
    const translator = new MessagesEventTranslator({
      signer: this.signer,
      hideThinking,
      contextManagement: contextManagement ? { applied_edits: contextManagement.appliedEdits } : null,
    });
    // The prompt is measured first when that is worth a call (`measurePrompt`); the run starts after.
    const run$ = defer(() => {
      const ac = new AbortController();
      res.on('close', () => ac.abort());
      return from(this.measurePrompt(mapped, ac.signal));
    }).pipe(
      switchMap((inputTokens) => {
        if (inputTokens !== null) {
          request.promptTokens = inputTokens + countHeadroom(mapped, inputTokens);
          translator.knownInputTokens(inputTokens);
        }
        return this.loop.run(request, { flow });
      }),
    );
    return respondOverHttp(res, run$, messagesSurface(translator, toolOrigins), {
      stream: request.stream,
      server: this.config.server,
      flow,
    });
  }

  /**
   * The prompt as the model server counts it (`/tokenize`), or null. Worth
   * the extra call when the budget may not fit the model's context (Claude
   * Code asks 32000 of any model; fitted to an estimate, a long session's
   * budget would be cut short or refused), and for a stream, whose
   * `message_start` reports the count. Not for a stream whose tools the
   * gateway discovers (MCP servers), which counting would list twice. A
   * failed count only means no count.
   */
  private async measurePrompt(mapped: MappedMessagesRequest, signal: AbortSignal): Promise<number | null> {
    const { request } = mapped;
    if (request.maxOutputTokens === null) return null;
    const contextLength = await this.contexts.contextLength(request.model);
    if (contextLength === null) return null;
    const mayNotFit = request.maxOutputTokens > contextLength - roughPromptTokens(mapped);
    const discovers = request.tools.some((tool) => tool.type !== 'function');
    if (!mayNotFit && (!request.stream || discovers)) return null;
    const count = await this.counter.count(mapped, null, signal).catch(() => null);
    return count?.source === 'upstream' ? count.inputTokens : null;
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
    const mapped = mapMessagesRequest(body, owner, { signer: this.signer, counting: true, webSearch: this.webSearchRuns() });
    const edited = (mapped.contextManagement?.appliedEdits.length ?? 0) > 0;
    const original: MappedMessagesRequest | null = edited
      ? mapMessagesRequest({ ...(body as object), context_management: null }, owner, { signer: this.signer, counting: true, webSearch: this.webSearchRuns() })
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
      const { status, body: envelope, headers } = toAnthropicError(err, mapped.toolOrigins);
      if (res.headersSent) return;
      for (const [name, value] of Object.entries(headers ?? {})) res.setHeader(name, value);
      res.status(status).json(envelope);
    }
  }

  /** Every other path under `/v1/messages` (batches, typos, wrong methods) answers in Anthropic's envelope. */
  @All(['*path', '/'])
  notFound(@Req() req: Request): never {
    throw new NotFoundError(`${req.method} ${req.path} is not served by this gateway's Messages API (POST /v1/messages and POST /v1/messages/count_tokens are).`);
  }
}

/** The estimate the loop would fit the budget to (three bytes a token, deliberately high), from the request as mapped. */
function roughPromptTokens({ request }: MappedMessagesRequest): number {
  return estimateItemTokens([request.instructions, request.input, request.tools]);
}

/**
 * What the budget fit adds to the count. The count renders the prompt as chat messages, which leave the
 * history's reasoning out; the responses dialect sends reasoning items, and templates frame items a little
 * differently from one route to the other. Their reasoning text at the estimate's rate, plus 1% (at least 32
 * tokens), keeps the fitted budget inside the context whichever route the upstream renders.
 */
function countHeadroom({ request }: MappedMessagesRequest, counted: number): number {
  let reasoningBytes = 0;
  for (const item of request.input) if (item.type === 'reasoning') reasoningBytes += Buffer.byteLength(JSON.stringify(item.content ?? []), 'utf8');
  return Math.ceil(reasoningBytes / 3) + Math.max(32, Math.ceil(counted / 100));
}
