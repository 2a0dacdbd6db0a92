import { postgresBackend, sqliteBackend, type Backend } from '../../../../test/support/file-search/backends.js';
import { NO_OWNER } from '../storage/file-search-rows.js';
import { FileSearchStore, nextSeq } from '../storage/file-search.store.js';
import { PostgresDatabase, SqliteDatabase } from '#storage/sql/sql-database.js';
import { FileSearchService } from './file-search.service.js';
import { textTerms } from './text-terms.js';

const now = () => Math.floor(Date.now() / 1000);

/** Prose that matches no query here, to give chunks a realistic length. */
const FILLER = 'The office opens at nine and the staff meet on Mondays to plan the week ahead with coffee and biscuits. ';
const pad = (text: string) => `${text} ${FILLER.repeat(6)}`;

/**
 * Files given as their chunks, uploaded in the order listed (chunk ids
 * follow it), ingested through the store's job path with OpenAI's auto
 * chunking recorded for them.
 */
async function seed(store: FileSearchStore, storeId: string, files: Record<string, readonly string[]>): Promise<void> {
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
  const chunking = { maxChunkSizeTokens: 800, chunkOverlapTokens: 400, auto: true };
  for (const [name, chunks] of Object.entries(files)) {
    const text = chunks.join('\n');
    await store.insertFile(
      { id: name, owner: NO_OWNER, filename: `${name}.txt`, purpose: 'assistants', bytes: text.length, createdAt: now(), seq: nextSeq(), expiresAt: null },
      Buffer.from(text),
    );
    await store.addStoreFiles([
      { storeId, fileId: name, batchId: null, status: 'in_progress', lastError: null, attributes: {}, chunking, usageBytes: 0, createdAt: now(), seq: nextSeq(), attempts: 0 },
    ]);
    const job = (await store.claimJob('seed', Date.now(), 60_000))!;
    await store.completeJob(
      job,
      'seed',
      chunks.map((t, position) => ({ position, text: t, terms: analyzer.termCounts(t) })),
      text.length,
    );
  }
}

/** One chunk of each, word for word the same: only their documents tell them apart. */
const KETTLE = pad('Fill the kettle to the line and press the switch.');
const FILES = {
  // Uploaded first, about something else: an upload-order tie-break would put it first.
  'office-notes': [KETTLE, pad('The car park is closed on Fridays for resurfacing.'), pad('Visitors sign in at the front desk.')],
  // Its other chunks are about the question's other words.
  'kettle-manual': [KETTLE, pad('The warranty covers the heating element for two years.'), pad('Descaling every month keeps the warranty valid.')],
  // Every query word, many times over, in one chunk: the full score is far above the cap.
  'warranty-card': [pad('Kettle warranty: kettle warranty claims, kettle warranty terms, kettle warranty card.')],
  brochure: [pad('Our kettle and our warranty are the best.')],
};

describe.each([
  ['SQLite', sqliteBackend],
  ['PostgreSQL', postgresBackend],
])('document evidence in lexical ranking on %s', (_name, makeBackend) => {
  let backend: Backend;
  let store: FileSearchStore;
  let service: FileSearchService;
  const search = (query: string, maxNumResults = 10) => service.search({ storeIds: ['vs_doc'], queries: [query], maxNumResults, scoreThreshold: 0 });

  beforeAll(async () => {
    backend = await makeBackend();
    const s = backend.storage as { sqlitePath?: string; postgresUrl?: string };
    store = new FileSearchStore(backend.name === 'sqlite' ? new SqliteDatabase(s.sqlitePath!.replace('state.sqlite', 'files.sqlite')) : new PostgresDatabase(s.postgresUrl!, 4));
    await store.init();
    service = new FileSearchService(store, null);
    await seed(store, 'vs_doc', FILES);
  }, 60_000);
  afterAll(async () => {
    await store?.close();
    await backend?.drop();
  });

  it("ranks a chunk by its document too: of two identical chunks, the one whose file holds the query's other words comes first", async () => {
    const results = await search('kettle descaling');
    const files = [...new Set(results.map((r) => r.fileId))];
    expect(files.indexOf('kettle-manual')).toBeLessThan(files.indexOf('office-notes'));
    // The identical chunks score alike as chunks; the manual's ranks higher for its document.
    const [manual, notes] = ['kettle-manual', 'office-notes'].map((f) => results.find((r) => r.fileId === f && r.text === KETTLE)!);
    expect(manual.score).toBeGreaterThan(notes.score);
    // Results stay chunks, each with one score in [0, 1].
    for (const r of results) {
      expect(r.score).toBeGreaterThan(0);
      expect(r.score).toBeLessThanOrEqual(1);
    }
    expect(results[0].fileId).toBe('kettle-manual');
  });

  it('orders by the full score where reported scores are capped at 1, and thresholds the reported one', async () => {
    const results = await search('kettle warranty');
    expect(results[0].fileId).toBe('warranty-card');
    expect(results[0].score).toBe(1);
    const scores = results.map((r) => r.score);
    expect(Math.max(...scores)).toBeLessThanOrEqual(1);
    // The threshold reads the reported score: 1 keeps only the capped ones, still in rank order.
    const strict = await service.search({ storeIds: ['vs_doc'], queries: ['kettle warranty'], maxNumResults: 10, scoreThreshold: 1 });
    expect(strict.length).toBeGreaterThan(0);
    expect(strict.every((r) => r.score === 1)).toBe(true);
    expect(strict.map((r) => r.chunkId)).toEqual(results.filter((r) => r.score === 1).map((r) => r.chunkId));
  });

  it("puts every file's best chunk before any file's second one", async () => {
    const files = (await search('kettle warranty descaling')).map((r) => r.fileId);
    const firstRound = files.slice(0, new Set(files).size);
    expect(new Set(firstRound).size).toBe(firstRound.length);
  });
});

describe('document evidence: the same ranking on SQLite and PostgreSQL', () => {
  it('gives the same results, order and scores on both', async () => {
    const runs: Array<Array<[string, number, string]>> = [];
    for (const makeBackend of [sqliteBackend, postgresBackend]) {
      const backend = await makeBackend();
      const s = backend.storage as { sqlitePath?: string; postgresUrl?: string };
      const store = new FileSearchStore(
        backend.name === 'sqlite' ? new SqliteDatabase(s.sqlitePath!.replace('state.sqlite', 'files.sqlite')) : new PostgresDatabase(s.postgresUrl!, 4),
      );
      try {
        await store.init();
        await seed(store, 'vs_same', FILES);
        const service = new FileSearchService(store, null);
        const rows: Array<[string, number, string]> = [];
        for (const q of ['kettle descaling', 'kettle warranty', 'warranty heating element', 'front desk visitors']) {
          for (const r of await service.search({ storeIds: ['vs_same'], queries: [q], maxNumResults: 10, scoreThreshold: 0 })) rows.push([r.fileId, r.score, r.text]);
        }
        runs.push(rows);
      } finally {
        await store.close();
        await backend.drop();
      }
    }
    const [sqlite, postgres] = runs;
    expect(sqlite.length).toBeGreaterThan(5);
    expect(postgres.map(([f, , t]) => [f, t])).toEqual(sqlite.map(([f, , t]) => [f, t]));
    postgres.forEach(([, score], i) => expect(score).toBeCloseTo(sqlite[i][1], 9));
  }, 60_000);
});
