import type Database from 'better-sqlite3';
import { NotFoundError } from '#tool-sdk/errors.js';
import type { JsonObject, ModelItem, PublicItem } from '#tool-sdk/items.js';
import { DuplicateIdError } from '../shared/duplicate-id.error.js';
import type { CatalogKind, CatalogPage, CatalogQuery, StateCatalog } from '../catalog.interface.js';
import { catalogPage, catalogSql, parseCatalogQuery, parseListOptions, positionRange, toPage, unknownCursor, type CatalogRow, type ListQuery } from '../shared/list-window.util.js';
import { pendingMigrations } from '../shared/pending-migrations.util.js';
import {
  CONVERSATION_ITEMS,
  INPUT_ITEMS,
  type ItemTable,
  nowSeconds,
  outputItemsOf,
  RESPONSE_COLUMNS_SQL,
  responseRowValues,
  toJson,
  withItemId,
} from '../shared/stored-item.util.js';
import { DEFAULT_CHAIN_DEPTH, type Conversation, type ConversationItem, type ListOptions, type Page, type StateStore, type StoredResponse } from '../state-store.interface.js';
import { SqliteConnection, type SqliteConnectionOptions } from './sqlite-connection.js';
import { SQLITE_MIGRATIONS } from './sqlite.migrations.js';

export type SqliteStateStoreOptions = SqliteConnectionOptions;

interface PendingSave {
  r: StoredResponse;
  conversationItems: PublicItem[];
  resolve(): void;
  reject(e: unknown): void;
}

/** How often a batch waiting for another process's write lock tries again. */
const LOCK_RETRY_MS = 1;

interface ResponseRow {
  id: string;
  owner: string | null;
  created_at: number;
  previous_response_id: string | null;
  conversation_id: string | null;
  status: string;
  response: string;
  model_items: string;
  tools: string;
  tool_choice: string;
  extra: string | null;
}

interface ItemRow {
  item_id: string;
  position: number;
  item: string;
}

interface ConversationRow {
  id: string;
  owner: string | null;
  created_at: number;
  metadata: string;
}

interface ConversationItemRow extends ItemRow {
  conversation_id: string;
  created_at: number;
}

function isUniqueViolation(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

function toConversation(row: ConversationRow): Conversation {
  return { id: row.id, owner: row.owner, createdAt: row.created_at, metadata: JSON.parse(row.metadata) as Record<string, string> };
}

function toConversationItem(row: ConversationItemRow): ConversationItem {
  return {
    id: row.item_id,
    conversationId: row.conversation_id,
    position: row.position,
    item: JSON.parse(row.item) as PublicItem,
    createdAt: row.created_at,
  };
}

function toStoredResponse(row: ResponseRow, inputItems: PublicItem[]): StoredResponse {
  const stored: StoredResponse = {
    id: row.id,
    owner: row.owner,
    createdAt: row.created_at,
    previousResponseId: row.previous_response_id,
    conversationId: row.conversation_id,
    status: row.status,
    response: JSON.parse(row.response) as JsonObject,
    inputItems,
    modelItems: JSON.parse(row.model_items) as ModelItem[],
    tools: JSON.parse(row.tools) as JsonObject[],
    toolChoice: JSON.parse(row.tool_choice) as unknown,
  };
  if (row.extra !== null) stored.extra = JSON.parse(row.extra) as JsonObject;
  return stored;
}

/**
 * The embedded default: one file, no server. better-sqlite3 is synchronous,
 * so each method runs start to finish without yielding and reads never see a
 * half-done write from this process; other processes on the same file are
 * kept apart by SQLite's locks (writes take the lock up front, see `write`).
 */
export class SqliteStateStore implements StateStore, StateCatalog {
  private connection: SqliteConnection | undefined;
  private pendingSaves: PendingSave[] = [];
  /** A flush is scheduled, or waiting for another process's write lock. */
  private flushPending = false;

  constructor(private readonly options: SqliteStateStoreOptions) {}

  async init(): Promise<void> {
    if (this.connection) return;
    this.connection = SqliteConnection.open(this.options, (db) => this.migrate(db));
  }

  async close(): Promise<void> {
    this.connection?.close();
    this.connection = undefined;
  }

  /**
   * Group commit: saves that arrive within one tick are written in one
   * IMMEDIATE transaction, in which one failing save (a duplicate id, a
   * missing conversation) rolls back alone (`writeBatch`).
   * Every caller's promise settles after the commit, so a response is still
   * stored before its terminal event goes out; under load, one commit serves
   * many responses instead of one each.
   *
   * When another process (a second worker) holds the write lock, the batch
   * waits for it on a timer rather than in SQLite's busy handler, which would
   * sleep this whole process; saves arriving meanwhile join the batch, so
   * contention makes the commits larger instead of the event loop stall.
   */
  saveResponse(r: StoredResponse, conversationItems: PublicItem[] = []): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pendingSaves.push({ r, conversationItems, resolve, reject });
      if (!this.flushPending) {
        this.flushPending = true;
        setImmediate(() => this.flushSaves(Date.now()));
      }
    });
  }

  private flushSaves(firstTry: number): void {
    const batch = this.pendingSaves;
    const failures = new Map<PendingSave, unknown>();
    let written: boolean;
    try {
      const connection = this.open();
      written = this.writeBatch(connection, batch, failures);
      if (!written && Date.now() - firstTry < connection.lockWaitMs) {
        setTimeout(() => this.flushSaves(firstTry), LOCK_RETRY_MS);
        return;
      }
    } catch (e) {
      this.settle(batch, () => e);
      return;
    }
    // Not written: another process held the lock for the whole busy timeout, nothing was stored.
    const busy = written ? undefined : Object.assign(new Error('database is locked (the write lock stayed taken for the whole busy timeout)'), { code: 'SQLITE_BUSY' });
    this.settle(batch, (save) => busy ?? failures.get(save));
  }

  /**
   * Writes `batch` in one transaction; false when another process held the
   * write lock. Saves almost never fail, so the batch is first written without
   * a savepoint per save (two statements fewer each: about a seventh of a
   * save's SQLite work). Should one fail (a duplicate id, a missing
   * conversation), that transaction rolls back whole and the batch is written
   * again with each save in a savepoint of its own, so that the failing one
   * rolls back alone and the others are stored.
   */
  private writeBatch(connection: SqliteConnection, batch: PendingSave[], failures: Map<PendingSave, unknown>): boolean {
    try {
      return connection.tryWrite(() => {
        for (const save of batch) this.insertResponse(save.r, save.conversationItems);
      });
    } catch {
      return connection.tryWrite(() => {
        for (const save of batch) {
          try {
            connection.savepoint(() => this.insertResponse(save.r, save.conversationItems));
          } catch (e) {
            failures.set(save, e);
          }
        }
      });
    }
  }

  /** Ends a flush: the next save schedules a new one, and each of `batch` settles with its failure or none. */
  private settle(batch: PendingSave[], failureOf: (save: PendingSave) => unknown): void {
    this.pendingSaves = [];
    this.flushPending = false;
    for (const save of batch) {
      const failure = failureOf(save);
      if (failure === undefined) save.resolve();
      else save.reject(failure);
    }
  }

  private insertResponse(r: StoredResponse, conversationItems: PublicItem[]): void {
    try {
      this.stmt(`INSERT INTO responses (${RESPONSE_COLUMNS_SQL}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(...responseRowValues(r));
    } catch (e) {
      throw isUniqueViolation(e) ? new DuplicateIdError('response', r.id, 'id') : e;
    }
    const insertItem = this.stmt('INSERT INTO response_input_items (response_id, position, item_id, item) VALUES (?, ?, ?, ?)');
    r.inputItems.forEach((raw, position) => {
      const item = withItemId(raw);
      insertItem.run(r.id, position, item.id, toJson(item));
    });
    const insertOutput = this.stmt('INSERT INTO response_output_items (response_id, position, item_id, item) VALUES (?, ?, ?, ?)');
    outputItemsOf(r).forEach((item, position) => {
      if (typeof item.id === 'string' && item.id !== '') insertOutput.run(r.id, position, item.id, toJson(item));
    });
    if (r.conversationId !== null && !this.appendItems(r.conversationId, r.owner, conversationItems, false)) {
      throw new NotFoundError(`Conversation '${r.conversationId}' not found.`, 'conversation_not_found', 'conversation');
    }
  }

  async getResponse(id: string, owner: string | null): Promise<StoredResponse | null> {
    return this.read(() => {
      const row = this.stmt('SELECT * FROM responses WHERE id = ? AND owner IS ?').get(id, owner) as ResponseRow | undefined;
      return row ? toStoredResponse(row, this.inputItemsOf(row.id)) : null;
    });
  }

  async deleteResponse(id: string, owner: string | null): Promise<boolean> {
    // Input items go with it through ON DELETE CASCADE.
    return this.write(() => this.stmt('DELETE FROM responses WHERE id = ? AND owner IS ?').run(id, owner).changes > 0);
  }

  async listInputItems(id: string, owner: string | null, opts: ListOptions): Promise<Page<PublicItem> | null> {
    const query = parseListOptions(opts);
    return this.read(() => {
      if (!this.stmt('SELECT 1 FROM responses WHERE id = ? AND owner IS ?').get(id, owner)) return null;
      const page = this.window<ItemRow>(INPUT_ITEMS, id, query);
      return { ...page, data: page.data.map((row) => JSON.parse(row.item) as PublicItem) };
    });
  }

  async getChain(id: string, owner: string | null, maxDepth = DEFAULT_CHAIN_DEPTH): Promise<StoredResponse[] | null> {
    return this.read(() => this.chain(id, owner, maxDepth));
  }

  /**
   * One statement, so one snapshot without a transaction around it (BEGIN and COMMIT were as
   * much SQLite work as the lookup). A chain of one, the common continuation, is one primary-key
   * probe; longer chains send their ids over as one JSON array, whatever their number (no
   * bound-parameter limit).
   */
  async responsesPresent(ids: readonly string[], owner: string | null): Promise<boolean> {
    if (ids.length === 1) return this.stmt('SELECT 1 FROM responses WHERE id = ? AND owner IS ?').get(ids[0], owner) !== undefined;
    const row = this.stmt('SELECT count(*) AS n FROM responses WHERE id IN (SELECT value FROM json_each(?)) AND owner IS ?').get(toJson(ids), owner) as { n: number };
    return row.n === new Set(ids).size;
  }

  private chain(id: string, owner: string | null, maxDepth: number): StoredResponse[] | null {
    const rows = this.stmt(
      `WITH RECURSIVE chain (id, previous_response_id, depth) AS (
         SELECT id, previous_response_id, 1 FROM responses WHERE id = ? AND owner IS ?
         UNION ALL
         SELECT r.id, r.previous_response_id, chain.depth + 1
         FROM chain JOIN responses r ON r.id = chain.previous_response_id
         WHERE chain.depth < ? AND r.owner IS ?
       )
       SELECT r.* FROM chain JOIN responses r ON r.id = chain.id ORDER BY chain.depth`,
    ).all(id, owner, Math.max(1, maxDepth), owner) as ResponseRow[];
    if (rows.length === 0) return null;
    // Ids are never reused by the gateway, but a cycle built by reusing one
    // must not repeat responses: stop at the first id seen twice.
    const seen = new Set<string>();
    const chain: StoredResponse[] = [];
    for (const row of rows) {
      if (seen.has(row.id)) break;
      seen.add(row.id);
      chain.push(toStoredResponse(row, this.inputItemsOf(row.id)));
    }
    return chain.reverse();
  }

  async findItems(itemIds: readonly string[], owner: string | null): Promise<Map<string, PublicItem>> {
    const found = new Map<string, PublicItem>();
    if (itemIds.length === 0) return found;
    // The ids go over as one JSON array, whatever their number (no bound-parameter limit).
    const ids = toJson([...new Set(itemIds)]);
    const rows = this.read(
      () =>
        this.stmt(
          `SELECT item_id, item FROM (
             SELECT o.item_id, o.item, 0 AS source FROM response_output_items o JOIN responses r ON r.id = o.response_id
             WHERE o.item_id IN (SELECT value FROM json_each(?)) AND r.owner IS ?
             UNION ALL
             SELECT i.item_id, i.item, 1 FROM response_input_items i JOIN responses r ON r.id = i.response_id
             WHERE i.item_id IN (SELECT value FROM json_each(?)) AND r.owner IS ?
             UNION ALL
             SELECT c.item_id, c.item, 2 FROM conversation_items c JOIN conversations v ON v.id = c.conversation_id
             WHERE c.item_id IN (SELECT value FROM json_each(?)) AND v.owner IS ?
           ) ORDER BY source`,
        ).all(ids, owner, ids, owner, ids, owner) as Array<{ item_id: string; item: string }>,
    );
    for (const row of rows) if (!found.has(row.item_id)) found.set(row.item_id, JSON.parse(row.item) as PublicItem);
    return found;
  }

  async createConversation(c: Conversation, items: PublicItem[]): Promise<Conversation> {
    this.write(() => {
      try {
        this.stmt('INSERT INTO conversations (id, owner, created_at, metadata, next_position) VALUES (?, ?, ?, ?, 0)').run(c.id, c.owner, c.createdAt, toJson(c.metadata));
      } catch (e) {
        throw isUniqueViolation(e) ? new DuplicateIdError('conversation', c.id, 'id') : e;
      }
      this.appendItems(c.id, c.owner, items);
    });
    return { id: c.id, owner: c.owner, createdAt: c.createdAt, metadata: { ...c.metadata } };
  }

  async getConversation(id: string, owner: string | null): Promise<Conversation | null> {
    const row = this.stmt('SELECT * FROM conversations WHERE id = ? AND owner IS ?').get(id, owner) as ConversationRow | undefined;
    return row ? toConversation(row) : null;
  }

  async updateConversation(id: string, owner: string | null, metadata: Record<string, string>): Promise<Conversation | null> {
    const row = this.write(
      () => this.stmt('UPDATE conversations SET metadata = ? WHERE id = ? AND owner IS ? RETURNING *').get(toJson(metadata), id, owner) as ConversationRow | undefined,
    );
    return row ? toConversation(row) : null;
  }

  async deleteConversation(id: string, owner: string | null): Promise<boolean> {
    return this.write(() => this.stmt('DELETE FROM conversations WHERE id = ? AND owner IS ?').run(id, owner).changes > 0);
  }

  async listConversationItems(id: string, owner: string | null, opts: ListOptions): Promise<Page<ConversationItem> | null> {
    const query = parseListOptions(opts);
    return this.read(() => {
      if (!this.stmt('SELECT 1 FROM conversations WHERE id = ? AND owner IS ?').get(id, owner)) return null;
      const page = this.window<ConversationItemRow>(CONVERSATION_ITEMS, id, query);
      return { ...page, data: page.data.map(toConversationItem) };
    });
  }

  async addConversationItems(id: string, owner: string | null, items: PublicItem[]): Promise<ConversationItem[] | null> {
    return this.write(() => this.appendItems(id, owner, items) ?? null);
  }

  async getConversationItem(id: string, itemId: string, owner: string | null): Promise<ConversationItem | null> {
    const row = this.stmt(
      `SELECT ci.* FROM conversation_items ci JOIN conversations c ON c.id = ci.conversation_id
       WHERE ci.conversation_id = ? AND ci.item_id = ? AND c.owner IS ?`,
    ).get(id, itemId, owner) as ConversationItemRow | undefined;
    return row ? toConversationItem(row) : null;
  }

  async deleteConversationItem(id: string, itemId: string, owner: string | null): Promise<boolean> {
    return this.write(
      () =>
        this.stmt(
          `DELETE FROM conversation_items WHERE conversation_id = ? AND item_id = ?
           AND EXISTS (SELECT 1 FROM conversations WHERE id = ? AND owner IS ?)`,
        ).run(id, itemId, id, owner).changes > 0,
    );
  }

  /** Every stored response or conversation, whoever owns it, newest first (the console's listing). */
  async catalog(kind: CatalogKind, query: CatalogQuery): Promise<CatalogPage> {
    const { limit, after } = parseCatalogQuery(query);
    const sql = catalogSql(kind, 'created_at', () => '?', after !== undefined);
    return this.read(() => {
      if (query.id !== undefined) return catalogPage(this.stmt(sql.byIdSql).all(query.id) as CatalogRow[], 1);
      if (after === undefined) return catalogPage(this.stmt(sql.pageSql).all(limit + 1) as CatalogRow[], limit);
      const cursor = this.stmt(sql.cursorSql).get(after) as { position: number } | undefined;
      if (!cursor) throw unknownCursor('after', after);
      return catalogPage(this.stmt(sql.pageSql).all(cursor.position, after, limit + 1) as CatalogRow[], limit);
    });
  }

  private read<T>(fn: () => T): T {
    return this.open().read(fn);
  }

  private write<T>(fn: () => T): T {
    return this.open().write(fn);
  }

  /**
   * Reserves positions by bumping the conversation's counter (which also
   * proves it exists and is the caller's), then inserts. Undefined when the
   * conversation is missing or foreign. Must run inside `write`.
   */
  /** `materialize: false` skips building the returned items (a response save does not read them). */
  private appendItems(conversationId: string, owner: string | null, items: PublicItem[], materialize = true): ConversationItem[] | undefined {
    const reserved = this.stmt('UPDATE conversations SET next_position = next_position + ? WHERE id = ? AND owner IS ? RETURNING next_position').get(
      items.length,
      conversationId,
      owner,
    ) as { next_position: number } | undefined;
    if (!reserved) return undefined;
    const start = reserved.next_position - items.length;
    const createdAt = nowSeconds();
    const insert = this.stmt('INSERT INTO conversation_items (conversation_id, item_id, position, item, created_at) VALUES (?, ?, ?, ?, ?)');
    return items.map((raw, offset) => {
      const item = withItemId(raw);
      const json = toJson(item);
      try {
        insert.run(conversationId, item.id, start + offset, json, createdAt);
      } catch (e) {
        throw isUniqueViolation(e) ? new DuplicateIdError('conversation_item', item.id, 'items') : e;
      }
      return { id: item.id, conversationId, position: start + offset, item: materialize ? (JSON.parse(json) as PublicItem) : item, createdAt };
    });
  }

  private inputItemsOf(responseId: string): PublicItem[] {
    const rows = this.stmt('SELECT item FROM response_input_items WHERE response_id = ? ORDER BY position').all(responseId) as Array<{ item: string }>;
    return rows.map((row) => JSON.parse(row.item) as PublicItem);
  }

  private window<Row extends ItemRow>(source: ItemTable, key: string, query: ListQuery): Page<Row> {
    const positionOf = (param: 'after' | 'before', cursor: string | undefined): number | undefined => {
      if (cursor === undefined) return undefined;
      const found = this.stmt(`SELECT position FROM ${source.table} WHERE ${source.key} = ? AND item_id = ? ORDER BY position LIMIT 1`).get(key, cursor) as
        { position: number } | undefined;
      if (!found) throw unknownCursor(param, cursor);
      return found.position;
    };
    const { lo, hi } = positionRange(query.order, positionOf('after', query.after), positionOf('before', query.before));
    const direction = query.order === 'asc' ? 'ASC' : 'DESC';
    const rows = this.stmt(
      `SELECT * FROM ${source.table} WHERE ${source.key} = ? AND position > ? AND position < ?
       ORDER BY position ${direction} LIMIT ?`,
    ).all(key, lo, hi, query.limit + 1) as Row[];
    return toPage(rows, query.limit, (row) => row.item_id);
  }

  private migrate(db: Database.Database): void {
    db.transaction(() => {
      db.exec(
        `CREATE TABLE IF NOT EXISTS schema_migrations (
           version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL
         )`,
      );
      const applied = db.prepare('SELECT version FROM schema_migrations').pluck().all() as number[];
      const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
      for (const migration of pendingMigrations(SQLITE_MIGRATIONS, applied)) {
        db.exec(migration.sql);
        record.run(migration.version, migration.name, nowSeconds());
      }
    }).immediate();
  }

  private open(): SqliteConnection {
    if (!this.connection) throw new Error('SqliteStateStore used before init() or after close().');
    return this.connection;
  }

  private stmt(sql: string): Database.Statement {
    return this.open().stmt(sql);
  }
}
