import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { ChildService } from './lib/child-service.js';
import type { BenchContext, BenchSettings } from './lib/bench-context.js';
import { renderReport, evaluateTargets, type BenchResults } from './lib/report.js';
import { openStreamsScenario, soakScenario } from './scenarios/memory.scenario.js';
import { observabilityScenario } from './scenarios/observability.scenario.js';
import { overheadScenario } from './scenarios/overhead.scenario.js';
import { schedulerScenario } from './scenarios/scheduler.scenario.js';
import { passthroughScenario } from './scenarios/passthrough.scenario.js';
import { streamingScenario } from './scenarios/streaming.scenario.js';

/**
 * `npm run bench [-- flags]`: the gateway, the simulated upstream and the
 * pass-through proxy each in a child process, load from this one, all on
 * 127.0.0.1. Writes bench/results/latest.json and prints a markdown report.
 *
 *   --soak=SECONDS   soak duration (default 60; 300 is the target length)
 *   --streams=N      open streams for the memory run (default 1000)
 *   --rounds=N       interleaved rounds of the overhead runs (default 3)
 *   --only=LIST      overhead,streaming,passthrough,scheduler,observability,memory,soak
 *   --quick          everything shorter (a smoke test, not a measurement)
 *   --profile        gateway children run with --cpu-prof (bench/results/profiles)
 *   --gateway-node-flags=LIST  Node flags of the gateway children, comma-separated
 *                    (`--gateway-node-flags=--max-semi-space-size=4`): what a deployment's flags do
 */
const SECTIONS = ['overhead', 'streaming', 'passthrough', 'scheduler', 'observability', 'memory', 'soak'] as const;
type Section = (typeof SECTIONS)[number];

function flag(name: string): string | undefined {
  const hit = process.argv.slice(2).find((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (!hit) return undefined;
  return hit.includes('=') ? hit.slice(hit.indexOf('=') + 1) : 'true';
}

function intFlag(name: string, fallback: number): number {
  const raw = flag(name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) {
    console.error(`--${name} must be a positive integer (got "${raw}")`);
    process.exit(2);
  }
  return value;
}

async function main(): Promise<void> {
  const resultsDir = fileURLToPath(new URL('../../bench/results/', import.meta.url));
  mkdirSync(resultsDir, { recursive: true });
  const quick = flag('quick') !== undefined;
  const only = (flag('only')?.split(',') ?? SECTIONS) as Section[];
  const unknown = only.filter((s) => !SECTIONS.includes(s));
  if (unknown.length) {
    console.error(`--only: unknown section(s) ${unknown.join(', ')}; known: ${SECTIONS.join(', ')}`);
    process.exit(2);
  }
  const settings: BenchSettings = {
    rounds: intFlag('rounds', quick ? 1 : 3),
    latencyRequests: quick ? 300 : 3000,
    latencyWarmup: quick ? 50 : 300,
    latencyMs: quick ? 1500 : 4000,
    throughputWarmup: quick ? 200 : 1000,
    throughputMs: quick ? 1500 : 5000,
    relayRequests: quick ? 2 : 8,
    schedulerRepeats: quick ? 2 : 5,
    streams: intFlag('streams', quick ? 200 : 1000),
    holdMs: quick ? 1000 : 3000,
    soakSeconds: intFlag('soak', quick ? 10 : 60),
    sampleEveryMs: quick ? 1000 : 3000,
    gatewayExecArgv: [
      ...(flag('profile') !== undefined ? ['--cpu-prof', `--cpu-prof-dir=${resultsDir}profiles`] : []),
      ...(flag('gateway-node-flags')?.split(',').filter(Boolean) ?? []),
    ],
  };
  const log = (line: string) => console.error(line);
  const cpus = os.cpus();
  const results: BenchResults = {
    machine: {
      cpus: cpus.length,
      cpuModel: cpus[0]?.model ?? 'unknown',
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
      totalMemoryBytes: os.totalmem(),
    },
    startedAt: new Date().toISOString(),
    settings: { ...settings, quick, sections: only },
  };

  const sim = await ChildService.start('simulator', { script: 'simulator-child.js' });
  const proxy = await ChildService.start('pass-through proxy', { script: 'passthrough-proxy.js', config: { upstreamUrl: sim.url } });
  const gateway = await ChildService.start('gateway', {
    script: 'bench-gateway.js',
    config: { upstreamUrl: sim.url },
    execArgv: settings.gatewayExecArgv,
  });
  const gatewayTick = only.includes('streaming')
    ? await ChildService.start('gateway (tick writes)', {
        script: 'bench-gateway.js',
        config: { upstreamUrl: sim.url, sseWrites: 'tick' },
        execArgv: settings.gatewayExecArgv,
      })
    : undefined;
  const ctx: BenchContext = { sim, proxy, gateway, gatewayTick, settings, log };
  const started = Date.now();
  try {
    if (only.includes('overhead')) {
      log('overhead: gateway vs direct vs pass-through proxy');
      results.overhead = await overheadScenario(ctx);
    }
    if (only.includes('streaming')) {
      log('streaming relay: [[tokens 5000]]');
      results.streaming = await streamingScenario(ctx);
    }
    if (only.includes('passthrough')) {
      log('chat completions relay: [[tokens 5000]] passed through');
      results.passthrough = await passthroughScenario(ctx);
    }
    await gateway.stop();
    await gatewayTick?.stop();
    await proxy.stop();
    if (only.includes('scheduler')) {
      log('gateway rounds: N calls under window W');
      results.scheduler = await schedulerScenario(ctx);
    }
    if (only.includes('observability')) {
      log('observability: the request log on vs off');
      results.observability = await observabilityScenario(ctx);
    }
    if (only.includes('memory')) {
      log(`memory: ${settings.streams} open streams`);
      results.memory = [await openStreamsScenario(ctx, 'idle'), await openStreamsScenario(ctx, 'trickle')];
    }
    if (only.includes('soak')) {
      log(`soak: ${settings.soakSeconds} s`);
      results.soak = await soakScenario(ctx);
    }
  } finally {
    await Promise.all([gateway.stop(), gatewayTick?.stop(), proxy.stop(), sim.stop()]);
  }
  results.durationSeconds = Math.round((Date.now() - started) / 1000);
  results.targets = evaluateTargets(results);
  writeFileSync(`${resultsDir}latest.json`, `${JSON.stringify(results, null, 2)}\n`);
  console.log(renderReport(results));
  log(`\nwrote ${resultsDir}latest.json`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
