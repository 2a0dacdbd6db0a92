import { EventEmitter } from 'node:events';
import type Database from 'better-sqlite3';
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
import { SqliteConnection, type SqliteConnectionOptions } from './sqlite-connection.js';

interface RunRow {
  id: string;
  owner: string | null;
  status: BackgroundStatus;
  response: string;
  node_id: string;
  lease_expires_at: number;
  last_sequence: number;
}

const LIVE_SQL = "status IN ('queued', 'in_progress')";

function toRun(row: RunRow): BackgroundRun {
  return {
    id: row.id,
    owner: row.owner,
    status: row.status,
    response: JSON.parse(row.response) as JsonObject,
    nodeId: row.node_id,
    leaseExpiresAt: row.lease_expires_at,
    lastSequence: row.last_sequence,
  };
}

/**
 * Background runs in the gateway's SQLite file, on a connection of their own
 * (WAL lets it write beside the state store's). Notifications reach watchers
 * in this process only; another process on the same file sees new events
 * when its followers poll.
 */
export class SqliteBackgroundStore implements BackgroundStore, BackgroundCatalog {
  private connection: SqliteConnection | undefined;
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  constructor(private readonly options: SqliteConnectionOptions) {}

  async init(): Promise<void> {
    if (this.connection) return;
    this.connection = SqliteConnection.open(this.options, (db) => {
      db.exec(`
        CREATE TABLE IF NOT EXISTS background_runs (
          id TEXT PRIMARY KEY, owner TEXT, status TEXT NOT NULL, response TEXT NOT NULL,
          node_id TEXT NOT NULL, lease_expires_at INTEGER NOT NULL, last_sequence INTEGER NOT NULL DEFAULT -1,
          created_at INTEGER NOT NULL
        );
        CREATE INDEX IF NOT EXISTS background_runs_live ON background_runs (status, lease_expires_at);
        CREATE INDEX IF NOT EXISTS background_runs_catalog ON background_runs (created_at, id);
        CREATE TABLE IF NOT EXISTS background_events (
          response_id TEXT NOT NULL REFERENCES background_runs (id) ON DELETE CASCADE,
          sequence INTEGER NOT NULL, event TEXT NOT NULL, PRIMARY KEY (response_id, sequence)
        ) WITHOUT ROWID;`);
    });
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
    this.connection?.close();
    this.connection = undefined;
  }

  async admit(run: BackgroundRun, limits: BackgroundLimits): Promise<AdmitRefusal | null> {
    return this.write(() => {
      const { total, owned } = this.stmt(`SELECT COUNT(*) AS total, COALESCE(SUM(owner IS ?), 0) AS owned FROM background_runs WHERE ${LIVE_SQL}`).get(run.owner) as {
        total: number;
        owned: number;
      };
      if (total >= limits.maxRuns) return 'total';
      if (owned >= limits.maxRunsPerOwner) return 'owner';
      this.stmt(
        `INSERT INTO background_runs (id, owner, status, response, node_id, lease_expires_at, last_sequence, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(run.id, run.owner, run.status, JSON.stringify(run.response), run.nodeId, run.leaseExpiresAt, run.lastSequence, Date.now());
      return null;
    });
  }

  /** Every run, whoever owns it, newest first (the console's listing). */
  async catalog(query: CatalogQuery): Promise<CatalogPage> {
    const { limit, after } = parseCatalogQuery(query);
    // created_at is in milliseconds here; the catalog speaks seconds.
    const sql = catalogSql('background_runs', '(created_at / 1000)', () => '?', after !== undefined, 'created_at');
    if (query.id !== undefined) return catalogPage(this.stmt(sql.byIdSql).all(query.id) as CatalogRow[], 1);
    if (after === undefined) return catalogPage(this.stmt(sql.pageSql).all(limit + 1) as CatalogRow[], limit);
    const cursor = this.stmt(sql.cursorSql).get(after) as { position: number } | undefined;
    if (!cursor) throw unknownCursor('after', after);
    return catalogPage(this.stmt(sql.pageSql).all(cursor.position, after, limit + 1) as CatalogRow[], limit);
  }

  async get(id: string, owner: string | null): Promise<BackgroundRun | null> {
    const row = this.stmt('SELECT * FROM background_runs WHERE id = ? AND owner IS ?').get(id, owner) as RunRow | undefined;
    return row ? toRun(row) : null;
  }

  async append(id: string, append: BackgroundAppend): Promise<boolean> {
    const written = this.write(() => {
      const last = append.events.length > 0 ? append.events[append.events.length - 1].sequence : null;
      const updated = this.stmt(
        `UPDATE background_runs SET status = ?, response = ?, last_sequence = COALESCE(?, last_sequence)
         WHERE id = ? AND ${LIVE_SQL}`,
      ).run(append.status, JSON.stringify(append.response), last, id);
      if (updated.changes === 0) return false;
      const insert = this.stmt('INSERT INTO background_events (response_id, sequence, event) VALUES (?, ?, ?)');
      for (const { sequence, event } of append.events) insert.run(id, sequence, JSON.stringify(event));
      return true;
    });
    if (written) this.emitter.emit(BACKGROUND_CHANNEL, id, append.status !== 'queued' && append.status !== 'in_progress');
    return written;
  }

  async events(id: string, after: number, limit: number): Promise<BackgroundEvent[]> {
    const rows = this.stmt('SELECT sequence, event FROM background_events WHERE response_id = ? AND sequence > ? ORDER BY sequence LIMIT ?').all(id, after, limit) as Array<{
      sequence: number;
      event: string;
    }>;
    return rows.map((row) => ({ sequence: row.sequence, event: JSON.parse(row.event) as JsonObject }));
  }

  async cancel(id: string, owner: string | null, response: (current: JsonObject) => JsonObject): Promise<BackgroundRun | null> {
    const result = this.write(() => {
      const row = this.stmt('SELECT * FROM background_runs WHERE id = ? AND owner IS ?').get(id, owner) as RunRow | undefined;
      if (!row) return null;
      const run = toRun(row);
      if (run.status !== 'queued' && run.status !== 'in_progress') return { run, changed: false };
      run.status = 'cancelled';
      run.response = response(run.response);
      this.stmt("UPDATE background_runs SET status = 'cancelled', response = ? WHERE id = ?").run(JSON.stringify(run.response), id);
      return { run, changed: true };
    });
    if (result?.changed) this.emitter.emit(BACKGROUND_CHANNEL, id, true);
    return result?.run ?? null;
  }

  async remove(id: string, owner: string | null): Promise<boolean> {
    // Events go with it through ON DELETE CASCADE.
    return this.write(() => this.stmt('DELETE FROM background_runs WHERE id = ? AND owner IS ?').run(id, owner).changes > 0);
  }

  async renew(nodeId: string, ids: readonly string[], until: number): Promise<string[]> {
    if (ids.length === 0) return [];
    return this.write(() => {
      const extend = this.stmt(`UPDATE background_runs SET lease_expires_at = ? WHERE id = ? AND node_id = ? AND ${LIVE_SQL}`);
      return ids.filter((id) => extend.run(until, id, nodeId).changes === 0);
    });
  }

  async expire(now: number, fail: (run: BackgroundRun) => { response: JsonObject; event: JsonObject }): Promise<string[]> {
    const expired = this.write(() => {
      const rows = this.stmt(`SELECT * FROM background_runs WHERE ${LIVE_SQL} AND lease_expires_at < ?`).all(now) as RunRow[];
      for (const row of rows) {
        const run = toRun(row);
        const { response, event } = expiryEvent(run, fail);
        this.stmt("UPDATE background_runs SET status = 'failed', response = ?, last_sequence = ? WHERE id = ?").run(JSON.stringify(response), event.sequence, run.id);
        this.stmt('INSERT INTO background_events (response_id, sequence, event) VALUES (?, ?, ?)').run(run.id, event.sequence, JSON.stringify(event.event));
      }
      return rows.map((row) => row.id);
    });
    for (const id of expired) this.emitter.emit(BACKGROUND_CHANNEL, id, true);
    return expired;
  }

  watch(listener: (id: string, ended: boolean) => void): () => void {
    this.emitter.on(BACKGROUND_CHANNEL, listener);
    return () => this.emitter.off(BACKGROUND_CHANNEL, listener);
  }

  private write<T>(fn: () => T): T {
    return this.open().write(fn);
  }

  private open(): SqliteConnection {
    if (!this.connection) throw new Error('SqliteBackgroundStore used before init() or after close().');
    return this.connection;
  }

  private stmt(sql: string): Database.Statement {
    return this.open().stmt(sql);
  }
}
