import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query, Req } from '@nestjs/common';
import type { Request } from 'express';
import { InvalidRequestError, NotFoundError } from '#tool-sdk/errors.js';
import { newId } from '#tool-sdk/ids.js';
import type { PublicItem } from '#tool-sdk/items.js';
import { requestOwner } from '#tool-sdk/routes/request-owner.js';
import { CreateResponseParser } from '#responses/request/create-response.parser.js';
import { STATE_STORE, type Conversation, type ConversationItem, type StateStore } from '#storage/index.js';
import { conversationNotFound } from '#tool-sdk/errors.js';
import { listQuery, requestBody } from '#tool-sdk/routes/request-validation.js';
import { parseMetadata } from '#responses/request/metadata.parser.js';
import { GatewayRoutes } from '#tool-sdk/routes/gateway-routes.js';
import { resolveItemReferences } from '../persistence/item-references.util.js';
import { canonicalItem } from '#responses/request/input-items.parser.js';

/** The API creates at most this many items per call, as OpenAI's does. */
const MAX_ITEMS_PER_CALL = 20;

interface ConversationObject {
  id: string;
  object: 'conversation';
  created_at: number;
  metadata: Record<string, string>;
}

interface ItemList {
  object: 'list';
  data: PublicItem[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

function toObject(c: Conversation): ConversationObject {
  return { id: c.id, object: 'conversation', created_at: c.createdAt, metadata: c.metadata };
}

function itemNotFound(itemId: string): NotFoundError {
  return new NotFoundError(`Item with id '${itemId}' not found in this conversation.`, 'item_not_found', 'item_id');
}

function toList(entries: ConversationItem[], hasMore: boolean): ItemList {
  const data = entries.map((entry) => canonicalItem(entry.item));
  return {
    object: 'list',
    data,
    first_id: entries.length > 0 ? entries[0].id : null,
    last_id: entries.length > 0 ? entries[entries.length - 1].id : null,
    has_more: hasMore,
  };
}

/** The Conversations API: durable item lists that responses read from and append to. */
@Controller('v1/conversations')
@GatewayRoutes()
export class ConversationsController {
  constructor(
    @Inject(STATE_STORE) private readonly store: StateStore,
    private readonly parser: CreateResponseParser,
  ) {}

  @Post()
  @HttpCode(200)
  async create(@Body() body: unknown, @Req() req: Request): Promise<ConversationObject> {
    const raw = requestBody(body, { optional: true });
    const items = raw.items === undefined || raw.items === null ? [] : await this.items(raw.items, requestOwner(req));
    const conversation: Conversation = {
      id: newId('conv'),
      owner: requestOwner(req),
      createdAt: Math.floor(Date.now() / 1000),
      metadata: parseMetadata(raw.metadata),
    };
    return toObject(await this.store.createConversation(conversation, items));
  }

  @Get(':id')
  async retrieve(@Param('id') id: string, @Req() req: Request): Promise<ConversationObject> {
    const found = await this.store.getConversation(id, requestOwner(req));
    if (!found) throw conversationNotFound(id);
    return toObject(found);
  }

  /** Metadata is replaced as a whole, as the OpenAI API does. */
  @Post(':id')
  @HttpCode(200)
  async update(@Param('id') id: string, @Body() body: unknown, @Req() req: Request): Promise<ConversationObject> {
    const raw = requestBody(body);
    if (raw.metadata === undefined) throw new InvalidRequestError("'metadata' is required.", 'metadata');
    const updated = await this.store.updateConversation(id, requestOwner(req), parseMetadata(raw.metadata));
    if (!updated) throw conversationNotFound(id);
    return toObject(updated);
  }

  @Delete(':id')
  async remove(@Param('id') id: string, @Req() req: Request): Promise<{ id: string; object: 'conversation.deleted'; deleted: true }> {
    if (!(await this.store.deleteConversation(id, requestOwner(req)))) throw conversationNotFound(id);
    return { id, object: 'conversation.deleted', deleted: true };
  }

  @Get(':id/items')
  async listItems(@Param('id') id: string, @Query() query: Record<string, unknown>, @Req() req: Request): Promise<ItemList> {
    const page = await this.store.listConversationItems(id, requestOwner(req), listQuery(query));
    if (!page) throw conversationNotFound(id);
    return toList(page.data, page.has_more);
  }

  @Post(':id/items')
  @HttpCode(200)
  async addItems(@Param('id') id: string, @Body() body: unknown, @Req() req: Request): Promise<ItemList> {
    const raw = requestBody(body);
    if (raw.items === undefined || raw.items === null) throw new InvalidRequestError("'items' is required.", 'items');
    const added = await this.store.addConversationItems(id, requestOwner(req), await this.items(raw.items, requestOwner(req)));
    if (!added) throw conversationNotFound(id);
    return toList(added, false);
  }

  @Get(':id/items/:itemId')
  async retrieveItem(@Param('id') id: string, @Param('itemId') itemId: string, @Req() req: Request): Promise<PublicItem> {
    const owner = requestOwner(req);
    const found = await this.store.getConversationItem(id, itemId, owner);
    if (found) return canonicalItem(found.item);
    throw (await this.store.getConversation(id, owner)) ? itemNotFound(itemId) : conversationNotFound(id);
  }

  /** Answers with the conversation, as the OpenAI API does. */
  @Delete(':id/items/:itemId')
  async removeItem(@Param('id') id: string, @Param('itemId') itemId: string, @Req() req: Request): Promise<ConversationObject> {
    const owner = requestOwner(req);
    const conversation = await this.store.getConversation(id, owner);
    if (!conversation) throw conversationNotFound(id);
    if (!(await this.store.deleteConversationItem(id, itemId, owner))) throw itemNotFound(itemId);
    return toObject(conversation);
  }

  /** Validated, canonical items; `item_reference`s become the caller's stored items they name. */
  private async items(value: unknown, owner: string | null): Promise<PublicItem[]> {
    const items = this.parser.parseItems(value, 'items');
    if (items.length > MAX_ITEMS_PER_CALL) throw new InvalidRequestError(`'items' may hold at most ${MAX_ITEMS_PER_CALL} items per call.`, 'items');
    return resolveItemReferences(items, (ids) => this.store.findItems(ids, owner), 'items');
  }
}
