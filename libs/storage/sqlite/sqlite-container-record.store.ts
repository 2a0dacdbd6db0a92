import type { CatalogPage, CatalogQuery } from '#tool-sdk/ports/catalog.js';
import { catalogPage, catalogSql, parseCatalogQuery, unknownCursor, type CatalogRow } from '../shared/list-window.util.js';
import type { ContainerRecord, ContainerRecordPatch, ContainerRecordStore, GatewayNodeRecord } from '#tool-sdk/ports/container-records.js';
import { SqliteConnection, type SqliteConnectionOptions } from './sqlite-connection.js';

interface Row {
  id: string;
  name: string;
  owner: string | null;
  created_at: number;
  last_active_at: number;
  idle_expiry_ms: number;
  memory_limit: string | null;
  calls: number;
  home: string;
  files: string;
  copied_file_ids: string;
  notice: string | null;
}

function toRecord(row: Row): ContainerRecord {
  return {
    id: row.id,
    name: row.name,
    owner: row.owner,
    createdAt: row.created_at,
    lastActiveAt: row.last_active_at,
    idleExpiryMs: row.idle_expiry_ms,
    memoryLimit: row.memory_limit,
    calls: row.calls,
    home: row.home,
    files: JSON.parse(row.files),
    copiedFileIds: JSON.parse(row.copied_file_ids),
    notice: row.notice,
  };
}

/** `SET` clauses and values of a patch, in one order. */
export function patchColumns(patch: ContainerRecordPatch): { sets: string[]; values: unknown[] } {
  const columns: Array<[string, unknown]> = [
    ['last_active_at', patch.lastActiveAt],
    ['calls', patch.calls],
    ['files', patch.files === undefined ? undefined : JSON.stringify(patch.files)],
    ['copied_file_ids', patch.copiedFileIds === undefined ? undefined : JSON.stringify(patch.copiedFileIds)],
    ['notice', patch.notice],
  ];
  const given = columns.filter(([, value]) => value !== undefined);
  return { sets: given.map(([column]) => column), values: given.map(([, value]) => value) };
}

/**
 * Container records in the gateway's SQLite file, on a connection of their
 * own: what the workers of one host share.
 */
export class SqliteContainerRecordStore implements ContainerRecordStore {
  private connection: SqliteConnection | undefined;

  constructor(private readonly options: SqliteConnectionOptions) {}

  async init(): Promise<void> {
    if (this.connection) return;
    this.connection = SqliteConnection.open(this.options, (db) => {
      db.exec(`
        CREATE TABLE IF NOT EXISTS code_containers (
          id TEXT PRIMARY KEY, name TEXT NOT NULL, owner TEXT, created_at INTEGER NOT NULL, last_active_at INTEGER NOT NULL,
          idle_expiry_ms INTEGER NOT NULL, memory_limit TEXT, calls INTEGER NOT NULL, home TEXT NOT NULL,
          files TEXT NOT NULL, copied_file_ids TEXT NOT NULL, notice TEXT
        );
        CREATE INDEX IF NOT EXISTS code_containers_owner ON code_containers (owner, created_at);
        CREATE INDEX IF NOT EXISTS code_containers_catalog ON code_containers (created_at, id);
        CREATE TABLE IF NOT EXISTS gateway_nodes (id TEXT PRIMARY KEY, url TEXT NOT NULL, lease_expires_at INTEGER NOT NULL);`);
    });
  }

  async close(): Promise<void> {
    this.connection?.close();
    this.connection = undefined;
  }

  async insert(r: ContainerRecord): Promise<void> {
    this.open().write(() =>
      this.open()
        .stmt(
          `INSERT INTO code_containers (id, name, owner, created_at, last_active_at, idle_expiry_ms, memory_limit, calls, home, files, copied_file_ids, notice)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          r.id,
          r.name,
          r.owner,
          r.createdAt,
          r.lastActiveAt,
          r.idleExpiryMs,
          r.memoryLimit,
          r.calls,
          r.home,
          JSON.stringify(r.files),
          JSON.stringify(r.copiedFileIds),
          r.notice,
        ),
    );
  }

  async get(id: string): Promise<ContainerRecord | null> {
    const row = this.open().stmt('SELECT * FROM code_containers WHERE id = ?').get(id) as Row | undefined;
    return row ? toRecord(row) : null;
  }

  async list(owner: string | null): Promise<ContainerRecord[]> {
    return (this.open().stmt('SELECT * FROM code_containers WHERE owner IS ? ORDER BY created_at, id').all(owner) as Row[]).map(toRecord);
  }

  async catalog(query: CatalogQuery): Promise<CatalogPage> {
    const { limit, after } = parseCatalogQuery(query);
    // created_at is in milliseconds here; the catalog speaks seconds.
    const sql = catalogSql('code_containers', '(created_at / 1000)', () => '?', after !== undefined, 'created_at');
    const db = this.open();
    if (query.id !== undefined) return catalogPage(db.stmt(sql.byIdSql).all(query.id) as CatalogRow[], 1);
    if (after === undefined) return catalogPage(db.stmt(sql.pageSql).all(limit + 1) as CatalogRow[], limit);
    const cursor = db.stmt(sql.cursorSql).get(after) as { position: number } | undefined;
    if (!cursor) throw unknownCursor('after', after);
    return catalogPage(db.stmt(sql.pageSql).all(cursor.position, after, limit + 1) as CatalogRow[], limit);
  }

  async findByFile(fileId: string, owner: string | null): Promise<ContainerRecord | null> {
    const row = this.open()
      .stmt("SELECT * FROM code_containers WHERE owner IS ? AND EXISTS (SELECT 1 FROM json_each(files) WHERE json_extract(value, '$.id') = ?)")
      .get(owner, fileId) as Row | undefined;
    return row ? toRecord(row) : null;
  }

  async update(id: string, home: string, patch: ContainerRecordPatch): Promise<boolean> {
    const { sets, values } = patchColumns(patch);
    if (sets.length === 0) return (await this.get(id))?.home === home;
    const sql = `UPDATE code_containers SET ${sets.map((s) => `${s} = ?`).join(', ')} WHERE id = ? AND home = ?`;
    return this.open().write(
      () =>
        this.open()
          .stmt(sql)
          .run(...values, id, home).changes > 0,
    );
  }

  async rehome(id: string, from: string, to: string, patch: ContainerRecordPatch): Promise<boolean> {
    const { sets, values } = patchColumns(patch);
    const sql = `UPDATE code_containers SET ${['home', ...sets].map((s) => `${s} = ?`).join(', ')} WHERE id = ? AND home = ?`;
    return this.open().write(
      () =>
        this.open()
          .stmt(sql)
          .run(to, ...values, id, from).changes > 0,
    );
  }

  async remove(id: string): Promise<boolean> {
    return this.open().write(() => this.open().stmt('DELETE FROM code_containers WHERE id = ?').run(id).changes > 0);
  }

  async expired(now: number): Promise<ContainerRecord[]> {
    return (this.open().stmt('SELECT * FROM code_containers WHERE ? - last_active_at > idle_expiry_ms').all(now) as Row[]).map(toRecord);
  }

  async heartbeat(node: GatewayNodeRecord): Promise<void> {
    this.open().write(() =>
      this.open()
        .stmt(
          'INSERT INTO gateway_nodes (id, url, lease_expires_at) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET url = excluded.url, lease_expires_at = excluded.lease_expires_at',
        )
        .run(node.id, node.url, node.leaseExpiresAt),
    );
  }

  async node(id: string): Promise<GatewayNodeRecord | null> {
    const row = this.open().stmt('SELECT id, url, lease_expires_at FROM gateway_nodes WHERE id = ?').get(id) as { id: string; url: string; lease_expires_at: number } | undefined;
    return row ? { id: row.id, url: row.url, leaseExpiresAt: row.lease_expires_at } : null;
  }

  async leave(id: string): Promise<void> {
    this.open().write(() => this.open().stmt('DELETE FROM gateway_nodes WHERE id = ?').run(id));
  }

  private open(): SqliteConnection {
    if (!this.connection) throw new Error('SqliteContainerRecordStore used before init() or after close().');
    return this.connection;
  }
}
