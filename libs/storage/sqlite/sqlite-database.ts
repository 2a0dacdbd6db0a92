import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';

export interface SqliteDatabaseOptions {
  /** Database file (its folder is created), or `:memory:`. */
  path: string;
  /** How long a write waits for another connection's lock before failing; default 5 s. */
  busyTimeoutMs?: number;
}

/**
 * One connection to the gateway's SQLite file as every store here uses it:
 * WAL, prepared statements kept per SQL text, writes in IMMEDIATE
 * transactions. The state store and the background store each hold one, so
 * they write beside each other as two connections.
 */
export class SqliteDatabase {
  private readonly statements = new Map<string, Database.Statement>();

  private constructor(readonly db: Database.Database) {}

  /** Opens the file and runs `setUp` (schema, migrations) once; a failure there closes it again. */
  static open(options: SqliteDatabaseOptions, setUp: (db: Database.Database) => void): SqliteDatabase {
    const { path } = options;
    if (path !== ':memory:' && !path.startsWith('file:')) mkdirSync(dirname(resolve(path)), { recursive: true });
    let db: Database.Database;
    try {
      db = new Database(path, { timeout: options.busyTimeoutMs ?? 5_000 });
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
      setUp(db);
    } catch (e) {
      db.close();
      throw e;
    }
    return new SqliteDatabase(db);
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
    return this.db.transaction(fn).immediate();
  }

  /**
   * Several statements that must see one snapshot: another process may commit
   * between two statements run outside a transaction.
   */
  read<T>(fn: () => T): T {
    return this.db.transaction(fn).deferred();
  }

  close(): void {
    this.statements.clear();
    this.db.close();
  }
}
