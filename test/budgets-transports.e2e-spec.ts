import 'reflect-metadata';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type ClientProxy, ClientProxyFactory, Transport } from '@nestjs/microservices';
import { Redis } from 'ioredis';
import { firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { configureGatewayApp } from '#src/configure-app.js';
import { GatewayModule } from '#src/gateway.module.js';
import { GatewayMicroserviceModule, SwitchyardRpcClient, SwitchyardRpcError, connectGatewayTransports } from '#src/microservice.js';
import { SocketClient } from './support/socket-client.js';

// Real brokers on this machine (and in CI): NATS and Redis, the budget's counts in the same Redis.
const NATS_URL = 'nats://127.0.0.1:4222';
const REDIS_URL = 'redis://127.0.0.1:6379';
const keyPrefix = `sy-budget-tx:${randomBytes(4).toString('hex')}:`;
const SPENDER = 'sk-tx-spender';
const FRESH = 'sk-tx-fresh';
const DAY = 300;

interface Gateway {
  url: string;
  simulator: SimulatedUpstream;
  nats: SwitchyardRpcClient;
  redis: SwitchyardRpcClient;
  socket(apiKey: string): Promise<SocketClient>;
  close(): Promise<void>;
}

/** One gateway serving HTTP (and so WebSocket), NATS and Redis, its own pattern prefix, the budget counted in the shared Redis. */
async function startGateway(): Promise<Gateway> {
  const simulator = new SimulatedUpstream();
  const { url: upstream } = await simulator.listen(0, '127.0.0.1');
  const prefix = `t-${randomUUID()}.`;
  const app: INestApplication = await NestFactory.create(
    GatewayModule.forRoot({
      config: {
        upstream: { baseUrl: upstream },
        storage: { driver: 'memory' },
        auth: { apiKeys: [SPENDER, FRESH] },
        limits: { tokensPerDay: DAY, redisUrl: REDIS_URL, keyPrefix },
        transports: { natsUrl: NATS_URL, redisUrl: REDIS_URL, patternPrefix: prefix, natsQueue: `q-${randomUUID()}` },
        observability: { requestLog: false },
      },
      imports: [GatewayMicroserviceModule.forRoot({ prefix })],
    }),
    { bodyParser: false, logger: false },
  );
  configureGatewayApp(app);
  expect(await connectGatewayTransports(app)).toBe(2);
  await app.listen(0, '127.0.0.1');
  const url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}/v1`;
  const brokers: ClientProxy[] = [
    ClientProxyFactory.create({ transport: Transport.NATS, options: { servers: [NATS_URL] } }),
    ClientProxyFactory.create({ transport: Transport.REDIS, options: { host: '127.0.0.1', port: 6379 } }),
  ];
  await Promise.all(brokers.map((b) => b.connect()));
  const sockets: SocketClient[] = [];
  return {
    url,
    simulator,
    nats: new SwitchyardRpcClient(brokers[0], { prefix }),
    redis: new SwitchyardRpcClient(brokers[1], { prefix }),
    async socket(apiKey) {
      const socket = await SocketClient.open({ url } as never, { authorization: `Bearer ${apiKey}` });
      sockets.push(socket);
      return socket;
    },
    async close() {
      await Promise.all(sockets.map((s) => s.close()));
      await Promise.all(brokers.map((b) => b.close()));
      const closing = app.close();
      (app.getHttpServer() as Server).closeAllConnections();
      await closing;
      await simulator.close();
    },
  };
}

const settled = () => new Promise((r) => setTimeout(r, 100));

/**
 * The token budgets on the WebSocket mode and the broker transports: one
 * day's budget shared by two gateways through Redis, spent on one gateway's
 * NATS and refused on the other's NATS, Redis and WebSocket, each in its own
 * error shape with `retry-after` and the `x-ratelimit-*` values; a request
 * whose own estimate does not fit is refused on each before the upstream.
 */
describe('token budgets over WebSocket, NATS and Redis, shared by two gateways', () => {
  let a: Gateway;
  let b: Gateway;

  beforeAll(async () => {
    [a, b] = await Promise.all([startGateway(), startGateway()]);
  }, 30_000);

  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    const admin = new Redis(REDIS_URL);
    const found = await admin.keys(`${keyPrefix}*`);
    if (found.length > 0) await admin.del(...found);
    await admin.quit();
  });

  it('what one gateway charged over NATS refuses the owner on the other over NATS, Redis and WebSocket, before the upstream', async () => {
    const spent = await firstValueFrom(a.nats.create({ model: 'm', input: '[[tokens 320]]' }, { apiKey: SPENDER }));
    expect((spent.usage as { total_tokens: number }).total_tokens).toBeGreaterThan(DAY);
    await settled();
    const calls = b.simulator.requests.length;

    for (const transport of [b.nats, b.redis]) {
      const refused = await firstValueFrom(transport.create({ model: 'm', input: 'x' }, { apiKey: SPENDER })).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(SwitchyardRpcError);
      expect(refused).toMatchObject({ status: 429, error: { type: 'rate_limit_error', code: 'rate_limit_exceeded', message: expect.stringMatching(/300 tokens per day/) } });
      expect((refused as SwitchyardRpcError).headers).toMatchObject({
        'x-ratelimit-limit-tokens': '300',
        'x-ratelimit-remaining-tokens': '0',
        'retry-after': expect.stringMatching(/^\d+$/),
      });
      // A stream is refused the same way, before its first event.
      const streamed = await lastValueFrom(transport.stream({ model: 'm', input: 'x' }, { apiKey: SPENDER }).pipe(toArray())).catch((e: unknown) => e);
      expect(streamed).toMatchObject({ status: 429, error: { code: 'rate_limit_exceeded' } });
    }

    const socket = await b.socket(SPENDER);
    socket.create({ model: 'm', input: 'x' });
    const frame = await socket.next();
    expect(frame).toMatchObject({ type: 'error', status: 429, error: { code: 'rate_limit_exceeded', message: expect.stringMatching(/300 tokens per day/) } });
    expect(frame.headers).toMatchObject({
      'x-ratelimit-limit-tokens': '300',
      'x-ratelimit-remaining-tokens': '0',
      'x-ratelimit-reset-tokens': expect.stringMatching(/^(\d+h)?(\d+m)?\d+s$/),
    });
    // The socket stays usable: the same refusal again, not a closed connection.
    socket.create({ model: 'm', input: 'x' });
    expect(await socket.next()).toMatchObject({ type: 'error', status: 429 });
    expect(b.simulator.requests.length).toBe(calls);
  });

  it('a request whose own estimate does not fit is refused on each transport; what fits is charged what it used, wherever it ran', async () => {
    const calls = a.simulator.requests.length + b.simulator.requests.length;
    const tooLarge = { model: 'm', input: 'hi', max_output_tokens: DAY };
    const overNats = await firstValueFrom(b.nats.create(tooLarge, { apiKey: FRESH })).catch((e: unknown) => e);
    expect(overNats).toMatchObject({
      status: 429,
      error: { message: expect.stringMatching(/Limit 300, Used 0, Requested 3\d\d/) },
      headers: { 'x-ratelimit-remaining-tokens': '300' },
    });
    const overRedis = await firstValueFrom(a.redis.create(tooLarge, { apiKey: FRESH })).catch((e: unknown) => e);
    expect(overRedis).toMatchObject({ status: 429, headers: { 'x-ratelimit-remaining-tokens': '300' } });
    const socket = await a.socket(FRESH);
    socket.create(tooLarge);
    expect(await socket.next()).toMatchObject({ type: 'error', status: 429, headers: { 'x-ratelimit-remaining-tokens': '300' } });
    expect(a.simulator.requests.length + b.simulator.requests.length).toBe(calls);

    // Within the budget, over the socket on A: charged what it used, so B's broker sees the rest.
    socket.create({ model: 'm', input: '[[say fits]]', max_output_tokens: 100 });
    const done = (await socket.untilDone()).at(-1);
    expect(done).toMatchObject({ type: 'response.completed', response: { output: [expect.objectContaining({ type: 'message' })] } });
    await settled();
    const rest = await firstValueFrom(b.redis.create(tooLarge, { apiKey: FRESH })).catch((e: unknown) => e);
    expect(rest).toMatchObject({ status: 429, headers: { 'x-ratelimit-remaining-tokens': String(DAY - done.response.usage.total_tokens) } });
  });
});
