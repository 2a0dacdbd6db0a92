import { Inject, Injectable } from '@nestjs/common';
import { conversationNotFound, previousResponseNotFound } from '#tool-sdk/errors.js';
import type { PriorState, PublicToolChoice, ResponseRequest } from '#core/loop/response-request.js';
import type { CompletedRun, ResponseStateStore } from '#core/loop/response-state.interface.js';
import type { JsonObject, ModelItem, PublicItem } from '#tool-sdk/items.js';
import { DEFAULT_CHAIN_DEPTH, STATE_STORE, type StateStore, type StoredResponse } from '#storage/index.js';
import { CompactionService } from '../compaction/compaction.service.js';
import { readConversationItems } from './conversation-items.util.js';
import { resolveItemReferences } from './item-references.util.js';
import { storableTools } from './tool-declarations.util.js';
import { BASE_MODEL_ITEMS, extendChain, PreparedChainCache, prepareChain, type PreparedChain } from './prepared-chain.cache.js';

/**
 * About how much memory (characters of the items' strings) the chains this
 * process keeps prepared may hold: a chain of 20 short turns is some 10 KB, so
 * hundreds of conversations, while a few long agent transcripts with large
 * tool outputs push each other out rather than grow a worker.
 */
const PREPARED_CHAIN_SIZE = 8 * 1024 * 1024;

/**
 * How many of a chain's newest responses a continuation reads before looking
 * for a kept chain they extend: the turns between two requests of one client
 * that another worker or replica served.
 */
const RECENT_TURNS = 4;

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
  private readonly chains = new PreparedChainCache(PREPARED_CHAIN_SIZE, DEFAULT_CHAIN_DEPTH);

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
      const chain = await this.preparedChain(request.previousResponseId, request.owner);
      return {
        modelItems: chain.modelItems as ModelItem[],
        publicItems: chain.publicItems as PublicItem[],
        tools: chain.tools,
        toolChoice: (chain.toolChoice ?? undefined) as PublicToolChoice | undefined,
      };
    }
    if (request.conversationId) {
      const items = await readConversationItems(this.store, request.conversationId, request.owner);
      if (!items) throw conversationNotFound(request.conversationId);
      return { modelItems: [], publicItems: items, untranslated: items };
    }
    return null;
  }

  /**
   * The chain ending at `id`, prepared: kept from an earlier request on this
   * process when the store confirms all of it is still there; else its last
   * few responses read and appended to the kept chain of the one before them
   * (a client continuing the response it was just given, whichever worker
   * served the turns between); else the whole chain read.
   */
  private async preparedChain(id: string, owner: string | null): Promise<PreparedChain> {
    if (!this.store.responsesPresent) return prepareChain(await this.storedChain(id, owner));
    const kept = this.chains.get(id, owner);
    if (kept && (await this.intact(kept))) return kept;
    const recent = await this.storedChain(id, owner, RECENT_TURNS);
    const oldest = recent[0];
    // The walk reached the chain's start, or stopped where the store's full walk stops too.
    const complete = !oldest.previousResponseId || recent.length < RECENT_TURNS;
    let chain: PreparedChain | undefined;
    if (complete) chain = prepareChain(recent);
    else {
      const base = this.extendable(recent, owner);
      if (base && (await this.intact(base.chain))) {
        chain = recent.slice(base.from).reduce(extendChain, base.chain);
        // The longer chain holds all of it: one entry per chain a client moves along, not one per turn.
        this.chains.delete(base.chain.ids[base.chain.ids.length - 1]);
      }
    }
    chain ??= prepareChain(await this.storedChain(id, owner));
    this.chains.set(chain);
    return chain;
  }

  /** The newest kept chain that `recent` (oldest first) continues, and where in `recent` its continuation starts. */
  private extendable(recent: readonly StoredResponse[], owner: string | null): { chain: PreparedChain; from: number } | undefined {
    for (let i = recent.length - 1; i >= 0; i--) {
      const chain = this.chains.get(i === 0 ? recent[0].previousResponseId! : recent[i - 1].id, owner);
      if (chain && this.chains.canExtend(chain, recent.length - i)) return { chain, from: i };
    }
    return undefined;
  }

  private async storedChain(id: string, owner: string | null, maxDepth?: number): Promise<StoredResponse[]> {
    const chain = await this.store.getChain(id, owner, maxDepth);
    if (!chain || chain.length === 0) throw previousResponseNotFound(id);
    return chain;
  }

  private async intact(chain: PreparedChain): Promise<boolean> {
    return (await this.store.responsesPresent?.(chain.ids, chain.owner)) ?? false;
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
