import { SimulatedUpstream, type SimulatedUpstreamOptions } from './simulated-upstream.js';

/**
 * Command-line entry: `npm run simulator`. Configuration comes from the environment only, since
 * this process is a test fixture, not a deployable service.
 */

function numberFromEnv(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) {
    console.error(`${name} must be a non-negative number, got "${raw}"`);
    process.exit(2);
  }
  return value;
}

function flagFromEnv(name: string): boolean {
  return ['1', 'true', 'yes', 'on'].includes((process.env[name] ?? '').trim().toLowerCase());
}

async function main(): Promise<void> {
  const options: SimulatedUpstreamOptions = {
    model: process.env.SIM_MODEL?.trim() || undefined,
    reasoning: flagFromEnv('SIM_REASONING'),
    ttftMs: numberFromEnv('SIM_TTFT_MS'),
    tokenDelayMs: numberFromEnv('SIM_TOKEN_DELAY_MS'),
    chunkChars: numberFromEnv('SIM_CHUNK_CHARS'),
    fault: process.env.SIM_FAULT?.trim() || undefined,
    sseEventLines: flagFromEnv('SIM_SSE_EVENT_LINES'),
  };
  const port = numberFromEnv('PORT') ?? 8000;
  const host = process.env.HOST?.trim() || '127.0.0.1';

  const simulator = new SimulatedUpstream(options);
  const { url } = await simulator.listen(port, host);
  const rule = '='.repeat(78);
  console.log(
    [
      rule,
      '  Switchyard SIMULATED upstream - NOT a real model.',
      '  A deterministic, OpenAI-compatible stand-in for vLLM, for tests, the demo and benchmarks.',
      '  Answers are scripted from the prompt; see apps/simulator/README.md for [[directives]].',
      `  Base URL   ${url}   (model "${options.model ?? 'switchyard-sim'}")`,
      '  Endpoints  POST /v1/responses, POST /v1/chat/completions, GET /v1/models, GET /health',
      `  Options    reasoning=${options.reasoning ? 'on' : 'off'} ttft=${options.ttftMs ?? 0}ms ` +
        `token-delay=${options.tokenDelayMs ?? 0}ms chunk=${options.chunkChars ?? 4} chars` +
        (options.fault ? ` fault="${String(options.fault)}"` : ''),
      rule,
    ].join('\n'),
  );

  const stop = (signal: NodeJS.Signals) => {
    console.log(`\n${signal}: stopping the simulated upstream.`);
    simulator.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  console.error('The simulated upstream failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
