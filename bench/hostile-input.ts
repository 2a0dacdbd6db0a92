import 'reflect-metadata';
import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { NestFactory } from '@nestjs/core';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { validateGatewayConfig } from '#src/gateway-config.loader.js';
import { configureGatewayApp } from '#src/configure-app.js';
import { gatewayHttpAdapter } from '#src/gateway-http-adapter.js';
import { GatewayModule } from '#src/gateway.module.js';

/**
 * `npm run bench:hostile`: hostile request bodies against a gateway in this
 * process, so that the event-loop delay measured here is the gateway's own.
 * For each input: the time until its answer, and the longest the event loop
 * was blocked meanwhile (every other tenant waits that long). The same file
 * runs on an older checkout for the "before" column; a case that takes
 * longer than `--limit=SECONDS` (default 300) is reported as such.
 */
const LIMIT_MS = Number(process.argv.find((a) => a.startsWith('--limit='))?.slice(8) ?? 300) * 1000;
const KEY = 'sk-bench-hostile';

interface Case {
  name: string;
  size: string;
  config: Record<string, unknown>;
  /** Builds the body before the clock starts: building it here would block the loop being measured. */
  body(): Buffer;
  /** How many copies are sent at once. */
  copies?: number;
  headers?: Record<string, string>;
}

function post(url: string, body: Buffer | string, headers: Record<string, string> = {}): Promise<number> {
  const payload = typeof body === 'string' ? Buffer.from(body) : body;
  const target = new URL(url);
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': payload.length, ...headers },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.setTimeout(LIMIT_MS, () => req.destroy());
    req.on('error', () => resolve(0));
    req.end(payload);
  });
}

const fnTool = (i: number) => ({ type: 'function', name: `tool_${i}`, description: `tool number ${i}`, parameters: { type: 'object', properties: { q: { type: 'string' } } } });
const toolsBody = (n: number) => JSON.stringify({ model: 'm', input: '[[say ok]]', store: false, tools: Array.from({ length: n }, (_, i) => fnTool(i)) });
const keysBody = (n: number) => {
  const body: Record<string, unknown> = { model: 'm', input: '[[say ok]]', store: false };
  for (let i = 0; i < n; i++) body[`unknown_field_${i}`] = i;
  return JSON.stringify(body);
};

const CASES: Case[] = [
  ...[1_000, 5_000, 20_000].map((n): Case => ({
    name: 'function tools (default limits)',
    size: `${n.toLocaleString('en')} tools, ${(toolsBody(n).length / 1e6).toFixed(1)} MB`,
    config: {},
    body: () => Buffer.from(toolsBody(n)),
  })),
  ...[1_000, 5_000, 20_000].map((n): Case => ({
    name: 'function tools (tool cap raised to 50,000)',
    size: `${n.toLocaleString('en')} tools`,
    config: { tools: { maxToolsPerRequest: 50_000 } },
    body: () => Buffer.from(toolsBody(n)),
  })),
  ...[9_000, 30_000, 300_000].map((n): Case => ({
    name: 'unknown top-level keys',
    size: `${n.toLocaleString('en')} keys, ${(keysBody(n).length / 1e6).toFixed(1)} MB`,
    config: {},
    body: () => Buffer.from(keysBody(n)),
  })),
  {
    name: 'unauthenticated bodies (API keys on)',
    size: '20 × 15 MB at once',
    config: { auth: { apiKeys: [KEY] } },
    copies: 20,
    body: () => {
      const big = Buffer.alloc(15 * 1024 * 1024, 'a');
      big.write('{"model":"m","input":"', 0);
      return big;
    },
  },
];

async function runCase(c: Case): Promise<{ ms: number; blockMs: number; status: string }> {
  // A context wide enough for the largest accepted prompt (a real model would refuse 20,000 tools).
  const simulator = new SimulatedUpstream({ maxModelLen: 10_000_000 });
  const { url: upstream } = await simulator.listen(0, '127.0.0.1');
  const config = validateGatewayConfig({
    upstream: { baseUrl: upstream },
    server: { host: '127.0.0.1', port: 0 },
    storage: { driver: 'memory' },
    ...c.config,
  });
  const app = await NestFactory.create(GatewayModule.forRoot({ config }), gatewayHttpAdapter(), { bodyParser: false, logger: false });
  configureGatewayApp(app);
  await app.listen(0, '127.0.0.1');
  const { port } = (app.getHttpServer() as http.Server).address() as { port: number };
  const url = `http://127.0.0.1:${port}/v1/responses`;
  try {
    // A small request first, so that start-up work (lazy modules, first compiles) is not measured.
    await post(url, '{"model":"m","input":"[[say warm]]","store":false}', c.headers);
    const body = c.body();
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    const start = process.hrtime.bigint();
    const statuses = await Promise.all(Array.from({ length: c.copies ?? 1 }, () => post(url, body, c.headers)));
    const status = [...new Set(statuses)].join('/');
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    delay.disable();
    return { ms, blockMs: delay.max / 1e6, status };
  } finally {
    const closing = app.close();
    (app.getHttpServer() as http.Server).closeAllConnections();
    await closing;
    await simulator.close();
  }
}

async function main(): Promise<void> {
  console.log('| input | size | answer | time | longest event-loop block |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const c of CASES) {
    const { ms, blockMs, status } = await runCase(c);
    const over = ms >= LIMIT_MS ? ' (limit hit)' : '';
    console.log(`| ${c.name} | ${c.size} | ${status || 'no answer'} | ${ms.toFixed(0)} ms${over} | ${blockMs.toFixed(0)} ms |`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
