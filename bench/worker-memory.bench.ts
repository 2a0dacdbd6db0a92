import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { makePdf } from '../test/support/file-search/documents.js';
import { descendants } from './lib/proc-stats.js';
import { median } from './lib/stats.js';

/**
 * `node --import ./test/support/process/ts-register.mjs bench/worker-memory.bench.ts
 * [--root=DIR] [--workers=N] [--idle-wait=S] [--env=NAME=VALUE ...]`:
 * the resident memory of the gateway's process tree as `npm start` runs it,
 * built at DIR (default: this checkout's `dist`), SQLite storage, tracing off.
 * Without `--workers` the default deployment (a primary and one worker per
 * core); `--workers=1` one process. RSS of each process (from /proc, median of
 * 5 samples 200 ms apart) idle after one plain request; right after one PDF is
 * ingested and searched; and again after `--idle-wait` seconds (default 35,
 * past the 30 s `fileSearch.ingestion.threadIdleMs`), when released threads
 * are gone. `--env` adds a variable to the gateway's environment (e.g.
 * `--env=NODE_OPTIONS=--max-semi-space-size=4` to compare V8 flags).
 */
const flag = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const ROOT = resolve(flag('root') ?? process.cwd());
const WORKERS = flag('workers');
const IDLE_WAIT_S = Number(flag('idle-wait') ?? 35);
const EXTRA_ENV = Object.fromEntries(process.argv.filter((a) => a.startsWith('--env=')).map((a) => [a.slice(6, a.indexOf('=', 6)), a.slice(a.indexOf('=', 6) + 1)]));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rssMiB(pid: number): number {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m);
    return Number(line![1]) / 1024;
  } catch {
    return 0;
  }
}

/** Each process of the tree (the root first), by the median of 5 samples, and their sum. */
async function sampledTree(rootPid: number): Promise<{ each: number[]; total: number }> {
  const pids = descendants(rootPid);
  const samples: number[][] = pids.map(() => []);
  for (let i = 0; i < 5; i++) {
    pids.forEach((pid, k) => samples[k].push(rssMiB(pid)));
    await sleep(200);
  }
  const each = samples.map(median);
  return { each, total: each.reduce((s, v) => s + v, 0) };
}

const mib = (v: number) => v.toFixed(1);
const describeTree = (tree: { each: number[]; total: number }, oneProcess: boolean) =>
  oneProcess ? `${mib(tree.each[0])}` : `${mib(tree.each[0])} / ${tree.each.slice(1).map(mib).join(' + ')} = **${mib(tree.total)}**`;

async function main(): Promise<void> {
  const simulator = new SimulatedUpstream({});
  const { url: upstreamUrl } = await simulator.listen(0, '127.0.0.1');
  const dir = mkdtempSync(join(os.tmpdir(), 'switchyard-worker-memory-'));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOST: '127.0.0.1',
    PORT: '0',
    UPSTREAM_URL: upstreamUrl,
    STORAGE_DRIVER: 'sqlite',
    SWITCHYARD_DATA_DIR: dir,
    ...EXTRA_ENV,
  };
  if (WORKERS !== undefined) env.WORKERS = WORKERS;
  const child = spawn(process.execPath, [join(ROOT, 'dist/apps/gateway/src/main.js')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const started = await new Promise<{ listen: string; workers?: number }>((done, fail) => {
      let buffered = '';
      const timer = setTimeout(() => fail(new Error('the gateway did not start in 120 s')), 120_000);
      child.stdout!.setEncoding('utf8');
      child.stdout!.on('data', (chunk: string) => {
        buffered += chunk;
        const line = buffered.split('\n').find((l) => l.includes('"msg":"listening"'));
        if (line) {
          clearTimeout(timer);
          done(JSON.parse(line));
        }
      });
    });
    const oneProcess = (started.workers ?? 1) <= 1;
    const openai = new OpenAI({ baseURL: `${started.listen}/v1`, apiKey: 'sk-bench', maxRetries: 0, timeout: 60_000 });
    // One plain request per worker (connections are spread over the workers).
    for (let i = 0; i < (started.workers ?? 1) * 2; i++) await openai.responses.create({ model: 'm', input: 'hello' });
    await sleep(2000);
    const idle = await sampledTree(child.pid!);

    const lines = Array.from({ length: 400 }, (_, i) => `Line ${i}: the pump manual describes impellers, seals and bearings.`);
    const file = await openai.files.create({ file: await toFile(await makePdf(lines), 'manual.pdf'), purpose: 'assistants' });
    const store = await openai.vectorStores.create({ name: 'memory-bench' });
    const batch = await openai.vectorStores.fileBatches.createAndPoll(store.id, { file_ids: [file.id] }, { pollIntervalMs: 100 });
    if (batch.file_counts.completed !== 1) throw new Error(`ingestion failed: ${JSON.stringify(batch.file_counts)}`);
    const hits = await openai.vectorStores.search(store.id, { query: 'bearings' });
    if (hits.data.length === 0) throw new Error('the search found nothing');
    await sleep(1000);
    const ingested = await sampledTree(child.pid!);
    await sleep(IDLE_WAIT_S * 1000);
    const later = await sampledTree(child.pid!);

    const [load1, load5] = os.loadavg();
    const extra = Object.entries(EXTRA_ENV)
      .map(([k, v]) => ` ${k}=${v}`)
      .join('');
    console.log(`root ${ROOT}${extra}; ${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, load average ${load1.toFixed(1)} ${load5.toFixed(1)}, Node ${process.version}`);
    console.log(oneProcess ? '| idle | after one PDF ingestion + search | later |' : '| primary / workers = total, idle | after one PDF ingestion + search | later |');
    console.log(`| ${describeTree(idle, oneProcess)} | ${describeTree(ingested, oneProcess)} | ${describeTree(later, oneProcess)} (${IDLE_WAIT_S} s) |`);
  } finally {
    // The whole tree: a primary killed alone would leave its workers behind.
    for (const pid of descendants(child.pid!).reverse()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await simulator.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
