import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { textTerms } from '#tools/file-search/retrieval/text-terms.js';
import { FileSearchService } from '#tools/file-search/retrieval/file-search.service.js';
import { NO_OWNER } from '#tools/file-search/storage/file-search-rows.js';
import { FileSearchStore, nextSeq } from '#tools/file-search/storage/file-search.store.js';
import { PostgresDatabase, SqliteDatabase, type SqlDatabase } from '#storage/sql/sql-database.js';
import { documentText, loadJudgedCorpus } from '#tools/file-search/testing/judged-corpus.js';
import { median } from './lib/stats.js';

/**
 * `node scripts/run-built.mjs bench/file-search-growth.bench [--postgres=URL]`:
 * what one store's search costs as the rest of the database grows. The
 * searched store is fixed (200 Cranfield abstracts, a chunk each); other
 * stores (other tenants) get the remaining abstracts, repeated, until they
 * hold 1×, 10× and 100× its chunks. Every Cranfield query runs against the
 * searched store at each size; the figure is the median time per search,
 * as a ratio to the 1× run on the same backend in the same process.
 */
const SEARCHED = 200;
const CHUNKS_PER_FILE = 100;
const now = () => Math.floor(Date.now() / 1000);

function flag(name: string): string | undefined {
  return process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}

/** Files of the store, `perFile` chunks each, written through the store's job path (the index entries as the ingestion thread cuts them). */
async function fill(store: FileSearchStore, storeId: string, texts: readonly string[], perFile: number): Promise<void> {
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
  for (let f = 0; f * perFile < texts.length; f++) {
    const id = `${storeId}-f${f}`;
    const slice = texts.slice(f * perFile, (f + 1) * perFile);
    await store.insertFile({ id, owner: NO_OWNER, filename: `${id}.txt`, purpose: 'assistants', bytes: 1, createdAt: now(), seq: nextSeq(), expiresAt: null }, Buffer.from('x'));
    await store.addStoreFiles([
      { storeId, fileId: id, batchId: null, status: 'in_progress', lastError: null, attributes: {}, chunking, usageBytes: 0, createdAt: now(), seq: nextSeq(), attempts: 0 },
    ]);
    const job = await store.claimJob('bench', Date.now(), 600_000);
    if (!job) throw new Error('no job to claim');
    await store.completeJob(
      job,
      'bench',
      slice.map((text, position) => ({ position, text, terms: analyzer.termCounts(text) })),
      1,
    );
  }
}

async function measure(name: string, db: SqlDatabase): Promise<Array<{ backend: string; factor: number; others: number; ms: number }>> {
  const corpus = loadJudgedCorpus();
  const texts = corpus.documents.map(documentText);
  const store = new FileSearchStore(db);
  await store.init();
  const service = new FileSearchService(store, null);
  await fill(store, 'vs_searched', texts.slice(0, SEARCHED), CHUNKS_PER_FILE);
  const rest = texts.slice(SEARCHED);
  const out: Array<{ backend: string; factor: number; others: number; ms: number }> = [];
  let others = 0;
  let storeNo = 0;
  for (const factor of [1, 10, 100]) {
    while (others < factor * SEARCHED) {
      const n = Math.min(factor * SEARCHED - others, 2000);
      await fill(
        store,
        `vs_other_${storeNo++}`,
        Array.from({ length: n }, (_, i) => rest[(others + i) % rest.length]),
        CHUNKS_PER_FILE,
      );
      others += n;
    }
    const times: number[] = [];
    for (let pass = 0; pass < 2; pass++) {
      for (const q of corpus.queries) {
        const t0 = performance.now();
        await service.search({ storeIds: ['vs_searched'], queries: [q.text], maxNumResults: 10, scoreThreshold: 0 });
        times.push(performance.now() - t0);
      }
    }
    out.push({ backend: name, factor, others, ms: median(times) });
    console.error(`${name} ×${factor}: other stores hold ${others} chunks, median ${median(times).toFixed(2)} ms a search`);
  }
  await store.close();
  return out;
}

async function main(): Promise<void> {
  const rows: Array<{ backend: string; factor: number; others: number; ms: number }> = [];
  const dir = mkdtempSync(join(os.tmpdir(), 'sy-fs-growth-'));
  try {
    rows.push(...(await measure('SQLite', new SqliteDatabase(join(dir, 'files.sqlite')))));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const url = flag('postgres') ?? 'postgres://postgres@127.0.0.1:5432/test';
  const admin = new pg.Pool({ connectionString: url, max: 1 });
  const schema = `sy_fs_growth_${randomBytes(4).toString('hex')}`;
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
    rows.push(...(await measure('PostgreSQL', new PostgresDatabase(`${url}${url.includes('?') ? '&' : '?'}options=-c%20search_path%3D${schema}`, 4))));
  } catch (e) {
    console.error(`PostgreSQL not measured: ${(e as Error).message}`);
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await admin.end();
  }
  const cpus = os.cpus();
  console.log(
    `Run ${new Date().toISOString()} on ${cpus.length} × ${cpus[0]?.model.trim() ?? 'cpu'}, Node ${process.version}; searched store ${SEARCHED} chunks, ${loadJudgedCorpus().queries.length} queries × 2.\n`,
  );
  console.log('| backend | other stores hold | search time vs 1× |');
  console.log('| --- | --- | --- |');
  for (const r of rows) {
    const base = rows.find((x) => x.backend === r.backend && x.factor === 1)!;
    console.log(`| ${r.backend} | ${r.others} chunks (${r.factor}×) | ${(r.ms / base.ms).toFixed(2)}× |`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
