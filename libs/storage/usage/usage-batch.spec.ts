import { setImmediate as tick, setTimeout as sleep } from 'node:timers/promises';
import type { UsageEntry } from '../usage-store.interface.js';
import { UsageBatch, type UsageBatchOptions, type UsageSum } from './usage-batch.js';

const MINUTE = 1_800_000_000_000 - (1_800_000_000_000 % 60_000);

const entry = (over: Partial<UsageEntry> = {}): UsageEntry => ({
  owner: 'a',
  model: 'm',
  surface: 'responses',
  at: MINUTE + 1_000,
  inputTokens: 10,
  cachedInputTokens: 2,
  outputTokens: 5,
  reasoningTokens: 1,
  ...over,
});

/** A write the test finishes by hand, as a store whose commit is still under way. */
interface HeldWrite {
  sums: UsageSum[];
  at: number;
  done(): void;
  fail(e: unknown): void;
}

/** A batch whose writes are recorded, and either done at once or held until the test finishes them. */
function batchOf(options: UsageBatchOptions, hold = false) {
  const writes: HeldWrite[] = [];
  const batch = new UsageBatch(
    (sums) =>
      new Promise<void>((resolve, reject) => {
        writes.push({ sums, at: performance.now(), done: resolve, fail: reject });
        if (!hold) resolve();
      }),
    options,
  );
  return { batch, writes };
}

/** Whether `p` has settled by now (its reactions given a tick to run). */
async function settled(p: Promise<unknown>): Promise<'resolved' | 'rejected' | 'pending'> {
  let state: 'resolved' | 'rejected' | 'pending' = 'pending';
  p.then(
    () => (state = 'resolved'),
    () => (state = 'rejected'),
  );
  await tick();
  return state;
}

const LONG = 60_000;

describe('UsageBatch', () => {
  it('writes the entries of one window, from many ticks, in one write, and none before the window', async () => {
    const { batch, writes } = batchOf({ windowMs: 300 });
    const adds = [batch.add(entry())];
    for (let i = 0; i < 5; i++) {
      await tick();
      adds.push(batch.add(entry({ outputTokens: 1 })));
    }
    adds.push(batch.add(entry({ model: 'other' })));
    // Several ticks later, well inside the window: a per-tick flush would have written by now.
    await sleep(10);
    expect(writes).toHaveLength(0);
    await Promise.all(adds);
    expect(writes).toHaveLength(1);
    expect(writes[0].sums).toEqual([
      {
        minute: MINUTE,
        owner: 'a',
        model: 'm',
        surface: 'responses',
        requests: 6,
        inputTokens: 60,
        cachedInputTokens: 12,
        outputTokens: 10,
        reasoningTokens: 6,
        runs: 6,
        failedRuns: 0,
        durationMs: 0,
      },
      {
        minute: MINUTE,
        owner: 'a',
        model: 'other',
        surface: 'responses',
        requests: 1,
        inputTokens: 10,
        cachedInputTokens: 2,
        outputTokens: 5,
        reasoningTokens: 1,
        runs: 1,
        failedRuns: 0,
        durationMs: 0,
      },
    ]);
  });

  it('writes once the window has passed with no further entry or call to wake it', async () => {
    const { batch, writes } = batchOf({ windowMs: 30 });
    const added = performance.now();
    const write = batch.add(entry());
    expect(await Promise.race([write.then(() => 'written'), sleep(2_000, 'still pending', { ref: false })])).toBe('written');
    expect(writes).toHaveLength(1);
    // Timers may fire up to a millisecond early on their rounding; never a tick after the add.
    expect(writes[0].at - added).toBeGreaterThanOrEqual(29);
  });

  it('keeps nothing alive while a batch waits (its timer is unref()ed), and writes the adds of one window once', async () => {
    // Node lists the timers that keep the process alive; an unref()ed one is not among them.
    const keepingAlive = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const { batch, writes } = batchOf({ windowMs: 20 });
    const before = keepingAlive();
    const adds = [batch.add(entry()), batch.add(entry({ model: 'x' })), batch.add(entry())];
    expect(keepingAlive()).toBe(before);
    await Promise.all(adds);
    expect(writes).toHaveLength(1);
    expect(writes[0].sums.map((s) => [s.model, s.requests])).toEqual([
      ['m', 2],
      ['x', 1],
    ]);
  });

  it('leaves no timer behind a write it did not wait for: the next entry waits a whole window of its own', async () => {
    const { batch, writes } = batchOf({ windowMs: 150 });
    void batch.add(entry());
    await batch.flush(); // the first window's timer goes with the batch it was for
    expect(writes).toHaveLength(1);
    await sleep(60);
    const added = performance.now();
    await batch.add(entry());
    // A timer left from the first entry would have written this one ~90 ms after it was added.
    expect(writes).toHaveLength(2);
    expect(writes[1].at - added).toBeGreaterThanOrEqual(145);
  });

  it('flush() writes what is pending at once and waits for it, but not for entries added after the call', async () => {
    const { batch, writes } = batchOf({ windowMs: LONG }, true);
    const first = batch.add(entry());
    const flushed = batch.flush();
    expect(writes).toHaveLength(1);
    const later = batch.add(entry({ model: 'later' }));
    expect(await settled(flushed)).toBe('pending');
    writes[0].done();
    await flushed;
    expect(await settled(first)).toBe('resolved');
    // The later entry is in no write yet: it waits for its own window (or the next flush).
    expect(writes).toHaveLength(1);
    expect(await settled(later)).toBe('pending');
    const again = batch.flush();
    expect(writes[1].sums.map((s) => s.model)).toEqual(['later']);
    writes[1].done();
    await again;
    await later;
  });

  it('flush() with nothing pending waits for the write under way, which may carry entries added before it', async () => {
    const { batch, writes } = batchOf({ windowMs: LONG }, true);
    const first = batch.add(entry());
    void batch.flush();
    const flushed = batch.flush(); // nothing pending: the first entry is in the running write
    expect(writes).toHaveLength(1);
    expect(await settled(flushed)).toBe('pending');
    writes[0].done();
    await flushed;
    expect(await settled(first)).toBe('resolved');
    expect(await settled(batch.flush())).toBe('resolved');
  });

  it('drained() (close) writes at once, without waiting out the window, until nothing is left', async () => {
    const { batch, writes } = batchOf({ windowMs: LONG });
    const adds = [batch.add(entry()), batch.add(entry({ owner: null }))];
    const started = performance.now();
    await batch.drained();
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(writes).toHaveLength(1);
    expect(await settled(Promise.all(adds))).toBe('resolved');
  });

  it('writes early once the batch holds maxRows distinct rows, and more entries to known rows do not count', async () => {
    const { batch, writes } = batchOf({ windowMs: LONG, maxRows: 4 });
    const adds = [0, 1, 2].map((i) => batch.add(entry({ model: `m${i}` })));
    for (let i = 0; i < 20; i++) adds.push(batch.add(entry({ model: 'm0' })));
    await sleep(20);
    expect(writes).toHaveLength(0);
    adds.push(batch.add(entry({ model: 'm3' })));
    expect(writes).toHaveLength(1);
    expect(writes[0].sums).toHaveLength(4);
    expect(writes[0].sums.find((s) => s.model === 'm0')?.requests).toBe(21);
    await Promise.all(adds);
    // The next distinct row starts a new batch with a window of its own.
    void batch.add(entry({ model: 'm4' }));
    await sleep(20);
    expect(writes).toHaveLength(1);
    await batch.drained();
  });

  it('a failing write rejects exactly the entries it carried; the next batch is written and resolves', async () => {
    const { batch, writes } = batchOf({ windowMs: LONG }, true);
    const failed = [batch.add(entry()), batch.add(entry({ model: 'x' }))];
    void batch.flush();
    // A read that waits on the failing write is not failed by it: it goes on to read what is there.
    const read = batch.flush();
    const next = batch.add(entry({ model: 'y' })); // during the failing write: the next batch
    writes[0].fail(Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' }));
    for (const p of failed) await expect(p).rejects.toMatchObject({ code: 'SQLITE_IOERR' });
    await expect(read).resolves.toBeUndefined();
    expect(await settled(next)).toBe('pending');
    const written = batch.flush();
    expect(writes).toHaveLength(2);
    expect(writes[1].sums.map((s) => s.model)).toEqual(['y']);
    writes[1].done();
    await written;
    await expect(next).resolves.toBeUndefined();
  });

  it('loses nothing to entries added while a write runs: they wait for it, then go in the next write together', async () => {
    const { batch, writes } = batchOf({ windowMs: 5 }, true);
    const adds = [batch.add(entry())];
    await sleep(30);
    expect(writes).toHaveLength(1);
    // Many ticks and windows while the first write is under way: no second write may start beside it.
    for (let i = 0; i < 50; i++) {
      adds.push(batch.add(entry({ model: i % 2 ? 'odd' : 'even', inputTokens: i })));
      if (i % 10 === 0) await sleep(6);
      else await tick();
    }
    expect(writes).toHaveLength(1);
    writes[0].done();
    await sleep(10);
    expect(writes).toHaveLength(2);
    writes[1].done();
    await Promise.all(adds);
    const written = writes.flatMap((w) => w.sums);
    expect(written.reduce((n, s) => n + s.requests, 0)).toBe(51);
    expect(written.reduce((n, s) => n + s.inputTokens, 0)).toBe(10 + (49 * 50) / 2);
    expect(writes[1].sums.map((s) => [s.model, s.requests])).toEqual([
      ['even', 25],
      ['odd', 25],
    ]);
  });
});
