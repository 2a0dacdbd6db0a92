import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { Logger } from '@nestjs/common';
import { type ClientProxy, ClientProxyFactory, Transport } from '@nestjs/microservices';
import { firstValueFrom, lastValueFrom } from 'rxjs';
import { SwitchyardRpcClient } from '#src/microservice.js';
import { ChildService } from './lib/child-service.js';
import { describe as distribution, median, round } from './lib/stats.js';

/**
 * `npm run build && node dist/bench/broker-latency.js [--requests=N] [--rounds=N]`:
 * one gateway (hybrid: HTTP, NATS, Redis) and the simulated upstream, each in
 * a child process; this process sends `[[tokens 20]]` one request at a time
 * over each edge, blocking and streaming, interleaved over rounds. Reported
 * as p50/p99 and as the ratio of each broker's p50 to HTTP's in the same run:
 * the machine is shared, so only ratios within one run compare.
 */
type Edge = 'http' | 'nats' | 'redis';
type Mode = 'blocking' | 'streaming';

function intFlag(name: string, fallback: number): number {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  const value = hit ? Number(hit.slice(name.length + 3)) : fallback;
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} must be a positive integer`);
  return value;
}

const BODY = { model: 'bench', input: '[[tokens 20]]' };

async function httpCall(url: string, mode: Mode): Promise<void> {
  const res = await fetch(`${url}/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...BODY, stream: mode === 'streaming' }),
  });
  const text = await res.text();
  if (res.status !== 200 || (!text.includes('response.completed') && mode === 'streaming')) throw new Error(`HTTP ${res.status}`);
}

async function rpcCall(rpc: SwitchyardRpcClient, mode: Mode): Promise<void> {
  if (mode === 'blocking') {
    const response = await firstValueFrom(rpc.create(BODY));
    if (response.status !== 'completed') throw new Error(`status ${response.status}`);
    return;
  }
  const last = await lastValueFrom(rpc.stream(BODY));
  if (last.type !== 'response.completed') throw new Error(`ended with ${last.type}`);
}

async function main(): Promise<void> {
  // The report goes to stdout; the broker clients' connection notices do not belong there.
  Logger.overrideLogger(['error', 'warn']);
  const requests = intFlag('requests', 500);
  const rounds = intFlag('rounds', 3);
  const natsUrl = 'nats://127.0.0.1:4222';
  const redisUrl = 'redis://127.0.0.1:6379';
  const prefix = `bench-${randomUUID()}.`;
  const simulator = await ChildService.start('simulator', { script: 'simulator-child.js' });
  const gateway = await ChildService.start('gateway', {
    script: 'bench-broker-gateway.js',
    config: { upstreamUrl: simulator.url, natsUrl, redisUrl, prefix },
  });
  const proxies: ClientProxy[] = [
    ClientProxyFactory.create({ transport: Transport.NATS, options: { servers: [natsUrl] } }),
    ClientProxyFactory.create({ transport: Transport.REDIS, options: { host: '127.0.0.1', port: 6379 } }),
  ];
  await Promise.all(proxies.map((p) => p.connect()));
  const [nats, redis] = proxies.map((p) => new SwitchyardRpcClient(p, { prefix }));
  const call: Record<Edge, (mode: Mode) => Promise<void>> = {
    http: (mode) => httpCall(gateway.url, mode),
    nats: (mode) => rpcCall(nats, mode),
    redis: (mode) => rpcCall(redis, mode),
  };

  const samples: Record<string, number[][]> = {};
  try {
    for (let round = 0; round < rounds; round++) {
      for (const mode of ['blocking', 'streaming'] as const) {
        for (const edge of ['http', 'nats', 'redis'] as const) {
          for (let i = 0; i < 50; i++) await call[edge](mode); // warm-up
          const times: number[] = [];
          for (let i = 0; i < requests; i++) {
            const start = performance.now();
            await call[edge](mode);
            times.push(performance.now() - start);
          }
          (samples[`${mode}/${edge}`] ??= []).push(times);
        }
      }
    }
  } finally {
    await Promise.all(proxies.map((p) => p.close()));
    await gateway.stop();
    await simulator.stop();
  }

  const rows = Object.entries(samples).map(([key, perRound]) => {
    const [mode, edge] = key.split('/');
    const p50 = median(perRound.map((t) => distribution(t).p50));
    const p99 = median(perRound.map((t) => distribution(t).p99));
    return { mode, edge, p50: round(p50, 3), p99: round(p99, 3) };
  });
  for (const row of rows) {
    const http = rows.find((r) => r.mode === row.mode && r.edge === 'http')!;
    Object.assign(row, { ratioToHttp: round(row.p50 / http.p50, 2) });
  }
  const cpus = os.cpus();
  const header = `Run ${new Date().toISOString()} on ${cpus.length} × ${cpus[0]?.model.trim()}, Node ${process.version}; ${requests} requests × ${rounds} rounds per cell, medians of the rounds.`;
  const table = [
    '| mode | edge | p50 (c=1) | p99 (c=1) | p50 / HTTP p50 |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r.mode} | ${r.edge} | ${r.p50} ms | ${r.p99} ms | ${(r as { ratioToHttp?: number }).ratioToHttp} |`),
  ].join('\n');
  console.log(`${header}\n\n${table}`);
  const dir = fileURLToPath(new URL('../../bench/results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}broker-latency.json`, JSON.stringify({ header, rows }, null, 2));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
