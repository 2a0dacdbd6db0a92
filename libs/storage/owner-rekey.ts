/**
 * Rewrites stored owner ids from the unsalted SHA-256 of an API key to its
 * keyed id (`OwnerIds`). Only the gateway can map one to the other, and only
 * for keys it is configured with: it runs at every boot for every configured
 * key, so a key configured again later has its rows rewritten then. Rows of a
 * key no longer configured keep their old id; no configured key reaches them,
 * as none did before.
 *
 * Idempotent and safe to run from several workers or replicas at once: each
 * table is rewritten in one transaction, an id already rewritten matches
 * nothing, and usage minutes of both ids (an old replica still writing during
 * a rollout) are summed into the new id's row rather than colliding.
 */
export interface OwnerRekey {
  from: string;
  to: string;
}

/** Tables whose `owner` column holds an owner id, in every store this gateway keeps. */
export const OWNER_TABLES = ['responses', 'conversations', 'background_runs', 'code_containers', 'run_timelines', 'fs_files', 'fs_vector_stores', 'sy_batches'] as const;

/** The key of a usage minute; every other column is a sum, whichever the store's migrations have added by now. */
const USAGE_KEY = new Set(['minute', 'owner', 'model', 'surface']);

/** What the two dialects need: a parameterised statement, a column check, a transaction. */
export interface RekeyDatabase {
  /** `?` placeholders; the PostgreSQL side numbers them. */
  run(sql: string, params: unknown[]): Promise<number>;
  hasOwnerColumn(table: string): Promise<boolean>;
  /** The table's column names. */
  columns(table: string): Promise<string[]>;
  transaction(work: () => Promise<void>): Promise<void>;
}

/** Rows rewritten per table (tables absent from this database are left out). */
export async function rekeyOwners(db: RekeyDatabase, pairs: readonly OwnerRekey[]): Promise<Record<string, number>> {
  const changed: Record<string, number> = {};
  const moves = pairs.filter((p) => p.from !== p.to);
  if (moves.length === 0) return changed;
  for (const table of OWNER_TABLES) {
    if (!(await db.hasOwnerColumn(table))) continue;
    let count = 0;
    await db.transaction(async () => {
      for (const { from, to } of moves) count += await db.run(`UPDATE ${table} SET owner = ? WHERE owner = ?`, [to, from]);
    });
    if (count > 0) changed[table] = count;
  }
  if (await db.hasOwnerColumn('usage_minutes')) {
    let count = 0;
    const summed = (await db.columns('usage_minutes')).filter((c) => !USAGE_KEY.has(c));
    const sums = summed.join(', ');
    const add = summed.map((c) => `${c} = usage_minutes.${c} + excluded.${c}`).join(', ');
    await db.transaction(async () => {
      for (const { from, to } of moves) {
        count += await db.run(
          `INSERT INTO usage_minutes (minute, owner, model, surface, ${sums})
             SELECT minute, ?, model, surface, ${sums} FROM usage_minutes WHERE owner = ?
           ON CONFLICT (minute, owner, model, surface) DO UPDATE SET ${add}`,
          [to, from],
        );
        await db.run('DELETE FROM usage_minutes WHERE owner = ?', [from]);
      }
    });
    if (count > 0) changed.usage_minutes = count;
  }
  return changed;
}

/** One SQLite file; a missing file has nothing to rewrite. */
export async function rekeySqliteOwners(path: string, pairs: readonly OwnerRekey[]): Promise<Record<string, number>> {
  const { existsSync } = await import('node:fs');
  if (path === ':memory:' || !existsSync(path)) return {};
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(path);
  try {
    // Another worker may hold the write lock for the same rewrite: wait for it rather than fail.
    db.pragma('busy_timeout = 10000');
    return await rekeyOwners(
      {
        run: async (sql, params) => db.prepare(sql).run(...params).changes,
        hasOwnerColumn: async (table) => (db.prepare(`SELECT 1 FROM pragma_table_info(?) WHERE name = 'owner'`).get(table) ?? null) !== null,
        columns: async (table) => (db.prepare('SELECT name FROM pragma_table_info(?)').all(table) as Array<{ name: string }>).map((c) => c.name),
        transaction: async (work) => {
          db.exec('BEGIN IMMEDIATE');
          try {
            await work();
            db.exec('COMMIT');
          } catch (err) {
            db.exec('ROLLBACK');
            throw err;
          }
        },
      },
      pairs,
    );
  } finally {
    db.close();
  }
}

/** The PostgreSQL database (the connection string's `search_path` names the schema, as for the stores). */
export async function rekeyPostgresOwners(connectionString: string, pairs: readonly OwnerRekey[], connectTimeoutMs = 10_000): Promise<Record<string, number>> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: connectTimeoutMs });
  await client.connect();
  try {
    const numbered = (sql: string) => {
      let n = 0;
      return sql.replace(/\?/g, () => `$${++n}`);
    };
    return await rekeyOwners(
      {
        run: async (sql, params) => (await client.query(numbered(sql), params)).rowCount ?? 0,
        hasOwnerColumn: async (table) =>
          (await client.query(`SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 AND column_name = 'owner'`, [table])).rowCount! >
          0,
        columns: async (table) =>
          (
            await client.query<{ column_name: string }>('SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1', [table])
          ).rows.map((c) => c.column_name),
        transaction: async (work) => {
          await client.query('BEGIN');
          try {
            // Replicas booting together take turns: a second rewrite then reads the first's result, and usage is never summed twice.
            await client.query(`SELECT pg_advisory_xact_lock(hashtext(current_schema() || ':switchyard-owner-rekey'))`);
            await work();
            await client.query('COMMIT');
          } catch (err) {
            await client.query('ROLLBACK').catch(() => undefined);
            throw err;
          }
        },
      },
      pairs,
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Every store of the configured driver: on SQLite the state file and, beside
 * it, the file-search and batch files (their default places); on PostgreSQL
 * the one database. The memory driver keeps nothing across restarts.
 */
export async function rekeyStoredOwners(
  storage: { driver: string; sqlitePath: string; postgresUrl?: string; connectTimeoutMs?: number },
  pairs: readonly OwnerRekey[],
): Promise<Record<string, number>> {
  if (pairs.length === 0) return {};
  if (storage.driver === 'postgres' && storage.postgresUrl) return rekeyPostgresOwners(storage.postgresUrl, pairs, storage.connectTimeoutMs);
  if (storage.driver !== 'sqlite') return {};
  const { dirname, join } = await import('node:path');
  const total: Record<string, number> = {};
  for (const path of [storage.sqlitePath, join(dirname(storage.sqlitePath), 'files.sqlite'), join(dirname(storage.sqlitePath), 'batches.sqlite')]) {
    for (const [table, n] of Object.entries(await rekeySqliteOwners(path, pairs))) total[table] = (total[table] ?? 0) + n;
  }
  return total;
}
