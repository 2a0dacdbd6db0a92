import { NotFoundError } from '#tool-sdk/errors.js';
import type { PublicItem } from '#tool-sdk/items.js';
import { DuplicateIdError } from '../shared/duplicate-id.error.js';
import type { CatalogKind, CatalogPage, CatalogQuery, StateCatalog } from '../catalog.interface.js';
import { catalogOfEntries, parseListOptions, positionRange, toPage, unknownCursor, type ListQuery } from '../shared/list-window.util.js';
import { nowSeconds, outputItemsOf, withItemId, type IdentifiedItem } from '../shared/stored-item.util.js';
import { DEFAULT_CHAIN_DEPTH, type Conversation, type ConversationItem, type ListOptions, type Page, type StateStore, type StoredResponse } from '../state-store.interface.js';

interface ConversationRecord {
  conversation: Conversation;
  nextPosition: number;
  /** Ascending by position. */
  items: ConversationItem[];
}

/**
 * Round-trips through JSON rather than `structuredClone` so that this store
 * accepts and returns exactly what the SQL backends would: `undefined` fields
 * vanish, values JSON cannot hold are refused.
 */
function clone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value ?? null)) as T;
}

function sameOwner(recordOwner: string | null, owner: string | null): boolean {
  return recordOwner === owner;
}

/**
 * State kept in process memory: for tests and for deployments that never
 * store. Each write validates and serializes everything before touching the
 * maps, which makes it all-or-nothing like a transaction.
 */
export class MemoryStateStore implements StateStore, StateCatalog {
  private readonly responses = new Map<string, StoredResponse>();
  private readonly conversations = new Map<string, ConversationRecord>();

  async init(): Promise<void> {}

  async close(): Promise<void> {}

  async saveResponse(r: StoredResponse, conversationItems: PublicItem[] = []): Promise<void> {
    const stored = clone<StoredResponse>({
      id: r.id,
      owner: r.owner,
      createdAt: r.createdAt,
      previousResponseId: r.previousResponseId,
      conversationId: r.conversationId,
      status: r.status,
      response: r.response,
      inputItems: r.inputItems.map(withItemId),
      modelItems: r.modelItems,
      tools: r.tools,
      toolChoice: r.toolChoice ?? null,
      ...(r.extra === undefined ? {} : { extra: r.extra }),
    });
    if (this.responses.has(r.id)) throw new DuplicateIdError('response', r.id, 'id');
    let append: (() => void) | undefined;
    if (r.conversationId !== null) {
      const record = this.ownedConversation(r.conversationId, r.owner);
      if (!record) {
        throw new NotFoundError(`Conversation '${r.conversationId}' not found.`, 'conversation_not_found', 'conversation');
      }
      append = this.stageItems(record, conversationItems).commit;
    }
    this.responses.set(r.id, stored);
    append?.();
  }

  /** Every stored response or conversation, whoever owns it, newest first (the console's listing). */
  async catalog(kind: CatalogKind, query: CatalogQuery): Promise<CatalogPage> {
    const records = kind === 'responses' ? this.responses.values() : [...this.conversations.values()].map((r) => r.conversation);
    return catalogOfEntries(records, query);
  }

  async getResponse(id: string, owner: string | null): Promise<StoredResponse | null> {
    const stored = this.ownedResponse(id, owner);
    return stored ? clone(stored) : null;
  }

  async deleteResponse(id: string, owner: string | null): Promise<boolean> {
    if (!this.ownedResponse(id, owner)) return false;
    return this.responses.delete(id);
  }

  async listInputItems(id: string, owner: string | null, opts: ListOptions): Promise<Page<PublicItem> | null> {
    const stored = this.ownedResponse(id, owner);
    if (!stored) return null;
    const query = parseListOptions(opts);
    const positioned = stored.inputItems.map((item, position) => ({ position, id: item.id as string, value: item }));
    const page = this.window(positioned, query);
    return { ...page, data: page.data.map((entry) => clone(entry.value)) };
  }

  async getChain(id: string, owner: string | null, maxDepth = DEFAULT_CHAIN_DEPTH): Promise<StoredResponse[] | null> {
    const head = this.ownedResponse(id, owner);
    if (!head) return null;
    const chain = [head];
    const seen = new Set([head.id]);
    let current = head;
    while (chain.length < maxDepth && current.previousResponseId !== null) {
      const previous = this.ownedResponse(current.previousResponseId, owner);
      if (!previous || seen.has(previous.id)) break;
      seen.add(previous.id);
      chain.push(previous);
      current = previous;
    }
    return chain.reverse().map((r) => clone(r));
  }

  async responsesPresent(ids: readonly string[], owner: string | null): Promise<boolean> {
    return ids.every((id) => this.ownedResponse(id, owner) !== undefined);
  }

  async createConversation(c: Conversation, items: PublicItem[]): Promise<Conversation> {
    const record: ConversationRecord = { conversation: clone(c), nextPosition: 0, items: [] };
    const staged = this.stageItems(record, items);
    if (this.conversations.has(c.id)) throw new DuplicateIdError('conversation', c.id, 'id');
    this.conversations.set(c.id, record);
    staged.commit();
    return clone(record.conversation);
  }

  async getConversation(id: string, owner: string | null): Promise<Conversation | null> {
    const record = this.ownedConversation(id, owner);
    return record ? clone(record.conversation) : null;
  }

  async updateConversation(id: string, owner: string | null, metadata: Record<string, string>): Promise<Conversation | null> {
    const record = this.ownedConversation(id, owner);
    if (!record) return null;
    record.conversation.metadata = clone(metadata);
    return clone(record.conversation);
  }

  async deleteConversation(id: string, owner: string | null): Promise<boolean> {
    if (!this.ownedConversation(id, owner)) return false;
    return this.conversations.delete(id);
  }

  /**
   * A scan, output then input items then conversation items: this store holds
   * a test's or a non-storing deployment's few records, not enough to index.
   */
  async findItems(itemIds: readonly string[], owner: string | null): Promise<Map<string, PublicItem>> {
    const wanted = new Set(itemIds);
    const found = new Map<string, PublicItem>();
    const offer = (item: PublicItem) => {
      if (typeof item.id === 'string' && wanted.has(item.id) && !found.has(item.id)) found.set(item.id, clone(item));
    };
    if (wanted.size === 0) return found;
    const owned = [...this.responses.values()].filter((r) => sameOwner(r.owner, owner));
    for (const r of owned) outputItemsOf(r).forEach(offer);
    for (const r of owned) r.inputItems.forEach(offer);
    for (const record of this.conversations.values()) {
      if (sameOwner(record.conversation.owner, owner)) record.items.forEach((entry) => offer(entry.item));
    }
    return found;
  }

  async listConversationItems(id: string, owner: string | null, opts: ListOptions): Promise<Page<ConversationItem> | null> {
    const record = this.ownedConversation(id, owner);
    if (!record) return null;
    const page = this.window(record.items, parseListOptions(opts));
    return { ...page, data: page.data.map((entry) => clone(entry)) };
  }

  async addConversationItems(id: string, owner: string | null, items: PublicItem[]): Promise<ConversationItem[] | null> {
    const record = this.ownedConversation(id, owner);
    if (!record) return null;
    const staged = this.stageItems(record, items);
    staged.commit();
    return clone(staged.items);
  }

  async getConversationItem(id: string, itemId: string, owner: string | null): Promise<ConversationItem | null> {
    const found = this.ownedConversation(id, owner)?.items.find((entry) => entry.id === itemId);
    return found ? clone(found) : null;
  }

  async deleteConversationItem(id: string, itemId: string, owner: string | null): Promise<boolean> {
    const record = this.ownedConversation(id, owner);
    const index = record?.items.findIndex((entry) => entry.id === itemId) ?? -1;
    if (!record || index < 0) return false;
    record.items.splice(index, 1);
    return true;
  }

  private ownedResponse(id: string, owner: string | null): StoredResponse | undefined {
    const stored = this.responses.get(id);
    return stored && sameOwner(stored.owner, owner) ? stored : undefined;
  }

  private ownedConversation(id: string, owner: string | null): ConversationRecord | undefined {
    const record = this.conversations.get(id);
    return record && sameOwner(record.conversation.owner, owner) ? record : undefined;
  }

  /** Checks and serializes a batch of items up front; `commit` only appends. */
  private stageItems(record: ConversationRecord, items: PublicItem[]): { items: ConversationItem[]; commit: () => void } {
    const taken = new Set(record.items.map((entry) => entry.id));
    const createdAt = nowSeconds();
    const staged = items.map((raw, offset): ConversationItem => {
      const item: IdentifiedItem = clone(withItemId(raw));
      if (taken.has(item.id)) throw new DuplicateIdError('conversation_item', item.id, 'items');
      taken.add(item.id);
      return { id: item.id, conversationId: record.conversation.id, position: record.nextPosition + offset, item, createdAt };
    });
    return {
      items: staged,
      commit: () => {
        record.items.push(...staged);
        record.nextPosition += staged.length;
      },
    };
  }

  private window<T extends { position: number; id: string }>(entries: T[], query: ListQuery): Page<T> {
    const positionOf = (param: 'after' | 'before', cursor: string | undefined): number | undefined => {
      if (cursor === undefined) return undefined;
      const found = entries.find((entry) => entry.id === cursor);
      if (!found) throw unknownCursor(param, cursor);
      return found.position;
    };
    const { lo, hi } = positionRange(query.order, positionOf('after', query.after), positionOf('before', query.before));
    const inWindow = entries.filter((entry) => entry.position > lo && entry.position < hi);
    if (query.order === 'desc') inWindow.reverse();
    return toPage(inWindow.slice(0, query.limit + 1), query.limit, (entry) => entry.id);
  }
}
