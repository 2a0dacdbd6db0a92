import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import os from 'node:os';
import pg from 'pg';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { EmbeddingsClient } from '#tools/file-search/ingestion/embeddings.client.js';
import { PostgresDatabase, SqliteDatabase, type SqlDatabase } from '#storage/sql/sql-database.js';
import {
  CRANFIELD_PATH,
  DEBIAN_MAN_PATH,
  documentText,
  ingestJudged,
  loadJudgedCorpus,
  rankingQuality,
  rankWithFileSearch,
  type RankingQuality,
} from '#tools/file-search/testing/judged-corpus.js';
import { FileSearchStore } from '#tools/file-search/storage/file-search.store.js';
import { CORPUS_PATH, evaluateRetrieval, loadLabelledCorpus, type LabelledCorpus, type RetrievalQuality } from '#tools/file-search/testing/retrieval-eval.js';
import { indexWithWinkChunked, rankWithWinkBm25 } from './lib/wink-baseline.js';

/**
 * `npm run bench:retrieval [-- --only=PARTS] [--postgres=URL] [--pairs=N]`
 * runs, in this order (`PARTS` below; bench/README.md says the same):
 * `labelled`, recall@5 and MRR@5 of file search on the labelled corpus,
 * lexical (BM25) and hybrid (BM25 + vectors from the simulated upstream's
 * deterministic embeddings), on SQLite and, when reachable, PostgreSQL (a
 * schema of its own, dropped afterwards), with times as ratios to the
 * lexical run of the same backend, never as absolute targets; `cranfield`
 * and `debian-man`, the judged collections beside wink's whole-document
 * BM25; `ingest-cpu`, ingestion CPU against wink's chunked indexing.
 */
function flag(name: string): string | undefined {
  const hit = process.argv.slice(2).find((a) => a.startsWith(`--${name}=`));
  return hit?.slice(name.length + 3);
}

interface JudgedRow {
  system: string;
  q: RankingQuality;
  tuning?: RankingQuality;
  heldOut?: RankingQuality;
}

/**
 * A judged collection through file search, beside a whole-document BM25
 * from a well-known library on the same texts and questions: Cranfield
 * (1,400 abstracts, each one chunk with OpenAI's auto chunking; also with
 * small chunks, where a document is several) and the Debian man pages
 * (long documents, several chunks each; figures also for the questions
 * used while tuning and those held out).
 */
async function judged(name: string, path: string, pgUrl: string, pgReachable: boolean, embeddings: EmbeddingsClient): Promise<void> {
  const corpus = loadJudgedCorpus(path);
  const rows: JudgedRow[] = [];
  const part = (split: 'tuning' | 'held-out') => ({ ...corpus, queries: corpus.queries.filter((q) => q.split === split) });
  const hasSplit = corpus.queries.some((q) => q.split !== undefined);
  const timed = async (system: string, rank: () => Promise<Map<string, string[]>> | Map<string, string[]>) => {
    const ranked = await rank();
    const row: JudgedRow = { system, q: rankingQuality(corpus, ranked) };
    if (hasSplit) [row.tuning, row.heldOut] = [rankingQuality(part('tuning'), ranked), rankingQuality(part('held-out'), ranked)];
    rows.push(row);
    console.error(`${name} ${system}: ${JSON.stringify(row)}`);
  };
  await timed('wink-bm25-text-search 3.1.2, whole documents (baseline)', () => rankWithWinkBm25(corpus));
  await timed('file_search lexical, SQLite, auto chunks (800/400)', () => rankWithFileSearch(new SqliteDatabase(':memory:'), corpus, AUTO, null));
  if (name === 'Cranfield') {
    const small = { maxChunkSizeTokens: 64, chunkOverlapTokens: 32, auto: false };
    await timed('file_search lexical, SQLite, small chunks (64/32)', () => rankWithFileSearch(new SqliteDatabase(':memory:'), corpus, small, null));
  }
  await timed('file_search hybrid (simulator embeddings), SQLite, auto chunks', () => rankWithFileSearch(new SqliteDatabase(':memory:'), corpus, AUTO, embeddings));
  if (pgReachable) {
    const admin = new pg.Pool({ connectionString: pgUrl, max: 1 });
    const schema = `sy_fs_judged_${randomBytes(4).toString('hex')}`;
    await admin.query(`CREATE SCHEMA ${schema}`);
    try {
      const db = new PostgresDatabase(`${pgUrl}${pgUrl.includes('?') ? '&' : '?'}options=-c%20search_path%3D${schema}`, 4);
      await timed('file_search lexical, PostgreSQL, auto chunks (800/400)', () => rankWithFileSearch(db, corpus, AUTO, null));
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    }
  }
  const mb = corpus.documents.reduce((sum, d) => sum + Buffer.byteLength(documentText(d)), 0) / 1e6;
  console.log(`\n${name} (\`${path}\`): ${corpus.documents.length} documents (${mb.toFixed(1)} MB of text), ${corpus.queries.length} questions with judgments.\n`);
  const cells = (q: RankingQuality) => `${q.recallAt1.toFixed(3)} | ${q.recallAt5.toFixed(3)} | ${q.mrrAt10.toFixed(3)} | ${q.successAt5.toFixed(3)}`;
  console.log(`| system | Recall@1 | Recall@5 | MRR@10 | Success@5 |${hasSplit ? ' Recall@5 / MRR@10, tuning half | Recall@5 / MRR@10, held-out half |' : ''}`);
  console.log(`| --- | --- | --- | --- | --- |${hasSplit ? ' --- | --- |' : ''}`);
  for (const r of rows) {
    const split = (q?: RankingQuality) => (q ? ` ${q.recallAt5.toFixed(3)} / ${q.mrrAt10.toFixed(3)} |` : '');
    console.log(`| ${r.system} | ${cells(r.q)} |${split(r.tuning)}${split(r.heldOut)}`);
  }
}

const AUTO = { maxChunkSizeTokens: 800, chunkOverlapTokens: 400, auto: true };

/** What `npm run bench:retrieval` runs, in order; `--only=a,b` runs some of them. */
const PARTS = ['labelled', 'cranfield', 'debian-man', 'ingest-cpu'] as const;

async function main(): Promise<void> {
  const only = flag('only')?.split(',') ?? [...PARTS];
  const unknown = only.filter((p) => !(PARTS as readonly string[]).includes(p));
  if (unknown.length > 0) throw new Error(`--only: unknown part(s) ${unknown.join(', ')}; the parts are ${PARTS.join(', ')}`);
  const cpus = os.cpus();
  console.log(`Run ${new Date().toISOString()} on ${cpus.length} × ${cpus[0]?.model.trim() ?? 'cpu'}, Node ${process.version}, load average ${os.loadavg()[0].toFixed(1)}.`);
  if (only.includes('labelled')) await labelled();
  const url = flag('postgres') ?? 'postgres://postgres@127.0.0.1:5432/test';
  const probe = new pg.Pool({ connectionString: url, max: 1 });
  const reachable = await probe.query('SELECT 1').then(
    () => true,
    () => false,
  );
  await probe.end();
  if (!reachable) console.error(`PostgreSQL not reachable at ${url}; its rows are left out`);
  const sim = new SimulatedUpstream();
  const { url: simUrl } = await sim.listen(0, '127.0.0.1');
  const embeddings = new EmbeddingsClient({ baseUrl: simUrl, model: 'switchyard-sim', batchSize: 64, timeoutMs: 30_000 });
  try {
    if (only.includes('cranfield')) await judged('Cranfield', CRANFIELD_PATH, url, reachable, embeddings);
    if (only.includes('debian-man')) await judged('Debian man pages', DEBIAN_MAN_PATH, url, reachable, embeddings);
  } finally {
    await sim.close();
  }
  if (only.includes('ingest-cpu')) await ingestionCpu(Number(flag('pairs') ?? 3));
}

/**
 * CPU time (this process, all threads) to ingest the Debian man pages
 * through file search (a SQLite database file, auto chunking, the real
 * worker and threads) against wink-bm25-text-search indexing the same texts
 * cut into chunks of about the same size. Runs alternate, so a shared
 * machine's load falls on both alike; the ratio is per pair.
 */
async function ingestionCpu(pairs: number): Promise<void> {
  const corpus = loadJudgedCorpus(DEBIAN_MAN_PATH);
  const dir = mkdtempSync(join(os.tmpdir(), 'sy-fs-ingest-'));
  const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;
  const ratios: number[] = [];
  const rows: string[] = [];
  try {
    for (let i = 0; i < pairs; i++) {
      const runs: Record<string, number> = {};
      for (const which of i % 2 === 0 ? ['wink', 'file_search'] : ['file_search', 'wink']) {
        const t0 = process.cpuUsage();
        if (which === 'wink') indexWithWinkChunked(corpus);
        else {
          const store = new FileSearchStore(new SqliteDatabase(join(dir, `run-${i}.db`)));
          await store.init();
          await ingestJudged(store, 'vs_cpu', corpus, AUTO, null);
          await store.close();
        }
        runs[which] = cpuMs(process.cpuUsage(t0));
      }
      ratios.push(runs.file_search / runs.wink);
      rows.push(`| ${i + 1} | ${(runs.wink / 1000).toFixed(2)} s | ${(runs.file_search / 1000).toFixed(2)} s | ${(runs.file_search / runs.wink).toFixed(2)}× |`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\nIngestion CPU, Debian man pages (${corpus.documents.length} files), ${pairs} interleaved pairs, load average ${os.loadavg()[0].toFixed(1)} at the end.\n`);
  console.log('| pair | wink, chunked | file_search (SQLite file) | ratio |');
  console.log('| --- | --- | --- | --- |');
  for (const r of rows) console.log(r);
  console.log(`\nMedian ratio ${[...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)].toFixed(2)}×.`);
}

async function labelled(): Promise<void> {
  const corpus = loadLabelledCorpus();
  const sim = new SimulatedUpstream();
  const { url } = await sim.listen(0, '127.0.0.1');
  const embeddings = new EmbeddingsClient({ baseUrl: url, model: 'switchyard-sim', batchSize: 64, timeoutMs: 30_000 });
  const rows: Array<{ backend: string; mode: string; q: RetrievalQuality }> = [];

  const backends: Array<{ name: string; open: () => Promise<SqlDatabase>; cleanup: () => Promise<void> }> = [
    { name: 'SQLite (store-local BM25, sqlite-vec)', open: async () => new SqliteDatabase(':memory:'), cleanup: async () => undefined },
  ];
  const pgUrl = flag('postgres') ?? 'postgres://postgres@127.0.0.1:5432/test';
  const admin = new pg.Pool({ connectionString: pgUrl, max: 1 });
  const schemas: string[] = [];
  try {
    await admin.query('SELECT 1');
    backends.push({
      name: 'PostgreSQL (store-local BM25, vectors in Node)',
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

  console.log(`\nLabelled corpus \`${CORPUS_PATH}\`: ${corpus.documents.length} documents, ${corpus.queries.length} queries.\n`);
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
