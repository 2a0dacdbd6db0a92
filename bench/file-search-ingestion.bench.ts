import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { toFile } from 'openai';
import { postgresBackend, sqliteBackend, type Backend } from '../test/support/file-search/backends.js';
import { startStack } from '../test/support/gateway-harness.js';
import { documentText, loadJudgedCorpus } from '#tools/file-search/testing/judged-corpus.js';
import { median, percentile } from './lib/stats.js';

/**
 * `node scripts/run-built.mjs bench/file-search-ingestion.bench [--files=N]`:
 * does a large ingestion batch share the machine? An in-process gateway
 * (SQLite, the simulated upstream) answers plain `/v1/responses` requests
 * one after another, first idle, then while a batch of files (Cranfield
 * abstracts, several per file, plus a few large files) is ingested, then
 * idle again; the figures are the plain requests' p50/p90 as ratios to idle
 * (before and after pooled, since the load of a shared machine drifts), and the
 * batch's throughput. Run with the ingestion threads at nice 0 and at the
 * default 10, each on a fresh gateway.
 */
const FILES = Number(process.argv.find((a) => a.startsWith('--files='))?.slice(8) ?? 300);
const MODEL = 'switchyard-sim';

function batchTexts(): string[] {
  const docs = loadJudgedCorpus().documents.map(documentText);
  const per = Math.max(1, Math.floor(docs.length / FILES));
  const texts = Array.from({ length: FILES }, (_, i) => docs.slice((i * per) % docs.length, ((i * per) % docs.length) + per).join('\n\n'));
  // A few large files among the small ones: about 2 MB each.
  const big = docs.join('\n\n');
  for (let i = 0; i < 3; i++) texts.push(big);
  return texts;
}

interface Run {
  niceness: number;
  /** Idle samples before and after the batch, pooled. */
  idle: number[];
  idleBefore: number[];
  idleAfter: number[];
  busy: number[];
  /** The longest the event loop was held during the batch. */
  maxLagMs: number;
  files: number;
  bytes: number;
  seconds: number;
}

async function run(niceness: number, makeBackend: () => Promise<Backend>): Promise<Run> {
  const backend = await makeBackend();
  const stack = await startStack({ config: { storage: backend.storage, fileSearch: { ingestion: { pollMs: 50, concurrency: 2, niceness } } } });
  try {
    const client = stack.openai;
    const texts = batchTexts();
    const ids: string[] = [];
    for (const [i, t] of texts.entries()) ids.push((await client.files.create({ file: await toFile(Buffer.from(t), `doc-${i}.txt`), purpose: 'assistants' })).id);
    const bytes = texts.reduce((n, t) => n + Buffer.byteLength(t), 0);
    const plain = async () => {
      const t0 = performance.now();
      await client.responses.create({ model: MODEL, input: 'ping', store: false });
      return performance.now() - t0;
    };
    for (let i = 0; i < 20; i++) await plain();
    // Idle is sampled before and after the batch and pooled: on a shared machine the load drifts over a run.
    const idleBefore: number[] = [];
    for (let i = 0; i < 150; i++) idleBefore.push(await plain());
    const store = await client.vectorStores.create({ name: 'bench' });
    const t0 = performance.now();
    const batch = await client.vectorStores.fileBatches.create(store.id, { file_ids: ids });
    const busy: number[] = [];
    const lag = monitorEventLoopDelay({ resolution: 10 });
    lag.enable();
    let done = false;
    const watcher = (async () => {
      while (!done) {
        const t1 = performance.now();
        const b = await client.vectorStores.fileBatches.retrieve(batch.id, { vector_store_id: store.id }).catch((e: Error) => {
          console.error(`batch poll failed after ${(performance.now() - t1).toFixed(0)} ms: ${e.message}`);
          return { status: 'in_progress' };
        });
        if (b.status !== 'in_progress') done = true;
        else await new Promise((r) => setTimeout(r, 200));
      }
    })();
    while (!done) busy.push(await plain());
    await watcher;
    lag.disable();
    const seconds = (performance.now() - t0) / 1000;
    const idleAfter: number[] = [];
    for (let i = 0; i < 150; i++) idleAfter.push(await plain());
    const idle = [...idleBefore, ...idleAfter];
    const counts = (await client.vectorStores.retrieve(store.id)).file_counts;
    if (counts.completed !== ids.length) throw new Error(`only ${counts.completed} of ${ids.length} files ingested`);
    return { niceness, idle, idleBefore, idleAfter, busy, maxLagMs: lag.max / 1e6, files: ids.length, bytes, seconds };
  } finally {
    await stack.close();
    await backend.drop();
  }
}

async function main(): Promise<void> {
  const backends: Array<[string, () => Promise<Backend>]> = [
    ['SQLite', sqliteBackend],
    ['PostgreSQL', postgresBackend],
  ];
  const rows: Array<{ backend: string; r: Run }> = [];
  const only = process.argv.find((a) => a.startsWith('--only='))?.slice(7);
  const nices = process.argv.find((a) => a.startsWith('--nice='))?.slice(7);
  for (const [name, make] of backends.filter(([n]) => !only || n === only)) {
    for (const niceness of nices ? nices.split(',').map(Number) : [0, 10]) {
      const r = await run(niceness, make);
      rows.push({ backend: name, r });
      console.error(
        `${name} nice ${niceness}: idle p50 ${median(r.idle).toFixed(2)} ms (before ${median(r.idleBefore).toFixed(2)}, after ${median(r.idleAfter).toFixed(2)}), busy p50 ${median(r.busy).toFixed(2)} ms, ${r.files} files in ${r.seconds.toFixed(1)} s, event loop held ${r.maxLagMs.toFixed(0)} ms at most`,
      );
    }
  }
  const cpus = os.cpus();
  console.log(`Run ${new Date().toISOString()} on ${cpus.length} × ${cpus[0]?.model.trim() ?? 'cpu'}, Node ${process.version}; ingestion.concurrency 2.\n`);
  console.log('| backend | ingestion threads | files | MB | files/s | MB/s | plain requests during the batch | p50 vs idle | p90 vs idle | longest event-loop stall |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const { backend, r } of rows) {
    const sorted = (v: number[]) => [...v].sort((a, b) => a - b);
    const p90 = (v: number[]) => percentile(sorted(v), 90);
    console.log(
      `| ${backend} | nice ${r.niceness} | ${r.files} | ${(r.bytes / 1e6).toFixed(1)} | ${(r.files / r.seconds).toFixed(1)} | ${(r.bytes / 1e6 / r.seconds).toFixed(2)} | ${r.busy.length} | ${(median(r.busy) / median(r.idle)).toFixed(2)}× | ${(p90(r.busy) / p90(r.idle)).toFixed(2)}× | ${r.maxLagMs.toFixed(0)} ms |`,
    );
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
