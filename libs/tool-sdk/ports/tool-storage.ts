import type { ContainerRecordStore } from './container-records.js';

export type SqlValue = string | number | bigint | Buffer | null;
export type Row = Record<string, unknown>;

/**
 * The little of SQL a tool's own tables need, over SQLite and PostgreSQL
 * alike. Statements use `?` placeholders (rewritten to `$n` for PostgreSQL)
 * and avoid literals containing `?`. Errors come out as the gateway's: an
 * outage is a 503 `store_unavailable` with Retry-After, text the database
 * cannot hold a 400.
 */
export interface SqlDatabase {
  readonly kind: 'sqlite' | 'postgres';
  /** sqlite-vec is loaded: vector distances are computed in SQL. */
  readonly hasVectorFunctions: boolean;
  /**
   * SQLite: the database file, for a worker thread that writes through a
   * connection of its own (undefined for `:memory:` and PostgreSQL). This
   * connection waits for such a writer's lock off the event loop.
   */
  readonly sqliteFile?: string;
  all<T = Row>(sql: string, params?: readonly SqlValue[]): Promise<T[]>;
  run(sql: string, params?: readonly SqlValue[]): Promise<number>;
  /** Runs `fn` in one transaction; other statements wait for it on SQLite's single connection. */
  tx<T>(fn: (db: SqlDatabase) => Promise<T>, options?: TxOptions): Promise<T>;
  close(): Promise<void>;
}

export interface TxOptions {
  /**
   * How long each statement of the transaction may wait for its answer on
   * PostgreSQL, instead of `storage.queryTimeoutMs` (5 s), which bounds a
   * request's queries. A schema change at start-up may wait longer: for
   * locks other sessions hold on its tables, on a busy database server.
   */
  queryTimeoutMs?: number;
}

/**
 * Where a tool keeps data of its own beside the gateway's state, so that it
 * follows the operator's `storage` settings: the same PostgreSQL database,
 * or a SQLite file next to the state file. Provided by the gateway.
 */
export interface ToolStorage {
  /** The state store's driver: `memory` is one process and lost on restart. */
  readonly driver: 'memory' | 'sqlite' | 'postgres';
  /** True when every process and replica of the gateway sees the same data (not memory, not SQLite `:memory:`). */
  readonly shared: boolean;
  /**
   * A SQL database for a tool's own tables: on PostgreSQL the state's own
   * database; on SQLite the file `file` beside the state file, or `path`
   * when the operator gave one; `:memory:` with the memory driver. The
   * driver is loaded on first use; a missing optional driver package is a
   * 503 `driver_missing` on every use. The caller closes it.
   */
  openSql(options: { file: string; path?: string }): SqlDatabase;
  /** Where `openSql` with these options puts the tables, for start-up errors (no password). */
  describeSql(options: { file: string; path?: string }): string;
  /** Records every process of the gateway shares, for objects with one home process (code-interpreter containers). */
  openContainerRecords(): Promise<ContainerRecordStore>;
}

/** Nest token of the gateway's `ToolStorage`. */
export const TOOL_STORAGE = Symbol('switchyard:tool-storage');
