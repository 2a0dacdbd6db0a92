import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';

export interface SqliteConnectionOptions {
  /** Database file (its folder is created), or `:memory:`. */
  path: string;
  /** How long a write waits for another connection's lock before failing; default 5 s. */
  busyTimeoutMs?: number;
  /** Each statement as SQLite runs it, transaction boundaries included (better-sqlite3's `verbose`): a diagnostic log. */
  trace?: (sql: string) => void;
}

/**
 * One connection to the gateway's SQLite file as every store here uses it:
 * WAL, prepared statements kept per SQL text, writes in IMMEDIATE
 * transactions. The state store and the background store each hold one, so
 * they write beside each other as two connections.
 */
function busyTimeoutMs(options: SqliteConnectionOptions): number {
  return options.busyTimeoutMs ?? 5_000;
}

export class SqliteConnection {
  private readonly statements = new Map<string, Database.Statement>();
  /**
   * One transaction wrapper for the connection, taking the work as its
   * argument: `db.transaction(fn)` builds a wrapper (and its four variants)
   * per call, which was a fifth of a stored request's storage CPU.
   */
  private readonly inTransaction: Database.Transaction<(fn: () => unknown) => unknown>;
  private readonly busyTimeoutMs: number;

  private constructor(
    readonly db: Database.Database,
    busyTimeoutMs: number,
  ) {
    this.inTransaction = db.transaction((fn: () => unknown) => fn());
    this.busyTimeoutMs = busyTimeoutMs;
  }

  /** Opens the file and runs `setUp` (schema, migrations) once; a failure there closes it again. */
  static open(options: SqliteConnectionOptions, setUp: (db: Database.Database) => void): SqliteConnection {
    const { path } = options;
    if (path !== ':memory:' && !path.startsWith('file:')) mkdirSync(dirname(resolve(path)), { recursive: true });
    let db: Database.Database;
    try {
      const trace = options.trace;
      db = new Database(path, { timeout: busyTimeoutMs(options), ...(trace ? { verbose: (sql?: unknown) => trace(String(sql)) } : {}) });
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      const hint = /bindings|dlopen|NODE_MODULE_VERSION/i.test(message) ? ' The better-sqlite3 native addon is not built for this Node.js; run `npm rebuild better-sqlite3`.' : '';
      throw new Error(`Could not open the SQLite database '${path}': ${message}.${hint}`, { cause: e });
    }
    try {
      // WAL lets readers proceed while one connection writes; with WAL,
      // synchronous=NORMAL stays consistent after a crash and only risks the
      // last commits on power loss, a fair trade for a response cache.
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.pragma('foreign_keys = ON');
      // No temp directory is needed: the image's root is read-only, only the data directory is writable.
      db.pragma('temp_store = MEMORY');
      setUp(db);
    } catch (e) {
      db.close();
      throw e;
    }
    return new SqliteConnection(db, busyTimeoutMs(options));
  }

  /** The prepared statement for `sql`, prepared on first use. */
  stmt(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /**
   * Runs `fn` in one IMMEDIATE transaction: the write lock is taken at BEGIN,
   * so a second process waits out `busy_timeout` instead of failing at once
   * when a read would otherwise have to upgrade to a write. A throw rolls back.
   */
  write<T>(fn: () => T): T {
    return this.inTransaction.immediate(fn) as T;
  }

  /**
   * Like `write`, but without waiting for another process's lock: false when
   * the lock is held (SQLITE_BUSY at BEGIN, nothing run), so that the caller
   * can wait for it off the event loop. Waiting inside SQLite's busy handler
   * sleeps the whole process, every other request included, which is what
   * kept stored requests from scaling across workers.
   */
  tryWrite(fn: () => void): boolean {
    this.stmt('PRAGMA busy_timeout = 0').get();
    try {
      this.inTransaction.immediate(fn);
      return true;
    } catch (e) {
      if ((e as { code?: unknown }).code === 'SQLITE_BUSY' && !this.db.inTransaction) return false;
      throw e;
    } finally {
      this.stmt(`PRAGMA busy_timeout = ${this.busyTimeoutMs}`).get();
    }
  }

  /** Inside `write`: `fn` in a savepoint of its own, so that its throw rolls back only its statements. */
  savepoint<T>(fn: () => T): T {
    return this.inTransaction(fn) as T;
  }

  /** How long `tryWrite`'s caller may keep trying before giving up, as `write` would. */
  get lockWaitMs(): number {
    return this.busyTimeoutMs;
  }

  /**
   * Several statements that must see one snapshot: another process may commit
   * between two statements run outside a transaction.
   */
  read<T>(fn: () => T): T {
    return this.inTransaction.deferred(fn) as T;
  }

  close(): void {
    this.statements.clear();
    this.db.close();
  }
}
