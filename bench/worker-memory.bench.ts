import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { makePdf } from '../test/support/file-search/documents.js';
import { median } from './lib/stats.js';

/**
 * `node scripts/run-built.mjs bench/worker-memory.bench [--root=DIR] [--idle-wait=S]`:
 * the resident memory of one gateway process (`WORKERS=1`: what each worker
 * of the default deployment runs), built at DIR (default: this checkout's
 * `dist`), SQLite storage, tracing off. RSS (from /proc, median of 5 samples
 * 200 ms apart) idle after one plain request; right after one PDF is ingested
 * and searched; and again after `--idle-wait` seconds (default 35, past the
 * 30 s `fileSearch.ingestion.threadIdleMs`), when released threads are gone.
 */
const ROOT = resolve(process.argv.find((a) => a.startsWith('--root='))?.slice(7) ?? process.cwd());
const IDLE_WAIT_S = Number(process.argv.find((a) => a.startsWith('--idle-wait='))?.slice(12) ?? 35);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m);
  return Number(line![1]) / 1024;
}

async function sampledRss(pid: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    samples.push(rssMiB(pid));
    await sleep(200);
  }
  return median(samples);
}

async function main(): Promise<void> {
  const simulator = new SimulatedUpstream({});
  const { url: upstreamUrl } = await simulator.listen(0, '127.0.0.1');
  const dir = mkdtempSync(join(os.tmpdir(), 'switchyard-worker-memory-'));
  const child = spawn(process.execPath, [join(ROOT, 'dist/apps/gateway/src/main.js')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', WORKERS: '1', HOST: '127.0.0.1', PORT: '0', UPSTREAM_URL: upstreamUrl, STORAGE_DRIVER: 'sqlite', SWITCHYARD_DATA_DIR: dir },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const listen = await new Promise<string>((done, fail) => {
      let buffered = '';
      const timer = setTimeout(() => fail(new Error('the gateway did not start in 120 s')), 120_000);
      child.stdout!.setEncoding('utf8');
      child.stdout!.on('data', (chunk: string) => {
        buffered += chunk;
        const line = buffered.split('\n').find((l) => l.includes('"msg":"listening"'));
        if (line) {
          clearTimeout(timer);
          done(JSON.parse(line).listen as string);
        }
      });
    });
    const openai = new OpenAI({ baseURL: `${listen}/v1`, apiKey: 'sk-bench', maxRetries: 0, timeout: 60_000 });
    await openai.responses.create({ model: 'm', input: 'hello' });
    await sleep(2000);
    const idle = await sampledRss(child.pid!);

    const lines = Array.from({ length: 400 }, (_, i) => `Line ${i}: the pump manual describes impellers, seals and bearings.`);
    const file = await openai.files.create({ file: await toFile(await makePdf(lines), 'manual.pdf'), purpose: 'assistants' });
    const store = await openai.vectorStores.create({ name: 'memory-bench' });
    const batch = await openai.vectorStores.fileBatches.createAndPoll(store.id, { file_ids: [file.id] }, { pollIntervalMs: 100 });
    if (batch.file_counts.completed !== 1) throw new Error(`ingestion failed: ${JSON.stringify(batch.file_counts)}`);
    const hits = await openai.vectorStores.search(store.id, { query: 'bearings' });
    if (hits.data.length === 0) throw new Error('the search found nothing');
    await sleep(1000);
    const ingested = await sampledRss(child.pid!);
    await sleep(IDLE_WAIT_S * 1000);
    const later = await sampledRss(child.pid!);

    const [load1] = os.loadavg();
    console.log(`root ${ROOT}; ${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, load average ${load1.toFixed(1)}, Node ${process.version}`);
    console.log(`| idle | after one PDF ingestion + search | ${IDLE_WAIT_S} s later |`);
    console.log(`| ${idle.toFixed(1)} MiB | ${ingested.toFixed(1)} MiB | ${later.toFixed(1)} MiB |`);
  } finally {
    child.kill('SIGKILL');
    await simulator.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
