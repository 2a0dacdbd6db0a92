import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ChildService } from './lib/child-service.js';
import { runLoad } from './lib/load-generator.js';
import { median, round } from './lib/stats.js';

/**
 * `npm run build && node dist/bench/scale.bench.js [--quick]`: what the
 * scale work costs and buys, as ratios measured side by side in one run.
 *
 * 1. Workers: c=64 throughput of `apps/gateway` with WORKERS=1 and WORKERS=2
 *    (the real entry point, SQLite store, `store: false` bodies).
 * 2. Persistence: gateway CPU µs per request at c=64 with `store: true`
 *    against `store: false`, on SQLite (group commit).
 * 3. The gateway-tool path: CPU µs per request for one round trip through a
 *    gateway tool (`nap`, zero delay) against a plain request; the difference
 *    is the cost of one tool round.
 * Every comparison interleaves its two sides over several rounds and reports
 * medians, so drift on a shared machine hits both sides alike.
 */

type CpuUsage = NodeJS.CpuUsage;
const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 2 : 3;
const DURATION_MS = quick ? 1_500 : 5_000;
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function startGateway(workers: number, upstream: string, dir: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [here('../apps/gateway/src/main.js')], {
    env: {
      ...process.env,
      WORKERS: String(workers),
      HOST: '127.0.0.1',
      PORT: String(port),
      UPSTREAM_URL: upstream,
      STORAGE_DRIVER: 'sqlite',
      SQLITE_PATH: join(dir, `w${workers}.sqlite`),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    const ok = await fetch(`${url}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  // Worker mode: let every worker finish booting before measuring.
  await new Promise((r) => setTimeout(r, workers > 1 ? 3_000 : 500));
  return { url: `${url}/v1`, child };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

const cpuUs = (a: CpuUsage, b: CpuUsage) => b.user + b.system - a.user - a.system;

async function cpuPerRequest(gateway: ChildService, body: string, expect: string): Promise<{ cpuUs: number; rps: number }> {
  const before = await gateway.call<CpuUsage>('cpu');
  const result = await runLoad({ url: `${gateway.url}/responses`, body, concurrency: 64, maxRequests: 1_000_000, maxDurationMs: DURATION_MS, warmupRequests: 200, expect });
  const after = await gateway.call<CpuUsage>('cpu');
  if (result.errors > 0) throw new Error(`errors during the run: ${result.firstError}`);
  return { cpuUs: cpuUs(before, after) / (result.requests + 200), rps: result.rps };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(os.tmpdir(), 'sy-scale-'));
  const sim = await ChildService.start('simulator', { script: 'simulator-child.js' });
  const lines: string[] = [];
  try {
    // 1. Workers.
    const rps: Record<number, number[]> = { 1: [], 2: [] };
    const plain = JSON.stringify({ model: 'bench', input: '[[tokens 20]]', store: false });
    for (const workers of [1, 2]) {
      const gw = await startGateway(workers, sim.url, dir);
      try {
        for (let r = 0; r < ROUNDS; r++) {
          const result = await runLoad({
            url: `${gw.url}/responses`,
            body: plain,
            concurrency: 64,
            maxRequests: 1_000_000,
            maxDurationMs: DURATION_MS,
            warmupRequests: 500,
            expect: '"completed"',
          });
          rps[workers].push(result.rps);
        }
      } finally {
        await stop(gw.child);
      }
    }
    lines.push('| workers | req/s at c=64 (median) | vs 1 worker |', '| --- | --- | --- |');
    for (const workers of [1, 2]) lines.push(`| ${workers} | ${Math.round(median(rps[workers]))} | ${round(median(rps[workers]) / median(rps[1]))}× |`);

    // 2 and 3: one bench gateway child, CPU read over IPC.
    const gateway = await ChildService.start('gateway', { script: 'bench-gateway.js', config: { upstreamUrl: sim.url, sqlitePath: join(dir, 'store.sqlite') } });
    try {
      const bodies = {
        storeOff: JSON.stringify({ model: 'bench', input: '[[tokens 20]]', store: false }),
        storeOn: JSON.stringify({ model: 'bench', input: '[[tokens 20]]', store: true }),
        tool: JSON.stringify({ model: 'bench', input: 'nap [[call nap_a {"ms": 0}]]', tools: [{ type: 'nap', name: 'nap_a', parallel: true }], store: false }),
      };
      const samples: Record<keyof typeof bodies, Array<{ cpuUs: number; rps: number }>> = { storeOff: [], storeOn: [], tool: [] };
      for (let r = 0; r < ROUNDS; r++) {
        for (const key of Object.keys(bodies) as Array<keyof typeof bodies>) samples[key].push(await cpuPerRequest(gateway, bodies[key], '"completed"'));
      }
      const cpu = (key: keyof typeof bodies) => median(samples[key].map((s) => s.cpuUs));
      const rate = (key: keyof typeof bodies) => median(samples[key].map((s) => s.rps));
      lines.push('', '| request (c=64) | gateway CPU µs/request | req/s | vs `store: false` |', '| --- | --- | --- | --- |');
      lines.push(`| \`store: false\` | ${Math.round(cpu('storeOff'))} | ${Math.round(rate('storeOff'))} | 1× |`);
      lines.push(`| \`store: true\` (SQLite) | ${Math.round(cpu('storeOn'))} | ${Math.round(rate('storeOn'))} | ${round(cpu('storeOn') / cpu('storeOff'))}× CPU |`);
      lines.push(
        `| one gateway tool round (\`nap\`, 0 ms) | ${Math.round(cpu('tool'))} | ${Math.round(rate('tool'))} | ${round(cpu('tool') / cpu('storeOff'))}× CPU; ${Math.round(cpu('tool') - cpu('storeOff'))} µs per tool round |`,
      );
    } finally {
      await gateway.stop();
    }
  } finally {
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const cpus = os.cpus();
  console.log(`Run ${new Date().toISOString()} on ${cpus.length} × ${cpus[0]?.model ?? 'unknown'}, Node ${process.version}${quick ? ' (--quick)' : ''}\n`);
  console.log(lines.join('\n'));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
