import { runLoad } from '../lib/load-generator.js';
import type { BenchContext } from '../lib/bench-context.js';

export interface PassthroughRow {
  target: 'direct' | 'proxy' | 'gateway';
  concurrency: number;
  /** SSE chunks received per second, all streams together. */
  eventsPerSec: number;
  ttfbP50Ms: number;
  durationP50Ms: number;
  errors: number;
}

export interface PassthroughResult {
  rows: PassthroughRow[];
  /** Gateway events/s over the bare pass-through proxy's, per concurrency: the cost of auth, limits, routing, telemetry on a relayed stream. */
  gatewayOverProxy: Record<number, number>;
}

/** A long chat completion stream (`[[tokens 5000]]`, one chunk per token) passed through as written, beside the simulator direct and the bare proxy. */
export async function passthroughScenario(ctx: BenchContext): Promise<PassthroughResult> {
  const { sim, proxy, gateway, settings } = ctx;
  const urls = { direct: sim.url, proxy: proxy.url, gateway: gateway.url } as const;
  const body = JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: '[[tokens 5000]]' }], stream: true });
  const rows: PassthroughRow[] = [];
  for (const concurrency of [1, 8]) {
    for (const target of ['direct', 'proxy', 'gateway'] as const) {
      const result = await runLoad({
        url: `${urls[target]}/chat/completions`,
        body,
        expect: '[DONE]',
        concurrency,
        warmupRequests: concurrency * 2,
        maxRequests: settings.relayRequests * concurrency,
        maxDurationMs: 20_000,
      });
      rows.push({ target, concurrency, eventsPerSec: result.eventsPerSec, ttfbP50Ms: result.ttfbMs.p50, durationP50Ms: result.latencyMs.p50, errors: result.errors });
      ctx.log(`  chat relay c=${concurrency} ${target}: ${result.eventsPerSec.toFixed(0)} events/s, ttfb p50 ${result.ttfbMs.p50.toFixed(2)} ms`);
    }
  }
  const at = (target: PassthroughRow['target'], c: number) => rows.find((r) => r.target === target && r.concurrency === c)!;
  return { rows, gatewayOverProxy: Object.fromEntries([1, 8].map((c) => [c, at('gateway', c).eventsPerSec / at('proxy', c).eventsPerSec])) };
}
