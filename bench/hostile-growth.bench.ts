import 'reflect-metadata';
import http from 'node:http';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { NestFactory } from '@nestjs/core';
import WebSocket from 'ws';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { validateGatewayConfig } from '#src/gateway-config.loader.js';
import { configureGatewayApp } from '#src/configure-app.js';
import { gatewayHttpAdapter } from '#src/gateway-http-adapter.js';
import { GatewayModule } from '#src/gateway.module.js';
import { median } from './lib/stats.js';

/**
 * `npm run build && node dist/bench/hostile-growth.bench.js`: the speeds the
 * hostile-input e2e suite asserts no more (it checks answers and their order),
 * against a gateway in this process.
 *
 * Growth: 1x and 10x the function tools (cap raised to 50,000, declaration
 * cache off) and the unknown top-level keys; per size the median, over 5 runs after a warm-up,
 * of the CPU time this process spends until the answer (gateway and simulator
 * both run here; bodies are built before), and the 10x / 1x ratio. Linear
 * work with a fixed part per request gives 10 or less; the quadratic
 * registration before the fix gave 20 to 30.
 *
 * Block: the longest event-loop stall (`monitorEventLoopDelay`) while one
 * body that is handled in one piece is answered, i.e. how long every other
 * request waited: 512 function tools (the default cap) accepted over HTTP, and
 * a 300,000-key `response.create` frame refused over WebSocket. Bodies refused
 * from their first bytes over HTTP are in `hostile-input.ts`.
 */
const RUNS = 5;

const fnTool = (i: number) => ({ type: 'function', name: `tool_${i}`, description: `tool number ${i}`, parameters: { type: 'object', properties: { q: { type: 'string' } } } });
const toolsBody = (n: number) => ({ model: 'm', input: '[[say ok]]', store: false, tools: Array.from({ length: n }, (_, i) => fnTool(i)) });
const keysBody = (n: number) => {
  const body: Record<string, unknown> = { model: 'm', input: '[[say ok]]', store: false };
  for (let i = 0; i < n; i++) body[`unknown_field_${i}`] = i;
  return body;
};

interface Gateway {
  origin: string;
  close(): Promise<void>;
}

async function startGateway(config: Record<string, unknown>): Promise<Gateway> {
  // A context wide enough for the largest accepted prompt (a real model would refuse 10,000 tools).
  const simulator = new SimulatedUpstream({ maxModelLen: 10_000_000 });
  const { url: upstream } = await simulator.listen(0, '127.0.0.1');
  const app = await NestFactory.create(
    GatewayModule.forRoot({
      config: validateGatewayConfig({
        upstream: { baseUrl: upstream },
        server: { host: '127.0.0.1', port: 0 },
        storage: { driver: 'memory' },
        observability: { requestLog: false },
        ...config,
      }),
    }),
    gatewayHttpAdapter(),
    { bodyParser: false, logger: false },
  );
  configureGatewayApp(app);
  await app.listen(0, '127.0.0.1');
  const { port } = (app.getHttpServer() as http.Server).address() as { port: number };
  return {
    origin: `http://127.0.0.1:${port}`,
    async close() {
      const closing = app.close();
      (app.getHttpServer() as http.Server).closeAllConnections();
      await closing;
      await simulator.close();
    },
  };
}

/** POSTs `body` to `/v1/responses`; resolves with the status once the answer is read. */
function post(origin: string, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${origin}/v1/responses`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** The median CPU time of a request with `body`, after one warm-up; throws on an answer other than 200. */
async function medianCpuMs(origin: string, body: Buffer): Promise<number> {
  const times: number[] = [];
  for (let run = 0; run <= RUNS; run++) {
    const start = cpuMs();
    const status = await post(origin, body);
    if (status !== 200) throw new Error(`expected 200, got ${status}`);
    if (run > 0) times.push(cpuMs() - start);
  }
  return median(times);
}

/** The longest event-loop stall, in ms, while `work` runs. */
async function longestBlockMs(work: () => Promise<unknown>): Promise<number> {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  await work();
  delay.disable();
  return delay.max / 1e6;
}

/** Sends one text frame on a fresh socket to `/v1/responses`: the first frame back, and the longest stall until it came. */
async function frameBlock(origin: string, frame: string): Promise<{ answer: string; blockMs: number }> {
  const ws = new WebSocket(`${origin.replace(/^http/, 'ws')}/v1/responses`, { perMessageDeflate: false });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  try {
    const answered = new Promise<string>((resolve) => ws.once('message', (data) => resolve(data.toString())));
    // Framing and masking the frame is the client's work: it is done before the measure starts.
    ws.send(frame);
    let answer = '';
    const blockMs = await longestBlockMs(async () => (answer = await answered));
    return { answer, blockMs };
  } finally {
    ws.close();
  }
}

async function growth(): Promise<void> {
  // The declaration cache off: with it, every run after the first would read a kept tool list instead of registering one.
  const gateway = await startGateway({ tools: { maxToolsPerRequest: 50_000, declarationCacheEntries: 0 } });
  try {
    console.log('| input | 1x | CPU per request, 1x | 10x | CPU per request, 10x | 10x / 1x |');
    console.log('| --- | --- | --- | --- | --- | --- |');
    for (const [name, build, small] of [
      ['function tools (cap raised to 50,000)', toolsBody, 1_000],
      ['unknown top-level keys', keysBody, 900],
    ] as const) {
      const one = await medianCpuMs(gateway.origin, Buffer.from(JSON.stringify(build(small))));
      const ten = await medianCpuMs(gateway.origin, Buffer.from(JSON.stringify(build(10 * small))));
      console.log(`| ${name} | ${small.toLocaleString('en')} | ${one.toFixed(1)} ms | ${(10 * small).toLocaleString('en')} | ${ten.toFixed(1)} ms | ${(ten / one).toFixed(1)} |`);
    }
  } finally {
    await gateway.close();
  }
}

async function blocks(): Promise<void> {
  const gateway = await startGateway({});
  try {
    console.log('\n| input | answer | longest event-loop block |');
    console.log('| --- | --- | --- |');
    // One small request first, so that start-up work (lazy modules, first compiles) is not measured.
    await post(gateway.origin, Buffer.from('{"model":"m","input":"[[say warm]]","store":false}'));
    const tools = Buffer.from(JSON.stringify(toolsBody(512)));
    let status = 0;
    const toolsBlock = await longestBlockMs(async () => (status = await post(gateway.origin, tools)));
    console.log(`| 512 function tools over HTTP, ${(tools.length / 1e3).toFixed(0)} KB | ${status} | ${toolsBlock.toFixed(0)} ms |`);
    const frame = JSON.stringify({ type: 'response.create', ...keysBody(300_000) });
    const { answer, blockMs } = await frameBlock(gateway.origin, frame);
    const code = (JSON.parse(answer) as { error?: { code?: string } }).error?.code ?? 'no error';
    console.log(`| 300,000 unknown keys in a WebSocket frame, ${(frame.length / 1e6).toFixed(1)} MB | ${code} | ${blockMs.toFixed(0)} ms |`);
  } finally {
    await gateway.close();
  }
}

async function main(): Promise<void> {
  const cpus = os.cpus();
  console.log(`Run ${new Date().toISOString()} on ${cpus.length} × ${cpus[0]?.model.trim() ?? 'cpu'}, Node ${process.version}, load average ${os.loadavg()[0].toFixed(1)}.\n`);
  await growth();
  await blocks();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
