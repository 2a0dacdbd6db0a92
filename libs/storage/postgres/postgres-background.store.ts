import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { JsonObject } from '#tool-sdk/items.js';
import {
  type AdmitRefusal,
  type BackgroundAppend,
  type BackgroundEvent,
  type BackgroundLimits,
  type BackgroundRun,
  type BackgroundStatus,
  type BackgroundStore,
} from '../background-store.interface.js';
import { BACKGROUND_CHANNEL, expiryEvent } from '../shared/background-run.util.js';
import type { BackgroundCatalog, CatalogPage, CatalogQuery } from '../catalog.interface.js';
import { catalogPage, catalogSql, parseCatalogQuery, unknownCursor, type CatalogRow } from '../shared/list-window.util.js';
import { inTransaction } from './pg-transaction.js';
import { pgJson, translatePgError } from './pg-text.js';
import { takeAdvisoryXactLock } from '#tool-sdk/ports/lock-wait.js';

type Int8 = string | number;

interface RunRow {
  id: string;
  owner: string | null;
  status: BackgroundStatus;
  response: JsonObject;
  node_id: string;
  lease_expires_at: Int8;
  last_sequence: Int8;
}

const LIVE_SQL = "status IN ('queued', 'in_progress')";
/** Any constant works: it only has to be the same in every replica. */
const DDL_LOCK = 0x73796267;
/** Serializes admissions so that counting and inserting is one step across replicas. */
const ADMIT_LOCK = 0x73796261;
/** How long to wait before re-opening a LISTEN connection the server dropped. */
const RELISTEN_MS = 1_000;

/** NOTIFY payload: `1:<id>` when the run ended, `0:<id>` when it only gained events. */
const notice = (id: string, ended: boolean): string => `${ended ? 1 : 0}:${id}`;

function toRun(row: RunRow): BackgroundRun {
  return {
    id: row.id,
    owner: row.owner,
    status: row.status,
    response: row.response,
    nodeId: row.node_id,
    leaseExpiresAt: Number(row.lease_expires_at),
    lastSequence: Number(row.last_sequence),
  };
}

export interface PostgresBackgroundStoreOptions {
  connectionString: string;
  schema?: string;
  maxConnections?: number;
  connectTimeoutMs?: number;
}

/**
 * Background runs shared by every replica on one database. Writes announce
 * themselves with `NOTIFY` (sent at commit), and one `LISTEN` connection per
 * process turns those into `watch` callbacks, so a stream resumed on one
 * replica follows a run executing on another without polling.
 */
export class PostgresBackgroundStore implements BackgroundStore, BackgroundCatalog {
  private pool: pg.Pool | undefined;
  private listener: pg.Client | undefined;
  private relisten: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  constructor(private readonly options: PostgresBackgroundStoreOptions) {
    if (options.schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(options.schema)) {
      throw new Error(`Invalid PostgreSQL schema name '${options.schema}': use lower-case letters, digits and _.`);
    }
  }

  async init(): Promise<void> {
    if (this.pool) return;
    const pool = new pg.Pool({ ...this.connection(), max: this.options.maxConnections ?? 4 });
    pool.on('error', () => undefined);
    try {
      await this.transaction(pool, async (client) => {
        await takeAdvisoryXactLock(async (sql) => (await client.query(sql, [DDL_LOCK])).rows, '$1', "the background runs' schema");
        if (this.options.schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS ${this.options.schema}`);
        await client.query(`
          CREATE TABLE IF NOT EXISTS background_runs (
            id text PRIMARY KEY, owner text, status text NOT NULL, response jsonb NOT NULL,
            node_id text NOT NULL, lease_expires_at bigint NOT NULL, last_sequence bigint NOT NULL DEFAULT -1,
            created_at timestamptz NOT NULL DEFAULT now()
          );
          CREATE INDEX IF NOT EXISTS background_runs_live ON background_runs (status, lease_expires_at);
          CREATE INDEX IF NOT EXISTS background_runs_catalog ON background_runs (created_at, id);
          CREATE TABLE IF NOT EXISTS background_events (
            response_id text NOT NULL REFERENCES background_runs (id) ON DELETE CASCADE,
            sequence bigint NOT NULL, event jsonb NOT NULL, PRIMARY KEY (response_id, sequence)
          );`);
      });
      this.pool = pool;
      await this.listen();
    } catch (e) {
      this.closed = true;
      clearTimeout(this.relisten);
      this.pool = undefined;
      await pool.end();
      throw e;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.relisten);
    this.emitter.removeAllListeners();
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => undefined);
    const pool = this.pool;
    this.pool = undefined;
    await pool?.end();
  }

  async admit(run: BackgroundRun, limits: BackgroundLimits): Promise<AdmitRefusal | null> {
    return this.transaction(this.open(), async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [ADMIT_LOCK]);
      const { rows } = await client.query<{ total: Int8; owned: Int8 }>(
        `SELECT COUNT(*) AS total, COUNT(*) FILTER (WHERE owner IS NOT DISTINCT FROM $1) AS owned
         FROM background_runs WHERE ${LIVE_SQL}`,
        [run.owner],
      );
      if (Number(rows[0].total) >= limits.maxRuns) return 'total';
      if (Number(rows[0].owned) >= limits.maxRunsPerOwner) return 'owner';
      await client.query(
        `INSERT INTO background_runs (id, owner, status, response, node_id, lease_expires_at, last_sequence)
         VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7)`,
        [run.id, run.owner, run.status, pgJson(run.response), run.nodeId, run.leaseExpiresAt, run.lastSequence],
      );
      return null;
    });
  }

  /** Every run, whoever owns it, newest first (the console's listing). */
  async catalog(query: CatalogQuery): Promise<CatalogPage> {
    const { limit, after } = parseCatalogQuery(query);
    const sql = catalogSql('background_runs', 'floor(extract(epoch from created_at))::bigint', (n) => `$${n}`, after !== undefined, 'created_at', 'created_at::text');
    if (query.id !== undefined) return catalogPage((await this.query<CatalogRow>(sql.byIdSql, [query.id])).rows, 1);
    if (after === undefined) return catalogPage((await this.query<CatalogRow>(sql.pageSql, [limit + 1])).rows, limit);
    const [cursor] = (await this.query<{ position: string }>(sql.cursorSql, [after])).rows;
    if (!cursor) throw unknownCursor('after', after);
    return catalogPage((await this.query<CatalogRow>(sql.pageSql, [cursor.position, after, limit + 1])).rows, limit);
  }

  async get(id: string, owner: string | null): Promise<BackgroundRun | null> {
    const { rows } = await this.query<RunRow>('SELECT * FROM background_runs WHERE id = $1 AND owner IS NOT DISTINCT FROM $2', [id, owner]);
    return rows[0] ? toRun(rows[0]) : null;
  }

  async append(id: string, append: BackgroundAppend): Promise<boolean> {
    const last = append.events.length > 0 ? append.events[append.events.length - 1].sequence : null;
    return this.transaction(this.open(), async (client) => {
      const updated = await client.query(
        `UPDATE background_runs SET status = $2, response = $3::jsonb, last_sequence = COALESCE($4, last_sequence)
         WHERE id = $1 AND ${LIVE_SQL}`,
        [id, append.status, pgJson(append.response), last],
      );
      if (updated.rowCount === 0) return false;
      if (append.events.length > 0) {
        // One round trip for the whole batch: the events travel as one jsonb array.
        await client.query(
          `INSERT INTO background_events (response_id, sequence, event)
           SELECT $1, (e.value->>'sequence_number')::bigint, e.value FROM jsonb_array_elements($2::jsonb) AS e (value)`,
          [id, pgJson(append.events.map((e) => ({ ...e.event, sequence_number: e.sequence })))],
        );
      }
      await client.query('SELECT pg_notify($1, $2)', [BACKGROUND_CHANNEL, notice(id, append.status !== 'queued' && append.status !== 'in_progress')]);
      return true;
    });
  }

  async events(id: string, after: number, limit: number): Promise<BackgroundEvent[]> {
    const { rows } = await this.query<{ sequence: Int8; event: JsonObject }>(
      'SELECT sequence, event FROM background_events WHERE response_id = $1 AND sequence > $2 ORDER BY sequence LIMIT $3',
      [id, after, limit],
    );
    return rows.map((row) => ({ sequence: Number(row.sequence), event: row.event }));
  }

  async cancel(id: string, owner: string | null, response: (current: JsonObject) => JsonObject): Promise<BackgroundRun | null> {
    return this.transaction(this.open(), async (client) => {
      const { rows } = await client.query<RunRow>('SELECT * FROM background_runs WHERE id = $1 AND owner IS NOT DISTINCT FROM $2 FOR UPDATE', [id, owner]);
      if (!rows[0]) return null;
      const run = toRun(rows[0]);
      if (run.status !== 'queued' && run.status !== 'in_progress') return run;
      run.status = 'cancelled';
      run.response = response(run.response);
      await client.query("UPDATE background_runs SET status = 'cancelled', response = $2::jsonb WHERE id = $1", [id, pgJson(run.response)]);
      await client.query('SELECT pg_notify($1, $2)', [BACKGROUND_CHANNEL, notice(id, true)]);
      return run;
    });
  }

  async remove(id: string, owner: string | null): Promise<boolean> {
    const { rowCount } = await this.query('DELETE FROM background_runs WHERE id = $1 AND owner IS NOT DISTINCT FROM $2', [id, owner]);
    return (rowCount ?? 0) > 0;
  }

  async renew(nodeId: string, ids: readonly string[], until: number): Promise<string[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.query<{ id: string }>(`UPDATE background_runs SET lease_expires_at = $3 WHERE id = ANY($1) AND node_id = $2 AND ${LIVE_SQL} RETURNING id`, [
      ids,
      nodeId,
      until,
    ]);
    const renewed = new Set(rows.map((row) => row.id));
    return ids.filter((id) => !renewed.has(id));
  }

  async expire(now: number, fail: (run: BackgroundRun) => { response: JsonObject; event: JsonObject }): Promise<string[]> {
    return this.transaction(this.open(), async (client) => {
      // SKIP LOCKED: two replicas sweeping at once split the work instead of waiting on each other.
      const { rows } = await client.query<RunRow>(`SELECT * FROM background_runs WHERE ${LIVE_SQL} AND lease_expires_at < $1 FOR UPDATE SKIP LOCKED`, [now]);
      for (const row of rows) {
        const run = toRun(row);
        const { response, event } = expiryEvent(run, fail);
        await client.query("UPDATE background_runs SET status = 'failed', response = $2::jsonb, last_sequence = $3 WHERE id = $1", [run.id, pgJson(response), event.sequence]);
        await client.query('INSERT INTO background_events (response_id, sequence, event) VALUES ($1, $2, $3::jsonb)', [run.id, event.sequence, pgJson(event.event)]);
        await client.query('SELECT pg_notify($1, $2)', [BACKGROUND_CHANNEL, notice(run.id, true)]);
      }
      return rows.map((row) => row.id);
    });
  }

  watch(listener: (id: string, ended: boolean) => void): () => void {
    this.emitter.on(BACKGROUND_CHANNEL, listener);
    return () => this.emitter.off(BACKGROUND_CHANNEL, listener);
  }

  /** One query outside a transaction; an unreachable database is a 503 (`StoreUnavailableError`). */
  private async query<R extends pg.QueryResultRow = any>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.open().query<R>(text, values);
    } catch (e) {
      throw translatePgError(e);
    }
  }

  private connection(): pg.ClientConfig {
    return {
      connectionString: this.options.connectionString,
      connectionTimeoutMillis: this.options.connectTimeoutMs ?? 10_000,
      ...(this.options.schema === undefined ? {} : { options: `-c search_path=${this.options.schema}` }),
    };
  }

  /** Followers also poll, so a lost LISTEN connection only slows them down until it is back. */
  private async listen(): Promise<void> {
    const client = new pg.Client(this.connection());
    const retry = () => {
      if (this.listener === client) this.listener = undefined;
      client.end().catch(() => undefined);
      if (this.closed || this.relisten) return;
      this.relisten = setTimeout(() => {
        this.relisten = undefined;
        this.listen().catch(retry);
      }, RELISTEN_MS);
      this.relisten.unref();
    };
    client.on('error', retry);
    client.on('end', retry);
    client.on('notification', (message) => {
      if (message.channel !== BACKGROUND_CHANNEL || !message.payload) return;
      this.emitter.emit(BACKGROUND_CHANNEL, message.payload.slice(2), message.payload.startsWith('1:'));
    });
    await client.connect();
    await client.query(`LISTEN ${BACKGROUND_CHANNEL}`);
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.listener = client;
  }

  private open(): pg.Pool {
    if (!this.pool) throw new Error('PostgresBackgroundStore used before init() or after close().');
    return this.pool;
  }

  private transaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return inTransaction(pool, fn, translatePgError);
  }
}
