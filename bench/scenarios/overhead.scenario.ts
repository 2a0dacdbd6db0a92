import { runLoad, type LoadResult } from '../lib/load-generator.js';
import { median } from '../lib/stats.js';
import type { BenchContext } from '../lib/bench-context.js';

export type Target = 'direct' | 'proxy' | 'gateway';
export type Mode = 'blocking' | 'streaming';

export interface OverheadRow {
  mode: Mode;
  target: Target;
  /** c=1: medians over rounds. */
  p50Ms: number;
  p99Ms: number;
  ttfbP50Ms: number;
  /** c=64: median requests per second over rounds. */
  rps: number;
  /**
   * c=64: CPU time (user + system) of the process answering the client, per
   * request: the simulator for `direct`, the proxy or the gateway otherwise.
   * Unlike req/s, other load on the machine barely moves it.
   */
  cpuUsPerRequest: number;
  errors: number;
}

export interface OverheadResult {
  rows: OverheadRow[];
  /** Gateway minus direct, per mode. */
  addedP50Ms: Record<Mode, number>;
  addedP99Ms: Record<Mode, number>;
  /** The pass-through proxy minus direct: the cost of any extra Node hop. */
  proxyAddedP50Ms: Record<Mode, number>;
  /** Gateway throughput as a share of the pass-through proxy's, at c=64. */
  throughputVsProxy: Record<Mode, number>;
}

type CpuUsage = NodeJS.CpuUsage;
const cpuUs = (a: CpuUsage, b: CpuUsage) => b.user + b.system - a.user - a.system;

/**
 * Added latency (c=1) and throughput (c=64) of the gateway against the
 * simulator called directly and against the pass-through proxy, for small
 * outputs (`[[tokens 20]]`), blocking and streaming. The three targets run
 * interleaved, round by round, so drift on the machine hits them alike.
 */
export async function overheadScenario(ctx: BenchContext): Promise<OverheadResult> {
  const { sim, proxy, gateway, settings } = ctx;
  const urls: Record<Target, string> = { direct: sim.url, proxy: proxy.url, gateway: gateway.url };
  const server = { direct: sim, proxy, gateway };
  const rows: OverheadRow[] = [];
  for (const mode of ['blocking', 'streaming'] as const) {
    const body = JSON.stringify({ model: 'bench', input: '[[tokens 20]]', stream: mode === 'streaming', store: false });
    const expect = mode === 'streaming' ? 'response.completed' : '"completed"';
    const latency: Record<Target, LoadResult[]> = { direct: [], proxy: [], gateway: [] };
    const throughput: Record<Target, LoadResult[]> = { direct: [], proxy: [], gateway: [] };
    const cpu: Record<Target, number[]> = { direct: [], proxy: [], gateway: [] };
    for (let r = 0; r < settings.rounds; r++) {
      for (const target of ['direct', 'proxy', 'gateway'] as const) {
        latency[target].push(
          await runLoad({
            url: `${urls[target]}/responses`,
            body,
            expect,
            concurrency: 1,
            warmupRequests: settings.latencyWarmup,
            maxRequests: settings.latencyRequests,
            maxDurationMs: settings.latencyMs,
          }),
        );
        const cpuBefore = await server[target].call<CpuUsage>('cpu');
        throughput[target].push(
          await runLoad({
            url: `${urls[target]}/responses`,
            body,
            expect,
            concurrency: 64,
            warmupRequests: settings.throughputWarmup,
            maxRequests: 1_000_000,
            maxDurationMs: settings.throughputMs,
          }),
        );
        // Warm-up requests ran inside the same window: count them too.
        cpu[target].push(cpuUs(cpuBefore, await server[target].call<CpuUsage>('cpu')) / (throughput[target].at(-1)!.requests + settings.throughputWarmup));
        ctx.log(
          `  overhead ${mode} ${target} round ${r + 1}: p50 ${latency[target].at(-1)!.latencyMs.p50.toFixed(3)} ms, ` +
            `${throughput[target].at(-1)!.rps.toFixed(0)} req/s at c=64, ${cpu[target].at(-1)!.toFixed(0)} µs CPU/request`,
        );
      }
    }
    for (const target of ['direct', 'proxy', 'gateway'] as const) {
      rows.push({
        mode,
        target,
        p50Ms: median(latency[target].map((l) => l.latencyMs.p50)),
        p99Ms: median(latency[target].map((l) => l.latencyMs.p99)),
        ttfbP50Ms: median(latency[target].map((l) => l.ttfbMs.p50)),
        rps: median(throughput[target].map((t) => t.rps)),
        cpuUsPerRequest: median(cpu[target]),
        errors: [...latency[target], ...throughput[target]].reduce((n, l) => n + l.errors, 0),
      });
    }
  }
  const row = (mode: Mode, target: Target) => rows.find((r) => r.mode === mode && r.target === target)!;
  const perMode = (f: (mode: Mode) => number): Record<Mode, number> => ({ blocking: f('blocking'), streaming: f('streaming') });
  return {
    rows,
    addedP50Ms: perMode((m) => row(m, 'gateway').p50Ms - row(m, 'direct').p50Ms),
    addedP99Ms: perMode((m) => row(m, 'gateway').p99Ms - row(m, 'direct').p99Ms),
    proxyAddedP50Ms: perMode((m) => row(m, 'proxy').p50Ms - row(m, 'direct').p50Ms),
    throughputVsProxy: perMode((m) => row(m, 'gateway').rps / row(m, 'proxy').rps),
  };
}
