import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { AUTO_CHUNKING } from '../ingestion/ingestion-contract.js';
import { chunkWrites } from './chunk-writes.js';
import type { ClaimedJob, StoreFileRow } from './file-search-rows.js';
import { migrateFileSearch } from './file-search.migrations.js';
import { FileSearchStore, nextSeq, nextWaitingFileQuery } from './file-search.store.js';
import { PostgresDatabase, SqliteDatabase } from '#storage/sql/sql-database.js';

const PG_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

interface Backend {
  /**
   * Two stores on one database. PostgreSQL: two pools, as two replicas have.
   * SQLite: one connection, as one gateway process has (two connections in one
   * process would block each other's event loop on the file lock; separate
   * processes rely on SQLite's own locking, which these statements run under).
   */
  open(): Promise<[FileSearchStore, FileSearchStore]>;
  cleanup(): Promise<void>;
}

function sqlite(): Backend {
  const dir = mkdtempSync(join(tmpdir(), 'sy-fs-store-'));
  const path = join(dir, 'files.sqlite');
  return {
    open: async () => {
      const one = new FileSearchStore(new SqliteDatabase(path));
      return [one, one];
    },
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

function postgres(): Backend {
  const schema = `sy_fs_store_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
  const url = `${PG_URL}?options=-c%20search_path%3D${schema}`;
  return {
    open: async () => {
      await admin.query(`CREATE SCHEMA ${schema}`);
      return [new FileSearchStore(new PostgresDatabase(url, 4)), new FileSearchStore(new PostgresDatabase(url, 4))];
    },
    cleanup: async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    },
  };
}

const now = () => Math.floor(Date.now() / 1000);
/** A chunk for the job tests, which read texts back and never rank. */
const unindexed = (text: string) => ({ position: 0, text, terms: { length: 0, counts: [] } });

function job(storeId: string, fileId: string): StoreFileRow {
  return {
    storeId,
    fileId,
    batchId: null,
    status: 'in_progress',
    lastError: null,
    attributes: {},
    chunking: AUTO_CHUNKING,
    usageBytes: 0,
    createdAt: now(),
    seq: nextSeq(),
    attempts: 0,
  };
}

describe.each([
  ['SQLite', sqlite],
  ['PostgreSQL', postgres],
])('FileSearchStore ingestion jobs on %s', (name, make) => {
  let backend: Backend;
  let a: FileSearchStore;
  let b: FileSearchStore;

  beforeAll(async () => {
    backend = make();
    [a, b] = await backend.open();
    // Both replicas migrate at once; one applies the schema, the other finds it done.
    await Promise.all([a.init(), b.init()]);
  });
  afterAll(async () => {
    await Promise.all([...new Set([a, b])].map((s) => s?.close()));
    await backend?.cleanup();
  });

  async function seed(storeId: string, n: number, owner = ''): Promise<string[]> {
    await a.insertStore({ id: storeId, owner, name: null, description: null, metadata: {}, createdAt: now(), seq: nextSeq(), lastActiveAt: now(), expiresAfter: null });
    const ids = Array.from({ length: n }, (_, i) => `file-${storeId}-${i}`);
    for (const id of ids)
      await a.insertFile({ id, owner: '', filename: `${id}.txt`, purpose: 'assistants', bytes: 1, createdAt: now(), seq: nextSeq(), expiresAt: null }, Buffer.from('x'));
    await a.addStoreFiles(ids.map((id) => job(storeId, id)));
    return ids;
  }

  it('hands each waiting job to exactly one of many concurrent claimers', async () => {
    const ids = await seed('vs_claims', 40);
    const claimed: Array<{ worker: string; job: ClaimedJob }> = [];
    const claimer = async (store: FileSearchStore, worker: string) => {
      for (;;) {
        const j = await store.claimJob(worker, Date.now(), 60_000);
        if (!j) return;
        if (j.storeId === 'vs_claims') claimed.push({ worker, job: j });
      }
    };
    await Promise.all([0, 1, 2, 3].flatMap((i) => [claimer(a, `a${i}`), claimer(b, `b${i}`)]));
    const fileIds = claimed.map((c) => c.job.fileId).sort();
    expect(fileIds).toEqual([...ids].sort());
    expect(claimed.every((c) => c.job.attempts === 1)).toBe(true);
    // A claimed job is not offered again while its lease runs.
    expect(await a.claimJob('late', Date.now(), 60_000)).toBeUndefined();
  });

  it('claims waiting files in upload order, found through the waiting-order index rather than a sort of every waiting row', async () => {
    const ids = await seed('vs_order', 30);
    const order: string[] = [];
    for (let j = await a.claimJob('w-order', Date.now(), 60_000); j; j = await a.claimJob('w-order', Date.now(), 60_000)) if (j.storeId === 'vs_order') order.push(j.fileId);
    expect(order).toEqual(ids);
    if (name === 'SQLite') {
      for (const skipped of [0, 2]) {
        const plan = await a.db.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${nextWaitingFileQuery('sqlite', skipped)}`, [Date.now(), ...Array(skipped).fill('x')]);
        const steps = plan.map((p) => p.detail);
        expect(steps).toContain('SEARCH f USING INDEX fs_store_files_waiting (status=?)');
        expect(steps.some((s) => s.includes('TEMP B-TREE'))).toBe(false);
      }
    }
  });

  it("passes over the owners a worker names (at their share of its threads) for another owner's job, and says whose a job is", async () => {
    const [older] = await seed('vs_share_a', 2, 'owner-a');
    const [newer] = await seed('vs_share_b', 1, 'owner-b');
    const other = await a.claimJob('w-share', Date.now(), 60_000, 3, ['owner-a', '']);
    expect(other).toMatchObject({ storeId: 'vs_share_b', fileId: newer, owner: 'owner-b' });
    expect(await a.claimJob('w-share', Date.now(), 60_000, 3, ['owner-a', 'owner-b', ''])).toBeUndefined();
    expect(await a.claimJob('w-share', Date.now(), 60_000, 3, [''])).toMatchObject({ fileId: older, owner: 'owner-a' });
    // The rest of A's files, so that the tests after this one find only their own.
    expect(await a.claimJob('w-share', Date.now(), 60_000, 3)).toMatchObject({ storeId: 'vs_share_a', owner: 'owner-a' });
  });

  it('lets another worker take a job whose lease ran out; the first worker can no longer complete it', async () => {
    const [id] = await seed('vs_lease', 1);
    const first = await a.claimJob('crashed', Date.now(), 1);
    expect(first).toMatchObject({ fileId: id, attempts: 1 });
    const second = await b.claimJob('survivor', Date.now() + 10, 60_000);
    expect(second).toMatchObject({ fileId: id, attempts: 2 });
    expect(await a.completeJob(first!, 'crashed', [unindexed('stale')], 5)).toBe(false);
    expect(await b.completeJob(second!, 'survivor', [unindexed('fresh words here')], 16)).toBe(true);
    expect(await a.chunkTexts('vs_lease', id)).toEqual(['fresh words here']);
    expect(await a.getStoreFile('vs_lease', id)).toMatchObject({ status: 'completed', usageBytes: 16 });
  });

  it('fails a job whose process died maxAttempts times instead of claiming it again; a handed-back claim does not count', async () => {
    const [id, next] = await seed('vs_poison', 2);
    // Two replicas, each dying while it holds the job (its lease runs out): attempts 1 and 2.
    expect(await a.claimJob('dies-1', Date.now(), 1, 3)).toMatchObject({ fileId: id, attempts: 1 });
    await new Promise((r) => setTimeout(r, 5));
    const second = await b.claimJob('dies-2', Date.now(), 1, 3);
    expect(second).toMatchObject({ fileId: id, attempts: 2 });
    await new Promise((r) => setTimeout(r, 5));
    // A graceful shutdown hands the job back: not an attempt.
    const handed = await a.claimJob('shutdown', Date.now(), 60_000, 3);
    expect(handed).toMatchObject({ fileId: id, attempts: 3 });
    await a.releaseJob(handed!, 'shutdown');
    const third = await b.claimJob('dies-3', Date.now(), 1, 3);
    expect(third).toMatchObject({ fileId: id, attempts: 3 });
    await new Promise((r) => setTimeout(r, 5));
    // The fourth claim finds the job spent: it is failed and the next job is handed out instead.
    expect(await a.claimJob('w', Date.now(), 60_000, 3)).toMatchObject({ fileId: next, attempts: 1 });
    expect(await a.getStoreFile('vs_poison', id)).toMatchObject({
      status: 'failed',
      lastError: { code: 'server_error', message: expect.stringContaining('started 3 times') },
    });
  });

  it('hands a released job back at once, and drops the result of a job cancelled while it ran', async () => {
    const [x, y] = await seed('vs_release', 2);
    const jx = await a.claimJob('w', Date.now(), 60_000);
    await a.releaseJob(jx!, 'w');
    const again = await b.claimJob('w2', Date.now(), 60_000);
    expect(again!.fileId).toBe(x);

    const batch = { id: 'vsfb_1', storeId: 'vs_release', createdAt: now(), cancelled: false };
    await a.insertBatch(batch, [{ ...job('vs_release', y), batchId: batch.id }]);
    const jy = await a.claimJob('w', Date.now(), 60_000);
    expect(jy!.fileId).toBe(y);
    await b.cancelBatch(batch.id);
    expect(await a.completeJob(jy!, 'w', [unindexed('late')], 4)).toBe(false);
    expect(await a.getStoreFile('vs_release', y)).toMatchObject({ status: 'cancelled' });
    expect(await a.chunkTexts('vs_release', y)).toEqual([]);
    expect(await a.batchCounts(batch.id)).toEqual({ in_progress: 0, completed: 0, failed: 0, cancelled: 1, total: 1 });
  });
});

describe.each([
  ['SQLite', sqlite],
  ['PostgreSQL', postgres],
])('FileSearchStore owners on %s', (_name, make) => {
  let backend: Backend;
  let store: FileSearchStore;
  const page = { limit: 10, order: 'asc' as const };

  beforeAll(async () => {
    backend = make();
    [store] = await backend.open();
    // A database from before owners existed, with a file and a store in it.
    await migrateFileSearch(store.db, 1);
    await store.db.run('INSERT INTO fs_files (id, filename, purpose, bytes, created_at, seq, expires_at, content) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [
      'file-old',
      'old.txt',
      'assistants',
      3,
      now(),
      nextSeq(),
      null,
      Buffer.from('old'),
    ]);
    await store.db.run('INSERT INTO fs_vector_stores (id, name, description, metadata, created_at, seq, last_active_at, expires_after) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [
      'vs_old',
      'old',
      null,
      '{}',
      now(),
      nextSeq(),
      now(),
      null,
    ]);
    // ...and a chunk of a file in it, written before the store-local index existed.
    await store.db.run(
      `INSERT INTO fs_store_files (store_id, file_id, status, attributes, chunking, created_at, seq) VALUES ('vs_old', 'file-old', 'completed', '{}', '{}', ?, ?)`,
      [now(), nextSeq()],
    );
    await store.db.run(`INSERT INTO fs_chunks (store_id, file_id, position, text) VALUES ('vs_old', 'file-old', 0, 'Descaling the kettles monthly')`);
    await store.init();
  });

  it('indexes chunks written before the store-local index at start-up, so they are found', async () => {
    const hits = await store.lexical({ storeIds: ['vs_old'] }, ['kettl', 'descal'], 5);
    expect(hits).toHaveLength(1);
    expect(hits[0].score).toBeGreaterThan(0.9);
    expect((await store.chunks(hits.map((h) => h.chunkId)))[0]).toMatchObject({ fileId: 'file-old', text: 'Descaling the kettles monthly' });
  });
  afterAll(async () => {
    await store?.close();
    await backend?.cleanup();
  });

  it('keeps rows from before the upgrade under the unauthenticated owner, and applies the upgrade once', async () => {
    expect(await store.getFile('file-old', '')).toMatchObject({ id: 'file-old', owner: '', filename: 'old.txt' });
    expect(await store.fileContent('file-old', '')).toEqual(Buffer.from('old'));
    expect((await store.listStores(page, '')).rows.map((s) => s.id)).toEqual(['vs_old']);
    expect(await store.getFile('file-old', 'key-a')).toBeUndefined();
    await store.init();
    const versions = await store.db.all<{ version: unknown }>('SELECT version FROM fs_schema_migrations ORDER BY version');
    expect(versions.map((v) => Number(v.version))).toEqual([1, 2, 3, 4, 5]);
  });

  it('reads, lists and deletes files and stores for their owner only', async () => {
    const file = (id: string, owner: string) => ({ id, owner, filename: `${id}.txt`, purpose: 'assistants', bytes: 1, createdAt: now(), seq: nextSeq(), expiresAt: null });
    const vs = (id: string, owner: string) => ({ id, owner, name: id, description: null, metadata: {}, createdAt: now(), seq: nextSeq(), lastActiveAt: now(), expiresAfter: null });
    await store.insertFile(file('file-a', 'key-a'), Buffer.from('a'));
    await store.insertFile(file('file-b', 'key-b'), Buffer.from('b'));
    await store.insertStore(vs('vs_a', 'key-a'));
    await store.insertStore(vs('vs_b', 'key-b'));

    expect((await store.listFiles(page, 'key-a')).rows.map((f) => f.id)).toEqual(['file-a']);
    expect((await store.getFiles(['file-a', 'file-b', 'file-old'], 'key-a')).map((f) => f.id)).toEqual(['file-a']);
    expect(await store.fileContent('file-b', 'key-a')).toBeUndefined();
    expect((await store.listStores(page, 'key-b')).rows.map((s) => s.id)).toEqual(['vs_b']);
    expect(await store.getStore('vs_b', 'key-a')).toBeUndefined();
    expect([...(await store.ownedStoreIds(['vs_a', 'vs_b', 'vs_old'], 'key-a'))]).toEqual(['vs_a']);

    // A cursor naming another owner's row is no cursor at all.
    expect((await store.listFiles({ ...page, after: 'file-b' }, 'key-a')).rows.map((f) => f.id)).toEqual(['file-a']);

    await store.updateStore({ ...vs('vs_b', 'key-a'), name: 'taken' });
    expect((await store.getStore('vs_b', 'key-b'))!.name).toBe('vs_b');
    expect(await store.deleteFile('file-b', 'key-a')).toBe(false);
    expect(await store.deleteStore('vs_b', 'key-a')).toBe(false);
    expect(await store.getFile('file-b', 'key-b')).toBeDefined();
    expect(await store.getStore('vs_b', 'key-b')).toBeDefined();
    expect(await store.deleteFile('file-b', 'key-b')).toBe(true);
    expect(await store.deleteStore('vs_b', 'key-b')).toBe(true);
    // The job path reads a file whoever owns it: its job was made by the owner's request.
    expect((await store.fileForIngestion('file-a'))?.content).toEqual(Buffer.from('a'));
  });
});

describe.each([
  ['SQLite', sqlite],
  ['PostgreSQL', postgres],
])('FileSearchStore completing a file ingested before, on %s', (name, make) => {
  let backend: Backend;
  let store: FileSearchStore;

  beforeAll(async () => {
    backend = make();
    [store] = await backend.open();
    await store.init();
  });
  afterAll(async () => {
    await store?.close();
    await backend?.cleanup();
  });

  const indexed = (position: number, text: string) => {
    const words = text.split(' ');
    return { position, text, terms: { length: words.length, counts: words.map((w) => [w, 1] as const) } };
  };
  const postingsOf = async (fileId: string) =>
    (await store.db.all<{ term: string }>('SELECT term FROM fs_postings WHERE store_id = ? AND file_id = ? ORDER BY term', ['vs_redo', fileId])).map((r) => r.term);

  it("replaces the file's chunks and index entries, leaves the other files' alone, and finds the earlier entries through the file's index", async () => {
    await store.insertStore({ id: 'vs_redo', owner: '', name: null, description: null, metadata: {}, createdAt: now(), seq: nextSeq(), lastActiveAt: now(), expiresAfter: null });
    for (const id of ['file-redo', 'file-kept'])
      await store.insertFile({ id, owner: '', filename: `${id}.txt`, purpose: 'assistants', bytes: 1, createdAt: now(), seq: nextSeq(), expiresAt: null }, Buffer.from('x'));
    await store.addStoreFiles([job('vs_redo', 'file-redo'), job('vs_redo', 'file-kept')]);
    const first = await store.claimJob('w', Date.now(), 60_000);
    expect(await store.completeJob(first!, 'w', [indexed(0, 'alpha beta'), indexed(1, 'beta gamma')], 10)).toBe(true);
    const kept = await store.claimJob('w', Date.now(), 60_000);
    expect(await store.completeJob(kept!, 'w', [indexed(0, 'alpha delta')], 5)).toBe(true);
    expect([first!.fileId, kept!.fileId]).toEqual(['file-redo', 'file-kept']);

    // Queued again (as a retried or re-added file is) and completed with other content.
    await store.db.run(`UPDATE fs_store_files SET status = 'in_progress' WHERE store_id = ? AND file_id = ?`, ['vs_redo', 'file-redo']);
    const again = await store.claimJob('w', Date.now(), 60_000);
    expect(await store.completeJob(again!, 'w', [indexed(0, 'epsilon zeta')], 5)).toBe(true);

    expect(await store.chunkTexts('vs_redo', 'file-redo')).toEqual(['epsilon zeta']);
    expect(await postingsOf('file-redo')).toEqual(['epsilon', 'zeta']);
    expect(await postingsOf('file-kept')).toEqual(['alpha', 'delta']);
    // The earlier content is found no more; the other file's still is.
    expect(await store.lexical({ storeIds: ['vs_redo'] }, ['beta'], 5)).toEqual([]);
    expect(await store.lexical({ storeIds: ['vs_redo'] }, ['alpha'], 5)).toHaveLength(1);
    if (name === 'SQLite') {
      const { FILE_POSTINGS_DELETE } = await chunkWrites();
      const plan = await store.db.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${FILE_POSTINGS_DELETE}`, ['file-redo', 'vs_redo']);
      expect(plan.map((p) => p.detail)).toEqual(['SEARCH fs_postings USING INDEX fs_postings_file (file_id=?)']);
    }
  });
});

describe.each([
  ['SQLite', sqlite],
  ['PostgreSQL', postgres],
])('FileSearchStore deletions on %s', (_name, make) => {
  let backend: Backend;
  let store: FileSearchStore;
  const TERMS = 300;

  beforeAll(async () => {
    backend = make();
    [store] = await backend.open();
    await store.init();
  });
  afterAll(async () => {
    await store?.close();
    await backend?.cleanup();
  });

  /** A completed file of `chunks` chunks, each with `TERMS` index entries (t0 … t299), written by SQL as ingestion would leave it. */
  async function indexedFile(storeId: string, fileId: string, chunks: number): Promise<void> {
    if (!(await store.getStore(storeId, ''))) {
      await store.insertStore({ id: storeId, owner: '', name: null, description: null, metadata: {}, createdAt: now(), seq: nextSeq(), lastActiveAt: now(), expiresAfter: null });
    }
    if (!(await store.getFile(fileId, ''))) {
      await store.insertFile(
        { id: fileId, owner: '', filename: `${fileId}.txt`, purpose: 'assistants', bytes: 1, createdAt: now(), seq: nextSeq(), expiresAt: null },
        Buffer.from('x'),
      );
    }
    await store.addStoreFiles([{ ...job(storeId, fileId), status: 'completed' }]);
    const [{ top }] = await store.db.all<{ top: unknown }>('SELECT COALESCE(MAX(id), 0) AS top FROM fs_chunks');
    await store.db.run(
      `WITH RECURSIVE n (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO fs_chunks (store_id, file_id, position, text, terms) SELECT ?, ?, i, 'words', ${TERMS} FROM n`,
      [chunks - 1, storeId, fileId],
    );
    // In slices of 200 chunks (60 000 rows): one statement for all 600 000 can outlast the
    // store's 5 s statement timeout on a busy machine, and the setup is not what is tested.
    for (let from = 0; from < chunks; from += 200) {
      await store.db.run(
        `WITH RECURSIVE k (j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM k WHERE j < ${TERMS - 1})
         INSERT INTO fs_postings (store_id, term, chunk_id, file_id, tf, len) SELECT c.store_id, 't' || k.j, c.id, c.file_id, 1, ${TERMS} FROM fs_chunks c, k
         WHERE c.store_id = ? AND c.file_id = ? AND c.id > ? AND c.position >= ? AND c.position < ?`,
        [storeId, fileId, Number(top), from, from + 200],
      );
    }
  }

  async function rows(storeId: string, fileId: string): Promise<{ chunks: number; postings: number }> {
    const [c] = await store.db.all<{ n: unknown }>('SELECT COUNT(*) AS n FROM fs_chunks WHERE store_id = ? AND file_id = ?', [storeId, fileId]);
    const [p] = await store.db.all<{ n: unknown }>('SELECT COUNT(*) AS n FROM fs_postings WHERE store_id = ? AND file_id = ?', [storeId, fileId]);
    return { chunks: Number(c.n), postings: Number(p.n) };
  }

  // Another store's search is answered before the purge ends when the purge takes many statements
  // (2 000 chunks: 600 000 index entries, 120 slices). A 20-chunk purge is three statements, which
  // a loaded machine may finish before a search sent after the first of them: there only the
  // outcome is asserted.
  it.each([
    { chunks: 20, searchedFirst: false },
    { chunks: 2_000, searchedFirst: true },
  ])(
    'takes a file of $chunks chunks out of search at once, answers another store while its rows go, then leaves none of them',
    async ({ chunks, searchedFirst }) => {
      const [kept, gone] = [`vs_keep_${chunks}`, `vs_gone_${chunks}`];
      await indexedFile(kept, `file-keep-${chunks}`, 3);
      await indexedFile(gone, `file-big-${chunks}`, chunks);
      expect(await rows(gone, `file-big-${chunks}`)).toEqual({ chunks, postings: chunks * TERMS });
      expect(await store.lexical({ storeIds: [gone] }, ['t1'], 5)).toHaveLength(5);

      expect(await store.deleteFile(`file-big-${chunks}`, '')).toBe(true);
      // Gone from search before a single chunk row is removed.
      expect(await store.lexical({ storeIds: [gone] }, ['t1'], 5)).toEqual([]);
      const order: string[] = [];
      const purged = store.purgePending().then(() => order.push('purged'));
      const other = store.lexical({ storeIds: [kept] }, ['t1'], 5).then((hits) => (order.push('searched'), hits));
      const [, hits] = await Promise.all([purged, other]);
      expect([...order].sort()).toEqual(['purged', 'searched']);
      if (searchedFirst) expect(order).toEqual(['searched', 'purged']);
      expect(hits).toHaveLength(3);
      expect(await rows(gone, `file-big-${chunks}`)).toEqual({ chunks: 0, postings: 0 });
      expect(await rows(kept, `file-keep-${chunks}`)).toEqual({ chunks: 3, postings: 3 * TERMS });
      expect(await store.db.all('SELECT id FROM fs_purges')).toEqual([]);
    },
    60_000,
  );

  it('purges a deleted store, and keeps a file added to a store again out of the purge of its earlier copy', async () => {
    await indexedFile('vs_whole', 'file-w1', 40);
    await indexedFile('vs_whole', 'file-w2', 40);
    await indexedFile('vs_again', 'file-again', 40);
    expect(await store.deleteStore('vs_whole', '')).toBe(true);
    expect(await store.deleteStoreFile('vs_again', 'file-again')).toBe(true);
    // Added again at once, before the earlier copy's rows are purged: its new chunks are not part of that purge.
    await indexedFile('vs_again', 'file-again', 5);
    await store.purgePending();
    expect(await rows('vs_whole', 'file-w1')).toEqual({ chunks: 0, postings: 0 });
    expect(await rows('vs_whole', 'file-w2')).toEqual({ chunks: 0, postings: 0 });
    expect(await rows('vs_again', 'file-again')).toEqual({ chunks: 5, postings: 5 * TERMS });
  });

  it('finishes, when it opens again, a purge a stopped process had recorded', async () => {
    await indexedFile('vs_resume', 'file-resume', 30);
    // What a process killed right after the deleting transaction leaves: the rows and their purge record.
    await store.db.run('DELETE FROM fs_store_files WHERE file_id = ?', ['file-resume']);
    await store.db.run("INSERT INTO fs_purges (store_id, file_id, up_to, created_at) SELECT '', 'file-resume', MAX(id), 0 FROM fs_chunks", []);
    await store.init();
    await store.purgePending();
    expect(await rows('vs_resume', 'file-resume')).toEqual({ chunks: 0, postings: 0 });
  });
});
