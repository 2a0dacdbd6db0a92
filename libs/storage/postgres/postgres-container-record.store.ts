import pg from 'pg';
import type { CatalogPage, CatalogQuery } from '#tool-sdk/ports/catalog.js';
import { catalogPage, catalogSql, parseCatalogQuery, unknownCursor, type CatalogRow } from '../shared/list-window.util.js';
import type { ContainerFileRecord, ContainerRecord, ContainerRecordPatch, ContainerRecordStore, GatewayNodeRecord } from '#tool-sdk/ports/container-records.js';
import { patchColumns } from '../sqlite/sqlite-container-record.store.js';
import { inTransaction } from './pg-transaction.js';
import { translateUnavailable } from './pg-unavailable.js';
import { takeAdvisoryXactLock } from '#tool-sdk/ports/lock-wait.js';

type Int8 = string | number;

interface Row {
  id: string;
  name: string;
  owner: string | null;
  created_at: Int8;
  last_active_at: Int8;
  idle_expiry_ms: Int8;
  memory_limit: string | null;
  calls: Int8;
  home: string;
  files: ContainerFileRecord[];
  copied_file_ids: string[];
  notice: string | null;
}

function toRecord(row: Row): ContainerRecord {
  return {
    id: row.id,
    name: row.name,
    owner: row.owner,
    createdAt: Number(row.created_at),
    lastActiveAt: Number(row.last_active_at),
    idleExpiryMs: Number(row.idle_expiry_ms),
    memoryLimit: row.memory_limit,
    calls: Number(row.calls),
    home: row.home,
    files: row.files,
    copiedFileIds: row.copied_file_ids,
    notice: row.notice,
  };
}

/** Any constant works: it only has to be the same in every replica. */
const DDL_LOCK = 0x73796363;

export interface PostgresContainerRecordStoreOptions {
  connectionString: string;
  schema?: string;
  connectTimeoutMs?: number;
}

/** Container records shared by every replica on one database. */
export class PostgresContainerRecordStore implements ContainerRecordStore {
  private pool: pg.Pool | undefined;

  constructor(private readonly options: PostgresContainerRecordStoreOptions) {
    if (options.schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(options.schema)) {
      throw new Error(`Invalid PostgreSQL schema name '${options.schema}': use lower-case letters, digits and _.`);
    }
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
      await inTransaction(pool, async (client) => {
        await takeAdvisoryXactLock(async (sql) => (await client.query(sql, [DDL_LOCK])).rows, '$1', "the container records' schema");
        if (this.options.schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS ${this.options.schema}`);
        await client.query(`
          CREATE TABLE IF NOT EXISTS code_containers (
            id text PRIMARY KEY, name text NOT NULL, owner text, created_at bigint NOT NULL, last_active_at bigint NOT NULL,
            idle_expiry_ms bigint NOT NULL, memory_limit text, calls integer NOT NULL, home text NOT NULL,
            files jsonb NOT NULL, copied_file_ids jsonb NOT NULL, notice text
          );
          CREATE INDEX IF NOT EXISTS code_containers_owner ON code_containers (owner, created_at);
          CREATE INDEX IF NOT EXISTS code_containers_catalog ON code_containers (created_at, id);
          CREATE TABLE IF NOT EXISTS gateway_nodes (id text PRIMARY KEY, url text NOT NULL, lease_expires_at bigint NOT NULL);`);
      });
      this.pool = pool;
    } catch (e) {
      await pool.end();
      throw e;
    }
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    await pool?.end();
  }

  async insert(r: ContainerRecord): Promise<void> {
    await this.query(
      `INSERT INTO code_containers (id, name, owner, created_at, last_active_at, idle_expiry_ms, memory_limit, calls, home, files, copied_file_ids, notice)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11::jsonb, $12)`,
      [r.id, r.name, r.owner, r.createdAt, r.lastActiveAt, r.idleExpiryMs, r.memoryLimit, r.calls, r.home, JSON.stringify(r.files), JSON.stringify(r.copiedFileIds), r.notice],
    );
  }

  async get(id: string): Promise<ContainerRecord | null> {
    const { rows } = await this.query<Row>('SELECT * FROM code_containers WHERE id = $1', [id]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async list(owner: string | null): Promise<ContainerRecord[]> {
    const { rows } = await this.query<Row>('SELECT * FROM code_containers WHERE owner IS NOT DISTINCT FROM $1 ORDER BY created_at, id', [owner]);
    return rows.map(toRecord);
  }

  async catalog(query: CatalogQuery): Promise<CatalogPage> {
    const { limit, after } = parseCatalogQuery(query);
    const sql = catalogSql('code_containers', '(created_at / 1000)', (n) => `$${n}`, after !== undefined, 'created_at');
    if (query.id !== undefined) return catalogPage((await this.query<CatalogRow>(sql.byIdSql, [query.id])).rows, 1);
    if (after === undefined) return catalogPage((await this.query<CatalogRow>(sql.pageSql, [limit + 1])).rows, limit);
    const [cursor] = (await this.query<{ position: string }>(sql.cursorSql, [after])).rows;
    if (!cursor) throw unknownCursor('after', after);
    return catalogPage((await this.query<CatalogRow>(sql.pageSql, [cursor.position, after, limit + 1])).rows, limit);
  }

  async findByFile(fileId: string, owner: string | null): Promise<ContainerRecord | null> {
    const { rows } = await this.query<Row>('SELECT * FROM code_containers WHERE owner IS NOT DISTINCT FROM $1 AND files @> $2::jsonb LIMIT 1', [
      owner,
      JSON.stringify([{ id: fileId }]),
    ]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async update(id: string, home: string, patch: ContainerRecordPatch): Promise<boolean> {
    const { sets, values } = patchColumns(patch);
    if (sets.length === 0) return (await this.get(id))?.home === home;
    const assignments = sets.map((s, i) => `${s} = $${i + 1}${s === 'files' || s === 'copied_file_ids' ? '::jsonb' : ''}`);
    const n = values.length;
    const { rowCount } = await this.query(`UPDATE code_containers SET ${assignments.join(', ')} WHERE id = $${n + 1} AND home = $${n + 2}`, [...values, id, home]);
    return (rowCount ?? 0) > 0;
  }

  async rehome(id: string, from: string, to: string, patch: ContainerRecordPatch): Promise<boolean> {
    const { sets, values } = patchColumns(patch);
    const assignments = ['home', ...sets].map((s, i) => `${s} = $${i + 1}${s === 'files' || s === 'copied_file_ids' ? '::jsonb' : ''}`);
    const n = values.length + 1;
    const { rowCount } = await this.query(`UPDATE code_containers SET ${assignments.join(', ')} WHERE id = $${n + 1} AND home = $${n + 2}`, [to, ...values, id, from]);
    return (rowCount ?? 0) > 0;
  }

  async remove(id: string): Promise<boolean> {
    const { rowCount } = await this.query('DELETE FROM code_containers WHERE id = $1', [id]);
    return (rowCount ?? 0) > 0;
  }

  async expired(now: number): Promise<ContainerRecord[]> {
    const { rows } = await this.query<Row>('SELECT * FROM code_containers WHERE $1 - last_active_at > idle_expiry_ms', [now]);
    return rows.map(toRecord);
  }

  async heartbeat(node: GatewayNodeRecord): Promise<void> {
    await this.query(
      'INSERT INTO gateway_nodes (id, url, lease_expires_at) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET url = excluded.url, lease_expires_at = excluded.lease_expires_at',
      [node.id, node.url, node.leaseExpiresAt],
    );
  }

  async node(id: string): Promise<GatewayNodeRecord | null> {
    const { rows } = await this.query<{ id: string; url: string; lease_expires_at: Int8 }>('SELECT id, url, lease_expires_at FROM gateway_nodes WHERE id = $1', [id]);
    return rows[0] ? { id: rows[0].id, url: rows[0].url, leaseExpiresAt: Number(rows[0].lease_expires_at) } : null;
  }

  async leave(id: string): Promise<void> {
    await this.query('DELETE FROM gateway_nodes WHERE id = $1', [id]);
  }

  /** One query; an unreachable database is a 503 (`StoreUnavailableError`). */
  private async query<R extends pg.QueryResultRow = any>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    if (!this.pool) throw new Error('PostgresContainerRecordStore used before init() or after close().');
    try {
      return await this.pool.query<R>(text, values);
    } catch (e) {
      throw translateUnavailable(e);
    }
  }
}
