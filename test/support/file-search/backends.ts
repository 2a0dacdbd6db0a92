import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

const PG_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A storage config of the test's own (a temporary directory, or a fresh PostgreSQL schema) and its clean-up. */
export interface Backend {
  name: 'sqlite' | 'postgres';
  storage: Record<string, unknown>;
  /** Runs SQL against the backend's file-search tables (PostgreSQL only; SQLite tests read through the API). */
  query?: (sql: string) => Promise<any[]>;
  drop(): Promise<void>;
}

export async function sqliteBackend(): Promise<Backend> {
  const dir = mkdtempSync(join(tmpdir(), 'sy-fs-'));
  return { name: 'sqlite', storage: { driver: 'sqlite', sqlitePath: join(dir, 'state.sqlite') }, drop: async () => rmSync(dir, { recursive: true, force: true }) };
}

export async function postgresBackend(): Promise<Backend> {
  const schema = `sy_fs_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
  } catch (e) {
    await admin.end();
    throw new Error(`PostgreSQL is not reachable at ${PG_URL} (set DATABASE_URL): ${(e as Error).message}`, { cause: e });
  }
  return {
    name: 'postgres',
    storage: { driver: 'postgres', postgresUrl: `${PG_URL}?options=-c%20search_path%3D${schema}` },
    query: async (sql) => (await admin.query(sql.replaceAll('{schema}', schema))).rows,
    drop: async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    },
  };
}
