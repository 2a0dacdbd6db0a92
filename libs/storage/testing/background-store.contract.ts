/// <reference types="jest" />
import { newId } from '#tool-sdk/ids.js';
import type { BackgroundRun, BackgroundStore } from '../background-store.interface.js';
import type { BackgroundCatalog } from '../catalog.interface.js';

const LIMITS = { maxRuns: 100, maxRunsPerOwner: 100 };

export function backgroundRun(overrides: Partial<BackgroundRun> = {}): BackgroundRun {
  const id = overrides.id ?? newId('resp');
  return {
    id,
    owner: 'owner-a',
    status: 'queued',
    response: { id, object: 'response', status: 'queued', output: [] },
    nodeId: 'node-1',
    leaseExpiresAt: Date.now() + 60_000,
    lastSequence: -1,
    ...overrides,
  };
}

const event = (sequence: number, type = 'response.output_text.delta') => ({ sequence, event: { type, sequence_number: sequence } });

/**
 * Waits for `watch` to report `id` with the given `ended` flag (a store that
 * notifies asynchronously may still deliver an earlier write's notice first).
 */
function notified(store: BackgroundStore, id: string, ended: boolean): Promise<void> {
  return new Promise((resolve) => {
    const stop = store.watch((seen, flag) => {
      if (seen !== id || flag !== ended) return;
      stop();
      resolve();
    });
  });
}

/**
 * What every BackgroundStore backend shares. `factory` returns a fresh,
 * uninitialised store with no records; the suite calls `init()` and `close()`.
 */
export function describeBackgroundStoreContract(name: string, factory: () => BackgroundStore | Promise<BackgroundStore>): void {
  describe(`${name} BackgroundStore contract`, () => {
    let store: BackgroundStore;

    beforeEach(async () => {
      store = await factory();
      await store.init();
    });

    afterEach(async () => {
      await store.close();
    });

    it('admits a run and shows it only to its owner', async () => {
      const run = backgroundRun();
      expect(await store.admit(run, LIMITS)).toBeNull();
      expect(await store.get(run.id, 'owner-a')).toEqual(run);
      expect(await store.get(run.id, 'owner-b')).toBeNull();
      expect(await store.get(run.id, null)).toBeNull();
    });

    it('refuses past the total and the per-owner limits, counting live runs only', async () => {
      const limits = { maxRuns: 3, maxRunsPerOwner: 2 };
      expect(await store.admit(backgroundRun(), limits)).toBeNull();
      const second = backgroundRun();
      expect(await store.admit(second, limits)).toBeNull();
      expect(await store.admit(backgroundRun(), limits)).toBe('owner');
      expect(await store.admit(backgroundRun({ owner: null }), limits)).toBeNull();
      expect(await store.admit(backgroundRun({ owner: 'owner-c' }), limits)).toBe('total');
      // An ended run frees its place.
      await store.append(second.id, { events: [], response: second.response, status: 'completed' });
      expect(await store.admit(backgroundRun({ owner: 'owner-c' }), limits)).toBeNull();
    });

    it('appends events in order, pages them by sequence number, and notifies watchers', async () => {
      const run = backgroundRun();
      await store.admit(run, LIMITS);
      const seen = notified(store, run.id, false);
      expect(await store.append(run.id, { events: [event(0), event(1), event(2)], response: { id: run.id, status: 'in_progress' }, status: 'in_progress' })).toBe(true);
      await seen;
      expect(await store.append(run.id, { events: [event(3)], response: { id: run.id, status: 'in_progress', output: [1] }, status: 'in_progress' })).toBe(true);
      expect((await store.events(run.id, -1, 100)).map((e) => e.sequence)).toEqual([0, 1, 2, 3]);
      expect((await store.events(run.id, 1, 100)).map((e) => e.sequence)).toEqual([2, 3]);
      expect((await store.events(run.id, 0, 2)).map((e) => e.sequence)).toEqual([1, 2]);
      expect(await store.events(run.id, 3, 100)).toEqual([]);
      const stored = await store.get(run.id, 'owner-a');
      expect(stored).toMatchObject({ status: 'in_progress', lastSequence: 3, response: { output: [1] } });
      expect((await store.events(run.id, -1, 1))[0].event).toEqual({ type: 'response.output_text.delta', sequence_number: 0 });
    });

    it('never writes over a final status', async () => {
      const run = backgroundRun();
      await store.admit(run, LIMITS);
      await store.append(run.id, { events: [event(0, 'response.completed')], response: { id: run.id, status: 'completed' }, status: 'completed' });
      expect(await store.append(run.id, { events: [event(1)], response: { id: run.id, status: 'in_progress' }, status: 'in_progress' })).toBe(false);
      expect(await store.get(run.id, 'owner-a')).toMatchObject({ status: 'completed', lastSequence: 0 });
      expect((await store.events(run.id, -1, 10)).length).toBe(1);
    });

    it('cancels a live run once, keeps a finished one as it was, and hides foreign ones', async () => {
      const live = backgroundRun();
      await store.admit(live, LIMITS);
      const seen = notified(store, live.id, true);
      const cancelled = await store.cancel(live.id, 'owner-a', (current) => ({ ...current, status: 'cancelled' }));
      await seen;
      expect(cancelled).toMatchObject({ status: 'cancelled', response: { status: 'cancelled' } });
      expect(await store.append(live.id, { events: [event(0)], response: {}, status: 'in_progress' })).toBe(false);
      const again = await store.cancel(live.id, 'owner-a', () => ({ overwritten: true }));
      expect(again?.response).toEqual({ ...live.response, status: 'cancelled' });

      const done = backgroundRun();
      await store.admit(done, LIMITS);
      await store.append(done.id, { events: [], response: { status: 'completed' }, status: 'completed' });
      expect(await store.cancel(done.id, 'owner-a', () => ({ status: 'cancelled' }))).toMatchObject({ status: 'completed' });
      expect(await store.cancel(done.id, 'owner-b', () => ({}))).toBeNull();
      expect(await store.cancel(newId('resp'), 'owner-a', () => ({}))).toBeNull();
    });

    it('removes a run with its events, for its owner only', async () => {
      const run = backgroundRun();
      await store.admit(run, LIMITS);
      await store.append(run.id, { events: [event(0)], response: {}, status: 'in_progress' });
      expect(await store.remove(run.id, 'owner-b')).toBe(false);
      expect(await store.remove(run.id, 'owner-a')).toBe(true);
      expect(await store.get(run.id, 'owner-a')).toBeNull();
      expect(await store.events(run.id, -1, 10)).toEqual([]);
      expect(await store.remove(run.id, 'owner-a')).toBe(false);
    });

    it('renews only its own live leases and reports runs that ended elsewhere', async () => {
      const mine = backgroundRun({ leaseExpiresAt: 1_000 });
      const other = backgroundRun({ nodeId: 'node-2', leaseExpiresAt: 1_000 });
      const cancelled = backgroundRun({ leaseExpiresAt: 1_000 });
      for (const run of [mine, other, cancelled]) await store.admit(run, LIMITS);
      await store.cancel(cancelled.id, 'owner-a', (r) => r);
      expect(await store.renew('node-1', [mine.id, cancelled.id], 5_000)).toEqual([cancelled.id]);
      expect((await store.get(mine.id, 'owner-a'))?.leaseExpiresAt).toBe(5_000);
      expect((await store.get(other.id, 'owner-a'))?.leaseExpiresAt).toBe(1_000);
      expect(await store.renew('node-1', [], 5_000)).toEqual([]);
    });

    it('fails runs whose lease expired, with a final event one past their last', async () => {
      const stale = backgroundRun({ leaseExpiresAt: 1_000 });
      const fresh = backgroundRun({ leaseExpiresAt: 10_000 });
      for (const run of [stale, fresh]) await store.admit(run, LIMITS);
      await store.append(stale.id, { events: [event(0), event(1)], response: { id: stale.id, status: 'in_progress' }, status: 'in_progress' });
      const seen = notified(store, stale.id, true);
      const expired = await store.expire(5_000, (run) => ({
        response: { ...run.response, status: 'failed' },
        event: { type: 'response.failed', response: { id: run.id, status: 'failed' } },
      }));
      await seen;
      expect(expired).toEqual([stale.id]);
      expect(await store.get(stale.id, 'owner-a')).toMatchObject({ status: 'failed', lastSequence: 2, response: { status: 'failed' } });
      const events = await store.events(stale.id, 1, 10);
      expect(events).toEqual([{ sequence: 2, event: { type: 'response.failed', sequence_number: 2, response: { id: stale.id, status: 'failed' } } }]);
      expect((await store.get(fresh.id, 'owner-a'))?.status).toBe('queued');
      expect(await store.expire(5_000, () => ({ response: {}, event: {} }))).toEqual([]);
    });

    it('returns every event of a 2,000-event run in order, page by page', async () => {
      // Correctness at size, not speed: every event of a large run comes back, in order, paged.
      const run = backgroundRun();
      await store.admit(run, LIMITS);
      let sequence = 0;
      for (let batch = 0; batch < 20; batch++) {
        const events = Array.from({ length: 100 }, () => event(sequence++));
        await store.append(run.id, { events, response: { n: sequence }, status: 'in_progress' });
      }
      let after = -1;
      let count = 0;
      for (;;) {
        const page = await store.events(run.id, after, 500);
        if (page.length === 0) break;
        for (const e of page) expect(e.sequence).toBe(++after);
        count += page.length;
      }
      expect(count).toBe(2_000);
    });

    it("lists every owner's runs in one order across pages (the console), and refuses an unknown cursor", async () => {
      const catalog = store as BackgroundStore & BackgroundCatalog;
      const ids: string[] = [];
      for (const owner of ['owner-a', 'owner-b', null]) {
        const run = backgroundRun({ owner });
        ids.push(run.id);
        expect(await store.admit(run, LIMITS)).toBeNull();
      }
      const first = await catalog.catalog({ limit: 2 });
      expect(first.has_more).toBe(true);
      const second = await catalog.catalog({ limit: 2, after: first.last_id! });
      expect(second.has_more).toBe(false);
      const listed = [...first.data, ...second.data];
      expect(listed.map((e) => e.id).sort()).toEqual([...ids].sort());
      expect(listed.find((e) => e.id === ids[2])?.owner).toBeNull();
      await expect(catalog.catalog({ limit: 2, after: 'resp_nowhere' })).rejects.toMatchObject({ param: 'after' });
    });
  });
}
