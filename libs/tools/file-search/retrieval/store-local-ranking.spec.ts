import { postgresBackend, sqliteBackend, type Backend } from '../../../../test/support/file-search/backends.js';
import { TOPICS } from '../../../../test/support/file-search/documents.js';
import { NO_OWNER } from '../storage/file-search-rows.js';
import { FileSearchStore, nextSeq } from '../storage/file-search.store.js';
import { PostgresDatabase, SqliteDatabase } from '#storage/sql/sql-database.js';
import { FileSearchService } from './file-search.service.js';
import { textTerms } from './text-terms.js';

const now = () => Math.floor(Date.now() / 1000);

/** A store whose files are ingested at once (each text one file of `chunksPerFile` copies), through the store's own job path. */
async function seed(store: FileSearchStore, storeId: string, texts: readonly string[], chunksPerFile = 1): Promise<string[]> {
  const analyzer = await textTerms();
  await store.insertStore({
    id: storeId,
    owner: NO_OWNER,
    name: storeId,
    description: null,
    metadata: {},
    createdAt: now(),
    seq: nextSeq(),
    lastActiveAt: now(),
    expiresAfter: null,
  });
  const ids = texts.map((_, i) => `${storeId}-f${i}`);
  for (const [i, id] of ids.entries()) {
    await store.insertFile(
      { id, owner: NO_OWNER, filename: `${id}.txt`, purpose: 'assistants', bytes: texts[i].length, createdAt: now(), seq: nextSeq(), expiresAt: null },
      Buffer.from(texts[i]),
    );
  }
  const chunking = { maxChunkSizeTokens: 800, chunkOverlapTokens: 400, auto: true };
  await store.addStoreFiles(
    ids.map((fileId) => ({
      storeId,
      fileId,
      batchId: null,
      status: 'in_progress',
      lastError: null,
      attributes: {},
      chunking,
      usageBytes: 0,
      createdAt: now(),
      seq: nextSeq(),
      attempts: 0,
    })),
  );
  for (;;) {
    const job = await store.claimJob('seed', Date.now(), 60_000);
    if (!job) return ids;
    const text = texts[ids.indexOf(job.fileId)];
    const chunks = Array.from({ length: chunksPerFile }, (_, position) => {
      const t = chunksPerFile === 1 ? text : `${text} (part ${position})`;
      return { position, text: t, terms: analyzer.termCounts(t) };
    });
    await store.completeJob(job, 'seed', chunks, text.length);
  }
}

const SEARCHED = [
  TOPICS.warranty,
  TOPICS.descaling,
  TOPICS.shipping,
  TOPICS.returns,
  TOPICS.security,
  'The kettle thermostat switches off at one hundred degrees; a faulty thermostat is replaced under warranty.',
];
/** Other tenants' text: the searched store's words at other frequencies, so leaked statistics would move scores. */
const OTHERS = [
  'Thermostat thermostat warranty kettle: every thermostat, every kettle.',
  'Shipping courier Rotterdam refund passwordless limescale.',
  'Unrelated prose about gardens, roses and soil.',
];
const QUERIES = ['thermostat warranty', 'kettle', 'refund for returned items', 'Rotterdam courier', 'zeppelin orchestra', 'limescale thermostat kettle'];

describe.each([
  ['SQLite', sqliteBackend],
  ['PostgreSQL', postgresBackend],
])('store-local ranking on %s', (_name, makeBackend) => {
  let backend: Backend;
  let store: FileSearchStore;
  let service: FileSearchService;

  beforeAll(async () => {
    backend = await makeBackend();
    const s = backend.storage as { sqlitePath?: string; postgresUrl?: string };
    store = new FileSearchStore(backend.name === 'sqlite' ? new SqliteDatabase(s.sqlitePath!.replace('state.sqlite', 'files.sqlite')) : new PostgresDatabase(s.postgresUrl!, 4));
    await store.init();
    service = new FileSearchService(store, null);
    await seed(store, 'vs_searched', SEARCHED);
  }, 60_000);
  afterAll(async () => {
    await store?.close();
    await backend?.drop();
  });

  const results = async () =>
    Promise.all(QUERIES.map(async (q) => (await service.search({ storeIds: ['vs_searched'], queries: [q], maxNumResults: 5, scoreThreshold: 0 })).map((r) => [r.fileId, r.score])));

  it('scores relevance: nothing for a query sharing no word, about 1 for a full match, in between for part of one', async () => {
    // Two files hold both words: both are full matches.
    const full = await service.search({ storeIds: ['vs_searched'], queries: ['thermostat warranty'], maxNumResults: 5, scoreThreshold: 0 });
    expect(new Set(full.slice(0, 2).map((r) => r.fileId))).toEqual(new Set(['vs_searched-f0', 'vs_searched-f5']));
    expect(full[1].score).toBeGreaterThan(0.9);
    expect(await service.search({ storeIds: ['vs_searched'], queries: ['zeppelin orchestra'], maxNumResults: 5, scoreThreshold: 0 })).toEqual([]);
    const [part] = await service.search({ storeIds: ['vs_searched'], queries: ['thermostat zeppelin'], maxNumResults: 5, scoreThreshold: 0 });
    expect(part.score).toBeGreaterThan(0.2);
    expect(part.score).toBeLessThan(0.8);
    // A rare word weighs more than a common one: "limescale" (one file) outweighs "kettle" (three).
    const [rare] = await service.search({ storeIds: ['vs_searched'], queries: ['limescale kettle'], maxNumResults: 5, scoreThreshold: 0 });
    expect(rare.fileId).toBe('vs_searched-f1');
    const kettleOnly = (await service.search({ storeIds: ['vs_searched'], queries: ['limescale kettle'], maxNumResults: 5, scoreThreshold: 0 })).find(
      (r) => r.fileId === 'vs_searched-f0',
    )!;
    expect(kettleOnly.score).toBeLessThan(0.5);
    expect(rare.score).toBeGreaterThan(0.9);
  });

  it('gives the same results, order and scores when other stores hold 1x, 10x and 100x as many chunks', async () => {
    const alone = await results();
    expect(alone[0].length).toBe(2);
    const chunks = SEARCHED.length;
    let held = 0;
    for (const [factor, storeCount] of [
      [1, 1],
      [10, 2],
      [100, 3],
    ] as const) {
      // Other stores' chunks up to `factor` times the searched store's, spread over several stores.
      const perStore = Math.ceil((factor * chunks - held) / storeCount);
      for (let s = 0; s < storeCount; s++) {
        const perFile = Math.max(1, Math.ceil(perStore / OTHERS.length));
        await seed(store, `vs_other_${factor}_${s}`, OTHERS, perFile);
        held += perFile * OTHERS.length;
      }
      expect(held).toBeGreaterThanOrEqual(factor * chunks);
      const grown = await results();
      expect(grown).toEqual(alone);
    }
  }, 60_000);
});
