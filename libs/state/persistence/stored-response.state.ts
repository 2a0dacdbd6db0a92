import { Inject, Injectable } from '@nestjs/common';
import { conversationNotFound, previousResponseNotFound } from '#tool-sdk/errors.js';
import type { PriorState, PublicToolChoice, ResponseRequest } from '#core/loop/response-request.js';
import type { CompletedRun, ResponseStateStore } from '#core/loop/response-state.interface.js';
import type { JsonObject, ModelItem, PublicItem } from '#tool-sdk/items.js';
import { STATE_STORE, type StateStore, type StoredResponse } from '#storage/index.js';
import { CompactionService } from '../compaction/compaction.service.js';
import { readConversationItems } from './conversation-items.util.js';
import { resolveItemReferences } from './item-references.util.js';
import { storableTools } from './tool-declarations.util.js';

/**
 * `extra` key of a response whose run continued from a compacted transcript:
 * those model items stand in for everything before the response in its chain.
 */
const BASE_MODEL_ITEMS = 'baseModelItems';

function outputOf(response: JsonObject): PublicItem[] {
  return Array.isArray(response.output) ? (response.output as PublicItem[]) : [];
}

/**
 * Conversation state over the `StateStore`: rehydrates `previous_response_id`
 * chains and conversations for the loop, and persists each finished run
 * before its terminal event goes out, so that any replica sharing the
 * database can read or continue a response as soon as a client has seen it end.
 */
@Injectable()
export class StoredResponseState implements ResponseStateStore {
  constructor(
    @Inject(STATE_STORE) private readonly store: StateStore,
    private readonly compaction: CompactionService,
  ) {}

  async probe(): Promise<void> {
    await this.store.probe?.();
  }

  async load(request: ResponseRequest): Promise<PriorState | null> {
    const prior = await this.rehydrate(request);
    return prior && this.compaction.autoCompact(prior, request);
  }

  /** The stored state a request continues from, oldest first; null when it starts afresh. */
  async rehydrate(request: Pick<ResponseRequest, 'previousResponseId' | 'conversationId' | 'owner'>): Promise<PriorState | null> {
    if (request.previousResponseId) {
      const chain = await this.store.getChain(request.previousResponseId, request.owner);
      if (!chain || chain.length === 0) throw previousResponseNotFound(request.previousResponseId);
      let modelItems: ModelItem[] = [];
      const publicItems: PublicItem[] = [];
      for (const stored of chain) {
        const base = stored.extra?.[BASE_MODEL_ITEMS];
        if (Array.isArray(base)) modelItems = [...(base as ModelItem[])];
        modelItems.push(...stored.modelItems);
        // Input and output both: MCP discovery is not repeated and approval requests are found.
        publicItems.push(...stored.inputItems, ...outputOf(stored.response));
      }
      const head = chain[chain.length - 1];
      return {
        modelItems,
        publicItems,
        tools: head.tools,
        toolChoice: (head.toolChoice ?? undefined) as PublicToolChoice | undefined,
      };
    }
    if (request.conversationId) {
      const items = await readConversationItems(this.store, request.conversationId, request.owner);
      if (!items) throw conversationNotFound(request.conversationId);
      return { modelItems: [], publicItems: items, untranslated: items };
    }
    return null;
  }

  async resolveReferences(request: ResponseRequest): Promise<PublicItem[]> {
    return resolveItemReferences(request.input, (ids) => this.store.findItems(ids, request.owner));
  }

  async save(run: CompletedRun): Promise<void> {
    const { request, response } = run;
    const output = outputOf(response);
    // Items the conversation already holds (a client re-sending one) are not appended twice.
    const known = new Set(request.conversationId ? (run.prior?.publicItems ?? []).map((item) => item.id) : []);
    const conversationItems = request.conversationId ? [...request.input, ...output].filter((item) => !known.has(item.id)) : [];

    if (!request.store) {
      // store:false keeps the response out of storage, but a conversation the
      // client named is its own record of the exchange and still moves on.
      if (request.conversationId && conversationItems.length > 0) {
        const added = await this.store.addConversationItems(request.conversationId, request.owner, conversationItems);
        if (!added) throw conversationNotFound(request.conversationId);
      }
      return;
    }

    const record: StoredResponse = {
      id: response.id as string,
      owner: request.owner,
      createdAt: response.created_at as number,
      previousResponseId: request.previousResponseId,
      conversationId: request.conversationId,
      status: response.status as string,
      response: { ...response, tools: storableTools(response.tools) },
      inputItems: request.input,
      modelItems: run.modelItems,
      tools: storableTools(run.tools),
      toolChoice: request.toolChoice,
    };
    if (run.prior?.compacted) record.extra = { [BASE_MODEL_ITEMS]: run.prior.modelItems };
    await this.store.saveResponse(record, conversationItems);
  }
}
