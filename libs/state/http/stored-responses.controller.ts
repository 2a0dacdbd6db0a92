import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { GATEWAY_CONFIG, GatewayConfig } from '#config/gateway-config.js';
import { InvalidRequestError, NotFoundError } from '#tool-sdk/errors.js';
import { newId } from '#tool-sdk/ids.js';
import type { JsonObject, PublicItem, Usage } from '#tool-sdk/items.js';
import { requestOwner } from '#tool-sdk/routes/request-owner.js';
import { CreateResponseParser } from '#responses/request/create-response.parser.js';
import { STATE_STORE, type Page, type StateStore } from '#storage/index.js';
import { CompactionService } from '../compaction/compaction.service.js';
import { StoredResponseState } from '../persistence/stored-response.state.js';
import { BackgroundRunService } from '../background/background-run.service.js';
import { sendJson } from '#edge/response/send-json.js';
import { respondOverHttp, type HttpExchange } from '#edge/responder/respond-over-http.js';
import { responsesSurface } from '#edge/responder/responses.surface.js';
import { listQuery, requestBody } from '#tool-sdk/routes/request-validation.js';
import { GatewayRoutes } from '#tool-sdk/routes/gateway-routes.js';
import { resolveItemReferences } from '../persistence/item-references.util.js';
import { canonicalItem } from '#responses/request/input-items.parser.js';

function responseNotFound(id: string): NotFoundError {
  return new NotFoundError(`Response with id '${id}' not found.`, 'response_not_found', 'response_id');
}

/** `starting_after`: a sequence number; events after it are sent. Absent: from the first. */
function startingAfter(raw: unknown): number {
  if (raw === undefined || raw === '') return -1;
  const value = typeof raw === 'string' && /^-?\d{1,15}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(value) || value < -1) {
    throw new InvalidRequestError("'starting_after' must be a sequence number (an integer of at least 0).", 'starting_after');
  }
  return value;
}

function optionalString(body: JsonObject, field: string): string | null {
  const value = body[field];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw new InvalidRequestError(`'${field}' must be a string.`, field);
  return value;
}

export interface CompactResource {
  id: string;
  object: 'response.compaction';
  created_at: number;
  output: PublicItem[];
  usage: Usage;
}

/** Stored responses: retrieve, delete, list input items, and compaction. */
@Controller('v1/responses')
@GatewayRoutes()
export class StoredResponsesController {
  constructor(
    @Inject(STATE_STORE) private readonly store: StateStore,
    private readonly state: StoredResponseState,
    private readonly compaction: CompactionService,
    private readonly parser: CreateResponseParser,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly background: BackgroundRunService,
  ) {}

  @Post('compact')
  @HttpCode(200)
  async compact(@Body() body: unknown, @Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<CompactResource> {
    const raw = requestBody(body);
    const model = optionalString(raw, 'model') ?? this.config.upstream.defaultModel;
    if (!model) throw new InvalidRequestError("'model' is required.", 'model');
    const previousResponseId = optionalString(raw, 'previous_response_id');
    const instructions = optionalString(raw, 'instructions');
    const promptCacheKey = optionalString(raw, 'prompt_cache_key');
    const hasInput = raw.input !== undefined && raw.input !== null;
    if (!hasInput && !previousResponseId) throw new InvalidRequestError("'input' is required without 'previous_response_id'.", 'input');
    const parsed = !hasInput ? [] : this.parser.parseItems(typeof raw.input === 'string' ? [{ role: 'user', content: raw.input }] : raw.input, 'input');
    const input = await resolveItemReferences(parsed, (ids) => this.store.findItems(ids, requestOwner(req)));

    const prior = await this.state.rehydrate({ previousResponseId, conversationId: null, owner: requestOwner(req) });
    const items = [...(prior?.publicItems ?? []), ...input];
    if (items.length === 0) throw new InvalidRequestError('There is nothing to compact: the input is empty.', 'input');

    // The summary is an upstream call: a client that goes away cancels it.
    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    const { output, usage } = await this.compaction.compact(items, { model, instructions, promptCacheKey, signal: abort.signal });
    return { id: newId('resp'), object: 'response.compaction', created_at: Math.floor(Date.now() / 1000), output, usage };
  }

  /**
   * A background response reads from the background store while it runs
   * (and after: the store keeps its final state), with `stream=true` replaying
   * its events after `starting_after` and following it live, on any replica.
   */
  @Get(':id')
  async retrieve(@Param('id') id: string, @Query() query: Record<string, unknown>, @Req() req: Request, @Res() res: Response): Promise<HttpExchange | void> {
    const owner = requestOwner(req);
    const background = await this.background.get(id, owner);
    if (query.stream === 'true') {
      if (!background) {
        if (await this.store.getResponse(id, owner)) {
          throw new InvalidRequestError("'stream' is only available for background responses: the events of others are not kept.", 'stream', 'unsupported_parameter');
        }
        throw responseNotFound(id);
      }
      const events = this.background.follow(id, owner, startingAfter(query.starting_after));
      return respondOverHttp(res, events, responsesSurface, { stream: true, server: this.config.server });
    }
    if (query.starting_after !== undefined) throw new InvalidRequestError("'starting_after' needs 'stream=true'.", 'starting_after');
    if (background) return sendJson(res, 200, background.response);
    const stored = await this.store.getResponse(id, owner);
    if (!stored) throw responseNotFound(id);
    sendJson(res, 200, stored.response);
  }

  @Post(':id/cancel')
  @HttpCode(200)
  cancel(@Param('id') id: string, @Req() req: Request): Promise<JsonObject> {
    return this.background.cancel(id, requestOwner(req));
  }

  @Delete(':id')
  async remove(@Param('id') id: string, @Req() req: Request): Promise<{ id: string; object: 'response.deleted'; deleted: true }> {
    const owner = requestOwner(req);
    // A background response lives in both stores once it has finished.
    const [background, stored] = await Promise.all([this.background.remove(id, owner), this.store.deleteResponse(id, owner)]);
    if (!background && !stored) throw responseNotFound(id);
    return { id, object: 'response.deleted', deleted: true };
  }

  @Get(':id/input_items')
  async inputItems(@Param('id') id: string, @Query() query: Record<string, unknown>, @Req() req: Request): Promise<{ object: 'list' } & Page<PublicItem>> {
    const page = await this.store.listInputItems(id, requestOwner(req), listQuery(query));
    if (!page) throw responseNotFound(id);
    return { object: 'list', ...page, data: page.data.map(canonicalItem) };
  }
}
