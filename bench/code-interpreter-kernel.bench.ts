import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { DEFAULT_CODE_INTERPRETER_SETTINGS, type CodeInterpreterSettings } from '#tools/code-interpreter/config/code-interpreter-settings.js';
import { KernelSandboxBackend } from '#tools/code-interpreter/sandbox/kernel/kernel-sandbox.backend.js';
import { ChildService } from './lib/child-service.js';
import { keepAliveAgent, sendOnce } from './lib/load-generator.js';
import { childrenOf, descendants } from './lib/proc-stats.js';

/**
 * `node scripts/run-built.mjs bench/code-interpreter-kernel.bench [-- --calls=N]`:
 * the kernel backend of the code interpreter, measured directly, plus its
 * effect on other tenants' requests to a gateway beside it.
 *
 * - warm call: a pandas group-by on a container's live kernel, and `print(1)`
 *   (the message path alone);
 * - a new container's first call with the pre-started pool (`kernel.warm: 1`,
 *   refilled between containers, as it is between conversations), and without
 *   it (`warm: 0`: bubblewrap, Python and the data stack start in the call);
 * - memory per live kernel: PSS of each kernel's processes (bubblewrap and
 *   ipykernel, children of the Jupyter Server), after the group-by, and the
 *   server's own;
 * - CPU-bound neighbours: p50 of plain `/v1/responses` requests to a gateway
 *   process (simulated upstream) alone, then while one busy-loop program per
 *   core runs in kernels at `nice: 0` and at the default `nice: 10`.
 */
const CODE = "import pandas as pd\ndf = pd.DataFrame({'k': list('abcab'), 'v': range(5)})\ndf.groupby('k').v.sum().to_dict()";
const limits = { timeoutMs: 120_000, graceMs: 1_000, memoryLimitMb: 1024, maxOutputBytes: 65_536, maxFileBytes: 1 << 24 };

function flag(name: string, fallback: number): number {
  const hit = process.argv.slice(2).find((a) => a.startsWith(`--${name}=`));
  return hit ? Number(hit.split('=')[1]) : fallback;
}

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (n: number) => `${n.toFixed(1)} ms`;

function safe<T>(fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch {
    return fallback;
  }
}

/** Proportional set size (shared library pages split among their users), else RSS, of a process tree, in MiB. */
function treeMiB(pid: number): number {
  let kb = 0;
  for (const p of descendants(pid)) {
    const rollup = safe(() => readFileSync(`/proc/${p}/smaps_rollup`, 'utf8'), '');
    const pss = /^Pss:\s+(\d+)/m.exec(rollup);
    kb += pss ? Number(pss[1]) : Number(/VmRSS:\s+(\d+)/.exec(safe(() => readFileSync(`/proc/${p}/status`, 'utf8'), 'VmRSS: 0'))?.[1] ?? 0);
  }
  return kb / 1024;
}

function settingsWith(kernel: Partial<CodeInterpreterSettings['kernel']>, nice = DEFAULT_CODE_INTERPRETER_SETTINGS.nice): CodeInterpreterSettings {
  return {
    ...DEFAULT_CODE_INTERPRETER_SETTINGS,
    backend: 'kernel',
    memoryLimitMb: 1024,
    timeoutMs: limits.timeoutMs,
    nice,
    kernel: { ...DEFAULT_CODE_INTERPRETER_SETTINGS.kernel, ...kernel },
  };
}

async function main(): Promise<void> {
  const calls = flag('calls', 20);
  const containers = flag('containers', 8);
  const root = mkdtempSync(join(os.tmpdir(), 'switchyard-kernel-bench-'));
  const workspace = (s: string) => {
    mkdirSync(join(root, s), { recursive: true });
    return join(root, s);
  };
  const signal = new AbortController().signal;
  const lines: string[] = [];
  const say = (l: string) => {
    lines.push(l);
    process.stdout.write(`${l}\n`);
  };
  const timed = async (backend: KernelSandboxBackend, session: string, code = CODE) => {
    const t = performance.now();
    const r = await backend.run({ session, workspaceDir: workspace(session), code, limits, signal });
    if (r.status !== 'ok') throw new Error(`bench run failed: ${r.status} ${r.stderr}`);
    return performance.now() - t;
  };

  // 1. Warm calls and first calls, with the pool.
  const pooled = new KernelSandboxBackend(settingsWith({ maxLive: containers + 2, warm: 1 }));
  await pooled.warmUp();
  await timed(pooled, 'warm');
  const warm: number[] = [];
  for (let i = 0; i < calls; i++) warm.push(await timed(pooled, 'warm'));
  const printOne: number[] = [];
  for (let i = 0; i < calls; i++) printOne.push(await timed(pooled, 'warm', 'print(1)'));
  const first: number[] = [];
  for (let i = 0; i < containers; i++) {
    await pooled.warmUp();
    first.push(await timed(pooled, `new-${i}`));
  }
  const live = pooled.stats();
  // The kernels are the Jupyter Server's children (each a bubblewrap tree, the launcher exec'd into it); the server is counted apart.
  const hostPid = live.hostPid!;
  const perKernel = childrenOf(hostPid).map(treeMiB);
  const serverMiB = treeMiB(hostPid) - perKernel.reduce((a, b) => a + b, 0);
  await pooled.close();

  // 2. First calls without the pool.
  const bare = new KernelSandboxBackend(settingsWith({ maxLive: containers + 2, warm: 0 }));
  const cold: number[] = [];
  for (let i = 0; i < Math.min(containers, 4); i++) cold.push(await timed(bare, `cold-${i}`));
  await bare.close();

  say(`| measure (kernel backend) | p50 | ratio to a warm call |`);
  say(`| --- | --- | --- |`);
  say(`| warm call (pandas group-by, ${calls} calls) | ${ms(p50(warm))} | 1.0× |`);
  say(`| warm call (\`print(1)\`, ${calls} calls) | ${ms(p50(printOne))} | ${(p50(printOne) / p50(warm)).toFixed(1)}× |`);
  say(`| new container's first call, pre-started pool (${containers}) | ${ms(p50(first))} | ${(p50(first) / p50(warm)).toFixed(1)}× |`);
  say(`| new container's first call, no pool (${cold.length}) | ${ms(p50(cold))} | ${(p50(cold) / p50(warm)).toFixed(1)}× |`);
  const mean = perKernel.reduce((a, b) => a + b, 0) / perKernel.length;
  say('');
  say(
    `memory: ${perKernel.length} kernels (${live.live} bound, ${live.pooled} pre-started), PSS per kernel mean ${mean.toFixed(0)} MiB ` +
      `(min ${Math.min(...perKernel).toFixed(0)}, max ${Math.max(...perKernel).toFixed(0)}); ` +
      `${Math.floor(((os.totalmem() / 1024 / 1024) * 0.5) / mean)} fit in half of this host's ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB; ` +
      `the Jupyter Server itself ${serverMiB.toFixed(0)} MiB`,
  );

  // 3. Plain requests beside CPU-bound programs.
  const sim = await ChildService.start('simulator', { script: 'simulator-child.js' });
  const gateway = await ChildService.start('gateway', { script: 'bench-gateway.js', config: { upstreamUrl: sim.url } });
  const agent = keepAliveAgent(1);
  const target = new URL('/v1/responses', gateway.url);
  const body = Buffer.from(JSON.stringify({ model: 'm', input: '[[say a plain answer]]' }));
  const requests = flag('requests', 300);
  const plain = async () => {
    const xs: number[] = [];
    for (let i = 0; i < requests; i++) {
      const s = await sendOnce(agent, target, body);
      if (!s.ok) throw new Error(`plain request failed: ${s.status} ${s.error ?? ''}`);
      xs.push(s.latencyMs);
    }
    return p50(xs);
  };
  for (let i = 0; i < 50; i++) await sendOnce(agent, target, body);
  const alone = await plain();
  const busyAt = async (nice: number) => {
    const b = new KernelSandboxBackend(settingsWith({ maxLive: 8, warm: 0 }, nice));
    const stop = new AbortController();
    const hogs = os.cpus().length;
    // Kernels started and ready first: only the loops compete with the requests.
    for (let i = 0; i < hogs; i++) await timed(b, `hog-${nice}-${i}`, 'x = 1');
    const running = Array.from({ length: hogs }, (_, i) =>
      b.run({ session: `hog-${nice}-${i}`, workspaceDir: workspace(`hog-${nice}-${i}`), code: 'while True: pass', limits, signal: stop.signal }),
    );
    await new Promise((r) => setTimeout(r, 500));
    const loaded = await plain();
    stop.abort();
    await Promise.all(running);
    await b.close();
    return loaded;
  };
  const atZero = await busyAt(0);
  const atTen = await busyAt(DEFAULT_CODE_INTERPRETER_SETTINGS.nice);
  // Alone again: the machine is shared, so the baseline is taken on both sides of the loaded runs.
  const aloneAfter = await plain();
  await gateway.stop();
  await sim.stop();
  say('');
  say(`| plain requests (${requests}, sequential) | p50 | ratio to alone |`);
  say(`| --- | --- | --- |`);
  const baseline = (alone + aloneAfter) / 2;
  say(`| alone (before ${ms(alone)}, after ${ms(aloneAfter)}) | ${ms(baseline)} | 1.00× |`);
  say(`| beside ${os.cpus().length} busy-loop programs, nice 0 | ${ms(atZero)} | ${(atZero / baseline).toFixed(2)}× |`);
  say(`| beside ${os.cpus().length} busy-loop programs, nice ${DEFAULT_CODE_INTERPRETER_SETTINGS.nice} (default) | ${ms(atTen)} | ${(atTen / baseline).toFixed(2)}× |`);
  rmSync(root, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
