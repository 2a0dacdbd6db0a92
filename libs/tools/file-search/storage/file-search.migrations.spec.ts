import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrateFileSearch } from './file-search.migrations.js';
import { PostgresDatabase } from '#storage/sql/sql-database.js';
import { StoreUnavailableError } from '#tool-sdk/errors.js';

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A schema of its own for the enclosing describe block, dropped after it: the URL that connects in it. */
function ownSchema(prefix: string): string {
  const schema = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
  });
  afterAll(async () => {
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  });
  return `${url}${url.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
}

/**
 * The migration started while `holder`'s transaction holds a lock it needs: it is still waiting after
 * five of the store's query timeouts, and completes, to the last version, once the lock is released.
 */
async function migratesOnceReleased(db: PostgresDatabase, holder: pg.Client): Promise<void> {
  const order: string[] = [];
  const migrated = migrateFileSearch(db).then(
    () => order.push('migrated'),
    (e: Error) => order.push(`failed: ${e.message}`),
  );
  await new Promise((r) => setTimeout(r, 1_500));
  expect(order).toEqual([]);
  await holder.query('COMMIT');
  order.push('released');
  await migrated;
  expect(order).toEqual(['released', 'migrated']);
  const versions = await db.all<{ version: number }>('SELECT version FROM fs_schema_migrations ORDER BY version');
  expect(versions.map((v) => Number(v.version))).toEqual([1, 2, 3, 4, 5]);
}

/** Another session in the schema (the one holding a lock), and the store's database there with a short query timeout. */
async function holderAndStore(inSchema: string): Promise<{ holder: pg.Client; db: PostgresDatabase }> {
  const holder = new pg.Client({ connectionString: inSchema });
  await holder.connect();
  return { holder, db: new PostgresDatabase({ connectionString: inSchema, queryTimeoutMs: 300 }) };
}

/**
 * Replicas starting together: one applies the schema while the others wait
 * for its lock. The wait must not be one statement, which the pool's query
 * timeout would cut (a replica then failed its start-up with "Query read
 * timeout" whenever the other's migration took longer than that timeout).
 */
describe('file-search migrations on PostgreSQL, while another process holds the schema lock', () => {
  const inSchema = ownSchema('fs_lock');

  it('waits past the query timeout for the lock, then migrates once it is released', async () => {
    const { holder, db } = await holderAndStore(inSchema);
    try {
      // The same key the migration takes: another replica in the middle of applying the schema.
      await holder.query('BEGIN');
      await holder.query(`SELECT pg_advisory_xact_lock(hashtext('switchyard:fs_schema:' || current_schema()))`);
      await migratesOnceReleased(db, holder);
      // A second start finds nothing left to do.
      await migrateFileSearch(db);
      expect(await db.all('SELECT version FROM fs_schema_migrations')).toHaveLength(5);
    } finally {
      await holder.end();
      await db.close();
    }
  }, 20_000);
});

/**
 * A statement of the schema change waits for a table lock another session
 * holds (a long query, a busy server) past the query timeout that bounds a
 * request's queries; requests keep that bound.
 */
describe('file-search migrations on PostgreSQL, while another session holds a lock on their tables', () => {
  const inSchema = ownSchema('fs_tablelock');

  it('waits past the pool query timeout for the lock, while a request query is still cut at it', async () => {
    const { holder, db } = await holderAndStore(inSchema);
    try {
      // An older gateway's schema, then a session holding its version table.
      await migrateFileSearch(db, 4);
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE fs_schema_migrations IN ACCESS EXCLUSIVE MODE');
      await migratesOnceReleased(db, holder);
      // Outside the schema change the pool's bound holds: a request's slow query answers 503, it does not wait.
      await expect(db.all('SELECT pg_sleep(1)')).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      await holder.end();
      await db.close();
    }
  }, 20_000);
});
