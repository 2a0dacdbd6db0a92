import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { PostgresDatabase, SqliteDatabase } from '#storage/sql/sql-database.js';
import type { BatchRow } from './batch-rows.js';
import { BatchStore } from './batch.store.js';

const PG_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

function batch(id: string, total: number, seq: number, owner = 'o'): BatchRow {
  return {
    id,
    owner,
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
    expect((await store.results('b4')).map((r) => [r.customId, r.status])).toEqual([
      ['c0', 'done'],
      ['c1', 'cancelled'],
      ['c2', 'cancelled'],
    ]);
  });

  it('finalizes a cancelled batch with every line once: done ones with their results, the rest cancelled', async () => {
    await store.insert(batch('b5', 4, 5), lines(4));
    const now = Date.now();
    const claimed = await store.claim('A', now, 10_000, 2, 'b5');
    expect(claimed.map((r) => r.line)).toEqual([1, 2]);
    expect(await store.complete('A', claimed[0], true, '{"n":1}')).toBe(true);
    await store.cancel('b5', 'o', now);
    // The run still in flight at the cancel is refused its result: its line stays cancelled.
    expect(await store.complete('A', claimed[1], true, '{"n":2}')).toBe(false);
    expect((await store.results('b5')).map((r) => [r.line, r.status])).toEqual([
      [1, 'done'],
      [2, 'cancelled'],
      [3, 'cancelled'],
      [4, 'cancelled'],
    ]);
  });

  it('lists running batches oldest first with their owners, and claims within one batch', async () => {
    await store.insert(batch('b6', 3, 6, 'p'), lines(3));
    const running = (await store.runningBatches()).filter((b) => b.id === 'b6' || b.id === 'b7');
    expect(running).toEqual([{ id: 'b6', owner: 'p' }]);
    const claimed = await store.claim('A', Date.now(), 10_000, 10, 'b6');
    expect(claimed.map((r) => [r.batchId, r.line, r.owner])).toEqual([
      ['b6', 1, 'p'],
      ['b6', 2, 'p'],
      ['b6', 3, 'p'],
    ]);
  });
});

/** A runner as the gateway's: claims a few lines, completes them together, again, until nothing is left to claim. */
async function runner(store: BatchStore, node: string, batchId: string, leaseMs: number, stop: { done: boolean; recorded?: number; onRecorded?: () => void }): Promise<number> {
  let recorded = 0;
  while (!stop.done) {
    const claimed = await store.claim(node, Date.now(), leaseMs, 8, batchId);
    if (claimed.length === 0) {
      const b = await store.get(batchId, 'o');
      if (b?.status !== 'in_progress') break;
      await new Promise((r) => setTimeout(r, 5));
      continue;
    }
    const results = await Promise.all(claimed.map((r) => store.complete(node, r, r.line % 7 !== 0, JSON.stringify({ line: r.line }))));
    const n = results.filter(Boolean).length;
    recorded += n;
    stop.recorded = (stop.recorded ?? 0) + n;
    stop.onRecorded?.();
  }
  return recorded;
}

/** Counts the lines a finalized batch would write against its requests: each line once, in one of the two files. */
async function expectEachLineOnce(store: BatchStore, batchId: string, total: number): Promise<Map<string, number>> {
  const results = await store.results(batchId);
  expect(results.map((r) => r.line)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
  const byStatus = new Map<string, number>();
  for (const r of results) byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
  const row = await store.get(batchId, 'o');
  // The batch's counters agree with the rows: nothing counted twice, nothing recorded uncounted.
  expect((row?.completed ?? 0) + (row?.failed ?? 0)).toBe(byStatus.get('done') ?? 0);
  expect(results.filter((r) => r.status === 'done' && r.ok).length).toBe(row?.completed);
  return byStatus;
}

/**
 * Cancel and crash recovery with runners active, on a 50,000-line batch:
 * the cancel takes the batch row and then its request rows, as `complete`
 * does, so neither side is ever chosen as a deadlock victim.
 */
describe.each(['sqlite', 'postgres'] as const)('a 50,000-line batch under load on %s', (kind) => {
  let store: BatchStore;
  let admin: pg.Pool | undefined;
  let schema = '';
  const TOTAL = 50_000;

  beforeAll(async () => {
    if (kind === 'sqlite') store = new BatchStore(new SqliteDatabase(':memory:'));
    else {
      schema = `sy_batch_load_${randomBytes(4).toString('hex')}`;
      admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
      await admin.query(`CREATE SCHEMA ${schema}`);
      store = new BatchStore(
        new PostgresDatabase({ connectionString: `${PG_URL}?options=-c%20search_path%3D${schema}`, max: 12, connectTimeoutMs: 10_000, queryTimeoutMs: 20_000 }),
      );
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

  it('cancels while four runners complete lines: no deadlock, no error, every line recorded once', async () => {
    await store.insert(batch('load-cancel', TOTAL, 100), lines(TOTAL));
    // Cancelled from inside the runners' loop once 200 lines are recorded, so the cancel meets completions in flight on either store.
    let cancelling: Promise<unknown[]> | undefined;
    const stop: { done: boolean; recorded?: number; onRecorded?: () => void } = { done: false };
    stop.onRecorded = () => {
      if ((stop.recorded ?? 0) >= 200 && !cancelling) cancelling = Promise.all([store.cancel('load-cancel', 'o', 1), store.cancel('load-cancel', 'o', 1)]);
    };
    const runners = ['A', 'B', 'C', 'D'].map((node) => runner(store, node, 'load-cancel', 60_000, stop));
    await Promise.all(runners);
    const cancels = (await cancelling) as Array<{ status: string } | undefined>;
    expect(cancels.map((c) => c?.status)).toEqual(['cancelling', 'cancelling']);
    const recorded = (await Promise.all(runners)).reduce((a, b) => a + b, 0);
    stop.done = true;
    const counts = await expectEachLineOnce(store, 'load-cancel', TOTAL);
    expect(counts.get('done')).toBe(recorded);
    expect(recorded).toBeGreaterThanOrEqual(200);
    expect(counts.get('cancelled')).toBe(TOTAL - recorded);
    expect(await store.dueForFinalizing(Date.now())).toContain('load-cancel');
  }, 120_000);

  it('a runner that stops mid-batch: its lines are taken up after the lease, its late results refused, each line recorded once', async () => {
    const total = 2_000;
    await store.insert(batch('load-crash', total, 200), lines(total));
    // The "crashed" process: it claimed lines and never finishes them in time.
    const lost = await store.claim('dead', Date.now(), 300, 50, 'load-crash');
    expect(lost).toHaveLength(50);
    const stop = { done: false };
    const survivors = ['A', 'B'].map((node) => runner(store, node, 'load-crash', 60_000, stop));
    // The lines the dead process held are done by the survivors once its lease lapses.
    for (const deadline = Date.now() + 90_000; Date.now() < deadline;) {
      const b = await store.get('load-crash', 'o');
      if ((b?.completed ?? 0) + (b?.failed ?? 0) === total) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    stop.done = true;
    const recorded = (await Promise.all(survivors)).reduce((a, b) => a + b, 0);
    // Its results, arriving after the survivors recorded those lines, change nothing.
    expect(await Promise.all(lost.map((r) => store.complete('dead', r, true, '{"late":true}')))).toEqual(lost.map(() => false));
    const counts = await expectEachLineOnce(store, 'load-crash', total);
    expect(counts.get('done')).toBe(total);
    expect(recorded).toBe(total);
    expect((await store.results('load-crash')).some((r) => r.result.includes('late'))).toBe(false);
  }, 150_000);
});
