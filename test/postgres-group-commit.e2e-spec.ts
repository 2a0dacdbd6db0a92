import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { killAfterSaves } from './support/process/save-loop.js';

const SAVE_LOOP = fileURLToPath(new URL('./support/process/postgres-save-loop.child.ts', import.meta.url));
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `sy_crash_${randomBytes(4).toString('hex')}`;

describe('PostgreSQL group commit and a crash', () => {
  let admin: pg.Pool;

  beforeAll(async () => {
    admin = new pg.Pool({ connectionString: url, max: 1 });
    try {
      await admin.query('SELECT 1');
    } catch (e) {
      throw new Error(`PostgreSQL is not reachable at ${url} (set DATABASE_URL): ${(e as Error).message}`, { cause: e });
    }
  });

  afterAll(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });

  it('loses no save that resolved when the saving process is killed with SIGKILL mid-batch', async () => {
    // Killed while waves are in flight: some saves sent, not yet answered.
    const { printed, signal } = await killAfterSaves(SAVE_LOOP, [url, schema], 400);
    expect(signal).toBe('SIGKILL');
    const { rows } = await admin.query<{ id: string; outputs: number }>(
      `SELECT r.id, (SELECT count(*)::int FROM ${schema}.response_output_items o WHERE o.response_id = r.id) AS outputs FROM ${schema}.responses r WHERE r.owner = 'crash'`,
    );
    const stored = new Map(rows.map((row) => [row.id, row.outputs]));
    const missing = printed.filter((id) => !stored.has(id));
    expect(missing).toEqual([]);
    // Whatever is stored is whole: a response never lands without its items.
    expect([...stored.values()].every((n) => n === 1)).toBe(true);
  });
});
