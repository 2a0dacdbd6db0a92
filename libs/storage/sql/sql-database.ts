import { createRequire } from 'node:module';
import type Database from 'better-sqlite3';
import { DriverMissingError } from '#tool-sdk/errors.js';
import type pg from 'pg';
import { translatePgError } from '../postgres/pg-text.js';

/**
 * A small SQL port for stores that keep tables of their own beside the state
 * store (file search: `fs_*`), on the same drivers and with the same error
 * mapping as the state and background stores: a PostgreSQL outage is the 503
 * `store_unavailable` with Retry-After, text PostgreSQL cannot hold a 400,
 * and connections and queries are bounded by `storage.connectTimeoutMs` and
 * `storage.queryTimeoutMs`.
 *
 * The database drivers are optional peers of the package: they are loaded
 * when a store of their kind is opened, never at import, so a host that uses
 * neither driver installs neither.
 */
const requireDriver = createRequire(import.meta.url);

function driver<T>(pkg: string, kind: string): T {
  try {
    return requireDriver(pkg) as T;
  } catch (e) {
    if ((e as { code?: string }).code === 'MODULE_NOT_FOUND') throw new DriverMissingError(pkg, kind);
    throw e;
  }
}

export { DriverMissingError };

/** Whether an optional driver package is installed where this package can load it (without loading it). */
export function driverInstalled(pkg: string): boolean {
  try {
    requireDriver.resolve(pkg);
    return true;
  } catch {
    return false;
  }
}
export type { Row, SqlDatabase, SqlValue } from '#tool-sdk/ports/tool-storage.js';
import type { Row, SqlDatabase, SqlValue, TxOptions } from '#tool-sdk/ports/tool-storage.js';

/** How long a statement waits for another connection's write lock before failing, as `busy_timeout` did. */
const LOCK_WAIT_MS = 5000;
/** Pause between two tries for the lock: short, since a lock held by a small write is gone in a millisecond or two. */
const LOCK_RETRY_MS = [1, 2, 5, 10, 20, 50];

/** Distinct statement texts a database keeps prepared (see `SqliteDatabase.statement`). */
const MAX_KEPT_STATEMENTS = 256;

const isBusy = (e: unknown): boolean => (e as { code?: unknown }).code === 'SQLITE_BUSY';
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * better-sqlite3 is synchronous, and one connection has one transaction: an
 * async transaction body must not interleave with statements from other
 * requests, so everything runs through one promise chain while a
 * transaction is open.
 *
 * Another connection's write lock (another process, or a thread of this
 * one writing through a connection of its own, as file search's ingestion
 * threads do) is waited for off the event loop: the connection runs with
 * `busy_timeout = 0`, and a statement or BEGIN refused with SQLITE_BUSY
 * (nothing ran) is tried again after a timer, for up to 5 s. SQLite's own
 * busy handler would sleep the thread, and every request with it, for as
 * long as the other writer holds the lock.
 */
export class SqliteDatabase implements SqlDatabase {
  readonly kind = 'sqlite' as const;
  private opened?: { db: Database.Database; vec: boolean };
  /** Prepared statements by their text (see `statement`). */
  private readonly statements = new Map<string, Database.Statement>();
  private chain: Promise<unknown> = Promise.resolve();
  private readonly direct: SqlDatabase;

  /** The database file another connection can open (none for `:memory:`, which is this connection's alone). */
  readonly sqliteFile: string | undefined;

  /** Opens on first use, so that a host without better-sqlite3 boots (file search then answers 503). */
  constructor(private readonly path: string) {
    this.sqliteFile = path === ':memory:' || path === '' ? undefined : path;
    const self = this;
    this.direct = {
      kind: 'sqlite',
      get hasVectorFunctions() {
        return self.hasVectorFunctions;
      },
      all: async (sql, params = []) => self.statement(sql).all(...(params as SqlValue[])) as never,
      run: async (sql, params = []) => self.statement(sql).run(...(params as SqlValue[])).changes,
      tx: (fn) => fn(self.direct),
      close: async () => undefined,
    };
  }

  get hasVectorFunctions(): boolean {
    return this.open().vec;
  }

  private get db(): Database.Database {
    return this.open().db;
  }

  private open(): { db: Database.Database; vec: boolean } {
    if (this.opened) return this.opened;
    const BetterSqlite3 = driver<typeof Database>('better-sqlite3', 'sqlite');
    const db = new BetterSqlite3(this.path);
    db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 0');
    db.pragma('foreign_keys = ON');
    // Sorts and big statements spill to memory, not to a temp directory: the image's root is read-only
    // and only the data directory is writable (SQLITE_IOERR_GETTEMPPATH otherwise).
    db.pragma('temp_store = MEMORY');
    let vec = false;
    try {
      driver<{ load(db: Database.Database): void }>('sqlite-vec', 'sqlite').load(db);
      vec = true;
    } catch {
      // No sqlite-vec binary for this platform: similarity is computed in Node instead.
    }
    this.opened = { db, vec };
    return this.opened;
  }

  exec(sql: string): void {
    this.db.exec(sql);
  }

  /**
   * The prepared statement for `sql`, prepared on first use and kept: the
   * stores run a handful of fixed statements, some on timers (a batch
   * runner's poll and lease renewal, the ingestion queue's claim), and
   * SQLite parsing and planning one again on every call was most of what
   * such a call cost. SQLite prepares a kept statement again by itself when
   * the schema changed. A store that made ever new texts would keep only
   * the first `MAX_KEPT_STATEMENTS`; the rest are prepared per call.
   */
  private statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      if (this.statements.size < MAX_KEPT_STATEMENTS) this.statements.set(sql, statement);
    }
    return statement;
  }

  private enqueue<T>(work: () => Promise<T>): Promise<T> {
    const next = this.chain.then(work, work);
    this.chain = next.catch(() => undefined);
    return next;
  }

  /**
   * Runs `start` until it is not refused for another connection's lock,
   * waiting between tries on a timer. Only a refusal outside a transaction
   * is retried: then the statement (or BEGIN) did nothing.
   */
  private async whenUnlocked<T>(start: () => T): Promise<T> {
    const since = Date.now();
    for (let attempt = 0; ; attempt++) {
      try {
        return start();
      } catch (e) {
        if (!isBusy(e) || this.db.inTransaction || Date.now() - since >= LOCK_WAIT_MS) throw e;
      }
      await sleep(LOCK_RETRY_MS[Math.min(attempt, LOCK_RETRY_MS.length - 1)]);
    }
  }

  all<T = Row>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    return this.enqueue(() => this.whenUnlocked(() => this.statement(sql).all(...(params as SqlValue[])) as T[]));
  }

  run(sql: string, params: readonly SqlValue[] = []): Promise<number> {
    return this.enqueue(() => this.whenUnlocked(() => this.statement(sql).run(...(params as SqlValue[])).changes));
  }

  tx<T>(fn: (db: SqlDatabase) => Promise<T>): Promise<T> {
    return this.enqueue(async () => {
      await this.whenUnlocked(() => this.db.exec('BEGIN IMMEDIATE'));
      try {
        const out = await fn(this.direct);
        this.db.exec('COMMIT');
        return out;
      } catch (e) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        throw e;
      }
    });
  }

  async close(): Promise<void> {
    await this.chain;
    this.opened?.db.close();
  }
}

function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

class PostgresClientDb implements SqlDatabase {
  readonly kind = 'postgres' as const;
  readonly hasVectorFunctions = false;
  constructor(
    private readonly client: pg.PoolClient,
    /** The transaction's own bound per statement (`TxOptions`); the pool's when absent. */
    private readonly queryTimeoutMs?: number,
  ) {}
  all<T = Row>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    return translated(async () => (await this.query(sql, params)).rows as T[]);
  }
  run(sql: string, params: readonly SqlValue[] = []): Promise<number> {
    return translated(async () => (await this.query(sql, params)).rowCount ?? 0);
  }
  private query(sql: string, params: readonly SqlValue[]): Promise<pg.QueryResult> {
    const values = params as unknown[];
    if (this.queryTimeoutMs === undefined) return this.client.query(numbered(sql), values);
    // node-postgres reads a query's own `query_timeout` before the pool's (lib/client.js); its types do not list it.
    const config: pg.QueryConfig & { query_timeout: number } = { text: numbered(sql), values, query_timeout: this.queryTimeoutMs };
    return this.client.query(config);
  }
  tx<T>(fn: (db: SqlDatabase) => Promise<T>): Promise<T> {
    return fn(this);
  }
  async close(): Promise<void> {}
}

/** Runs one driver call with PostgreSQL's failures translated as every store here translates them. */
async function translated<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    throw translatePgError(e);
  }
}

export interface PostgresDatabaseOptions {
  connectionString: string;
  /** Pool size; default 10. */
  max?: number;
  /** Wait for a connection (a free pooled one, or a new one); default 10 s, as the state store. */
  connectTimeoutMs?: number;
  /** Wait for one query's answer; default 5 s, as the state store. */
  queryTimeoutMs?: number;
}

export class PostgresDatabase implements SqlDatabase {
  readonly kind = 'postgres' as const;
  readonly hasVectorFunctions = false;
  private readonly pool: pg.Pool;

  constructor(options: PostgresDatabaseOptions | string, max = 10) {
    const o = typeof options === 'string' ? { connectionString: options, max } : options;
    const { Pool } = driver<typeof pg>('pg', 'postgres');
    this.pool = new Pool({
      connectionString: o.connectionString,
      max: o.max ?? 10,
      // Without these node-postgres waits forever on an unreachable host: a request would hang, not answer 503.
      connectionTimeoutMillis: o.connectTimeoutMs ?? 10_000,
      query_timeout: o.queryTimeoutMs ?? 5_000,
    });
    // An idle client's error (server restart) must not crash the process; the next query reconnects.
    this.pool.on('error', () => undefined);
  }

  all<T = Row>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    return translated(async () => (await this.pool.query(numbered(sql), params as unknown[])).rows as T[]);
  }

  run(sql: string, params: readonly SqlValue[] = []): Promise<number> {
    return translated(async () => (await this.pool.query(numbered(sql), params as unknown[])).rowCount ?? 0);
  }

  async tx<T>(fn: (db: SqlDatabase) => Promise<T>, options: TxOptions = {}): Promise<T> {
    const client = await translated(() => this.pool.connect());
    let broken: Error | undefined;
    // A checked-out connection the server drops emits 'error' with no pool listener on it, which
    // would end the process; the query in flight rejects with it anyway, and release discards it.
    const dropped = (e: Error) => (broken = e);
    client.on('error', dropped);
    try {
      await translated(() => client.query('BEGIN'));
      const out = await fn(new PostgresClientDb(client, options.queryTimeoutMs));
      await translated(() => client.query('COMMIT'));
      return out;
    } catch (e) {
      await client.query('ROLLBACK').catch((rollbackError: unknown) => {
        // A connection whose ROLLBACK failed is unusable: the pool discards it instead of handing it on.
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      });
      throw translatePgError(e);
    } finally {
      client.off('error', dropped);
      client.release(broken);
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
