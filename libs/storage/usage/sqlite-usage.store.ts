import { pendingMigrations } from '../shared/pending-migrations.util.js';
import { SqliteConnection, type SqliteConnectionOptions } from '../sqlite/sqlite-connection.js';
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

/** A minute's row added to: made once, not per batch (the statement cache then finds it by the same string). */
const UPSERT_SQL = `INSERT INTO usage_minutes (${USAGE_UPSERT_COLUMNS}) VALUES (${Array.from({ length: USAGE_WIDTH }, () => '?').join(', ')}) ${USAGE_ON_CONFLICT}`;

/** How long a batch waits before it tries another worker's write lock again. */
const LOCK_RETRY_MS = 1;

/** Usage in the gateway's SQLite file, on a connection of its own: what the workers of one host share. */
export class SqliteUsageStore implements UsageStore, RunTimelineStore {
  private connection: SqliteConnection | undefined;
  private readonly batch: UsageBatch;

  constructor(
    private readonly options: SqliteConnectionOptions,
    batch: UsageBatchOptions = {},
  ) {
    this.batch = new UsageBatch((sums) => this.writeSums(sums), batch);
  }

  async init(): Promise<void> {
    if (this.connection) return;
    this.connection = SqliteConnection.open(this.options, (db) => {
      db.transaction(() => {
        db.exec('CREATE TABLE IF NOT EXISTS usage_migrations (version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
        const applied = db.prepare('SELECT version FROM usage_migrations').pluck().all() as number[];
        for (const migration of pendingMigrations(USAGE_MIGRATIONS, applied)) {
          db.exec(migration.sql);
          db.prepare('INSERT INTO usage_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(migration.version, migration.name, Math.floor(Date.now() / 1000));
        }
      }).immediate();
    });
  }

  /** Writes what is pending at once (the batch's window is not waited out), then closes. */
  async close(): Promise<void> {
    await this.batch.drained();
    this.connection?.close();
    this.connection = undefined;
  }

  record(e: UsageEntry): Promise<void> {
    // A rejection, not a throw: the recorder turns it into a warning line; a throw would reach the run that ended.
    if (!this.connection) return Promise.reject(new Error('SqliteUsageStore used before init() or after close().'));
    return this.batch.add(e);
  }

  private writeSums(sums: UsageSum[]): Promise<void> {
    return this.writeLocked((db) => {
      const upsert = db.stmt(UPSERT_SQL);
      sums.forEach((s) => upsert.run(...usageSumValues(s)));
    });
  }

  /** A run's timeline, and the expired ones gone, in one write. */
  recordTimeline(t: RunTimeline): Promise<void> {
    if (!this.connection) return Promise.reject(new Error('SqliteUsageStore used before init() or after close().'));
    return this.writeLocked((db) => {
      db.stmt('INSERT OR REPLACE INTO run_timelines (response_id, owner, at, body) VALUES (?, ?, ?, ?)').run(t.responseId, storedOwner(t.owner), t.startedAt, JSON.stringify(t));
      db.stmt('DELETE FROM run_timelines WHERE at < ?').run(Date.now() - RUN_TIMELINE_RETENTION_MS);
    });
  }

  async timeline(responseId: string): Promise<RunTimeline | null> {
    const row = this.open().stmt('SELECT owner, body FROM run_timelines WHERE response_id = ?').get(responseId) as { owner: string; body: string } | undefined;
    return row ? { ...(JSON.parse(row.body) as RunTimeline), owner: ownerOf(row.owner) } : null;
  }

  /**
   * One IMMEDIATE transaction. Another worker holding the write lock is
   * waited for on a timer, not in SQLite's busy handler, which would sleep
   * this whole process; past the busy timeout the write fails (SQLITE_BUSY,
   * nothing written), as a single write would.
   */
  private writeLocked(write: (db: SqliteConnection) => void): Promise<void> {
    const firstTry = Date.now();
    return new Promise<void>((resolve, reject) => {
      const attempt = (): void => {
        try {
          const db = this.open();
          if (db.tryWrite(() => write(db))) resolve();
          else if (Date.now() - firstTry < db.lockWaitMs) setTimeout(attempt, LOCK_RETRY_MS);
          else reject(Object.assign(new Error('database is locked (the write lock stayed taken for the whole busy timeout)'), { code: 'SQLITE_BUSY' }));
        } catch (e) {
          reject(e);
        }
      };
      attempt();
    });
  }

  /** Reads after writing what this process has pending, so a run recorded before the read is in its answer. */
  async query(q: UsageQuery): Promise<UsageRow[]> {
    await this.batch.flush();
    const byOwner = q.owner !== undefined;
    const sql = `SELECT minute - (minute % ?) AS bucket, owner, model, surface, ${USAGE_SUMS} FROM usage_minutes
      WHERE minute >= ? AND minute < ?${byOwner ? ' AND owner = ?' : ''}
      GROUP BY bucket, owner, model, surface ORDER BY bucket, owner, model, surface LIMIT ?`;
    const params: unknown[] = [q.bucketMs, q.from, q.to, ...(byOwner ? [storedOwner(q.owner ?? null)] : []), q.limit];
    return (
      this.open()
        .stmt(sql)
        .all(...params) as UsageSqlRow[]
    ).map(toUsageRow);
  }

  private open(): SqliteConnection {
    if (!this.connection) throw new Error('SqliteUsageStore used before init() or after close().');
    return this.connection;
  }
}
