import type { JsonObject, ModelItem, PublicItem } from '#tool-sdk/items.js';

export const STATE_STORE = Symbol('STATE_STORE');

export interface StoredResponse {
  /** `resp_...` */
  id: string;
  /** Inbound API key identity (a hash); null when authentication is off. */
  owner: string | null;
  /** Epoch seconds. */
  createdAt: number;
  previousResponseId: string | null;
  conversationId: string | null;
  status: string;
  /** The full public response object exactly as returned to the client. */
  response: JsonObject;
  /** This request's own input items, in order; each is stored with an id. */
  inputItems: PublicItem[];
  /** The model-facing transcript this response added (input and output as the model saw them), for rehydration. */
  modelItems: ModelItem[];
  /** Effective public tool declarations; the caller strips secrets before saving. */
  tools: JsonObject[];
  /** Stored as JSON: `undefined` comes back as `null`. */
  toolChoice: unknown;
  /** Gateway bookkeeping, e.g. which MCP servers were already listed. */
  extra?: JsonObject;
}

/**
 * Cursor pagination as the OpenAI list endpoints do it. `after` and `before`
 * are item ids that bound the window (exclusive) in the chosen `order`; the
 * page is the first `limit` items of that window and `has_more` says whether
 * the window holds more. An unknown cursor, a `limit` outside 1..100 or an
 * unknown `order` is an `InvalidRequestError` naming the parameter.
 */
export interface ListOptions {
  after?: string;
  before?: string;
  /** 1..100, default 20. */
  limit?: number;
  /** Default `desc` (newest first). */
  order?: 'asc' | 'desc';
}

export interface Page<T> {
  data: T[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

export interface Conversation {
  /** `conv_...` */
  id: string;
  owner: string | null;
  createdAt: number;
  metadata: Record<string, string>;
}

export interface ConversationItem {
  id: string;
  conversationId: string;
  /** Insertion order within the conversation; never reused after a delete. */
  position: number;
  item: PublicItem;
  createdAt: number;
}

/**
 * Persistent state behind `store: true`, `previous_response_id` and the
 * Conversations API.
 *
 * Ownership is an exact match: a record is visible only to callers passing the
 * owner it was written with (null included), and to everyone else it looks
 * missing (`null` / `false`), so one key cannot probe another key's ids.
 *
 * Items lacking an id get one on insert (`msg_` for messages, `item_` for the
 * rest). The arguments are never mutated: a caller that needs the ids before
 * saving assigns them itself (see `withItemId`).
 *
 * Every write is one transaction: it is stored whole or not at all. A
 * duplicate id is a `DuplicateIdError` (409).
 */
export interface StateStore {
  /** Opens connections and applies pending schema migrations. */
  init(): Promise<void>;
  /** Idempotent. */
  close(): Promise<void>;
  /**
   * Readiness: resolves when the store answers now, else throws
   * `StoreUnavailableError`. Stores in the gateway's own process (SQLite,
   * memory) have nothing that can be unreachable and leave it out.
   */
  probe?(): Promise<void>;

  /**
   * Stores the response row and its input items and, when `r.conversationId`
   * is set, appends `conversationItems` to that conversation, all in one
   * transaction. The conversation must exist and belong to `r.owner`, else
   * `NotFoundError` (code `conversation_not_found`) and nothing is stored.
   */
  saveResponse(r: StoredResponse, conversationItems?: PublicItem[]): Promise<void>;
  /** Null when missing or owned by another key. */
  getResponse(id: string, owner: string | null): Promise<StoredResponse | null>;
  /** Removes the response and its input items; items it appended to a conversation stay there. */
  deleteResponse(id: string, owner: string | null): Promise<boolean>;
  listInputItems(id: string, owner: string | null, opts: ListOptions): Promise<Page<PublicItem> | null>;
  /**
   * The response and its ancestors via `previousResponseId`, oldest first.
   * Null when the head is missing. The walk stops at an ancestor that is
   * missing (deleted) or owned by another key, and after `maxDepth` responses
   * (default `DEFAULT_CHAIN_DEPTH`), keeping the most recent ones.
   */
  getChain(id: string, owner: string | null, maxDepth?: number): Promise<StoredResponse[] | null>;
  /**
   * Whether every one of these responses (distinct ids) is still stored and owned by `owner`: stored
   * responses never change, only go (deleted, or moved to another key), so a chain read earlier is
   * still what `getChain` would read when all its responses are present. One indexed lookup per id,
   * nothing parsed. Optional: without it, chains are read whole each time.
   */
  responsesPresent?(ids: readonly string[], owner: string | null): Promise<boolean>;

  /**
   * The caller's own stored items with these ids, for `item_reference`:
   * a stored response's output or input items, or a conversation's items.
   * One lookup for the whole list; ids not found (or another owner's) are
   * absent from the map.
   */
  findItems(itemIds: readonly string[], owner: string | null): Promise<Map<string, PublicItem>>;

  createConversation(c: Conversation, items: PublicItem[]): Promise<Conversation>;
  getConversation(id: string, owner: string | null): Promise<Conversation | null>;
  /** Replaces the metadata as a whole. */
  updateConversation(id: string, owner: string | null, metadata: Record<string, string>): Promise<Conversation | null>;
  /** Deletes its items too. */
  deleteConversation(id: string, owner: string | null): Promise<boolean>;
  listConversationItems(id: string, owner: string | null, opts: ListOptions): Promise<Page<ConversationItem> | null>;
  /** Item ids are unique within a conversation. Null when the conversation is missing or foreign. */
  addConversationItems(id: string, owner: string | null, items: PublicItem[]): Promise<ConversationItem[] | null>;
  getConversationItem(id: string, itemId: string, owner: string | null): Promise<ConversationItem | null>;
  deleteConversationItem(id: string, itemId: string, owner: string | null): Promise<boolean>;
}

/** How far `getChain` walks when the caller names no bound. */
export const DEFAULT_CHAIN_DEPTH = 1000;
