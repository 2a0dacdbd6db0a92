import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { UsageEntry, UsageStore } from '../usage-store.interface.js';
import { MemoryUsageStore } from './memory-usage.store.js';
import { PostgresUsageStore } from './postgres-usage.store.js';
import { SqliteUsageStore } from './sqlite-usage.store.js';

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `sy_usage_${randomBytes(4).toString('hex')}`;
const dir = mkdtempSync(join(tmpdir(), 'sy-usage-'));
const DAY = 86_400_000;
const day0 = 1_800_000_000_000 - (1_800_000_000_000 % DAY);

const entry = (over: Partial<UsageEntry>): UsageEntry => ({
  owner: 'a',
  model: 'm',
  surface: 'responses',
  at: day0 + 1_000,
  inputTokens: 10,
  cachedInputTokens: 2,
  outputTokens: 5,
  reasoningTokens: 1,
  ...over,
});

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  const admin = new pg.Pool({ connectionString: url, max: 1 });
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
});

const drivers: Array<[string, () => UsageStore]> = [
  ['memory', () => new MemoryUsageStore()],
  ['sqlite', () => new SqliteUsageStore({ path: join(dir, 'state.sqlite') })],
  ['postgres', () => new PostgresUsageStore({ connectionString: url, schema })],
];

describe.each(drivers)('usage store (%s)', (driver, make) => {
  let store: UsageStore;
  beforeAll(async () => {
    store = make();
    await store.init();
    await store.record(entry({}));
    await store.record(entry({ at: day0 + 30_000 })); // same minute: one row, two requests
    await store.record(entry({ at: day0 + 120_000, model: 'big', outputTokens: 100 }));
    await store.record(entry({ owner: null, at: day0 + 60_000, inputTokens: 7 }));
    await store.record(entry({ owner: 'b', at: day0 + DAY + 5, surface: 'messages', inputTokens: 3 }));
  });
  afterAll(() => store.close());

  it('sums runs per minute and answers one owner only when asked', async () => {
    const rows = await store.query({ from: day0, to: day0 + DAY, owner: 'a', bucketMs: 60_000, limit: 100 });
    expect(rows).toEqual([
      { bucketStart: day0, owner: 'a', model: 'm', surface: 'responses', requests: 2, inputTokens: 20, cachedInputTokens: 4, outputTokens: 10, reasoningTokens: 2 },
      { bucketStart: day0 + 120_000, owner: 'a', model: 'big', surface: 'responses', requests: 1, inputTokens: 10, cachedInputTokens: 2, outputTokens: 100, reasoningTokens: 1 },
    ]);
  });

  it('buckets by day across owners, the anonymous owner included, and honours the window end', async () => {
    const rows = await store.query({ from: day0, to: day0 + 2 * DAY, bucketMs: DAY, limit: 100 });
    expect(rows.map((r) => [r.bucketStart - day0, r.owner, r.model, r.surface, r.requests, r.inputTokens])).toEqual([
      [0, null, 'm', 'responses', 1, 7],
      [0, 'a', 'big', 'responses', 1, 10],
      [0, 'a', 'm', 'responses', 2, 20],
      [DAY, 'b', 'm', 'messages', 1, 3],
    ]);
    expect(await store.query({ from: day0, to: day0 + DAY, owner: null, bucketMs: DAY, limit: 100 })).toHaveLength(1);
    expect(await store.query({ from: day0, to: day0 + 2 * DAY, bucketMs: DAY, limit: 2 })).toHaveLength(2);
  });

  if (driver !== 'memory') {
    it('survives a restart and is what a second connection (another process, another replica) sees', async () => {
      const other = make();
      await other.init(); // migrations already applied: a no-op
      await other.record(entry({ owner: 'c' }));
      const rows = await store.query({ from: day0, to: day0 + DAY, owner: 'c', bucketMs: DAY, limit: 10 });
      expect(rows).toMatchObject([{ owner: 'c', requests: 1, inputTokens: 10 }]);
      await other.close();
    });
  }
});
