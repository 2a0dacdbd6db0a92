import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { hasTimelines, RUN_TIMELINE_RETENTION_MS, type RunTimeline, type RunTimelineStore, type UsageEntry, type UsageStore } from '../usage-store.interface.js';
import { MemoryUsageStore } from './memory-usage.store.js';
import { PostgresUsageStore } from './postgres-usage.store.js';
import { SqliteUsageStore } from './sqlite-usage.store.js';
import type { UsageBatchOptions } from './usage-batch.js';

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

/** A window no test waits out: what is written under it was written by a read, a close or the row bound. */
const LONG_WINDOW = { windowMs: 600_000 };

const drivers: Array<[string, (batch?: UsageBatchOptions, log?: WriteLog) => UsageStore]> = [
  ['memory', () => new MemoryUsageStore()],
  ['sqlite', (batch, log) => new SqliteUsageStore({ path: join(dir, 'state.sqlite'), trace: log?.trace }, batch)],
  ['postgres', (batch) => new PostgresUsageStore({ connectionString: url, schema }, batch)],
];

/** The transactions that wrote usage rows, as the database saw them. */
interface WriteLog {
  /** SQLite: the statements of the store's own connection, given to it when it is made. */
  trace?: (sql: string) => void;
  count(): Promise<number>;
  stop(): Promise<void>;
}

/** SQLite: a transaction counts when its statements, between BEGIN and COMMIT, include a usage upsert. */
function sqliteWriteLog(): WriteLog {
  let wrote: boolean | undefined;
  let count = 0;
  const trace = (sql: string): void => {
    if (sql.startsWith('BEGIN')) wrote = false;
    else if (wrote !== undefined && sql.startsWith('INSERT INTO usage_minutes')) wrote = true;
    else if (sql.startsWith('COMMIT') && wrote !== undefined) {
      count += wrote ? 1 : 0;
      wrote = undefined;
    }
  };
  return { trace, count: async () => count, stop: async () => undefined };
}

/** PostgreSQL: a statement trigger on the usage table logs the writing transaction's id; distinct ids are transactions. */
async function postgresWriteLog(): Promise<WriteLog> {
  const admin = new pg.Pool({ connectionString: url, max: 1 });
  await admin.query(`CREATE TABLE IF NOT EXISTS ${schema}.usage_write_log (tx bigint NOT NULL)`);
  await admin.query(`TRUNCATE ${schema}.usage_write_log`);
  await admin.query(
    `CREATE OR REPLACE FUNCTION ${schema}.log_usage_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO ${schema}.usage_write_log VALUES (txid_current()); RETURN NULL; END $$`,
  );
  await admin.query(`CREATE TRIGGER usage_write_log AFTER INSERT OR UPDATE ON ${schema}.usage_minutes FOR EACH STATEMENT EXECUTE FUNCTION ${schema}.log_usage_write()`);
  return {
    count: async () => Number((await admin.query<{ n: string }>(`SELECT count(DISTINCT tx) AS n FROM ${schema}.usage_write_log`)).rows[0].n),
    stop: async () => {
      await admin.query(`DROP TRIGGER IF EXISTS usage_write_log ON ${schema}.usage_minutes`);
      await admin.end();
    },
  };
}

const writeLog = (driver: string): Promise<WriteLog> => (driver === 'sqlite' ? Promise.resolve(sqliteWriteLog()) : postgresWriteLog());

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
      {
        bucketStart: day0,
        owner: 'a',
        model: 'm',
        surface: 'responses',
        requests: 2,
        inputTokens: 20,
        cachedInputTokens: 4,
        outputTokens: 10,
        reasoningTokens: 2,
        runs: 2,
        failedRuns: 0,
        durationMs: 0,
      },
      {
        bucketStart: day0 + 120_000,
        owner: 'a',
        model: 'big',
        surface: 'responses',
        requests: 1,
        inputTokens: 10,
        cachedInputTokens: 2,
        outputTokens: 100,
        reasoningTokens: 1,
        runs: 1,
        failedRuns: 0,
        durationMs: 0,
      },
    ]);
  });

  it('counts every run, failed ones and their durations, and as a model request only a run that used tokens', async () => {
    // A day no other test reads.
    const minute = day0 + 5 * DAY;
    const none = { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 };
    await store.record(entry({ owner: 'runs', at: minute, durationMs: 120 }));
    await store.record(entry({ owner: 'runs', at: minute + 1, durationMs: 80.4, failed: true }));
    await store.record(entry({ owner: 'runs', at: minute + 2, ...none, durationMs: 5, failed: true }));
    const [row] = await store.query({ from: minute, to: minute + 60_000, owner: 'runs', bucketMs: 60_000, limit: 10 });
    expect(row).toMatchObject({ requests: 2, runs: 3, failedRuns: 2, durationMs: 205, inputTokens: 20 });
  });

  it("keeps a run's timeline by response id, the newest write winning", async () => {
    const timelines = store as UsageStore & RunTimelineStore;
    expect(hasTimelines(timelines)).toBe(true);
    const timeline = (status: string): RunTimeline => ({
      responseId: `resp_${driver}_1`,
      owner: 'a',
      model: 'm',
      surface: 'responses',
      startedAt: Date.now(),
      durationMs: 42.5,
      status,
      rounds: [{ round: 1, startMs: 0, durationMs: 20, upstreamMs: 18 }],
      tools: [{ kind: 'call', toolType: 'mcp', name: 'echo', serverLabel: 'demo', round: 1, startMs: 21, durationMs: 3, outcome: 'failed', error: 'tool_failed' }],
    });
    await timelines.recordTimeline(timeline('in_progress'));
    await timelines.recordTimeline(timeline('completed'));
    expect(await timelines.timeline(`resp_${driver}_1`)).toEqual({ ...timeline('completed'), startedAt: expect.any(Number) });
    expect(await timelines.timeline('resp_unknown')).toBeNull();
    // Older than the retention: gone with the next write.
    await timelines.recordTimeline({ ...timeline('completed'), responseId: `resp_${driver}_old`, startedAt: Date.now() - RUN_TIMELINE_RETENTION_MS - 60_000 });
    await timelines.recordTimeline({ ...timeline('completed'), responseId: `resp_${driver}_2` });
    expect(await timelines.timeline(`resp_${driver}_old`)).toBeNull();
    expect(await timelines.timeline(`resp_${driver}_2`)).not.toBeNull();
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

    it('writes runs that end together as one sum per row, for thousands of distinct rows recorded at once', async () => {
      const minute = day0 + 3 * 60_000;
      // All recorded in one tick: batches of 256 distinct rows (the bound), 2 500 distinct rows and one row hit 300 times.
      const writes = [
        ...Array.from({ length: 2_500 }, (_, i) => store.record(entry({ owner: 'batch', at: minute, model: `m${i}`, inputTokens: i }))),
        ...Array.from({ length: 300 }, () => store.record(entry({ owner: 'batch', at: minute + 1_000, model: 'hot', outputTokens: 2 }))),
      ];
      await Promise.all(writes);
      const rows = await store.query({ from: minute, to: minute + 60_000, owner: 'batch', bucketMs: 60_000, limit: 10_000 });
      expect(rows).toHaveLength(2_501);
      expect(rows.find((r) => r.model === 'hot')).toMatchObject({ requests: 300, outputTokens: 600, inputTokens: 3_000 });
      expect(rows.filter((r) => r.model !== 'hot').reduce((n, r) => n + r.inputTokens, 0)).toBe((2_499 * 2_500) / 2);
      expect(rows.every((r) => r.model === 'hot' || r.requests === 1)).toBe(true);
    });

    it('writes what is still pending when it closes, at once rather than after the window', async () => {
      const other = make(LONG_WINDOW);
      await other.init();
      const write = other.record(entry({ owner: 'closing', at: day0 + 4 * 60_000 }));
      const closing = performance.now();
      await other.close();
      expect(performance.now() - closing).toBeLessThan(5_000);
      await write;
      expect(await store.query({ from: day0, to: day0 + DAY, owner: 'closing', bucketMs: DAY, limit: 10 })).toMatchObject([{ requests: 1 }]);
      // Closed: a late record is refused by its promise, not thrown at the run that ended.
      let late: Promise<void> | undefined;
      expect(() => (late = other.record(entry({ owner: 'closing' })))).not.toThrow();
      await expect(late).rejects.toThrow(/after close/);
    });

    it('writes the entries of one window, from many ticks, in one transaction', async () => {
      const writes = await writeLog(driver);
      const windowed = make({ windowMs: 500 }, writes);
      await windowed.init();
      try {
        const recorded: Array<Promise<void>> = [];
        for (let i = 0; i < 30; i++) {
          recorded.push(windowed.record(entry({ owner: 'windowed', at: day0 + 7 * 60_000, model: i % 3 ? 'm' : 'n' })));
          await new Promise((r) => setImmediate(r));
        }
        await Promise.all(recorded);
        expect(await writes.count()).toBe(1);
      } finally {
        await writes.stop();
        await windowed.close();
      }
      const rows = await store.query({ from: day0, to: day0 + DAY, owner: 'windowed', bucketMs: DAY, limit: 10 });
      expect(rows.map((r) => [r.model, r.requests])).toEqual([
        ['m', 20],
        ['n', 10],
      ]);
    });
  }

  it('a read sees what this process recorded before it, the window not yet over: it writes that first', async () => {
    const windowed = make(LONG_WINDOW);
    await windowed.init();
    try {
      const write = windowed.record(entry({ owner: 'read-own', at: day0 + 8 * 60_000, inputTokens: 4 }));
      const rows = await windowed.query({ from: day0, to: day0 + DAY, owner: 'read-own', bucketMs: DAY, limit: 10 });
      expect(rows).toMatchObject([{ owner: 'read-own', requests: 1, inputTokens: 4 }]);
      await write;
      // Written, not only summed in this process: another connection reads it too.
      if (driver !== 'memory') expect(await store.query({ from: day0, to: day0 + DAY, owner: 'read-own', bucketMs: DAY, limit: 10 })).toMatchObject([{ requests: 1 }]);
    } finally {
      await windowed.close();
    }
  });

  if (driver !== 'memory') {
    it('writes a batch early once it holds 256 distinct rows', async () => {
      const writes = await writeLog(driver);
      const windowed = make(LONG_WINDOW, writes);
      await windowed.init();
      try {
        const minute = day0 + 9 * 60_000;
        const recorded = Array.from({ length: 256 }, (_, i) => windowed.record(entry({ owner: 'bounded', at: minute, model: `m${i}` })));
        await Promise.all(recorded);
        expect(await writes.count()).toBe(1);
        // Written before the window (ten minutes) and without a read or a close: another connection already sees every row.
        expect(await store.query({ from: day0, to: day0 + DAY, owner: 'bounded', bucketMs: DAY, limit: 1_000 })).toHaveLength(256);
      } finally {
        await writes.stop();
        await windowed.close();
      }
    });
  }

  if (driver === 'sqlite') {
    it("waits for another process's write lock without stalling the event loop, then writes", async () => {
      const holder = new Database(join(dir, 'state.sqlite'));
      holder.exec('BEGIN IMMEDIATE');
      let ticks = 0;
      const ticker = setInterval(() => ticks++, 5);
      let state = 'waiting';
      const write = store.record(entry({ owner: 'locked', at: day0 + 5 * 60_000 })).then(
        () => (state = 'written'),
        (e: Error) => (state = `failed: ${e.message}`),
      );
      // The batch's flush starts and meets the lock; then timers must keep firing while it waits. SQLite's
      // busy handler would sleep this thread, which holds the lock too: no timer could fire, and the write
      // would fail once its busy timeout ran out. Counted in ticks, not time, so a loaded machine only waits longer.
      await new Promise((r) => setTimeout(r, 200));
      const from = ticks;
      for (const deadline = Date.now() + 10_000; ticks < from + 5 && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 5));
      const ticksWhileLocked = ticks - from;
      const stateWhileLocked = state;
      holder.exec('COMMIT');
      holder.close();
      await write;
      clearInterval(ticker);
      expect(ticksWhileLocked).toBeGreaterThanOrEqual(5);
      expect(stateWhileLocked).toBe('waiting');
      expect(state).toBe('written');
      expect(await store.query({ from: day0, to: day0 + DAY, owner: 'locked', bucketMs: DAY, limit: 10 })).toMatchObject([{ requests: 1 }]);
    });

    it('fails a batch (nothing written) when the lock stays taken past the busy timeout', async () => {
      const short = new SqliteUsageStore({ path: join(dir, 'state.sqlite'), busyTimeoutMs: 100 });
      await short.init();
      const holder = new Database(join(dir, 'state.sqlite'));
      holder.exec('BEGIN IMMEDIATE');
      const failed = await short.record(entry({ owner: 'gave-up', at: day0 + 6 * 60_000 })).then(
        () => undefined,
        (e: { code?: string }) => e.code,
      );
      holder.exec('ROLLBACK');
      holder.close();
      await short.close();
      expect(failed).toBe('SQLITE_BUSY');
      expect(await store.query({ from: day0, to: day0 + DAY, owner: 'gave-up', bucketMs: DAY, limit: 10 })).toEqual([]);
    });
  }
});
