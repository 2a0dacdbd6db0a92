import pg from 'pg';
import { inTransaction } from '../postgres/pg-transaction.js';
import { translateUnavailable } from '../postgres/pg-unavailable.js';
import { pendingMigrations } from '../shared/pending-migrations.util.js';
import {
  ownerOf,
  RUN_TIMELINE_RETENTION_MS,
  storedOwner,
  type RunTimeline,
  type RunTimelineStore,
  type UsageEntry,
  type UsageQuery,
  type UsageRow,
  type UsageStore,
} from '../usage-store.interface.js';
import { UsageBatch, type UsageBatchOptions, type UsageSum, usageSumValues } from './usage-batch.js';
import { USAGE_MIGRATIONS, USAGE_ON_CONFLICT, USAGE_SUMS, USAGE_UPSERT_COLUMNS, USAGE_WIDTH, type UsageSqlRow } from './usage.migrations.js';
import { toUsageRow } from './usage-row.util.js';
import { takeAdvisoryXactLock } from '#tool-sdk/ports/lock-wait.js';

export interface PostgresUsageStoreOptions {
  connectionString: string;
  schema?: string;
  connectTimeoutMs?: number;
}

/** Rows per statement. */
const UPSERT_ROWS = 1_000;

/** Usage shared by every replica on one database. */
export class PostgresUsageStore implements UsageStore, RunTimelineStore {
  private pool: pg.Pool | undefined;
  private readonly batch: UsageBatch;

  constructor(
    private readonly options: PostgresUsageStoreOptions,
    batch: UsageBatchOptions = {},
  ) {
    if (options.schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(options.schema)) {
      throw new Error(`Invalid PostgreSQL schema name '${options.schema}': use lower-case letters, digits and _.`);
    }
    this.batch = new UsageBatch((sums) => this.writeSums(sums), batch);
  }

  async init(): Promise<void> {
    if (this.pool) return;
    const pool = new pg.Pool({
      connectionString: this.options.connectionString,
      connectionTimeoutMillis: this.options.connectTimeoutMs ?? 10_000,
      ...(this.options.schema === undefined ? {} : { options: `-c search_path=${this.options.schema}` }),
      max: 4,
    });
    pool.on('error', () => undefined);
    try {
      // Replicas starting together serialize here: the first migrates, the others then find nothing to do.
      await inTransaction(pool, async (client) => {
        await takeAdvisoryXactLock(
          async (sql) => (await client.query(sql, [this.options.schema ?? null])).rows,
          `hashtext('switchyard:usage_migrations:' || coalesce($1::text, current_schema()::text, ''))`,
          'the usage schema',
        );
        if (this.options.schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS ${this.options.schema}`);
        await client.query('CREATE TABLE IF NOT EXISTS usage_migrations (version integer NOT NULL PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)');
        const { rows } = await client.query<{ version: number }>('SELECT version FROM usage_migrations');
        for (const migration of pendingMigrations(
          USAGE_MIGRATIONS,
          rows.map((r) => r.version),
        )) {
          await client.query(migration.sql);
          await client.query('INSERT INTO usage_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [migration.version, migration.name, Math.floor(Date.now() / 1000)]);
        }
      });
      this.pool = pool;
    } catch (e) {
      await pool.end();
      throw e;
    }
  }

  /** Writes what is pending at once (the batch's window is not waited out), then closes. */
  async close(): Promise<void> {
    await this.batch.drained();
    const pool = this.pool;
    this.pool = undefined;
    await pool?.end();
  }

  record(e: UsageEntry): Promise<void> {
    if (!this.pool) return Promise.reject(new Error('PostgresUsageStore used before init() or after close().'));
    return this.batch.add(e);
  }

  /**
   * A batch as multi-row upserts (its keys are distinct: the batch summed
   * them), in chunks that keep well under PostgreSQL's 65 535 parameters.
   */
  private async writeSums(sums: UsageSum[]): Promise<void> {
    for (let at = 0; at < sums.length; at += UPSERT_ROWS) {
      const chunk = sums.slice(at, at + UPSERT_ROWS);
      const rows = chunk.map((_, i) => `(${Array.from({ length: USAGE_WIDTH }, (_, j) => `$${i * USAGE_WIDTH + j + 1}`).join(', ')})`);
      await this.run(`INSERT INTO usage_minutes (${USAGE_UPSERT_COLUMNS}) VALUES ${rows.join(', ')} ${USAGE_ON_CONFLICT}`, chunk.flatMap(usageSumValues));
    }
  }

  /**
   * Reads after writing what this process has pending, so a run recorded
   * before the read is in its answer (the write and the read may take
   * different pool connections: the read must not start first).
   */
  async query(q: UsageQuery): Promise<UsageRow[]> {
    await this.batch.flush();
    const byOwner = q.owner !== undefined;
    const sql = `SELECT minute - (minute % $1::bigint) AS bucket, owner, model, surface, ${USAGE_SUMS} FROM usage_minutes
      WHERE minute >= $2 AND minute < $3${byOwner ? ' AND owner = $5' : ''}
      GROUP BY bucket, owner, model, surface ORDER BY bucket, owner, model, surface LIMIT $4`;
    const params: unknown[] = [q.bucketMs, q.from, q.to, q.limit, ...(byOwner ? [storedOwner(q.owner ?? null)] : [])];
    const { rows } = await this.run<UsageSqlRow>(sql, params);
    return rows.map(toUsageRow);
  }

  /** A run's timeline (the newest wins for one id), and the expired ones gone. */
  async recordTimeline(t: RunTimeline): Promise<void> {
    await this.run(
      `WITH kept AS (
         INSERT INTO run_timelines (response_id, owner, at, body) VALUES ($1, $2, $3, $4)
         ON CONFLICT (response_id) DO UPDATE SET owner = excluded.owner, at = excluded.at, body = excluded.body
       )
       DELETE FROM run_timelines WHERE at < $5`,
      [t.responseId, storedOwner(t.owner), t.startedAt, JSON.stringify(t), Date.now() - RUN_TIMELINE_RETENTION_MS],
    );
  }

  async timeline(responseId: string): Promise<RunTimeline | null> {
    const { rows } = await this.run<{ owner: string; body: string }>('SELECT owner, body FROM run_timelines WHERE response_id = $1', [responseId]);
    return rows[0] ? { ...(JSON.parse(rows[0].body) as RunTimeline), owner: ownerOf(rows[0].owner) } : null;
  }

  /** One query; an unreachable database is a 503 (`StoreUnavailableError`). */
  private async run<R extends pg.QueryResultRow = any>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    if (!this.pool) throw new Error('PostgresUsageStore used before init() or after close().');
    try {
      return await this.pool.query<R>(text, values);
    } catch (e) {
      throw translateUnavailable(e);
    }
  }
}
