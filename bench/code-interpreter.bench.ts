import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_CODE_INTERPRETER_SETTINGS, type CodeInterpreterSettings } from '#tools/code-interpreter/config/code-interpreter-settings.js';
import { CpythonSandboxBackend } from '#tools/code-interpreter/sandbox/cpython/cpython-sandbox.backend.js';
import { PyodideSandboxBackend } from '#tools/code-interpreter/sandbox/pyodide/pyodide-sandbox.backend.js';
import type { SandboxBackend } from '#tools/code-interpreter/sandbox/sandbox-backend.interface.js';
import { cpuUs } from './lib/proc-stats.js';

/**
 * `npm run bench:code-interpreter [-- --seconds=N --calls=N]`: the code
 * interpreter's sandboxes, measured directly (no gateway, no model).
 *
 * - cold start: a sandbox host from nothing to a loaded interpreter; the
 *   first one also makes the memory snapshot, later ones start from it;
 * - warm call latency: `print(1)` on an interpreter already bound to its container;
 * - calls/s: one closed-loop client per interpreter (as many as cores),
 *   each in its own container, for a fixed time;
 * - memory per interpreter: the host process's RSS once warm, and after a program used 50 MB;
 * - the CPython backend: a throw-away bubblewrap sandbox per call.
 *
 * Baseline, measured in the same run: a plain `python3 -c 'print(1)'`
 * process without any sandbox, so the ratios travel between machines.
 */
const limits = { timeoutMs: 60_000, graceMs: 2_000, memoryLimitMb: 512, maxOutputBytes: 65_536, maxFileBytes: 1 << 24 };

function flag(name: string, fallback: number): number {
  const hit = process.argv.slice(2).find((a) => a.startsWith(`--${name}=`));
  return hit ? Number(hit.split('=')[1]) : fallback;
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

const ms = (n: number) => `${n.toFixed(1)} ms`;

/** CPU time (user + system, all threads) a process has used, in ms: wall time on a shared machine says little. */
const cpuMs = (pid: number): number => cpuUs(pid) / 1000;

async function main(): Promise<void> {
  const seconds = flag('seconds', 5);
  const calls = flag('calls', 200);
  const root = mkdtempSync(join(os.tmpdir(), 'switchyard-ci-bench-'));
  const workspace = (s: string) => {
    mkdirSync(join(root, s), { recursive: true });
    return join(root, s);
  };
  const signal = new AbortController().signal;
  const lines: string[] = [];
  const out = (l: string) => {
    lines.push(l);
    console.log(l);
  };

  // Baseline: the same program in a bare CPython process.
  const baseline: number[] = [];
  for (let i = 0; i < 20; i++) {
    const t = performance.now();
    spawnSync('/usr/bin/python3', ['-c', 'print(1)']);
    baseline.push(performance.now() - t);
  }
  const base = percentile(baseline, 50);

  const cores = os.availableParallelism();
  const settings: CodeInterpreterSettings = { ...DEFAULT_CODE_INTERPRETER_SETTINGS, maxWorkers: cores, warmWorkers: 0 };
  const pyodide = new PyodideSandboxBackend(settings);

  // Cold starts: the first run in a new container waits for its interpreter to load.
  const firstRun = async (backend: SandboxBackend, session: string) => {
    const t = performance.now();
    const r = await backend.run({ session, workspaceDir: workspace(session), code: 'print(1)', limits, signal });
    if (r.status !== 'ok') throw new Error(`${session}: ${r.status} ${r.stderr}`);
    return performance.now() - t;
  };
  const coldNoSnapshot = await firstRun(pyodide, 'cold-0');
  const coldCpu = cpuMs(pyodide.processIds()[0]);
  const snapshotStarts: number[] = [];
  const snapshotCpu: number[] = [];
  for (let i = 1; i <= 4; i++) {
    pyodide.release(`cold-${i - 1}`);
    snapshotStarts.push(await firstRun(pyodide, `cold-${i}`));
    snapshotCpu.push(cpuMs(pyodide.processIds()[0]));
  }

  // Warm latency.
  const warm: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    await pyodide.run({ session: 'cold-4', workspaceDir: workspace('cold-4'), code: 'print(1)', limits, signal });
    warm.push(performance.now() - t);
  }
  const idleRss = pyodide.processIds().map(rssMiB);
  await pyodide.run({ session: 'cold-4', workspaceDir: workspace('cold-4'), code: 'x = bytearray(50_000_000); del x', limits, signal });
  const usedRss = pyodide.processIds().map(rssMiB);
  pyodide.release('cold-4');

  // Throughput: one closed-loop client per core, each in its own container.
  for (let c = 0; c < cores; c++) await firstRun(pyodide, `tp-${c}`);
  let done = 0;
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: cores }, async (_, c) => {
      while (performance.now() < until) {
        await pyodide.run({ session: `tp-${c}`, workspaceDir: workspace(`tp-${c}`), code: 'sum(i * i for i in range(1000))', limits, signal });
        done++;
      }
    }),
  );
  const callsPerSecond = done / seconds;
  await pyodide.close();

  // CPython: a sandbox per call.
  const cpython = new CpythonSandboxBackend({ ...settings, backend: 'cpython' });
  const cp: number[] = [];
  for (let i = 0; i < 20; i++) cp.push(await firstRun(cpython, 'cp'));
  const pandas: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    await cpython.run({ session: 'cp', workspaceDir: workspace('cp'), code: 'import pandas, matplotlib.pyplot', limits, signal });
    pandas.push(performance.now() - t);
  }
  let cpDone = 0;
  const cpUntil = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: cores }, async (_, c) => {
      while (performance.now() < cpUntil) {
        await cpython.run({ session: `cp-${c}`, workspaceDir: workspace(`cp-${c}`), code: 'sum(i * i for i in range(1000))', limits, signal });
        cpDone++;
      }
    }),
  );
  await cpython.close();
  rmSync(root, { recursive: true, force: true });

  const load = os.loadavg()[0].toFixed(1);
  out(`Run ${new Date().toISOString()} on ${cores} × ${os.cpus()[0]?.model.trim()}, Node ${process.version}, load average ${load} at the end.`);
  out('');
  out('| measure | value | ratio to baseline |');
  out('| --- | --- | --- |');
  out(`| baseline: bare \`python3 -c 'print(1)'\` process, p50 of 20 | ${ms(base)} | 1 |`);
  out(
    `| Pyodide cold start, no snapshot (first interpreter; makes the snapshot): wall / host CPU | ${ms(coldNoSnapshot)} / ${ms(coldCpu)} | ${(coldNoSnapshot / base).toFixed(1)}× |`,
  );
  out(
    `| Pyodide start from the memory snapshot, median of 4: wall / host CPU | ${ms(percentile(snapshotStarts, 50))} / ${ms(percentile(snapshotCpu, 50))} | ${(percentile(snapshotStarts, 50) / base).toFixed(1)}× (CPU ${(percentile(snapshotCpu, 50) / coldCpu).toFixed(2)}× the cold start's) |`,
  );
  out(`| Pyodide warm call \`print(1)\`, p50 / p99 of ${calls} | ${ms(percentile(warm, 50))} / ${ms(percentile(warm, 99))} | ${(percentile(warm, 50) / base).toFixed(3)}× |`);
  out(
    `| Pyodide calls/s, ${cores} interpreters, closed loop, ${seconds} s | ${callsPerSecond.toFixed(0)} | ${((callsPerSecond * base) / 1000).toFixed(1)}× the baseline's serial rate |`,
  );
  out(
    `| Pyodide RSS per interpreter process, warm / after a 50 MB program | ${idleRss.map((r) => r.toFixed(0)).join(', ')} MiB / ${usedRss.map((r) => r.toFixed(0)).join(', ')} MiB | |`,
  );
  out(`| CPython + bubblewrap, one sandbox per call \`print(1)\`, p50 of 20 | ${ms(percentile(cp, 50))} | ${(percentile(cp, 50) / base).toFixed(1)}× |`);
  out(`| CPython + bubblewrap, \`import pandas, matplotlib.pyplot\`, p50 of 5 | ${ms(percentile(pandas, 50))} | ${(percentile(pandas, 50) / base).toFixed(1)}× |`);
  out(`| CPython + bubblewrap calls/s, ${cores} at once, ${seconds} s | ${(cpDone / seconds).toFixed(1)} | |`);
  const resultsDir = fileURLToPath(new URL('../../bench/results/', import.meta.url));
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, 'code-interpreter.md'), lines.join('\n') + '\n');
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
