import { performance } from 'node:perf_hooks';
import { ChildService } from '../lib/child-service.js';
import { keepAliveAgent, sendOnce } from '../lib/load-generator.js';
import { median } from '../lib/stats.js';
import type { BenchContext } from '../lib/bench-context.js';

export interface SchedulerRow {
  calls: number;
  window: number;
  latencyMs: number;
  idealMs: number;
  /** First call start to last call end, measured inside the gateway (median of repeats). */
  wallMs: number;
  /** wall / ideal − 1. */
  overRatio: number;
  /** Whole request, client side (two upstream rounds included). */
  requestMs: number;
  errors: number;
}

const CASES = [
  { calls: 20, window: 5, latencyMs: 100 },
  { calls: 20, window: 20, latencyMs: 100 },
  { calls: 7, window: 3, latencyMs: 100 },
  { calls: 50, window: 10, latencyMs: 50 },
];

/**
 * N calls to a parallel-safe gateway tool of fixed latency under window W:
 * wall time against the ideal `ceil(N / W) × latency`. One gateway child per
 * window (the window is gateway configuration).
 */
export async function schedulerScenario(ctx: BenchContext): Promise<SchedulerRow[]> {
  const rows: SchedulerRow[] = [];
  for (const c of CASES) {
    const gateway = await ChildService.start(`gateway (W=${c.window})`, {
      script: 'bench-gateway.js',
      config: { upstreamUrl: ctx.sim.url, window: c.window },
      execArgv: ctx.settings.gatewayExecArgv,
    });
    const agent = keepAliveAgent(1);
    try {
      const calls = Array.from({ length: c.calls }, () => `[[call nap {"ms": ${c.latencyMs}}]]`).join(' ');
      const body = Buffer.from(JSON.stringify({ model: 'bench', input: `${calls} [[say done]]`, tools: [{ type: 'nap', name: 'nap', parallel: true }], store: false }));
      const target = new URL(`${gateway.url}/responses`);
      // One warm-up so JIT and first-connection costs stay out of the numbers.
      await sendOnce(agent, target, body, 'done');
      const walls: number[] = [];
      const requests: number[] = [];
      let errors = 0;
      for (let i = 0; i < ctx.settings.schedulerRepeats; i++) {
        await gateway.call('ledger-reset');
        const started = performance.now();
        const sample = await sendOnce(agent, target, body, '"text":"done"');
        requests.push(performance.now() - started);
        const ledger = await gateway.call<Array<{ start: number; end?: number }>>('ledger');
        if (!sample.ok || ledger.length !== c.calls || ledger.some((r) => r.end === undefined)) {
          errors++;
          continue;
        }
        walls.push(Math.max(...ledger.map((r) => r.end!)) - Math.min(...ledger.map((r) => r.start)));
      }
      const idealMs = Math.ceil(c.calls / c.window) * c.latencyMs;
      const wallMs = median(walls);
      rows.push({ ...c, idealMs, wallMs, overRatio: wallMs / idealMs - 1, requestMs: median(requests), errors });
      ctx.log(`  scheduler N=${c.calls} W=${c.window} ${c.latencyMs} ms: wall ${wallMs.toFixed(1)} ms vs ideal ${idealMs} ms`);
    } finally {
      agent.destroy();
      await gateway.stop();
    }
  }
  return rows;
}
