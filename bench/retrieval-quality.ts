import { randomBytes } from 'node:crypto';
import os from 'node:os';
import pg from 'pg';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { EmbeddingsClient } from '#tools/file-search/ingestion/embeddings.client.js';
import { PostgresDatabase, SqliteDatabase, type SqlDatabase } from '#storage/sql/sql-database.js';
import { CRANFIELD_PATH, loadJudgedCorpus, rankingQuality, rankWithFileSearch, type RankingQuality } from '#tools/file-search/testing/judged-corpus.js';
import { CORPUS_PATH, evaluateRetrieval, loadLabelledCorpus, type LabelledCorpus, type RetrievalQuality } from '#tools/file-search/testing/retrieval-eval.js';
import { rankWithWinkBm25 } from './lib/wink-baseline.js';

/**
 * `npm run bench:retrieval [-- --postgres=URL]`: recall@5 and MRR@5 of
 * file search on the labelled corpus, lexical (BM25) and hybrid (BM25 +
 * vectors from the simulated upstream's deterministic embeddings, fused by
 * RRF), on SQLite and, when reachable, PostgreSQL (a schema of its own,
 * dropped afterwards). Times are reported as ratios to the lexical run of
 * the same backend in the same process, never as absolute targets.
 */
function flag(name: string): string | undefined {
  const hit = process.argv.slice(2).find((a) => a.startsWith(`--${name}=`));
  return hit?.slice(name.length + 3);
}

/**
 * The public test collection (Cranfield: 1,400 abstracts, 225 queries with
 * judgments) through file search, beside a whole-document BM25 from a
 * well-known library on the same texts and queries. File search runs with
 * OpenAI's auto chunking (each abstract is one chunk) and with small
 * chunks (64 tokens, 32 overlapping), where a document is several chunks
 * and per-file ranking matters.
 */
async function cranfield(pgUrl: string, pgReachable: boolean): Promise<void> {
  const corpus = loadJudgedCorpus();
  const rows: Array<{ system: string; q: RankingQuality; ms: number }> = [];
  const timed = async (system: string, rank: () => Promise<Map<string, string[]>> | Map<string, string[]>) => {
    const t0 = performance.now();
    const ranked = await rank();
    rows.push({ system, q: rankingQuality(corpus, ranked), ms: performance.now() - t0 });
    console.error(`cranfield ${system}: ${JSON.stringify(rows.at(-1)!.q)}`);
  };
  await timed('wink-bm25-text-search 3.1.2, whole documents (baseline)', () => rankWithWinkBm25(corpus));
  const small = { maxChunkSizeTokens: 64, chunkOverlapTokens: 32, auto: false };
  await timed('file_search lexical, SQLite, auto chunks (800/400)', () => rankWithFileSearch(new SqliteDatabase(':memory:'), corpus, AUTO, null));
  await timed('file_search lexical, SQLite, small chunks (64/32)', () => rankWithFileSearch(new SqliteDatabase(':memory:'), corpus, small, null));
  if (pgReachable) {
    const admin = new pg.Pool({ connectionString: pgUrl, max: 1 });
    const schema = `sy_fs_cran_${randomBytes(4).toString('hex')}`;
    await admin.query(`CREATE SCHEMA ${schema}`);
    try {
      const db = new PostgresDatabase(`${pgUrl}${pgUrl.includes('?') ? '&' : '?'}options=-c%20search_path%3D${schema}`, 4);
      await timed('file_search lexical, PostgreSQL, auto chunks (800/400)', () => rankWithFileSearch(db, corpus, AUTO, null));
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    }
  }
  console.log(`\nCranfield (\`${CRANFIELD_PATH}\`): ${corpus.documents.length} documents, ${corpus.queries.length} queries with judgments.\n`);
  console.log('| system | Recall@5 | MRR@10 | Success@5 |');
  console.log('| --- | --- | --- | --- |');
  for (const r of rows) console.log(`| ${r.system} | ${r.q.recallAt5.toFixed(3)} | ${r.q.mrrAt10.toFixed(3)} | ${r.q.successAt5.toFixed(3)} |`);
}

const AUTO = { maxChunkSizeTokens: 800, chunkOverlapTokens: 400, auto: true };

async function main(): Promise<void> {
  if (process.argv.includes('--cranfield-only')) {
    const url = flag('postgres') ?? 'postgres://postgres@127.0.0.1:5432/test';
    const probe = new pg.Pool({ connectionString: url, max: 1 });
    const reachable = await probe.query('SELECT 1').then(
      () => true,
      () => false,
    );
    await probe.end();
    return cranfield(url, reachable);
  }
  const corpus = loadLabelledCorpus();
  const sim = new SimulatedUpstream();
  const { url } = await sim.listen(0, '127.0.0.1');
  const embeddings = new EmbeddingsClient({ baseUrl: url, model: 'switchyard-sim', batchSize: 64, timeoutMs: 30_000 });
  const rows: Array<{ backend: string; mode: string; q: RetrievalQuality }> = [];

  const backends: Array<{ name: string; open: () => Promise<SqlDatabase>; cleanup: () => Promise<void> }> = [
    { name: 'SQLite (FTS5 BM25, sqlite-vec)', open: async () => new SqliteDatabase(':memory:'), cleanup: async () => undefined },
  ];
  const pgUrl = flag('postgres') ?? 'postgres://postgres@127.0.0.1:5432/test';
  const admin = new pg.Pool({ connectionString: pgUrl, max: 1 });
  const schemas: string[] = [];
  try {
    await admin.query('SELECT 1');
    backends.push({
      name: 'PostgreSQL (ts_rank_cd, vectors in Node)',
      open: async () => {
        const schema = `sy_fs_bench_${randomBytes(4).toString('hex')}`;
        schemas.push(schema);
        await admin.query(`CREATE SCHEMA ${schema}`);
        return new PostgresDatabase(`${pgUrl}${pgUrl.includes('?') ? '&' : '?'}options=-c%20search_path%3D${schema}`, 4);
      },
      cleanup: async () => {
        for (const s of schemas.splice(0)) await admin.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
      },
    });
  } catch (e) {
    console.error(`PostgreSQL not reachable at ${pgUrl}; reporting SQLite only (${(e as Error).message})`);
  }

  try {
    for (const b of backends) {
      for (const mode of ['lexical', 'hybrid'] as const) {
        const q = await evaluateRetrieval(corpus, await b.open(), mode === 'hybrid' ? embeddings : null);
        rows.push({ backend: b.name, mode, q });
        console.error(`${b.name} ${mode}: recall@5 ${q.recallAtK.toFixed(3)}, MRR ${q.mrr.toFixed(3)}, misses ${JSON.stringify(q.misses)}`);
      }
      await b.cleanup();
    }
  } finally {
    await admin.end().catch(() => undefined);
    await sim.close();
  }

  // Growth: the corpus repeated 10x and 100x (copies marked as revisions), SQLite, both modes.
  const growth: Array<{ mode: string; factor: number; q: RetrievalQuality }> = [];
  const sim2 = new SimulatedUpstream();
  const { url: url2 } = await sim2.listen(0, '127.0.0.1');
  const embeddings2 = new EmbeddingsClient({ baseUrl: url2, model: 'switchyard-sim', batchSize: 64, timeoutMs: 30_000 });
  try {
    for (const mode of ['lexical', 'hybrid'] as const) {
      for (const factor of [1, 10, 100]) {
        const q = await evaluateRetrieval(grow(corpus, factor), new SqliteDatabase(':memory:'), mode === 'hybrid' ? embeddings2 : null);
        growth.push({ mode, factor, q });
        console.error(`growth ${mode} x${factor}: ingest ${q.ingestMs.toFixed(0)} ms, search ${q.searchMs.toFixed(0)} ms`);
      }
    }
  } finally {
    await sim2.close();
  }

  const cpus = os.cpus();
  console.log(
    `Run ${new Date().toISOString()} on ${cpus.length} × ${cpus[0]?.model.trim() ?? 'cpu'}, Node ${process.version}; corpus \`${CORPUS_PATH}\`: ${corpus.documents.length} documents, ${corpus.queries.length} queries.\n`,
  );
  console.log('| backend | retrieval | recall@5 | MRR@5 | ingest time vs lexical | search time vs lexical | missed queries |');
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  for (const r of rows) {
    const base = rows.find((x) => x.backend === r.backend && x.mode === 'lexical')!.q;
    console.log(
      `| ${r.backend} | ${r.mode} | ${r.q.recallAtK.toFixed(3)} | ${r.q.mrr.toFixed(3)} | ${(r.q.ingestMs / base.ingestMs).toFixed(2)}× | ${(r.q.searchMs / base.searchMs).toFixed(2)}× | ${r.q.misses.map((m) => `"${m}"`).join(', ') || 'none'} |`,
    );
  }
  console.log('\n| SQLite, retrieval | documents | ingest time per document vs 1× | search time per query vs 1× |');
  console.log('| --- | --- | --- | --- |');
  for (const g of growth) {
    const base = growth.find((x) => x.mode === g.mode && x.factor === 1)!.q;
    const perDoc = (q: RetrievalQuality, f: number) => q.ingestMs / (corpus.documents.length * f);
    console.log(
      `| ${g.mode} | ${corpus.documents.length * g.factor} (${g.factor}×) | ${(perDoc(g.q, g.factor) / perDoc(base, 1)).toFixed(2)}× | ${(g.q.searchMs / base.searchMs).toFixed(2)}× |`,
    );
  }
}

function grow(corpus: LabelledCorpus, factor: number): LabelledCorpus {
  const documents = [...corpus.documents];
  for (let n = 1; n < factor; n++) for (const d of corpus.documents) documents.push({ id: `${d.id}-rev${n}`, text: `${d.text} Revision ${n}.` });
  return { ...corpus, documents };
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
