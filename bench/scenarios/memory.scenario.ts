import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { ChildService } from '../lib/child-service.js';
import { holdStream, runLoad, type HeldStream } from '../lib/load-generator.js';
import { linearFit, median } from '../lib/stats.js';
import type { BenchContext } from '../lib/bench-context.js';

type MemoryUsage = NodeJS.MemoryUsage;

export interface OpenStreamsResult {
  variant: 'idle' | 'trickle';
  streams: number;
  opened: number;
  idleRssBytes: number;
  openRssBytes: number;
  idleHeapBytes: number;
  openHeapBytes: number;
  perStreamRssBytes: number;
  perStreamHeapBytes: number;
  /** RSS once every stream was closed again (memory handed back or kept for reuse). */
  afterCloseRssBytes: number;
  upstreamActiveAfterClose: number;
}

export interface SoakSample {
  t: number;
  rss: number;
  heapUsed: number;
  external: number;
}

export interface SoakResult {
  seconds: number;
  requests: number;
  errors: number;
  samples: SoakSample[];
  /** Fitted over samples after the first 20 % (warm-up), per minute. */
  heapSlopeBytesPerMin: number;
  rssSlopeBytesPerMin: number;
  /** Fitted growth across the fitted window, and the residual noise around the fit. */
  heapGrowthBytes: number;
  heapNoiseBytes: number;
  rssGrowthBytes: number;
  rssNoiseBytes: number;
}

export const STREAM_VARIANTS = {
  // Headers and `response.created` are out, then nothing for five minutes: a truly idle stream.
  idle: '[[delay ttft=300000]] [[tokens 5]]',
  // One delta per second per stream.
  trickle: '[[delay ttft=0 token=1000]] [[tokens 600]]',
} as const;

async function sampleMemory(gateway: ChildService, times = 3): Promise<MemoryUsage> {
  const samples: MemoryUsage[] = [];
  for (let i = 0; i < times; i++) {
    samples.push(await gateway.call<MemoryUsage>('memory', { gc: true }));
    await sleep(300);
  }
  return { ...samples[0], rss: median(samples.map((s) => s.rss)), heapUsed: median(samples.map((s) => s.heapUsed)) };
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await sleep(100);
  }
  return false;
}

/** Streaming load before an idle measurement: JIT code, lazily made module state and pooled buffers exist afterwards. */
export async function warmUpStreaming(gatewayUrl: string): Promise<void> {
  await runLoad({
    url: `${gatewayUrl}/responses`,
    body: JSON.stringify({ model: 'bench', input: '[[tokens 20]]', stream: true, store: false }),
    concurrency: 16,
    maxRequests: 2000,
    maxDurationMs: 5000,
  });
  await sleep(500);
}

/**
 * Opens `count` streams of `variant` and holds them, each added to `held` as
 * it is opened (so the caller can abort them whatever happens); resolves with
 * how many started. Batches of 100 keep the listen backlog (511) from
 * overflowing into SYN retries.
 */
export async function holdStreams(agent: http.Agent, gatewayUrl: string, variant: keyof typeof STREAM_VARIANTS, count: number, held: HeldStream[]): Promise<number> {
  const target = new URL(`${gatewayUrl}/responses`);
  const body = Buffer.from(JSON.stringify({ model: 'bench', input: STREAM_VARIANTS[variant], stream: true, store: false }));
  let opened = 0;
  for (let i = 0; i < count; i += 100) {
    const batch = Array.from({ length: Math.min(100, count - i) }, () => holdStream(agent, target, body));
    held.push(...batch);
    opened += (await Promise.all(batch.map((s) => s.firstByte))).filter(Boolean).length;
  }
  return opened;
}

/**
 * Resident memory of a fresh gateway holding `streams` open streams, against
 * the same process idle (after warm-up and a forced GC), per stream.
 */
export async function openStreamsScenario(ctx: BenchContext, variant: keyof typeof STREAM_VARIANTS): Promise<OpenStreamsResult> {
  const count = ctx.settings.streams;
  const gateway = await ChildService.start('gateway (memory)', {
    script: 'bench-gateway.js',
    config: { upstreamUrl: ctx.sim.url, maxSockets: count + 64, idleMs: 600_000 },
    execArgv: ['--expose-gc', ...ctx.settings.gatewayExecArgv],
  });
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const held: HeldStream[] = [];
  try {
    await warmUpStreaming(gateway.url);
    const idle = await sampleMemory(gateway);
    const opened = await holdStreams(agent, gateway.url, variant, count, held);
    await sleep(ctx.settings.holdMs);
    const open = await sampleMemory(gateway);
    for (const stream of held) stream.abort();
    await waitFor(async () => (await ctx.sim.call<{ active: number }>('stats')).active === 0, 20_000);
    await sleep(500);
    const after = await sampleMemory(gateway);
    const upstreamActiveAfterClose = (await ctx.sim.call<{ active: number }>('stats')).active;
    const result: OpenStreamsResult = {
      variant,
      streams: count,
      opened,
      idleRssBytes: idle.rss,
      openRssBytes: open.rss,
      idleHeapBytes: idle.heapUsed,
      openHeapBytes: open.heapUsed,
      perStreamRssBytes: (open.rss - idle.rss) / count,
      perStreamHeapBytes: (open.heapUsed - idle.heapUsed) / count,
      afterCloseRssBytes: after.rss,
      upstreamActiveAfterClose,
    };
    ctx.log(
      `  memory ${variant}: ${opened}/${count} open, ${(result.perStreamRssBytes / 1024).toFixed(1)} KiB RSS and ` +
        `${(result.perStreamHeapBytes / 1024).toFixed(1)} KiB heap per stream`,
    );
    return result;
  } finally {
    for (const stream of held) stream.abort();
    agent.destroy();
    await gateway.stop();
  }
}

/**
 * A bounded soak: steady mixed traffic (streaming, blocking, tool rounds)
 * against a fresh gateway, sampling RSS and post-GC heap every few seconds.
 */
export async function soakScenario(ctx: BenchContext): Promise<SoakResult> {
  const seconds = ctx.settings.soakSeconds;
  const gateway = await ChildService.start('gateway (soak)', {
    script: 'bench-gateway.js',
    config: { upstreamUrl: ctx.sim.url },
    execArgv: ['--expose-gc', ...ctx.settings.gatewayExecArgv],
  });
  try {
    const url = `${gateway.url}/responses`;
    const durationMs = seconds * 1000;
    const loads = Promise.all([
      runLoad({
        url,
        concurrency: 4,
        maxRequests: Infinity,
        maxDurationMs: durationMs,
        expect: 'response.completed',
        body: JSON.stringify({ model: 'bench', input: '[[tokens 50]]', stream: true, store: false }),
      }),
      runLoad({
        url,
        concurrency: 3,
        maxRequests: Infinity,
        maxDurationMs: durationMs,
        expect: '"status":"completed"',
        body: JSON.stringify({ model: 'bench', input: '[[tokens 20]]', store: false }),
      }),
      runLoad({
        url,
        concurrency: 1,
        maxRequests: Infinity,
        maxDurationMs: durationMs,
        expect: 'response.completed',
        body: JSON.stringify({
          model: 'bench',
          input: '[[call nap {"ms": 5}]] [[call nap {"ms": 5}]] [[say ok]]',
          stream: true,
          store: false,
          tools: [{ type: 'nap', name: 'nap', parallel: true }],
        }),
      }),
    ]);
    const samples: SoakSample[] = [];
    const started = Date.now();
    let finished = false;
    void loads.finally(() => (finished = true));
    while (!finished && Date.now() - started < durationMs + 30_000) {
      const m = await gateway.call<MemoryUsage>('memory', { gc: true });
      samples.push({ t: (Date.now() - started) / 1000, rss: m.rss, heapUsed: m.heapUsed, external: m.external });
      await Promise.race([sleep(ctx.settings.sampleEveryMs), loads]);
    }
    const results = await loads;
    const fitted = samples.slice(Math.floor(samples.length * 0.2));
    const xs = fitted.map((s) => s.t);
    const span = xs.length > 1 ? xs[xs.length - 1] - xs[0] : 0;
    const heap = linearFit(
      xs,
      fitted.map((s) => s.heapUsed),
    );
    const rss = linearFit(
      xs,
      fitted.map((s) => s.rss),
    );
    const result: SoakResult = {
      seconds,
      requests: results.reduce((n, r) => n + r.requests, 0),
      errors: results.reduce((n, r) => n + r.errors, 0),
      samples,
      heapSlopeBytesPerMin: heap.slope * 60,
      rssSlopeBytesPerMin: rss.slope * 60,
      heapGrowthBytes: heap.slope * span,
      heapNoiseBytes: heap.residualStd,
      rssGrowthBytes: rss.slope * span,
      rssNoiseBytes: rss.residualStd,
    };
    ctx.log(
      `  soak ${seconds}s: ${result.requests} requests, ${result.errors} errors; heap ${(result.heapSlopeBytesPerMin / 1024).toFixed(1)} KiB/min, ` +
        `RSS ${(result.rssSlopeBytesPerMin / 1024).toFixed(1)} KiB/min`,
    );
    return result;
  } finally {
    await gateway.stop();
  }
}
