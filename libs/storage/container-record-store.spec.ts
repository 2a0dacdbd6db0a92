import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { ContainerRecord, ContainerRecordStore } from '#tool-sdk/ports/container-records.js';
import { MemoryContainerRecordStore } from './memory/memory-container-record.store.js';
import { PostgresContainerRecordStore } from './postgres/postgres-container-record.store.js';
import { SqliteContainerRecordStore } from './sqlite/sqlite-container-record.store.js';

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `sy_cntr_${randomBytes(4).toString('hex')}`;
const dir = mkdtempSync(join(tmpdir(), 'sy-cntr-store-'));
let admin: pg.Pool;

beforeAll(async () => {
  admin = new pg.Pool({ connectionString: url, max: 1 });
});
afterAll(async () => {
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
function record(over: Partial<ContainerRecord> = {}): ContainerRecord {
  n++;
  return {
    id: `cntr_${String(n).padStart(32, '0')}`,
    name: `box ${n}`,
    owner: 'key-a',
    createdAt: 1_000 + n,
    lastActiveAt: 1_000 + n,
    idleExpiryMs: 60_000,
    memoryLimit: null,
    calls: 0,
    home: 'node-a',
    files: [],
    copiedFileIds: [],
    notice: null,
    ...over,
  };
}

describe.each<[string, () => ContainerRecordStore]>([
  ['memory', () => new MemoryContainerRecordStore()],
  ['sqlite', () => new SqliteContainerRecordStore({ path: join(dir, `s${n++}.sqlite`) })],
  ['postgres', () => new PostgresContainerRecordStore({ connectionString: url, schema })],
])('ContainerRecordStore (%s)', (_name, make) => {
  let store: ContainerRecordStore;
  beforeAll(async () => {
    store = make();
    await store.init();
  });
  afterAll(() => store.close());

  it('keeps a record with its files, lists by owner in creation order, finds a file by id for its owner only', async () => {
    const a = record({ files: [{ id: 'cfile_1', path: 'a.csv', bytes: 3, createdAt: 5, source: 'user' }] });
    const b = record();
    const other = record({ owner: null });
    for (const r of [b, a, other]) await store.insert(r);
    expect(await store.get(a.id)).toEqual(a);
    expect((await store.list('key-a')).map((r) => r.id)).toEqual([a.id, b.id]);
    expect((await store.list(null)).map((r) => r.id)).toEqual([other.id]);
    expect((await store.findByFile('cfile_1', 'key-a'))?.id).toBe(a.id);
    expect(await store.findByFile('cfile_1', 'key-b')).toBeNull();
    expect(await store.findByFile('cfile_2', 'key-a')).toBeNull();
  });

  it("lists every owner's containers newest first for the console, page by page, and reads one back by id", async () => {
    // Later than every other record of this store: these three open the catalog.
    const [a, b, c] = [1, 2, 3].map((i) => record({ createdAt: 9_000_000_000_000 + i * 1000, owner: i === 2 ? null : `key-${i}` }));
    for (const r of [b, c, a]) await store.insert(r);
    const first = await store.catalog!({ limit: 2 });
    expect(first.data).toEqual([
      { id: c.id, owner: 'key-3', createdAt: 9_000_000_003 },
      { id: b.id, owner: null, createdAt: 9_000_000_002 },
    ]);
    expect(first.has_more).toBe(true);
    expect((await store.catalog!({ limit: 1, after: first.last_id! })).data.map((e) => e.id)).toEqual([a.id]);
    expect((await store.catalog!({ limit: 1, id: b.id })).data).toEqual([{ id: b.id, owner: null, createdAt: 9_000_000_002 }]);
    expect((await store.catalog!({ limit: 1, id: 'cntr_nowhere' })).data).toEqual([]);
    await expect(store.catalog!({ limit: 1, after: 'cntr_nowhere' })).rejects.toMatchObject({ param: 'after' });
  });

  it('lets only the home write, and moves the home by compare-and-set', async () => {
    const r = record();
    await store.insert(r);
    const files = [{ id: 'cfile_9', path: 'out.png', bytes: 10, createdAt: 7, source: 'assistant' as const }];
    expect(await store.update(r.id, 'node-a', { calls: 2, files, lastActiveAt: 5_000, copiedFileIds: ['file-x'] })).toBe(true);
    expect(await store.update(r.id, 'node-b', { calls: 3 })).toBe(false);
    expect(await store.get(r.id)).toMatchObject({ calls: 2, files, lastActiveAt: 5_000, copiedFileIds: ['file-x'] });
    const takes = await Promise.all([store.rehome(r.id, 'node-a', 'node-b', { notice: 'reset' }), store.rehome(r.id, 'node-a', 'node-c', { notice: 'reset' })]);
    expect(takes.filter(Boolean)).toHaveLength(1);
    const now = await store.get(r.id);
    expect(['node-b', 'node-c']).toContain(now?.home);
    expect(now?.notice).toBe('reset');
    expect(await store.update(r.id, 'node-a', { calls: 9 })).toBe(false);
    expect(await store.update(r.id, now!.home, { notice: null })).toBe(true);
    expect((await store.get(r.id))?.notice).toBeNull();
    expect(await store.remove(r.id)).toBe(true);
    expect(await store.get(r.id)).toBeNull();
    expect(await store.remove(r.id)).toBe(false);
  });

  it('reports containers idle past their expiry', async () => {
    const idle = record({ lastActiveAt: 10_000, idleExpiryMs: 1_000 });
    const fresh = record({ lastActiveAt: 10_900, idleExpiryMs: 1_000 });
    await store.insert(idle);
    await store.insert(fresh);
    const ids = (await store.expired(11_500)).map((r) => r.id);
    expect(ids).toContain(idle.id);
    expect(ids).not.toContain(fresh.id);
  });

  it('registers, renews and removes node rows', async () => {
    await store.heartbeat({ id: 'n1', url: 'http://127.0.0.1:1', leaseExpiresAt: 100 });
    await store.heartbeat({ id: 'n1', url: 'http://127.0.0.1:2', leaseExpiresAt: 200 });
    expect(await store.node('n1')).toEqual({ id: 'n1', url: 'http://127.0.0.1:2', leaseExpiresAt: 200 });
    await store.leave('n1');
    expect(await store.node('n1')).toBeNull();
  });
});
