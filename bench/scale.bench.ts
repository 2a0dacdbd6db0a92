import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ChildService } from './lib/child-service.js';
import { runLoad } from './lib/load-generator.js';
import { machineBusyUs, treeCpuUs } from './lib/proc-stats.js';
import { runSocketLoad } from './lib/socket-load.js';
import { median, round } from './lib/stats.js';

/**
 * `npm run build && node dist/bench/scale.bench.js [--quick]`: what the
 * scale work costs and buys, as ratios measured side by side in one run.
 *
 * 1. Workers: c=64 throughput of `apps/gateway` with WORKERS=1 and WORKERS=2
 *    (the real entry point, SQLite store, `store: false` bodies), and where
 *    the two cores went meanwhile. The load generator and the upstream run on
 *    the same two cores as the gateway, so by default they are the lean
 *    harness (`lib/socket-load.ts`, `lib/replay-upstream.ts`): with the
 *    `node:http` generator and the simulator answering every request, the
 *    harness took 0.75 of a core per core of gateway and capped two workers
 *    at 1.14× whatever the gateway did.
 * 2. Persistence: gateway CPU µs per request at c=64 with `store: true`
 *    against `store: false`, on SQLite (group commit).
 * 3. The gateway-tool path: CPU µs per request for one round trip through a
 *    gateway tool (`nap`, zero delay) against a plain request; the difference
 *    is the cost of one tool round.
 * 4. MCP tool rounds: the same for one `tools/call` to an MCP server (the
 *    SDK's `McpServer` over streamable HTTP, in its own process), declared by
 *    the request (`server_url`) and configured by the operator; the server's
 *    own CPU and HTTP exchanges per round are shown beside the gateway's.
 *    `--mcp-only` runs just this part (repetitions, before/after builds);
 *    `--profile` runs its gateway under `--cpu-prof` (profiles in the cwd),
 *    `--only=declared` runs just the named cases and prints no table;
 *    `--list-cache-ms=N` adds request-declared rounds on a gateway with the
 *    opt-in `mcp.toolsListCacheMs: N`.
 * Every comparison interleaves its two sides over several rounds and reports
 * medians, so drift on a shared machine hits both sides alike.
 */

type CpuUsage = NodeJS.CpuUsage;
const quick = process.argv.includes('--quick');
const mcpOnly = process.argv.includes('--mcp-only');
const profile = process.argv.includes('--profile');
/** `--only=declared,operator`: just those cases of section 4 (a profile of MCP rounds alone). */
const only = process.argv
  .find((a) => a.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',');
/** `--list-cache-ms=N`: also measure request-declared rounds on a gateway with `mcp.toolsListCacheMs: N`. */
const listCacheArg = process.argv.find((a) => a.startsWith('--list-cache-ms='));
const listCacheMs = listCacheArg ? Number(listCacheArg.slice('--list-cache-ms='.length)) : undefined;
/**
 * `--workers-only`: just section 1; `--stored`: its bodies with `store: true`; `--dist=DIR`: the gateway
 * of another build; `--postgres[=URL]`: its gateways on PostgreSQL instead of SQLite.
 */
const workersOnly = process.argv.includes('--workers-only');
/**
 * `--harness=node`: section 1 through the `node:http` load generator straight at the simulated upstream, as
 * before the lean harness (raw-socket load generator, replayed upstream answers), which is the default.
 */
const leanHarness = !process.argv.includes('--harness=node');
const runWorkersLoad = leanHarness ? runSocketLoad : runLoad;
const storedBodies = process.argv.includes('--stored');
const otherDist = process.argv.find((a) => a.startsWith('--dist='))?.slice('--dist='.length);
const postgresArg = process.argv.find((a) => a === '--postgres' || a.startsWith('--postgres='));
const postgresUrl = postgresArg ? postgresArg.slice('--postgres='.length) || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test' : undefined;
const ROUNDS = quick ? 2 : 3;
const DURATION_MS = quick ? 1_500 : 5_000;
const WARMUP_MS = quick ? 1_000 : 3_000;
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
  const child = spawn(process.execPath, [otherDist ? join(otherDist, 'apps/gateway/src/main.js') : here('../apps/gateway/src/main.js')], {
    env: {
      ...process.env,
      WORKERS: String(workers),
      HOST: '127.0.0.1',
      PORT: String(port),
      UPSTREAM_URL: upstream,
      ...(postgresUrl ? { STORAGE_DRIVER: 'postgres', DATABASE_URL: postgresUrl } : { STORAGE_DRIVER: 'sqlite', SQLITE_PATH: join(dir, `w${workers}.sqlite`) }),
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

/**
 * CPU per request over the measured phase only. The warm-up runs first as a
 * load of its own (its count is capped by the duration too, so it cannot be
 * assumed), and the closed loop waits for every request it sent, so the CPU
 * read afterwards covers exactly `result.requests` requests.
 */
async function cpuPerRequest(
  gateway: ChildService,
  body: string,
  expect: string,
  mcp?: ChildService,
): Promise<{ cpuUs: number; rps: number; serverCpuUs: number; serverRequests: number; serverConnections: number }> {
  const load = { url: `${gateway.url}/responses`, body, concurrency: 64, expect };
  await runLoad({ ...load, maxRequests: 200, maxDurationMs: DURATION_MS });
  const server = async () =>
    mcp
      ? { cpu: await mcp.call<CpuUsage>('cpu'), ...(await mcp.call<{ requests: number; connections: number }>('stats')) }
      : { cpu: { user: 0, system: 0 }, requests: 0, connections: 0 };
  const serverBefore = await server();
  const before = await gateway.call<CpuUsage>('cpu');
  const result = await runLoad({ ...load, maxRequests: 1_000_000, maxDurationMs: DURATION_MS });
  const after = await gateway.call<CpuUsage>('cpu');
  const serverAfter = await server();
  if (result.errors > 0) throw new Error(`errors during the run: ${result.firstError}`);
  return {
    cpuUs: cpuUs(before, after) / result.requests,
    rps: result.rps,
    serverCpuUs: cpuUs(serverBefore.cpu, serverAfter.cpu) / result.requests,
    serverRequests: (serverAfter.requests - serverBefore.requests) / result.requests,
    serverConnections: (serverAfter.connections - serverBefore.connections) / result.requests,
  };
}

/** Section 4: gateway CPU per MCP tool round, as a ratio to a plain request measured alongside. */
async function mcpRounds(simUrl: string, lines: string[]): Promise<void> {
  const mcp = await ChildService.start('mcp-server', { script: 'mcp-server-child.js' });
  const startGatewayChild = (extra: Record<string, unknown> = {}) =>
    ChildService.start('gateway', {
      script: 'bench-gateway.js',
      config: {
        upstreamUrl: simUrl,
        mcp: { allowedHosts: [new URL(mcp.url).host], servers: [{ label: 'ops', transport: 'streamable-http', url: mcp.url }], ...extra },
      },
      execArgv: profile ? ['--cpu-prof'] : [],
    });
  const gateway = await startGatewayChild();
  // A second gateway with the opt-in tools/list cache, only when asked for: a build without the setting refuses it.
  const cachedGateway = listCacheMs !== undefined ? await startGatewayChild({ toolsListCacheMs: listCacheMs }) : undefined;
  try {
    const input = (label: string) => `add [[call ${label}__add {"a": 1, "b": 2}]]`;
    const declared = JSON.stringify({
      model: 'bench',
      input: input('bench'),
      tools: [{ type: 'mcp', server_label: 'bench', server_url: mcp.url, require_approval: 'never' }],
      store: false,
    });
    const cases = [
      { key: 'plain', label: 'plain', gateway, body: JSON.stringify({ model: 'bench', input: '[[tokens 20]]', store: false }) },
      { key: 'declared', label: 'MCP, request-declared `server_url`', gateway, body: declared },
      {
        key: 'operator',
        label: 'MCP, operator-configured server',
        gateway,
        body: JSON.stringify({ model: 'bench', input: input('ops'), tools: [{ type: 'mcp', server_label: 'ops', require_approval: 'never' }], store: false }),
      },
      ...(cachedGateway ? [{ key: 'cached', label: `MCP, request-declared, \`toolsListCacheMs: ${listCacheMs}\``, gateway: cachedGateway, body: declared }] : []),
    ].filter((c) => !only || only.includes(c.key));
    const samples = new Map(cases.map((c) => [c.key, [] as Array<Awaited<ReturnType<typeof cpuPerRequest>>>]));
    for (let r = 0; r < ROUNDS; r++) {
      for (const c of cases) samples.get(c.key)!.push(await cpuPerRequest(c.gateway, c.body, '"completed"', mcp));
    }
    if (only) return;
    const med = (key: string, field: 'cpuUs' | 'rps' | 'serverCpuUs' | 'serverRequests' | 'serverConnections') => median(samples.get(key)!.map((s) => s[field]));
    const plain = med('plain', 'cpuUs');
    lines.push(
      '',
      '| request (c=64) | gateway CPU µs/request | req/s | vs plain | µs per MCP round | MCP server CPU µs/round | MCP HTTP requests/round | new MCP TCP connections/round |',
      '| --- | --- | --- | --- | --- | --- | --- | --- |',
    );
    lines.push(`| plain | ${Math.round(plain)} | ${Math.round(med('plain', 'rps'))} | 1× | | | | |`);
    for (const c of cases.slice(1)) {
      const cpu = med(c.key, 'cpuUs');
      lines.push(
        `| ${c.label} | ${Math.round(cpu)} | ${Math.round(med(c.key, 'rps'))} | ${round(cpu / plain)}× CPU | ${Math.round(cpu - plain)} | ${Math.round(med(c.key, 'serverCpuUs'))} | ${round(med(c.key, 'serverRequests'))} | ${round(med(c.key, 'serverConnections'))} |`,
      );
    }
    lines.push(
      '',
      `Samples (gateway CPU µs/request per round): ${cases
        .map(
          (c) =>
            `${c.key} ${samples
              .get(c.key)!
              .map((s) => Math.round(s.cpuUs))
              .join('/')}`,
        )
        .join(', ')}`,
    );
  } finally {
    await gateway.stop();
    await cachedGateway?.stop();
    await mcp.stop();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(os.tmpdir(), 'sy-scale-'));
  const sim = await ChildService.start('simulator', { script: 'simulator-child.js' });
  const lines: string[] = [];
  try {
    if (mcpOnly) await mcpRounds(sim.url, lines);
    else await allSections(sim, dir, lines);
  } finally {
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  report(lines);
}

interface WorkersRun {
  rps: number;
  /** CPU seconds per second of the gateway's processes (primary and workers). */
  gatewayCores: number;
  /** The same for the load generator. */
  loadCores: number;
  /** The same for the upstream (the simulator, or its replay and the simulator behind it). */
  upstreamCores: number;
  /** The rest of the machine's busy time: PostgreSQL's processes, the kernel's network work outside them, other tenants of the host. */
  restCores: number;
}

/** One measured round of section 1, with where the two cores went meanwhile. */
async function workersRun(gatewayPid: number, upstreams: readonly ChildService[], load: { url: string; body: string; concurrency: number; expect: string }): Promise<WorkersRun> {
  const upstreamCpu = async () => (await Promise.all(upstreams.map((u) => u.call<CpuUsage>('cpu')))).reduce((sum, cpu) => sum + cpu.user + cpu.system, 0);
  const machineBefore = machineBusyUs() ?? NaN;
  const gatewayBefore = treeCpuUs(gatewayPid) ?? NaN;
  const upstreamBefore = await upstreamCpu();
  const ownBefore = process.cpuUsage();
  const result = await runWorkersLoad({ ...load, maxRequests: 1_000_000, maxDurationMs: DURATION_MS });
  const own = process.cpuUsage(ownBefore);
  const upstreamUs = (await upstreamCpu()) - upstreamBefore;
  const gatewayUs = (treeCpuUs(gatewayPid) ?? NaN) - gatewayBefore;
  const machineUs = (machineBusyUs() ?? NaN) - machineBefore;
  if (result.errors > 0) throw new Error(`errors during the run: ${result.firstError}`);
  const wallUs = result.durationMs * 1000;
  const loadUs = own.user + own.system;
  return {
    rps: result.rps,
    gatewayCores: gatewayUs / wallUs,
    loadCores: loadUs / wallUs,
    upstreamCores: upstreamUs / wallUs,
    restCores: Math.max(0, machineUs - gatewayUs - loadUs - upstreamUs) / wallUs,
  };
}

async function allSections(sim: ChildService, dir: string, lines: string[]): Promise<void> {
  const simUrl = sim.url;
  // 1. Workers.
  const harness = leanHarness ? 'lean' : 'node';
  const upstream = leanHarness ? await ChildService.start('replay-upstream', { script: 'replay-upstream-child.js', config: { origin: simUrl } }) : undefined;
  // The simulator's CPU counts as the harness's either way: behind the replay it answers the first requests.
  const upstreams = upstream ? [sim, upstream] : [sim];
  const runs: Record<number, WorkersRun[]> = { 1: [], 2: [] };
  const plain = JSON.stringify({ model: 'bench', input: '[[tokens 20]]', store: storedBodies });
  try {
    for (const workers of [1, 2]) {
      const gw = await startGateway(workers, upstream?.url ?? simUrl, dir);
      try {
        const load = { url: `${gw.url}/responses`, body: plain, concurrency: 64, expect: '"completed"' };
        // Warm-up by time, not count: a worker's JIT reaches its steady state after a few thousand requests (bench/README, the eleventh pass).
        await runWorkersLoad({ ...load, maxRequests: 1_000_000, maxDurationMs: WARMUP_MS });
        for (let r = 0; r < ROUNDS; r++) runs[workers].push(await workersRun(gw.child.pid ?? -1, upstreams, load));
      } finally {
        await stop(gw.child);
      }
    }
    const replays = upstream ? await upstream.call<{ recorded: number; replayed: number }>('stats') : undefined;
    if (replays) lines.push(`Replay upstream: ${replays.replayed} answers replayed, ${replays.recorded} asked of the simulated upstream`, '');
  } finally {
    await upstream?.stop();
  }
  const rps = (workers: number) => median(runs[workers].map((run) => run.rps));
  const share = (workers: number, key: 'gatewayCores' | 'loadCores' | 'upstreamCores' | 'restCores') => round(median(runs[workers].map((run) => run[key])));
  lines.push(
    `Harness: ${leanHarness ? 'lean (raw-socket load generator, replay of the simulated upstream)' : 'node (`node:http` load generator, the simulated upstream)'}`,
    '',
    '| workers | req/s at c=64 (median) | vs 1 worker | cores busy: gateway | load generator | upstream | the rest |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  );
  for (const workers of [1, 2])
    lines.push(
      `| ${workers} | ${Math.round(rps(workers))} | ${round(rps(workers) / rps(1))}× | ${share(workers, 'gatewayCores')} | ${share(workers, 'loadCores')} | ${share(workers, 'upstreamCores')} | ${share(workers, 'restCores')} |`,
    );
  lines.push(
    '',
    `Samples (req/s per round): 1 worker ${runs[1].map((run) => Math.round(run.rps)).join('/')}, 2 workers ${runs[2].map((run) => Math.round(run.rps)).join('/')}; bodies \`store: ${storedBodies}\`, ${postgresUrl ? 'PostgreSQL' : 'SQLite'}, harness ${harness}`,
  );
  if (workersOnly) return;

  // 2 and 3: one bench gateway child, CPU read over IPC.
  const gateway = await ChildService.start('gateway', { script: 'bench-gateway.js', config: { upstreamUrl: simUrl, sqlitePath: join(dir, 'store.sqlite') } });
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
  await mcpRounds(simUrl, lines);
}

function report(lines: string[]): void {
  const cpus = os.cpus();
  console.log(`Run ${new Date().toISOString()} on ${cpus.length} × ${cpus[0]?.model ?? 'unknown'}, Node ${process.version}${quick ? ' (--quick)' : ''}\n`);
  console.log(
    `Load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}\n`,
  );
  console.log(lines.join('\n'));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
