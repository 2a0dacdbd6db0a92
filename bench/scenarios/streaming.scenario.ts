import { runLoad } from '../lib/load-generator.js';
import type { BenchContext } from '../lib/bench-context.js';
import type { Target } from './overhead.scenario.js';

export type RelayTarget = Target | 'gateway (tick writes)';

export interface RelayRow {
  target: RelayTarget;
  concurrency: number;
  /** SSE events received per second, all streams together. */
  eventsPerSec: number;
  /** Events in one stream (the gateway writes more than vLLM: it adds the public lifecycle). */
  eventsPerStream: number;
  ttfbP50Ms: number;
  durationP50Ms: number;
  errors: number;
}

export interface RelayResult {
  rows: RelayRow[];
  /** Gateway minus direct, time to first body byte, c=1. */
  addedTtfbP50Ms: number;
}

/** Long outputs (`[[tokens 5000]]`, one delta per token) streamed through each target. */
export async function streamingScenario(ctx: BenchContext): Promise<RelayResult> {
  const { sim, proxy, gateway, gatewayTick, settings } = ctx;
  const urls: Partial<Record<RelayTarget, string>> = { direct: sim.url, proxy: proxy.url, gateway: gateway.url };
  // The default writes each event once; the tick mode joins a tick's events (measured side by side).
  if (gatewayTick) urls['gateway (tick writes)'] = gatewayTick.url;
  const targets = Object.keys(urls) as RelayTarget[];
  const body = JSON.stringify({ model: 'bench', input: '[[tokens 5000]]', stream: true, store: false });
  const rows: RelayRow[] = [];
  for (const concurrency of [1, 8]) {
    for (const target of targets) {
      const result = await runLoad({
        url: `${urls[target]}/responses`,
        body,
        expect: 'response.completed',
        concurrency,
        warmupRequests: concurrency * 2,
        maxRequests: settings.relayRequests * concurrency,
        maxDurationMs: 20_000,
      });
      const good = result.requests - result.errors;
      rows.push({
        target,
        concurrency,
        eventsPerSec: result.eventsPerSec,
        eventsPerStream: good ? result.events / good : 0,
        ttfbP50Ms: result.ttfbMs.p50,
        durationP50Ms: result.latencyMs.p50,
        errors: result.errors,
      });
      ctx.log(`  relay c=${concurrency} ${target}: ${result.eventsPerSec.toFixed(0)} events/s, ttfb p50 ${result.ttfbMs.p50.toFixed(2)} ms`);
    }
  }
  const at = (target: RelayTarget) => rows.find((r) => r.target === target && r.concurrency === 1)!;
  return { rows, addedTtfbP50Ms: at('gateway').ttfbP50Ms - at('direct').ttfbP50Ms };
}
