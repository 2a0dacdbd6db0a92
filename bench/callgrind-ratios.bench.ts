import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { ChildService } from './lib/child-service.js';
import { runLoad } from './lib/load-generator.js';
import { chainCases, chainTurnBody, continuedBody, ratioCases, type RatioCase } from './lib/ratio-cases.js';
import { median, round } from './lib/stats.js';
import { arg } from './lib/flags.js';

/**
 * `npm run build && node dist/bench/callgrind-ratios.bench.js [flags]`: the
 * issue-29 ratios as instructions per request, which other load on the
 * machine does not change (CPU time per request swung by 2× between rounds
 * on the shared 2-core machine; these counts move by a few per cent).
 *
 * The pass-through proxy and each gateway build run under
 * `valgrind --tool=callgrind` with counting off; per case, a warm-up load
 * (JIT settles), then counters zeroed, counting on for `--n` requests at
 * c=4, counting off and a dump, whose total `Ir` over the requests is the
 * figure. User-space instructions of every thread of the process (the
 * libuv pool and V8's compiler and GC threads included); the kernel's work
 * (syscalls, the TCP stack) is not counted. The simulator and the MCP
 * server run without valgrind.
 *
 *   --vs=DIR[,DIR...]  also run each DIR/bench/bench-gateway.js (other builds' `dist`) as B, C, ...;
 *                the report divides each build's count by the last one's (the "before")
 *   --n=N        measured requests per case (default 200); --warmup=N (default 300)
 *   --rounds=N   rounds (default 1); --cases=LIST only these cases
 *   --mcp-list-cache-ms=N  the gateways' `mcp.toolsListCacheMs` (default 0, the default config: every round lists)
 *   --settle=N   before anything is counted, every target serves N requests of every case (default
 *                100): the first case measured otherwise pays for compiling the paths all cases share
 *   --keep       keep the callgrind dumps (one per case and target) for `callgrind_annotate`
 */
const N = Number(arg('n') ?? 200);
const WARMUP = Number(arg('warmup') ?? 300);
const ROUNDS = Number(arg('rounds') ?? 1);
const vs = arg('vs');
const onlyCases = arg('cases')?.split(',');
const MCP_LIST_CACHE_MS = Number(arg('mcp-list-cache-ms') ?? 0);
const KEEP = process.argv.includes('--keep');
const SETTLE = Number(arg('settle') ?? 100);

function underCallgrind(outDir: string, tag: string): { execPath: string; execArgv: string[]; startTimeoutMs: number } {
  return {
    execPath: 'valgrind',
    // One dump per thread: the main thread's count is the request path's, the rest is V8's
    // background compilers and GC helpers and libuv's pool (see `instructions`).
    execArgv: [
      '-q',
      '--tool=callgrind',
      '--instr-atstart=no',
      '--smc-check=all-non-file',
      '--separate-threads=yes',
      `--callgrind-out-file=${join(outDir, `${tag}.%p`)}`,
      process.execPath,
    ],
    startTimeoutMs: 900_000,
  };
}

interface Counted {
  /** Every thread of the process. */
  all: number;
  /** The main thread: the event loop, where a request's JavaScript runs. */
  main: number;
}

/**
 * Counts the instructions `work` makes process `pid` execute: zero, count, stop, dump, read each
 * thread's total. The main thread is reported apart because the rest is dominated by V8's
 * background optimizing compiler, which after a few hundred requests under valgrind still made
 * 30–50 % of all counted instructions and swung a build's total by 2× between cases.
 */
async function instructions(pid: number, outDir: string, work: () => Promise<void>, name: string): Promise<Counted> {
  const control = (flag: string) => execFileSync('callgrind_control', [flag, String(pid)], { stdio: 'pipe', timeout: 120_000 });
  control('--zero');
  control('--instr=on');
  await work();
  control('--instr=off');
  const before = new Set(readdirSync(outDir));
  control(`--dump=${name}`);
  const dumped = readdirSync(outDir).filter((f) => !before.has(f) && f.includes(`.${pid}.`));
  if (dumped.length === 0) throw new Error(`no new callgrind dump of ${pid}`);
  const counted: Counted = { all: 0, main: 0 };
  for (const file of dumped) {
    const text = readFileSync(join(outDir, file), 'utf8');
    // `totals:` is the part's cost; `summary:` can read 0 in a part dumped after a toggle.
    const total = /^totals:\s*(\d+)/m.exec(text);
    if (!total) throw new Error(`no instruction total in ${file}`);
    counted.all += Number(total[1]);
    // Thread 1 is the process's first thread, the one the event loop runs on.
    if (/-0*1$/.test(file)) counted.main += Number(total[1]);
  }
  return counted;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(os.tmpdir(), 'sy-callgrind-'));
  const sim = await ChildService.start('simulator', { script: 'simulator-child.js' });
  const mcp = await ChildService.start('mcp-server', { script: 'mcp-server-child.js' });
  const gatewayConfig = (tag: string) => ({
    upstreamUrl: sim.url,
    sqlitePath: join(dir, `${tag}.sqlite`),
    // The cache setting only when asked for: a build from before it need not know the key.
    mcp: { allowedHosts: [new URL(mcp.url).host], ...(MCP_LIST_CACHE_MS ? { toolsListCacheMs: MCP_LIST_CACHE_MS } : {}) },
  });
  const targets: Array<{ label: string; child: ChildService }> = [];
  const gateways = [
    { label: 'A', script: 'bench-gateway.js' },
    ...(vs?.split(',') ?? []).map((d, i) => ({ label: String.fromCharCode(66 + i), script: join(d, 'bench/bench-gateway.js') })),
  ];
  const starting = [
    ChildService.start('proxy', { script: 'passthrough-proxy.js', config: { upstreamUrl: sim.url }, ...underCallgrind(dir, 'proxy') }).then((child) => ({ label: 'proxy', child })),
    ...gateways.map(({ label, script }) =>
      ChildService.start(`gateway ${label}`, { script, config: gatewayConfig(label.toLowerCase()), ...underCallgrind(dir, label.toLowerCase()) }).then((child) => ({
        label,
        child,
      })),
    ),
  ];
  targets.push(...(await Promise.all(starting)));
  const proxy = targets.find((t) => t.label === 'proxy')!;
  const builds = targets.filter((t) => t !== proxy);
  const cases = [...ratioCases(mcp.url), ...chainCases()].filter((c) => !onlyCases || onlyCases.includes(c.name));
  // Each gateway's own chains (their stores are apart), made once: every load continues the same head.
  const heads = new Map<string, string>();
  for (const c of cases.filter((c) => c.chain)) for (const build of builds) heads.set(`${c.name}${build.label}`, await storeChain(build.child.url, c.chain!));
  const samples = new Map<string, number[]>();
  const push = (key: string, v: number) => samples.set(key, [...(samples.get(key) ?? []), v]);
  const loadOf = (c: (typeof cases)[number], target: { label: string; child: ChildService }) => ({
    url: `${target.child.url}/responses`,
    body: c.chain ? continuedBody(c, heads.get(`${c.name}${target.label}`)!) : c.body,
    concurrency: 4,
    expect: c.expect,
    maxDurationMs: 600_000,
    requestTimeoutMs: 120_000,
  });
  try {
    if (SETTLE > 0) {
      for (const c of cases) for (const target of c.proxy ? [proxy] : builds) await runLoad({ ...loadOf(c, target), maxRequests: SETTLE });
    }
    for (let r = 0; r < ROUNDS; r++) {
      for (const c of cases) {
        for (const target of c.proxy ? [proxy] : builds) {
          const load = loadOf(c, target);
          // Under valgrind a pooled upstream socket sometimes races the simulator's keep-alive
          // close (a 502 from the proxy): rare failures are counted as requests, many end the run.
          const tolerable = (r: { requests: number; errors: number }) => r.errors <= Math.max(1, r.requests / 10);
          const warm = await runLoad({ ...load, maxRequests: WARMUP });
          if (!tolerable(warm)) throw new Error(`${c.name} ${target.label} warm-up: ${warm.errors} errors, first: ${warm.firstError}`);
          let requests = 0;
          const ir = await instructions(
            target.child.pid,
            dir,
            async () => {
              const result = await runLoad({ ...load, maxRequests: N });
              if (!tolerable(result)) throw new Error(`${c.name} ${target.label}: ${result.errors} errors, first: ${result.firstError}`);
              if (result.errors > 0) console.error(`${c.name} ${target.label}: ${result.errors} failed of ${result.requests} (${result.firstError})`);
              requests = result.requests;
            },
            c.name,
          );
          const key = `${c.name}${c.proxy ? '' : target.label}`;
          push(key, ir.main / requests);
          push(`${key}:all`, ir.all / requests);
          console.error(
            `${c.name} ${target.label}: ${Math.round(ir.main / requests / 1000)} k main-thread instructions per request, ${Math.round(ir.all / requests / 1000)} k in all threads`,
          );
        }
      }
    }
    report(cases, builds, samples);
  } finally {
    await Promise.all([...targets.map((t) => t.child.stop(60_000)), mcp.stop(), sim.stop()]);
    if (KEEP) console.error(`callgrind dumps kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

/** Stores a `previous_response_id` chain of `length` responses on a gateway; the id of its last. */
async function storeChain(gatewayUrl: string, length: number): Promise<string> {
  let head: string | undefined;
  for (let i = 0; i < length; i++) {
    const res = await fetch(`${gatewayUrl}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chainTurnBody(head) });
    if (!res.ok) throw new Error(`storing a chain: HTTP ${res.status} ${await res.text()}`);
    head = ((await res.json()) as { id: string }).id;
  }
  return head!;
}

function report(cases: RatioCase[], builds: Array<{ label: string }>, samples: Map<string, number[]>): void {
  const med = (key: string) => median(samples.get(key) ?? [NaN]);
  const k = (v: number) => Math.round(v / 1000);
  console.log(
    `Run ${new Date().toISOString()}, Node ${process.version}; load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  console.log(
    `valgrind --tool=callgrind, ${N} requests per case at c=4 after ${SETTLE} of every case and ${WARMUP} warm-up requests of its own; ${ROUNDS} round(s); thousands of instructions per request\n`,
  );
  const labels = builds.map((b) => b.label);
  const last = labels[labels.length - 1];
  const versus = labels.slice(0, -1).map((l) => `${l}/${last}`);
  const table = (threads: '' | ':all', title: string) => {
    console.log(`${title}\n`);
    console.log(`| case | ${labels.map((l) => `k instr/request ${l}`).join(' | ')} |${versus.map((v) => ` ${v} |`).join('')}`);
    console.log(`| --- | ${labels.map(() => '---').join(' | ')} |${versus.map(() => ' --- |').join('')}`);
    for (const c of cases) {
      if (c.proxy) {
        console.log(`| ${c.name} | ${k(med(c.name + threads))} |${[...labels.slice(1), ...versus].map(() => ' |').join('')}`);
        continue;
      }
      const cells = labels.map((l) => `${k(med(c.name + l + threads))}`);
      const ratios = labels.slice(0, -1).map((l) => ` ${round(med(c.name + l + threads) / med(c.name + last + threads))} |`);
      console.log(`| ${c.name} | ${cells.join(' | ')} |${ratios.join('')}`);
    }
  };
  table('', 'Main thread (the event loop):');
  table(':all', '\nAll threads (V8 compiler and GC helpers, libuv pool included):');
  console.log(`\nRatios, main thread:\n\n| ratio | ${labels.join(' | ')} | target |`);
  console.log(`| --- | ${labels.map(() => '---').join(' | ')} | --- |`);
  const ratio = (name: string, num: string, den: string, target: string) => {
    const value = (l: string) => round((samples.has(num + l) ? med(num + l) : med(num)) / (samples.has(den + l) ? med(den + l) : med(den)));
    if (!samples.has(num + labels[0]) || (!samples.has(den + labels[0]) && !samples.has(den))) return;
    console.log(`| ${name} | ${labels.map((l) => `${value(l)}×`).join(' | ')} | ${target} |`);
  };
  ratio('blocking `store: false` / proxy', 'blocking', 'proxy', '≤ 3.5×');
  ratio('streaming `store: false` / proxy streaming', 'streaming', 'proxy-streaming', '≤ 4×');
  ratio('blocking stored / not stored', 'blocking-stored', 'blocking', '≤ 1.2×');
  ratio('streaming stored / not stored', 'streaming-stored', 'streaming', '≤ 1.2×');
  ratio('100 tools / none', 'tools-100', 'blocking', '≤ 1.3×');
  ratio('chain of 1 / stored with nothing before it', 'chain-1', 'blocking-stored', '≤ 1.1×');
  if (samples.has(`chain-20${labels[0]}`) && samples.has(`chain-1${labels[0]}`)) {
    // Not a ratio: what each earlier turn adds, (chain of 20 − chain of 1) / 19, in thousands of instructions.
    const perTurn = (l: string) => round((med(`chain-20${l}`) - med(`chain-1${l}`)) / 19 / 1000, 1);
    console.log(`| each earlier turn of a chain, (chain of 20 − chain of 1) / 19, k instructions | ${labels.map((l) => `${perTurn(l)}`).join(' | ')} | (≤ 5 µs) |`);
  }
  ratio('MCP round / plain', 'mcp-round', 'blocking', '≤ 2×');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
