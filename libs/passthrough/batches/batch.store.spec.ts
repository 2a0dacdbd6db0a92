import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { PostgresDatabase, SqliteDatabase } from '#storage/sql/sql-database.js';
import type { BatchRow } from './batch-rows.js';
import { BatchStore } from './batch.store.js';

const PG_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

function batch(id: string, total: number, seq: number): BatchRow {
  return {
    id,
    owner: 'o',
    seq,
    status: 'in_progress',
    endpoint: '/v1/embeddings',
    total,
    completed: 0,
    failed: 0,
    expiresAt: Date.now() + 86_400_000,
    doc: { input_file_id: 'file-x', completion_window: '24h', created_at: 1, metadata: null },
  };
}

const lines = (n: number) => Array.from({ length: n }, (_, i) => ({ line: i + 1, customId: `c${i}`, body: JSON.stringify({ i }) }));

/** The claims batches run on, against real SQLite and PostgreSQL. */
describe.each(['sqlite', 'postgres'] as const)('BatchStore on %s', (kind) => {
  let store: BatchStore;
  let admin: pg.Pool | undefined;
  let schema = '';

  beforeAll(async () => {
    if (kind === 'sqlite') store = new BatchStore(new SqliteDatabase(':memory:'));
    else {
      schema = `sy_batch_${randomBytes(4).toString('hex')}`;
      admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
      await admin.query(`CREATE SCHEMA ${schema}`);
      store = new BatchStore(new PostgresDatabase({ connectionString: `${PG_URL}?options=-c%20search_path%3D${schema}`, connectTimeoutMs: 3000, queryTimeoutMs: 5000 }));
    }
    await store.init();
  });
  afterAll(async () => {
    await store.close();
    if (admin) {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    }
  });

  it('hands each pending request to one claimant, in line order, oldest batch first', async () => {
    await store.insert(batch('b1', 5, 1), lines(5));
    await store.insert(batch('b2', 2, 2), lines(2));
    const now = Date.now();
    const [a, b, c] = await Promise.all([store.claim('A', now, 10_000, 3), store.claim('B', now, 10_000, 3), store.claim('C', now, 10_000, 3)]);
    const all = [...a, ...b, ...c].map((r) => `${r.batchId}:${r.line}`);
    expect(all.sort()).toEqual(['b1:1', 'b1:2', 'b1:3', 'b1:4', 'b1:5', 'b2:1', 'b2:2']);
    expect(new Set(all).size).toBe(7);
    expect(await store.claim('D', now, 10_000, 3)).toEqual([]);
  });

  it('re-offers a request whose claim lapsed, and refuses the old claimant its result', async () => {
    await store.insert(batch('b3', 1, 3), lines(1));
    const now = Date.now();
    const [first] = (await store.claim('A', now, 100, 10)).filter((r) => r.batchId === 'b3');
    expect(first).toMatchObject({ line: 1, attempts: 1, endpoint: '/v1/embeddings', owner: 'o' });
    expect((await store.claim('B', now + 50, 100, 10)).filter((r) => r.batchId === 'b3')).toEqual([]);
    const [again] = (await store.claim('B', now + 200, 100, 10)).filter((r) => r.batchId === 'b3');
    expect(again).toMatchObject({ line: 1, attempts: 2 });
    expect(await store.complete('A', first, true, '{}')).toBe(false);
    expect(await store.complete('B', again, true, '{"ok":1}')).toBe(true);
    expect((await store.get('b3', 'o'))?.completed).toBe(1);
    expect(await store.complete('B', again, true, '{"ok":1}')).toBe(false);
    expect((await store.get('b3', 'o'))?.completed).toBe(1);
  });

  it('cancelling drops pending requests, tells their claimant at renewal, and lets the batch finalize once', async () => {
    await store.insert(batch('b4', 3, 4), lines(3));
    const now = Date.now();
    const claimed = (await store.claim('A', now, 10_000, 10)).filter((r) => r.batchId === 'b4');
    expect(claimed).toHaveLength(3);
    expect(await store.complete('A', claimed[0], true, '{"n":0}')).toBe(true);
    expect((await store.cancel('b4', 'other', now))?.status).toBeUndefined();
    expect((await store.cancel('b4', 'o', now))?.status).toBe('cancelling');
    const lost = await store.renew('A', claimed.slice(1), now + 10_000);
    expect(lost.map((r) => r.line)).toEqual([2, 3]);
    expect(await store.dueForFinalizing(now)).toContain('b4');
    const [x, y] = await Promise.all([store.claimFinalizing('b4', 'A', now, 10_000), store.claimFinalizing('b4', 'B', now, 10_000)]);
    expect([x, y].filter(Boolean)).toHaveLength(1);
    expect((await store.results('b4')).map((r) => r.customId)).toEqual(['c0']);
  });
});
