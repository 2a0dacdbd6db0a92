import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChildService } from '../lib/child-service.js';
import { runLoad } from '../lib/load-generator.js';
import { median } from '../lib/stats.js';
import type { BenchContext } from '../lib/bench-context.js';

export interface ObservabilityCostRow {
  variant: 'request log off' | 'request log on';
  p50Ms: number;
  rps: number;
  cpuUsPerRequest: number;
  errors: number;
}

export interface ObservabilityCostResult {
  rows: ObservabilityCostRow[];
  /** CPU per request with the log on, over the same with it off (same run, interleaved). */
  cpuRatio: number;
  logBytesPerRequest: number;
}

type CpuUsage = NodeJS.CpuUsage;
const cpuUs = (a: CpuUsage, b: CpuUsage) => b.user + b.system - a.user - a.system;

/**
 * What the request log costs: two gateway children, identical but for the
 * request log (one JSON line per request appended to a file), blocking
 * `[[tokens 20]]`, interleaved round by round. Metrics and the run observer
 * are on in both (they are not switchable); traces are off in both.
 */
export async function observabilityScenario(ctx: BenchContext): Promise<ObservabilityCostResult> {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-log-'));
  const logFile = join(dir, 'requests.log');
  const variants = {
    'request log off': await ChildService.start('gateway (request log off)', { script: 'bench-gateway.js', config: { upstreamUrl: ctx.sim.url } }),
    'request log on': await ChildService.start('gateway (request log on)', {
      script: 'bench-gateway.js',
      config: { upstreamUrl: ctx.sim.url, requestLogFile: logFile },
    }),
  } as const;
  const body = JSON.stringify({ model: 'bench', input: '[[tokens 20]]', stream: false, store: false });
  const samples: Record<string, { p50: number[]; rps: number[]; cpu: number[]; errors: number }> = {};
  let loggedRequests = 0;
  try {
    for (let r = 0; r < ctx.settings.rounds; r++) {
      for (const [variant, gateway] of Object.entries(variants)) {
        const s = (samples[variant] ??= { p50: [], rps: [], cpu: [], errors: 0 });
        const latency = await runLoad({
          url: `${gateway.url}/responses`,
          body,
          expect: '"completed"',
          concurrency: 1,
          warmupRequests: ctx.settings.latencyWarmup,
          maxRequests: ctx.settings.latencyRequests,
          maxDurationMs: ctx.settings.latencyMs,
        });
        const before = await gateway.call<CpuUsage>('cpu');
        const load = await runLoad({
          url: `${gateway.url}/responses`,
          body,
          expect: '"completed"',
          concurrency: 64,
          warmupRequests: ctx.settings.throughputWarmup,
          maxRequests: 1_000_000,
          maxDurationMs: ctx.settings.throughputMs,
        });
        const requests = load.requests + ctx.settings.throughputWarmup;
        s.cpu.push(cpuUs(before, await gateway.call<CpuUsage>('cpu')) / requests);
        s.p50.push(latency.latencyMs.p50);
        s.rps.push(load.rps);
        s.errors += latency.errors + load.errors;
        if (variant === 'request log on') loggedRequests += requests + latency.requests + ctx.settings.latencyWarmup;
        ctx.log(`  observability ${variant} round ${r + 1}: ${load.rps.toFixed(0)} req/s at c=64, ${s.cpu.at(-1)!.toFixed(0)} µs CPU/request`);
      }
    }
  } finally {
    await Promise.all(Object.values(variants).map((g) => g.stop()));
  }
  const rows = Object.entries(samples).map(([variant, s]) => ({
    variant: variant as ObservabilityCostRow['variant'],
    p50Ms: median(s.p50),
    rps: median(s.rps),
    cpuUsPerRequest: median(s.cpu),
    errors: s.errors,
  }));
  const logBytes = statSync(logFile).size;
  rmSync(dir, { recursive: true, force: true });
  const cpu = (v: ObservabilityCostRow['variant']) => rows.find((r) => r.variant === v)!.cpuUsPerRequest;
  return { rows, cpuRatio: cpu('request log on') / cpu('request log off'), logBytesPerRequest: logBytes / Math.max(1, loggedRequests) };
}
