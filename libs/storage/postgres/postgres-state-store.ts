import pg from 'pg';
import { NotFoundError } from '#tool-sdk/errors.js';
import type { JsonObject, ModelItem, PublicItem } from '#tool-sdk/items.js';
import { DuplicateIdError } from '../shared/duplicate-id.error.js';
import type { CatalogKind, CatalogPage, CatalogQuery, StateCatalog } from '../catalog.interface.js';
import { catalogPage, catalogSql, parseCatalogQuery, parseListOptions, positionRange, toPage, unknownCursor, type CatalogRow, type ListQuery } from '../shared/list-window.util.js';
import { pendingMigrations } from '../shared/pending-migrations.util.js';
import { CONVERSATION_ITEMS, INPUT_ITEMS, type ItemTable, nowSeconds, outputItemsOf, RESPONSE_COLUMNS_SQL, responseRowValues, withItemId } from '../shared/stored-item.util.js';
import { DEFAULT_CHAIN_DEPTH, type Conversation, type ConversationItem, type ListOptions, type Page, type StateStore, type StoredResponse } from '../state-store.interface.js';
import { POSTGRES_MIGRATIONS } from './postgres.migrations.js';
import { inTransaction } from './pg-transaction.js';
import { pgJson, translatePgError } from './pg-text.js';
import { loneResponseBatch, loneResponseRow, SAVE_LONE_RESPONSES_SQL } from './lone-response-batch.js';
import { sqlStateOf } from './pg-unavailable.js';
import { takeAdvisoryXactLock } from '#tool-sdk/ports/lock-wait.js';

const { Pool } = pg;

export interface PostgresStateStoreOptions {
  /** `postgres://user:password@host:port/database`; `?options=-c search_path=...` is honoured. */
  connectionString: string;
  /**
   * Schema holding the tables, created at init when missing. Sets the
   * connections' `search_path`; without it the connection string's
   * search_path (usually `public`) is used.
   */
  schema?: string;
  /** Pool size per store instance; default 10. */
  maxConnections?: number;
  /**
   * How long to wait for a connection, at start-up or for a free pooled one;
   * default 10 s. node-postgres would otherwise wait forever on an
   * unreachable host and hang the boot.
   */
  connectTimeoutMs?: number;
  /**
   * How long one query may wait for its answer; default 5 s. Bounds the wait
   * of a request when the database stops answering on an open connection.
   */
  queryTimeoutMs?: number;
}

type Queryable = pg.Pool | pg.PoolClient;

/** bigint columns arrive as strings from node-postgres. */
type Int8 = string | number;

interface ResponseRow {
  id: string;
  owner: string | null;
  created_at: Int8;
  previous_response_id: string | null;
  conversation_id: string | null;
  status: string;
  response: JsonObject;
  model_items: ModelItem[];
  tools: JsonObject[];
  tool_choice: unknown;
  extra: JsonObject | null;
  input_items: PublicItem[];
}

interface ItemRow {
  item_id: string;
  position: Int8;
  item: PublicItem;
}

interface ConversationItemRow extends ItemRow {
  conversation_id: string;
  created_at: Int8;
}

interface ConversationRow {
  id: string;
  owner: string | null;
  created_at: Int8;
  metadata: Record<string, string>;
}

/** Lower-case on purpose: an unquoted name in search_path is folded to lower case. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

const RESPONSE_COLUMNS = `r.*, COALESCE(
  (SELECT jsonb_agg(i.item ORDER BY i.position) FROM response_input_items i WHERE i.response_id = r.id),
  '[]'::jsonb) AS input_items`;

/**
 * The keys a lone response's insert can clash on. Its inserts run in one snapshot, so a taken id
 * can surface as any of them; an item key clashes only with an existing response's items, since
 * positions are unique within a row.
 */
const LONE_RESPONSE_KEYS = ['responses_pkey', 'response_input_items_pkey', 'response_output_items_pkey'];

/** A batch of lone responses is at most this many rows or (past one row) this much JSON text. */
const MAX_BATCH_ROWS = 64;
const MAX_BATCH_CHARS = 4 * 1024 * 1024;
/**
 * Batch statements of lone responses one store has in flight at once. Saves
 * that arrive while they run wait for one to end and go together as the next
 * batch: a busy worker's statements grow instead of multiplying, and each
 * statement's fixed cost on the server (its commit's WAL flush above all) is
 * shared by more rows. An idle store writes a save at once, as before.
 */
const LONE_STATEMENTS_IN_FLIGHT = 1;

interface PendingLoneSave {
  r: StoredResponse;
  row: string;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/** Integrity (23) and data (22) errors belong to one row's values; anything else to the statement. */
function isRowError(e: unknown): boolean {
  const code = sqlStateOf(e);
  return code !== undefined && (code.startsWith('23') || code.startsWith('22'));
}

/** How many of the first `saves` (at least one) make the next batch within the batch bounds. */
function nextBatchLength(saves: readonly PendingLoneSave[]): number {
  let chars = saves[0].row.length;
  let length = 1;
  while (length < saves.length && length < MAX_BATCH_ROWS && chars + saves[length].row.length <= MAX_BATCH_CHARS) {
    chars += saves[length].row.length;
    length++;
  }
  return length;
}

function uniqueViolation(e: unknown, constraint: string): e is pg.DatabaseError {
  return e instanceof pg.DatabaseError && e.code === '23505' && e.constraint === constraint;
}

/** The clashing item id from "Key (conversation_id, item_id)=(conv_1, msg_2) already exists." */
function duplicateItemId(e: pg.DatabaseError): string | null {
  return /\)=\(.*?, (.*)\) already exists/.exec(e.detail ?? '')?.[1] ?? null;
}

function toStoredResponse(row: ResponseRow): StoredResponse {
  const stored: StoredResponse = {
    id: row.id,
    owner: row.owner,
    createdAt: Number(row.created_at),
    previousResponseId: row.previous_response_id,
    conversationId: row.conversation_id,
    status: row.status,
    response: row.response,
    inputItems: row.input_items,
    modelItems: row.model_items,
    tools: row.tools,
    toolChoice: row.tool_choice,
  };
  if (row.extra !== null) stored.extra = row.extra;
  return stored;
}

function toConversation(row: ConversationRow): Conversation {
  return { id: row.id, owner: row.owner, createdAt: Number(row.created_at), metadata: row.metadata };
}

function toConversationItem(row: ConversationItemRow): ConversationItem {
  return {
    id: row.item_id,
    conversationId: row.conversation_id,
    position: Number(row.position),
    item: row.item,
    createdAt: Number(row.created_at),
  };
}

/**
 * State shared by several gateway replicas. Every multi-statement write runs
 * in one transaction on one pooled connection, so once a write resolves it is
 * committed and visible to every other replica.
 */
export class PostgresStateStore implements StateStore, StateCatalog {
  private pool: pg.Pool | undefined;
  /** Lone responses saved since the last flush, and whether a flush is scheduled. */
  private pendingLone: PendingLoneSave[] = [];
  private loneFlushScheduled = false;
  /** Batches on their way to the database; `close` waits for them. */
  private readonly writing = new Set<Promise<void>>();
  /** Lone-response batch statements running now (see `LONE_STATEMENTS_IN_FLIGHT`). */
  private loneInFlight = 0;

  constructor(private readonly options: PostgresStateStoreOptions) {
    if (options.schema !== undefined && !SCHEMA_NAME.test(options.schema)) {
      throw new Error(`Invalid PostgreSQL schema name '${options.schema}': use lower-case letters, digits and _.`);
    }
  }

  async init(): Promise<void> {
    if (this.pool) return;
    const pool = new Pool({
      connectionString: this.options.connectionString,
      max: this.options.maxConnections ?? 10,
      connectionTimeoutMillis: this.options.connectTimeoutMs ?? 10_000,
      // Client-side bound (a dead peer never answers) and server-side (a slow
      // statement is cancelled rather than left running).
      query_timeout: this.options.queryTimeoutMs ?? 5_000,
      statement_timeout: this.options.queryTimeoutMs ?? 5_000,
      ...(this.options.schema === undefined ? {} : { options: `-c search_path=${this.options.schema}` }),
    });
    // An idle pooled connection that the server drops emits 'error' on the
    // pool; unhandled, that would crash the process. The pool discards the
    // connection by itself and the next query opens a fresh one.
    pool.on('error', () => undefined);
    try {
      await this.migrate(pool);
    } catch (e) {
      await pool.end();
      throw e;
    }
    this.pool = pool;
  }

  async probe(): Promise<void> {
    await this.query(this.open(), 'SELECT 1');
  }

  async close(): Promise<void> {
    // Saves already accepted are written before the pool goes, not dropped with it: each batch
    // that ends starts the next, until none is left.
    this.flushLone();
    while (this.writing.size > 0) await Promise.all(this.writing);
    const pool = this.pool;
    this.pool = undefined;
    await pool?.end();
  }

  async saveResponse(r: StoredResponse, conversationItems: PublicItem[] = []): Promise<void> {
    if (r.conversationId === null) return this.saveLoneResponse(r);
    await this.transaction(async (client) => {
      try {
        await client.query(
          `INSERT INTO responses (${RESPONSE_COLUMNS_SQL})
           VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9::jsonb, $10::jsonb, $11::jsonb)`,
          responseRowValues(r, pgJson),
        );
      } catch (e) {
        throw uniqueViolation(e, 'responses_pkey') ? new DuplicateIdError('response', r.id, 'id') : e;
      }
      if (r.inputItems.length > 0) {
        // One round trip for all items: the array goes over as one jsonb value.
        await client.query(
          `INSERT INTO response_input_items (response_id, position, item_id, item)
           SELECT $1, e.ord - 1, e.value->>'id', e.value FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS e (value, ord)`,
          [r.id, pgJson(r.inputItems.map(withItemId))],
        );
      }
      const outputs = outputItemsOf(r);
      if (outputs.length > 0) {
        await client.query(
          `INSERT INTO response_output_items (response_id, position, item_id, item)
           SELECT $1, e.ord - 1, e.value->>'id', e.value FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS e (value, ord)
           WHERE e.value->>'id' IS NOT NULL`,
          [r.id, pgJson(outputs)],
        );
      }
      if (r.conversationId !== null && !(await this.appendItems(client, r.conversationId, r.owner, conversationItems))) {
        throw new NotFoundError(`Conversation '${r.conversationId}' not found.`, 'conversation_not_found', 'conversation');
      }
    });
  }

  /**
   * Group commit for responses outside a conversation (every response of a plain request): the
   * saves that arrive within one tick go to the database as one statement (`SAVE_LONE_RESPONSES_SQL`)
   * instead of a five-round-trip transaction each. Every caller's promise settles after that
   * statement commits, so a response is still stored before its terminal event goes out. On a
   * shared machine the database server's CPU per statement, not the gateway's, was what kept a
   * second worker from adding throughput.
   */
  private saveLoneResponse(r: StoredResponse): Promise<void> {
    // Serialized now, so a value that cannot be stored fails its own save before anything is sent.
    const row = loneResponseRow(r);
    return new Promise<void>((resolve, reject) => {
      this.pendingLone.push({ r, row, resolve, reject });
      if (!this.loneFlushScheduled) {
        this.loneFlushScheduled = true;
        setImmediate(() => this.flushLone());
      }
    });
  }

  private flushLone(): void {
    this.loneFlushScheduled = false;
    while (this.pendingLone.length > 0 && this.loneInFlight < LONE_STATEMENTS_IN_FLIGHT) {
      const batch = this.pendingLone.splice(0, nextBatchLength(this.pendingLone));
      this.loneInFlight++;
      const write = this.writeLone(batch).finally(() => {
        this.writing.delete(write);
        this.loneInFlight--;
        // What arrived while this batch ran goes now, as one.
        this.flushLone();
      });
      this.writing.add(write);
    }
  }

  private async writeLone(batch: PendingLoneSave[]): Promise<void> {
    try {
      await this.insertLone(batch);
      for (const save of batch) save.resolve();
      return;
    } catch (e) {
      if (batch.length === 1 || !isRowError(e)) {
        for (const save of batch) save.reject(this.loneFailure(e, save.r));
        return;
      }
    }
    // One row's fault (a taken id, text the database cannot hold) fails the whole statement: each
    // save is tried alone, in arrival order, so only its own caller sees it.
    for (const save of batch) {
      try {
        await this.insertLone([save]);
        save.resolve();
      } catch (e) {
        save.reject(this.loneFailure(e, save.r));
      }
    }
  }

  private async insertLone(batch: PendingLoneSave[]): Promise<void> {
    await this.open().query({ name: 'switchyard_save_lone_responses', text: SAVE_LONE_RESPONSES_SQL, values: [loneResponseBatch(batch.map((save) => save.row))] });
  }

  private loneFailure(e: unknown, r: StoredResponse): unknown {
    return LONE_RESPONSE_KEYS.some((key) => uniqueViolation(e, key)) ? new DuplicateIdError('response', r.id, 'id') : translatePgError(e);
  }

  async findItems(itemIds: readonly string[], owner: string | null): Promise<Map<string, PublicItem>> {
    const found = new Map<string, PublicItem>();
    if (itemIds.length === 0) return found;
    const { rows } = await this.query<{ item_id: string; item: PublicItem }>(
      this.open(),
      `SELECT item_id, item FROM (
         SELECT o.item_id, o.item, 0 AS source FROM response_output_items o JOIN responses r ON r.id = o.response_id
         WHERE o.item_id = ANY($1::text[]) AND r.owner IS NOT DISTINCT FROM $2
         UNION ALL
         SELECT i.item_id, i.item, 1 FROM response_input_items i JOIN responses r ON r.id = i.response_id
         WHERE i.item_id = ANY($1::text[]) AND r.owner IS NOT DISTINCT FROM $2
         UNION ALL
         SELECT c.item_id, c.item, 2 FROM conversation_items c JOIN conversations v ON v.id = c.conversation_id
         WHERE c.item_id = ANY($1::text[]) AND v.owner IS NOT DISTINCT FROM $2
       ) found ORDER BY source`,
      [[...new Set(itemIds)], owner],
    );
    for (const row of rows) if (!found.has(row.item_id)) found.set(row.item_id, row.item);
    return found;
  }

  /** Every stored response or conversation, whoever owns it, newest first (the console's listing). */
  async catalog(kind: CatalogKind, query: CatalogQuery): Promise<CatalogPage> {
    const { limit, after } = parseCatalogQuery(query);
    const sql = catalogSql(kind, 'created_at', (n) => `$${n}`, after !== undefined);
    if (query.id !== undefined) return catalogPage((await this.query<CatalogRow>(this.open(), sql.byIdSql, [query.id])).rows, 1);
    if (after === undefined) return catalogPage((await this.query<CatalogRow>(this.open(), sql.pageSql, [limit + 1])).rows, limit);
    const [cursor] = (await this.query<{ position: string }>(this.open(), sql.cursorSql, [after])).rows;
    if (!cursor) throw unknownCursor('after', after);
    return catalogPage((await this.query<CatalogRow>(this.open(), sql.pageSql, [cursor.position, after, limit + 1])).rows, limit);
  }

  async getResponse(id: string, owner: string | null): Promise<StoredResponse | null> {
    const { rows } = await this.query<ResponseRow>(this.open(), `SELECT ${RESPONSE_COLUMNS} FROM responses r WHERE r.id = $1 AND r.owner IS NOT DISTINCT FROM $2`, [id, owner]);
    return rows.length > 0 ? toStoredResponse(rows[0]) : null;
  }

  async deleteResponse(id: string, owner: string | null): Promise<boolean> {
    // Input items go with it through ON DELETE CASCADE.
    const { rowCount } = await this.query(this.open(), 'DELETE FROM responses WHERE id = $1 AND owner IS NOT DISTINCT FROM $2', [id, owner]);
    return (rowCount ?? 0) > 0;
  }

  async listInputItems(id: string, owner: string | null, opts: ListOptions): Promise<Page<PublicItem> | null> {
    const query = parseListOptions(opts);
    const pool = this.open();
    const owned = await this.query(pool, 'SELECT 1 FROM responses WHERE id = $1 AND owner IS NOT DISTINCT FROM $2', [id, owner]);
    if (owned.rowCount === 0) return null;
    const page = await this.window<ItemRow>(pool, INPUT_ITEMS, id, query);
    return { ...page, data: page.data.map((row) => row.item) };
  }

  async getChain(id: string, owner: string | null, maxDepth = DEFAULT_CHAIN_DEPTH): Promise<StoredResponse[] | null> {
    const { rows } = await this.query<ResponseRow>(
      this.open(),
      `WITH RECURSIVE chain (id, previous_response_id, depth) AS (
         SELECT id, previous_response_id, 1 FROM responses WHERE id = $1 AND owner IS NOT DISTINCT FROM $2
         UNION ALL
         SELECT r.id, r.previous_response_id, chain.depth + 1
         FROM chain JOIN responses r ON r.id = chain.previous_response_id
         WHERE chain.depth < $3 AND r.owner IS NOT DISTINCT FROM $2
       )
       SELECT ${RESPONSE_COLUMNS} FROM chain JOIN responses r ON r.id = chain.id ORDER BY chain.depth`,
      [id, owner, Math.max(1, maxDepth)],
    );
    if (rows.length === 0) return null;
    // Ids are never reused by the gateway, but a cycle built by reusing one
    // must not repeat responses: stop at the first id seen twice.
    const seen = new Set<string>();
    const chain: StoredResponse[] = [];
    for (const row of rows) {
      if (seen.has(row.id)) break;
      seen.add(row.id);
      chain.push(toStoredResponse(row));
    }
    return chain.reverse();
  }

  /**
   * A chain of one, the common continuation, is a primary-key probe with a text parameter: no
   * array for the driver to serialize and the server to parse and unnest.
   */
  async responsesPresent(ids: readonly string[], owner: string | null): Promise<boolean> {
    if (ids.length === 1) {
      const probe = await this.query(this.open(), 'SELECT 1 FROM responses WHERE id = $1 AND owner IS NOT DISTINCT FROM $2', [ids[0], owner]);
      return probe.rows.length > 0;
    }
    const { rows } = await this.query<{ n: number }>(this.open(), 'SELECT count(*)::int AS n FROM responses WHERE id = ANY($1::text[]) AND owner IS NOT DISTINCT FROM $2', [
      [...ids],
      owner,
    ]);
    return rows[0].n === new Set(ids).size;
  }

  async createConversation(c: Conversation, items: PublicItem[]): Promise<Conversation> {
    return this.transaction(async (client) => {
      let row: ConversationRow;
      try {
        ({
          rows: [row],
        } = await client.query<ConversationRow>(
          `INSERT INTO conversations (id, owner, created_at, metadata, next_position) VALUES ($1, $2, $3, $4::jsonb, 0)
           RETURNING id, owner, created_at, metadata`,
          [c.id, c.owner, c.createdAt, pgJson(c.metadata)],
        ));
      } catch (e) {
        throw uniqueViolation(e, 'conversations_pkey') ? new DuplicateIdError('conversation', c.id, 'id') : e;
      }
      await this.appendItems(client, c.id, c.owner, items);
      return toConversation(row);
    });
  }

  async getConversation(id: string, owner: string | null): Promise<Conversation | null> {
    const { rows } = await this.query<ConversationRow>(this.open(), 'SELECT id, owner, created_at, metadata FROM conversations WHERE id = $1 AND owner IS NOT DISTINCT FROM $2', [
      id,
      owner,
    ]);
    return rows.length > 0 ? toConversation(rows[0]) : null;
  }

  async updateConversation(id: string, owner: string | null, metadata: Record<string, string>): Promise<Conversation | null> {
    const { rows } = await this.open()
      .query<ConversationRow>(
        `UPDATE conversations SET metadata = $3::jsonb WHERE id = $1 AND owner IS NOT DISTINCT FROM $2
         RETURNING id, owner, created_at, metadata`,
        [id, owner, pgJson(metadata)],
      )
      .catch((e: unknown) => {
        throw translatePgError(e);
      });
    return rows.length > 0 ? toConversation(rows[0]) : null;
  }

  async deleteConversation(id: string, owner: string | null): Promise<boolean> {
    const { rowCount } = await this.query(this.open(), 'DELETE FROM conversations WHERE id = $1 AND owner IS NOT DISTINCT FROM $2', [id, owner]);
    return (rowCount ?? 0) > 0;
  }

  async listConversationItems(id: string, owner: string | null, opts: ListOptions): Promise<Page<ConversationItem> | null> {
    const query = parseListOptions(opts);
    const pool = this.open();
    const owned = await this.query(pool, 'SELECT 1 FROM conversations WHERE id = $1 AND owner IS NOT DISTINCT FROM $2', [id, owner]);
    if (owned.rowCount === 0) return null;
    const page = await this.window<ConversationItemRow>(pool, CONVERSATION_ITEMS, id, query);
    return { ...page, data: page.data.map(toConversationItem) };
  }

  async addConversationItems(id: string, owner: string | null, items: PublicItem[]): Promise<ConversationItem[] | null> {
    return this.transaction(async (client) => (await this.appendItems(client, id, owner, items)) ?? null);
  }

  async getConversationItem(id: string, itemId: string, owner: string | null): Promise<ConversationItem | null> {
    const { rows } = await this.query<ConversationItemRow>(
      this.open(),
      `SELECT ci.* FROM conversation_items ci JOIN conversations c ON c.id = ci.conversation_id
       WHERE ci.conversation_id = $1 AND ci.item_id = $2 AND c.owner IS NOT DISTINCT FROM $3`,
      [id, itemId, owner],
    );
    return rows.length > 0 ? toConversationItem(rows[0]) : null;
  }

  async deleteConversationItem(id: string, itemId: string, owner: string | null): Promise<boolean> {
    const { rowCount } = await this.query(
      this.open(),
      `DELETE FROM conversation_items ci USING conversations c
       WHERE ci.conversation_id = $1 AND ci.item_id = $2 AND c.id = ci.conversation_id AND c.owner IS NOT DISTINCT FROM $3`,
      [id, itemId, owner],
    );
    return (rowCount ?? 0) > 0;
  }

  /**
   * Reserves positions by bumping the conversation's counter, which proves
   * that it exists and is the caller's, and row-locks it until commit so that
   * concurrent appends from any replica get disjoint positions. Undefined when
   * the conversation is missing or foreign. Must run inside `transaction`.
   */
  private async appendItems(client: pg.PoolClient, conversationId: string, owner: string | null, items: PublicItem[]): Promise<ConversationItem[] | undefined> {
    const reserved = await client.query<{ start: Int8 }>(
      `UPDATE conversations SET next_position = next_position + $3
       WHERE id = $1 AND owner IS NOT DISTINCT FROM $2 RETURNING next_position - $3 AS start`,
      [conversationId, owner, items.length],
    );
    if (reserved.rowCount === 0) return undefined;
    if (items.length === 0) return [];
    try {
      const { rows } = await client.query<ConversationItemRow>(
        `INSERT INTO conversation_items (conversation_id, item_id, position, item, created_at)
         SELECT $1, e.value->>'id', $2::bigint + e.ord - 1, e.value, $3
         FROM jsonb_array_elements($4::jsonb) WITH ORDINALITY AS e (value, ord)
         RETURNING *`,
        [conversationId, reserved.rows[0].start, nowSeconds(), pgJson(items.map(withItemId))],
      );
      return rows.map(toConversationItem).sort((a, b) => a.position - b.position);
    } catch (e) {
      throw uniqueViolation(e, 'conversation_items_pkey') ? new DuplicateIdError('conversation_item', duplicateItemId(e), 'items') : e;
    }
  }

  private async window<Row extends ItemRow>(db: Queryable, source: ItemTable, key: string, query: ListQuery): Promise<Page<Row>> {
    const positionOf = async (param: 'after' | 'before', cursor: string | undefined): Promise<number | undefined> => {
      if (cursor === undefined) return undefined;
      const { rows } = await this.query<{ position: Int8 }>(db, `SELECT position FROM ${source.table} WHERE ${source.key} = $1 AND item_id = $2 ORDER BY position LIMIT 1`, [
        key,
        cursor,
      ]);
      if (rows.length === 0) throw unknownCursor(param, cursor);
      return Number(rows[0].position);
    };
    const { lo, hi } = positionRange(query.order, await positionOf('after', query.after), await positionOf('before', query.before));
    const direction = query.order === 'asc' ? 'ASC' : 'DESC';
    const { rows } = await this.query<Row>(
      db,
      `SELECT * FROM ${source.table} WHERE ${source.key} = $1 AND position > $2 AND position < $3
       ORDER BY position ${direction} LIMIT $4`,
      [key, lo, hi, query.limit + 1],
    );
    return toPage(rows, query.limit, (row) => row.item_id);
  }

  /**
   * Replicas starting together serialize on a transaction-scoped advisory
   * lock keyed by schema: the first applies the pending migrations, the
   * others wait, then find nothing left to do. DDL is transactional in
   * PostgreSQL, so a failed migration leaves no trace.
   */
  private async migrate(pool: pg.Pool): Promise<void> {
    await this.transaction(async (client) => {
      await takeAdvisoryXactLock(
        async (sql) => (await client.query(sql, [this.options.schema ?? null])).rows,
        `hashtext('switchyard:schema_migrations:' || coalesce($1::text, current_schema()::text, ''))`,
        'the state schema',
      );
      if (this.options.schema !== undefined) {
        // Checked first because CREATE SCHEMA IF NOT EXISTS still demands the
        // CREATE privilege on the database, which a locked-down role lacks.
        const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [this.options.schema]);
        if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${this.options.schema}`);
      }
      await client.query(
        `CREATE TABLE IF NOT EXISTS schema_migrations (
           version integer NOT NULL PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL
         )`,
      );
      const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
      for (const migration of pendingMigrations(
        POSTGRES_MIGRATIONS,
        rows.map((row) => row.version),
      )) {
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [migration.version, migration.name, nowSeconds()]);
      }
    }, pool);
  }

  /** One query outside a transaction, its failure translated (an unreachable database is a 503). */
  private async query<R extends pg.QueryResultRow = any>(on: Queryable, text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await on.query<R>(text, values);
    } catch (e) {
      throw translatePgError(e);
    }
  }

  private transaction<T>(fn: (client: pg.PoolClient) => Promise<T>, pool = this.open()): Promise<T> {
    return inTransaction(pool, fn, translatePgError);
  }

  private open(): pg.Pool {
    if (!this.pool) throw new Error('PostgresStateStore used before init() or after close().');
    return this.pool;
  }
}
