import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ChildService } from './lib/child-service.js';
import { keepAliveAgent, runLoad, sendOnce } from './lib/load-generator.js';
import { chainCases, chainTurnBody, continuedBody, floorCases, mcpToolOf, ratioCases, type RatioCase } from './lib/ratio-cases.js';
import { median, pairedRatio, round } from './lib/stats.js';
import { arg } from './lib/flags.js';

type Case = RatioCase;

/**
 * `npm run build && node dist/bench/cpu-ratios.bench.js [flags]`: the issue-29
 * ratios, each side of a ratio measured in the same round, rounds interleaved.
 *
 * CPU per request of the process answering the client (the pass-through proxy
 * or a gateway child on SQLite), at c=16 over a fixed duration after a warm-up
 * load of its own, for: a plain blocking request through the proxy; the
 * gateway blocking and streaming with `store: false` and `store: true`; a
 * blocking request declaring 100 function tools; one MCP tool round (the SDK's
 * `McpServer` in its own process, request-declared `server_url`). Then c=1
 * latency of the MCP round against the same two model turns driven by a
 * client that calls the MCP tool itself. Beside the proxy, the framework
 * floors (`framework-floor-child.ts`): the plain body parsed, relayed as JSON
 * and answered by express alone and by Nest over express, so the gateway's
 * own share of a request's CPU can be read apart from its stack's.
 *
 *   --vs=DIR       also run DIR/bench/bench-gateway.js (another build's `dist`)
 *                  as gateway B, interleaved with this build's (A): before/after;
 *                  `--vs=.` runs this build as B too, for a flags-only what-if
 *   --node-a=FLAGS / --node-b=FLAGS  Node flags of gateway A / B, comma-separated
 *                  (`--node-b=--max-semi-space-size=4`): what a deployment's flags cost
 *   --rounds=N     rounds (default 3); --ms=N  duration of a measured load (default 3000)
 *   --warmup=N     requests of each case before each measured load (default 300; cut short after
 *                  the longer of --ms and 5 ms per request). The optimizing compiler is still at
 *                  work on a tool round's paths after 300, and its threads' CPU counts as the
 *                  gateway's: a long warm-up measures the steady state
 *   --cases=LIST   only these cases (names as in the table). `proxy-streaming` is the proxy moving
 *                  the streamed answer (streaming's floor); `chain-1` and `chain-20` continue a stored
 *                  `previous_response_id` chain of 1 and 20 responses made on each gateway at the start
 *   --profile      gateway and floor children run with --cpu-prof (profiles in the cwd)
 *   --load-profile each gateway's CPU during each measured full load only, into `cpu-<case><build>-<round>.cpuprofile`
 *                  in the cwd, with the load's request count printed (`profile-summary.js FILE top REQUESTS`)
 *   --alloc-profile[=promoted]  each gateway's allocations during each measured load, collected ones included,
 *                  sampled into `alloc-<case><build>-<round>.heapprofile` in the cwd (`alloc-summary.js` reads them);
 *                  `=promoted`: only what outlived the young generation (promoted, then garbage or kept)
 *   --c1=N         requests per c=1 latency sample (default 300; 0 skips it)
 *   --mcp-list-cache-ms=N  the gateways' `mcp.toolsListCacheMs` (default 0, the default config: every round lists)
 *   --sections=JSON config sections merged into the gateways' (`{"observability":{"metrics":false}}`): what-if runs
 *   --dialect=chat the gateways talk to the simulator in the chat-completions dialect (default responses);
 *                  a `--vs` build older than this flag runs on responses whatever it says
 *   --equal-rate=N also measure every case paced to N requests per second (after its full-load
 *                  measurement, in the same round), so both sides of every ratio run at the same
 *                  throughput: CPU per request depends on the rate (batching in the kernel and the
 *                  event loop, JIT and GC amortised differently), so full-load ratios compare cases
 *                  at different rates. N must be below the slowest case's full-load rate; the table
 *                  prints the rate each case reached and marks one that fell more than 5 % short
 *
 * Ratios are printed as the ratio of the two cases' medians over the rounds and, for the pairs in
 * `PAIRED`, beside it in brackets as the median of each round's own ratio (`pairedRatio`).
 */
type CpuUsage = NodeJS.CpuUsage;
/**
 * Ratios (numerator, denominator case) also given as the median of each round's own ratio: the two
 * sides of each are measured close together in every round (see `runOrder`), and samples spread by
 * ±20 % between rounds on a shared host, which a ratio of two medians carries from both sides.
 */
const PAIRED: ReadonlyArray<readonly [string, string]> = [
  ['chain-1', 'blocking-stored'],
  ['mcp-round', 'blocking'],
  ['blocking', 'proxy'],
  ['streaming', 'proxy-streaming'],
  ['tools-100', 'blocking'],
];
const ROUNDS = Number(arg('rounds') ?? 3);
const DURATION_MS = Number(arg('ms') ?? 3000);
const WARMUP = Number(arg('warmup') ?? 300);
const C1 = Number(arg('c1') ?? 300);
const vs = arg('vs');
const onlyCases = arg('cases')?.split(',');
const profile = process.argv.includes('--profile');
const allocProfile = process.argv.some((a) => a === '--alloc-profile' || a.startsWith('--alloc-profile='));
const promotedOnly = arg('alloc-profile') === 'promoted';
const loadProfile = process.argv.includes('--load-profile');
const MCP_LIST_CACHE_MS = Number(arg('mcp-list-cache-ms') ?? 0);
const DIALECT = arg('dialect') ?? 'responses';
const SECTIONS = JSON.parse(arg('sections') ?? '{}') as Record<string, Record<string, unknown>>;
const EQUAL_RATE = arg('equal-rate') === undefined ? undefined : Number(arg('equal-rate'));
if (EQUAL_RATE !== undefined && !(EQUAL_RATE > 0)) throw new Error('--equal-rate=N needs a positive number of requests per second');
/** The sample key of a case measured at the equal rate (beside its full-load key). */
const PACED = '@rate';
const cpuUs = (a: CpuUsage, b: CpuUsage) => b.user + b.system - a.user - a.system;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(os.tmpdir(), 'sy-ratios-'));
  const sim = await ChildService.start('simulator', { script: 'simulator-child.js' });
  const proxy = await ChildService.start('proxy', { script: 'passthrough-proxy.js', config: { upstreamUrl: sim.url } });
  const mcp = await ChildService.start('mcp-server', { script: 'mcp-server-child.js' });
  const mcpHost = new URL(mcp.url).host;
  const execArgv = profile ? ['--cpu-prof'] : [];
  const nodeFlags = (name: string): string[] => arg(name)?.split(',').filter(Boolean) ?? [];
  const builds: Array<{ label: string; gateway: ChildService }> = [];
  const gatewayConfig = (tag: string) => ({
    upstreamUrl: sim.url,
    sqlitePath: join(dir, `${tag}.sqlite`),
    mcp: { allowedHosts: [mcpHost], toolsListCacheMs: MCP_LIST_CACHE_MS },
    dialect: DIALECT,
    sections: SECTIONS,
  });
  builds.push({
    label: 'A',
    gateway: await ChildService.start('gateway A', {
      script: 'bench-gateway.js',
      config: gatewayConfig('a'),
      execArgv: [...execArgv, ...nodeFlags('node-a')],
      startTimeoutMs: 120_000,
    }),
  });
  if (vs)
    builds.push({
      label: 'B',
      gateway: await ChildService.start('gateway B', {
        script: vs === '.' ? 'bench-gateway.js' : join(vs, 'bench/bench-gateway.js'),
        config: gatewayConfig('b'),
        execArgv: [...execArgv, ...nodeFlags('node-b')],
        startTimeoutMs: 120_000,
      }),
    });
  const mcpTool = mcpToolOf(mcp.url);
  const cases: Case[] = runOrder(ratioCases(mcp.url), chainCases(), floorCases(mcp.url)).filter((c) => !onlyCases || onlyCases.includes(c.name));
  // Each gateway's own chains (their stores are apart), made once: every load continues the same head.
  const heads = new Map<string, string>();
  for (const c of cases.filter((c) => c.chain)) for (const build of builds) heads.set(`${c.name}${build.label}`, await storeChain(build.gateway.url, c.chain!));
  const bodyOf = (c: Case, label: string) => (c.chain ? continuedBody(c, heads.get(`${c.name}${label}`)!) : c.body);
  const floors = new Map<string, ChildService>();
  for (const mode of new Set(cases.flatMap((c) => (c.floor ? [c.floor] : [])))) {
    floors.set(mode, await ChildService.start(`${mode} floor`, { script: 'framework-floor-child.js', config: { upstreamUrl: sim.url, mode }, execArgv }));
  }
  const samples = new Map<string, number[]>();
  const push = (key: string, v: number) => samples.set(key, [...(samples.get(key) ?? []), v]);
  try {
    for (let r = 0; r < ROUNDS; r++) {
      for (const c of cases) {
        const floor = c.floor ? floors.get(c.floor) : undefined;
        for (const build of c.proxy ? [{ label: '', gateway: proxy }] : floor ? [{ label: '', gateway: floor }] : builds) {
          const load = { url: `${build.gateway.url}/responses`, body: bodyOf(c, build.label), concurrency: 16, expect: c.expect };
          await runLoad({ ...load, maxRequests: WARMUP, maxDurationMs: Math.max(DURATION_MS, WARMUP * 5) });
          const sampled = allocProfile && (c.proxy || floor ? false : true);
          if (sampled) await build.gateway.call('alloc-sampling-start', { promotedOnly });
          const profiled = loadProfile && !c.proxy && !floor;
          if (profiled) await build.gateway.call('cpu-profile-start');
          const before = await build.gateway.call<CpuUsage>('cpu');
          const result = await runLoad({ ...load, maxRequests: 1_000_000, maxDurationMs: DURATION_MS });
          const after = await build.gateway.call<CpuUsage>('cpu');
          if (profiled) {
            const path = join(process.cwd(), `cpu-${c.name}${build.label}-${r + 1}.cpuprofile`);
            await build.gateway.call('cpu-profile-stop', { path }, 120_000);
            console.error(`${path}: ${result.requests} requests`);
          }
          if (sampled) {
            const path = join(process.cwd(), `alloc-${c.name}${build.label}-${r + 1}.heapprofile`);
            await build.gateway.call('alloc-sampling-stop', { path }, 120_000);
            console.error(`${path}: ${result.requests} requests`);
          }
          if (result.errors > 0) throw new Error(`${c.name} ${build.label}: ${result.errors} errors, first: ${result.firstError}`);
          push(`${c.name}${build.label}`, cpuUs(before, after) / result.requests);
          if (EQUAL_RATE !== undefined) {
            const start = await build.gateway.call<CpuUsage>('cpu');
            const paced = await runLoad({ ...load, maxRequests: 1_000_000, maxDurationMs: DURATION_MS, ratePerSec: EQUAL_RATE });
            const end = await build.gateway.call<CpuUsage>('cpu');
            if (paced.errors > 0) throw new Error(`${c.name} ${build.label} at ${EQUAL_RATE} req/s: ${paced.errors} errors, first: ${paced.firstError}`);
            push(`${c.name}${build.label}${PACED}`, cpuUs(start, end) / paced.requests);
            push(`${c.name}${build.label}${PACED}rps`, paced.rps);
          }
        }
      }
      if (C1 > 0 && (!onlyCases || onlyCases.includes('mcp-round'))) {
        for (const build of builds) {
          const { gatewayRound, clientDriven } = await toolRoundLatency(build.gateway.url, mcp.url, mcpTool);
          push(`c1-gateway-round${build.label}`, gatewayRound);
          push(`c1-client-driven${build.label}`, clientDriven);
        }
      }
      console.error(`round ${r + 1}/${ROUNDS} done`);
    }
    report(cases, builds, samples);
  } finally {
    await Promise.all([...builds.map((b) => b.gateway.stop()), ...[...floors.values()].map((f) => f.stop()), proxy.stop(), mcp.stop(), sim.stop()]);
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * c=1 wall time (median ms) of one MCP tool round run by the gateway, against
 * the client doing the same: a first request declaring `add` as a function,
 * the MCP `tools/call` from the client over its own kept session, and a
 * second request carrying the call and its output inline.
 */
async function toolRoundLatency(gatewayUrl: string, mcpUrl: string, mcpTool: unknown): Promise<{ gatewayRound: number; clientDriven: number }> {
  const agent = keepAliveAgent(2);
  const target = new URL(`${gatewayUrl}/responses`);
  const input = 'add [[call add {"a": 1, "b": 2}]]';
  const roundBody = Buffer.from(JSON.stringify({ model: 'bench', input: 'add [[call bench__add {"a": 1, "b": 2}]]', tools: [mcpTool], store: false }));
  const addTool = { type: 'function', name: 'add', parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] } };
  const firstBody = Buffer.from(JSON.stringify({ model: 'bench', input, tools: [addTool], store: false }));
  const client = new Client({ name: 'bench-client', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl)));
  const gatewayTimes: number[] = [];
  const clientTimes: number[] = [];
  try {
    for (let i = 0; i < C1 + 30; i++) {
      let t = performance.now();
      const round = await sendOnce(agent, target, roundBody, '"completed"');
      if (!round.ok) throw new Error(`gateway round: ${round.error}`);
      if (i >= 30) gatewayTimes.push(performance.now() - t);
      t = performance.now();
      const first = await post(target, firstBody);
      const call = (first.output as Array<Record<string, unknown>>).find((o) => o.type === 'function_call');
      if (!call) throw new Error('client-driven: no function_call in the first answer');
      const result = await client.callTool({ name: 'add', arguments: JSON.parse(call.arguments as string) as Record<string, unknown> });
      const output = JSON.stringify((result.content as Array<{ text?: string }>).map((c) => c.text ?? '').join(''));
      const second = await post(
        target,
        Buffer.from(
          JSON.stringify({
            model: 'bench',
            input: [
              { type: 'message', role: 'user', content: input },
              { type: 'function_call', call_id: call.call_id, name: 'add', arguments: call.arguments },
              { type: 'function_call_output', call_id: call.call_id, output },
            ],
            tools: [addTool],
            store: false,
          }),
        ),
      );
      if (second.status !== 'completed') throw new Error(`client-driven: second answer ${String(second.status)}`);
      if (i >= 30) clientTimes.push(performance.now() - t);
    }
  } finally {
    await client.close();
    agent.destroy();
  }
  return { gatewayRound: median(gatewayTimes), clientDriven: median(clientTimes) };
}

/**
 * The cases in the order each round measures them: the chain cases right after `blocking-stored`,
 * the side their ratio divides by, so that the two are measured next to each other in a round and
 * the paired ratio (`pairedRatio`) compares loads minutes apart at most.
 */
function runOrder(ratio: Case[], chains: Case[], floors: Case[]): Case[] {
  const at = ratio.findIndex((c) => c.name === 'blocking-stored') + 1;
  return [...ratio.slice(0, at), ...chains, ...ratio.slice(at), ...floors];
}

/** Stores a `previous_response_id` chain of `length` responses on a gateway; the id of its last. */
async function storeChain(gatewayUrl: string, length: number): Promise<string> {
  let head: string | undefined;
  for (let i = 0; i < length; i++) {
    const answer = await post(new URL(`${gatewayUrl}/responses`), Buffer.from(chainTurnBody(head)));
    head = answer.id as string;
  }
  return head!;
}

async function post(target: URL, body: Buffer): Promise<Record<string, unknown>> {
  const res = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  if (!res.ok) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/** The host line printed above each table: a ratio means little without the CPU it ran on and how busy it was. */
function hostLine(): string {
  const cpus = os.cpus();
  const load = os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  return `Host: ${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown'}, Node ${process.version}; load average ${load} (1, 5, 15 min) when printed`;
}

function report(cases: Case[], builds: Array<{ label: string }>, samples: Map<string, number[]>): void {
  const med = (key: string) => median(samples.get(key) ?? [NaN]);
  const list = (key: string) => (samples.get(key) ?? []).map(Math.round).join(', ');
  console.log(`Run ${new Date().toISOString()}`);
  console.log(`${ROUNDS} rounds, ${DURATION_MS} ms per load at c=16 after ${WARMUP} warm-up requests, upstream dialect ${DIALECT}; medians of the rounds (samples in brackets)`);
  console.log(
    `Ratios: the ratio of the two cases' medians; in brackets, for ${PAIRED.map(([n, d]) => `${n} / ${d}`).join(', ')}, the median of each round's own ratio (paired: drift between rounds cancels)`,
  );
  if (EQUAL_RATE !== undefined)
    console.log(`Each load run twice per round: at full load (closed loop, as fast as the target answers) and paced to ${EQUAL_RATE} req/s (equal rate)`);
  console.log(`\n${hostLine()}\n`);
  const labels = builds.map((b) => b.label);
  const paced = EQUAL_RATE !== undefined;
  /** `µs [samples] at rps`: the rate reached, marked when more than 5 % short of the one asked for. */
  const pacedCell = (key: string) => {
    const rps = med(`${key}${PACED}rps`);
    const short = rps < EQUAL_RATE! * 0.95 ? ' **below rate**' : '';
    return `${Math.round(med(key + PACED))} [${list(key + PACED)}] at ${Math.round(rps)}/s${short}`;
  };
  const columns = labels.flatMap((l) => [`CPU µs/request ${l} (full load)`, ...(paced ? [`CPU µs/request ${l} (equal rate ${EQUAL_RATE}/s)`] : [])]);
  console.log(`| case | ${columns.join(' | ')} |${labels.length > 1 ? ' A/B (full load) |' : ''}`);
  console.log(`| --- | ${columns.map(() => '---').join(' | ')} |${labels.length > 1 ? ' --- |' : ''}`);
  for (const c of cases) {
    if (c.proxy || c.floor) {
      const cells = [`${Math.round(med(c.name))} [${list(c.name)}]`, ...(paced ? [pacedCell(c.name)] : [])];
      console.log(
        `| ${c.name} | ${cells.join(' | ')} |${columns
          .slice(cells.length)
          .map(() => '')
          .join(' |')}`,
      );
      continue;
    }
    const cells = labels.flatMap((l) => [`${Math.round(med(c.name + l))} [${list(c.name + l)}]`, ...(paced ? [pacedCell(c.name + l)] : [])]);
    console.log(`| ${c.name} | ${cells.join(' | ')} |${labels.length > 1 ? ` ${round(med(c.name + 'A') / med(c.name + 'B'))} |` : ''}`);
  }
  console.log(`\n${hostLine()}\n`);
  // A cell is the ratio of the two sides' medians; for the pairs in `PAIRED`, then the median of
  // each round's own ratio (both sides measured in the same round), in which drift between rounds cancels.
  const ratioColumns = labels.flatMap((l) =>
    [`${l} (full load)`, ...(paced ? [`${l} (equal rate ${EQUAL_RATE}/s)`] : [])].map((h) => `${h}: medians' ratio (paired, where given)`),
  );
  console.log('| ratio | ' + ratioColumns.join(' | ') + ' | target |');
  console.log('| --- | ' + ratioColumns.map(() => '---').join(' | ') + ' | --- |');
  const ratio = (name: string, num: string, den: string, target: string) => {
    // A ratio whose either side was not measured (`--cases`) is left out rather than printed as NaN.
    const measured = (name: string) => samples.has(name + labels[0]) || samples.has(name);
    if (!measured(num) || !measured(den)) return;
    // A proxy or floor case has one series, without a build's label.
    const series = (name: string, l: string, at: string) => samples.get(samples.has(name + l) ? name + l + at : name + at) ?? [];
    const paired = PAIRED.some(([n, d]) => n === num && d === den);
    const value = (l: string, at = '') => {
      const n = series(num, l, at);
      const d = series(den, l, at);
      const ratioOfMedians = `${round(median(n) / median(d))}×`;
      return paired ? `${ratioOfMedians} (${round(pairedRatio(n, d))}×)` : ratioOfMedians;
    };
    const cells = labels.flatMap((l) => [value(l), ...(paced ? [value(l, PACED)] : [])]);
    console.log(`| ${name} | ${cells.join(' | ')} | ${target} |`);
  };
  ratio('blocking `store: false` / proxy', 'blocking', 'proxy', '≤ 3.5×');
  ratio('streaming `store: false` / proxy streaming', 'streaming', 'proxy-streaming', '≤ 4×');
  ratio('blocking stored / not stored', 'blocking-stored', 'blocking', '≤ 1.2×');
  ratio('streaming stored / not stored', 'streaming-stored', 'streaming', '≤ 1.2×');
  ratio('100 tools / none', 'tools-100', 'blocking', '≤ 1.3×');
  ratio('chain of 1 / stored with nothing before it', 'chain-1', 'blocking-stored', '≤ 1.1×');
  perTurn();
  ratio('MCP round / plain', 'mcp-round', 'blocking', '≤ 2×');
  ratio('express hop / proxy (the stack alone)', 'express-hop', 'proxy', '');
  ratio('Nest hop / proxy (the stack alone)', 'nest-hop', 'proxy', '');
  ratio('Nest hop on the gateway’s adapter / proxy (the stack alone)', 'nest-adapter-hop', 'proxy', '');
  ratio('blocking `store: false` / Nest hop (the gateway’s own work)', 'blocking', 'nest-hop', '');
  ratio('blocking `store: false` / Nest hop on the gateway’s adapter', 'blocking', 'nest-adapter-hop', '');
  ratio('100 tools / none through the proxy (the bytes alone)', 'proxy-tools-100', 'proxy', '');
  ratio('100 tools / none through Nest alone (the bytes, parsed and re-sent)', 'nest-hop-tools-100', 'nest-hop', '');
  ratio('MCP round / plain through Nest alone (the round’s exchanges, nothing else)', 'nest-hop-mcp-round', 'nest-hop', '');
  ratio('MCP round / its exchanges through Nest (the gateway’s own work on a round)', 'mcp-round', 'nest-hop-mcp-round', '');
  /** Not a ratio: what each earlier turn of a chain adds, (chain of 20 − chain of 1) / 19, in µs. */
  function perTurn(): void {
    if (!samples.has(`chain-20${labels[0]}`) || !samples.has(`chain-1${labels[0]}`)) return;
    const value = (l: string, at = '') => round((med(`chain-20${l}${at}`) - med(`chain-1${l}${at}`)) / 19);
    const cells = labels.flatMap((l) => [`${value(l)} µs`, ...(paced ? [`${value(l, PACED)} µs`] : [])]);
    console.log(`| each earlier turn of a chain, (chain of 20 − chain of 1) / 19 | ${cells.join(' | ')} | ≤ 5 µs |`);
  }
  if (samples.has(`c1-gateway-round${labels[0]}`)) {
    console.log(
      `| c=1 MCP round minus client-driven (ms) | ${labels.map((l) => `${round(med(`c1-gateway-round${l}`) - med(`c1-client-driven${l}`))} (${round(med(`c1-gateway-round${l}`))} vs ${round(med(`c1-client-driven${l}`))})${paced ? ' | (c=1, not paced)' : ''}`).join(' | ')} | ≤ +1 ms |`,
    );
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
