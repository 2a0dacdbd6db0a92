import type { OpenStreamsResult, SoakResult } from '../scenarios/memory.scenario.js';
import type { ObservabilityCostResult } from '../scenarios/observability.scenario.js';
import type { OverheadResult } from '../scenarios/overhead.scenario.js';
import type { SchedulerRow } from '../scenarios/scheduler.scenario.js';
import type { PassthroughResult } from '../scenarios/passthrough.scenario.js';
import type { RelayResult } from '../scenarios/streaming.scenario.js';

export interface TargetCheck {
  target: string;
  measured: string;
  pass: boolean;
}

export interface BenchResults {
  machine: { cpus: number; cpuModel: string; node: string; platform: string; totalMemoryBytes: number };
  startedAt: string;
  settings: Record<string, unknown>;
  durationSeconds?: number;
  overhead?: OverheadResult;
  streaming?: RelayResult;
  passthrough?: PassthroughResult;
  scheduler?: SchedulerRow[];
  observability?: ObservabilityCostResult;
  memory?: OpenStreamsResult[];
  soak?: SoakResult;
  targets?: TargetCheck[];
}

/** Heap growth over the soak must stay within this or twice the noise around the fit, whichever is larger. */
const HEAP_GROWTH_FLOOR = 1024 * 1024;
const RSS_GROWTH_FLOOR = 4 * 1024 * 1024;

const ms = (v: number, d = 3) => `${v.toFixed(d)} ms`;
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const pct = (v: number) => `${(v * 100).toFixed(1)} %`;

export function evaluateTargets(r: BenchResults): TargetCheck[] {
  const checks: TargetCheck[] = [];
  if (r.overhead) {
    for (const mode of ['blocking', 'streaming'] as const) {
      checks.push({
        target: `added p50 < 1 ms at c=1 (${mode})`,
        measured: `${ms(r.overhead.addedP50Ms[mode])} (p99 +${ms(r.overhead.addedP99Ms[mode])}; proxy floor +${ms(r.overhead.proxyAddedP50Ms[mode])})`,
        pass: r.overhead.addedP50Ms[mode] < 1,
      });
    }
    for (const mode of ['blocking', 'streaming'] as const) {
      checks.push({
        target: `throughput ≥ 80 % of the pass-through proxy at c=64 (${mode})`,
        measured: pct(r.overhead.throughputVsProxy[mode]),
        pass: r.overhead.throughputVsProxy[mode] >= 0.8,
      });
    }
  }
  for (const row of r.scheduler ?? []) {
    checks.push({
      target: `scheduler wall within 5 % of ideal (N=${row.calls}, W=${row.window}, ${row.latencyMs} ms)`,
      measured: `${row.wallMs.toFixed(1)} ms vs ${row.idealMs} ms (+${pct(row.overRatio)})`,
      pass: row.errors === 0 && row.overRatio <= 0.05,
    });
  }
  const idle = r.memory?.find((m) => m.variant === 'idle');
  if (idle) {
    checks.push({
      target: `< 64 KiB RSS per idle open stream (${idle.streams} streams)`,
      measured: `${kib(idle.perStreamRssBytes)} (${idle.opened}/${idle.streams} opened)`,
      pass: idle.opened === idle.streams && idle.perStreamRssBytes < 64 * 1024,
    });
  }
  if (r.soak) {
    const s = r.soak;
    const heapLimit = Math.max(HEAP_GROWTH_FLOOR, 2 * s.heapNoiseBytes);
    const rssLimit = Math.max(RSS_GROWTH_FLOOR, 2 * s.rssNoiseBytes);
    checks.push({
      target: `no heap growth beyond noise over a ${s.seconds} s soak (≤ max(1 MiB, 2σ))`,
      measured: `${mib(s.heapGrowthBytes)} fitted growth (${kib(s.heapSlopeBytesPerMin)}/min, σ ${kib(s.heapNoiseBytes)}), ${s.errors} errors`,
      pass: s.errors === 0 && s.heapGrowthBytes <= heapLimit,
    });
    checks.push({
      target: `no RSS growth beyond noise over a ${s.seconds} s soak (≤ max(4 MiB, 2σ))`,
      measured: `${mib(s.rssGrowthBytes)} fitted growth (${kib(s.rssSlopeBytesPerMin)}/min, σ ${kib(s.rssNoiseBytes)})`,
      pass: s.rssGrowthBytes <= rssLimit,
    });
  }
  return checks;
}

function table(header: string[], rows: Array<Array<string | number>>): string {
  return [`| ${header.join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');
}

export function renderReport(r: BenchResults): string {
  const out: string[] = [];
  const m = r.machine;
  out.push(
    `Run ${r.startedAt} on ${m.cpus} × ${m.cpuModel}, ${mib(m.totalMemoryBytes)} RAM, Node ${m.node}, ${m.platform}; ` +
      `${r.durationSeconds ?? '?'} s in all${r.settings.quick ? ' (--quick: smoke run, not a measurement)' : ''}.`,
  );
  if (r.targets?.length) {
    out.push(
      '',
      '### Targets',
      '',
      table(
        ['target', 'measured', 'result'],
        r.targets.map((t) => [t.target, t.measured, t.pass ? 'pass' : '**miss**']),
      ),
    );
  }
  if (r.overhead) {
    out.push(
      '',
      '### Overhead: `[[tokens 20]]`, c=1 latency and c=64 throughput',
      '',
      table(
        ['mode', 'target', 'p50 (c=1)', 'p99 (c=1)', 'TTFB p50 (c=1)', 'req/s (c=64)', 'CPU µs/request (c=64)', 'errors'],
        r.overhead.rows.map((row) => [row.mode, row.target, ms(row.p50Ms), ms(row.p99Ms), ms(row.ttfbP50Ms), row.rps.toFixed(0), row.cpuUsPerRequest.toFixed(0), row.errors]),
      ),
    );
  }
  if (r.streaming) {
    out.push(
      '',
      '### Streaming relay: `[[tokens 5000]]`',
      '',
      table(
        ['concurrency', 'target', 'events/s', 'events per stream', 'TTFB p50', 'stream p50', 'errors'],
        r.streaming.rows.map((row) => [
          row.concurrency,
          row.target,
          row.eventsPerSec.toFixed(0),
          row.eventsPerStream.toFixed(0),
          ms(row.ttfbP50Ms, 2),
          ms(row.durationP50Ms, 1),
          row.errors,
        ]),
      ),
      '',
      `TTFB added by the gateway at c=1: ${ms(r.streaming.addedTtfbP50Ms, 2)}.`,
    );
  }
  if (r.passthrough) {
    out.push(
      '',
      '### Chat completions relay: `[[tokens 5000]]` passed through',
      '',
      table(
        ['concurrency', 'target', 'events/s', 'TTFB p50', 'stream p50', 'errors'],
        r.passthrough.rows.map((row) => [row.concurrency, row.target, row.eventsPerSec.toFixed(0), ms(row.ttfbP50Ms, 2), ms(row.durationP50Ms, 1), row.errors]),
      ),
      '',
      `Gateway events/s over the bare proxy's: ${Object.entries(r.passthrough.gatewayOverProxy)
        .map(([c, ratio]) => `c=${c} ${pct(ratio)}`)
        .join(', ')}.`,
    );
  }
  if (r.scheduler) {
    out.push(
      '',
      '### Gateway rounds: N parallel-safe calls of fixed latency under window W',
      '',
      table(
        ['N', 'W', 'latency', 'ideal ⌈N/W⌉×latency', 'wall (median)', 'over ideal', 'whole request', 'errors'],
        r.scheduler.map((row) => [row.calls, row.window, ms(row.latencyMs, 0), ms(row.idealMs, 0), ms(row.wallMs, 1), pct(row.overRatio), ms(row.requestMs, 1), row.errors]),
      ),
    );
  }
  if (r.observability) {
    out.push(
      '',
      '### Observability: the request log on vs off (blocking `[[tokens 20]]`, metrics on in both)',
      '',
      table(
        ['variant', 'p50 (c=1)', 'req/s (c=64)', 'CPU µs/request (c=64)', 'errors'],
        r.observability.rows.map((row) => [row.variant, ms(row.p50Ms), row.rps.toFixed(0), row.cpuUsPerRequest.toFixed(0), row.errors]),
      ),
      '',
      `CPU per request with the log on: ${r.observability.cpuRatio.toFixed(3)}× the log off; ${r.observability.logBytesPerRequest.toFixed(0)} bytes of log per request.`,
    );
  }
  if (r.memory) {
    out.push(
      '',
      '### Memory: open streams through one gateway process',
      '',
      table(
        ['streams', 'opened', 'idle RSS', 'RSS open', 'per stream RSS', 'per stream heap', 'RSS after close', 'upstream active after close'],
        r.memory.map((row) => [
          `${row.streams} ${row.variant}`,
          row.opened,
          mib(row.idleRssBytes),
          mib(row.openRssBytes),
          kib(row.perStreamRssBytes),
          kib(row.perStreamHeapBytes),
          mib(row.afterCloseRssBytes),
          row.upstreamActiveAfterClose,
        ]),
      ),
    );
  }
  if (r.soak) {
    const s = r.soak;
    const first = s.samples[0];
    const last = s.samples[s.samples.length - 1];
    out.push(
      '',
      `### Soak: ${s.seconds} s of mixed traffic (streaming, blocking, tool rounds)`,
      '',
      table(
        ['requests', 'errors', 'samples', 'heap first → last', 'heap slope', 'RSS first → last', 'RSS slope'],
        [
          [
            s.requests,
            s.errors,
            s.samples.length,
            `${mib(first?.heapUsed ?? 0)} → ${mib(last?.heapUsed ?? 0)}`,
            `${kib(s.heapSlopeBytesPerMin)}/min`,
            `${mib(first?.rss ?? 0)} → ${mib(last?.rss ?? 0)}`,
            `${kib(s.rssSlopeBytesPerMin)}/min`,
          ],
        ],
      ),
    );
  }
  return out.join('\n');
}
