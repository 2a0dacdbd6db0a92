import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { Controller, type INestApplication, type INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type ClientProxy, ClientProxyFactory, MessagePattern, type MicroserviceOptions, RpcException, Transport } from '@nestjs/microservices';
import { firstValueFrom, lastValueFrom, take, toArray } from 'rxjs';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { configureGatewayApp } from '#src/configure-app.js';
import { GatewayModule } from '#src/gateway.module.js';
import { GatewayMicroserviceModule, RpcRunRegistry, SwitchyardRpcClient, SwitchyardRpcError, connectGatewayTransports, responsesPatterns } from '#src/microservice.js';
import { parseSse } from './support/gateway-harness.js';

// Real brokers on this machine (and in CI): NATS (JetStream enabled) and Redis.
const NATS_URL = 'nats://127.0.0.1:4222';
const REDIS_URL = 'redis://127.0.0.1:6379';

interface Served {
  name: string;
  client: ClientProxy;
  prefix: string;
  simulator: SimulatedUpstream;
  rpc: SwitchyardRpcClient;
  runs: RpcRunRegistry;
  /** The HTTP base URL when the gateway also serves HTTP (hybrid). */
  httpUrl?: string;
  close(): Promise<void>;
}

/** The host's own RPC handler, next to the gateway's: its errors are its own. */
function hostRpcModule(prefix: string) {
  @Controller()
  class HostRpcController {
    @MessagePattern(`${prefix}host.fail`)
    fail(): never {
      throw new RpcException({ code: 'host_specific', detail: 'the host said no' });
    }
  }
  @Module({ controllers: [HostRpcController] })
  class HostRpcModule {}
  return HostRpcModule;
}

function gatewayModule(simulatorUrl: string, prefix: string, transports: Record<string, string> = {}) {
  return GatewayModule.forRoot({
    config: { upstream: { baseUrl: simulatorUrl }, storage: { driver: 'memory' }, transports: { ...transports, patternPrefix: prefix } },
    imports: [GatewayMicroserviceModule.forRoot({ prefix }), hostRpcModule(prefix)],
  });
}

/** A pure microservice: no HTTP server at all, only NATS. */
async function pureNats(): Promise<Served> {
  const simulator = new SimulatedUpstream();
  const { url } = await simulator.listen(0, '127.0.0.1');
  // A prefix per run: several test runs may share the broker.
  const prefix = `t-${randomUUID()}.`;
  const app: INestMicroservice = await NestFactory.createMicroservice<MicroserviceOptions>(gatewayModule(url, prefix), {
    transport: Transport.NATS,
    options: { servers: [NATS_URL] },
    logger: false,
  });
  await app.listen();
  const client: ClientProxy = ClientProxyFactory.create({ transport: Transport.NATS, options: { servers: [NATS_URL] } });
  await client.connect();
  return {
    name: 'NATS (pure microservice)',
    client,
    prefix,
    simulator,
    rpc: new SwitchyardRpcClient(client, { prefix }),
    runs: app.get(RpcRunRegistry),
    async close() {
      await client.close();
      await app.close();
      await simulator.close();
    },
  };
}

/** A hybrid app: HTTP and Redis from one process, the transports read from config. */
async function hybridRedis(): Promise<Served> {
  const simulator = new SimulatedUpstream();
  const { url } = await simulator.listen(0, '127.0.0.1');
  const prefix = `t-${randomUUID()}.`;
  const app: INestApplication = await NestFactory.create(gatewayModule(url, prefix, { redisUrl: REDIS_URL }), { bodyParser: false, logger: false });
  configureGatewayApp(app);
  expect(await connectGatewayTransports(app)).toBe(1);
  await app.listen(0, '127.0.0.1');
  const client: ClientProxy = ClientProxyFactory.create({ transport: Transport.REDIS, options: { host: '127.0.0.1', port: 6379 } });
  await client.connect();
  return {
    name: 'Redis (hybrid with HTTP)',
    client,
    prefix,
    simulator,
    rpc: new SwitchyardRpcClient(client, { prefix }),
    runs: app.get(RpcRunRegistry),
    httpUrl: `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}/v1`,
    async close() {
      await client.close();
      const closing = app.close();
      (app.getHttpServer() as import('node:http').Server).closeAllConnections();
      await closing;
      await simulator.close();
    },
  };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  // Generous: the machine is shared; the assertion is about what happens, not how fast.
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe.each([
  ['nats', pureNats],
  ['redis', hybridRedis],
] as const)('the Responses API over %s', (_name, start) => {
  let served: Served;
  beforeAll(async () => {
    served = await start();
  });
  afterAll(() => served?.close());

  it('responses.create answers with the final response object', async () => {
    const response = await firstValueFrom(served.rpc.create({ model: 'm', input: '[[say hello over the broker]]' }));
    expect(response).toMatchObject({ object: 'response', status: 'completed', model: 'm' });
    expect(response.id).toMatch(/^resp_/);
    expect(response.output).toEqual([
      expect.objectContaining({ type: 'message', role: 'assistant', content: [expect.objectContaining({ type: 'output_text', text: 'hello over the broker' })] }),
    ]);
  });

  it('responses.stream emits the SSE events, in order', async () => {
    const body = { model: 'm', input: '[[tokens 5]]' };
    const events = await lastValueFrom(served.rpc.stream(body).pipe(toArray()));
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const types = events.map((e) => e.type);
    expect(types.slice(0, 2)).toEqual(['response.created', 'response.in_progress']);
    expect(types.at(-1)).toBe('response.completed');
    expect(types.filter((t) => t === 'response.output_text.delta')).toHaveLength(5);
    const deltas = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta as string);
    const done = events.find((e) => e.type === 'response.output_text.done');
    expect(deltas.join('')).toBe(done?.text);
    if (served.httpUrl) {
      // Hybrid: the same request over HTTP SSE gives the same event sequence.
      const res = await fetch(`${served.httpUrl}/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...body, stream: true }),
      });
      expect(parseSse(await res.text()).map((e) => e.data.type)).toEqual(types);
    }
  });

  it('a bad request fails with the OpenAI envelope, naming the field', async () => {
    const err = await firstValueFrom(served.rpc.create({ model: 'm', input: 'hi', temperature: 'hot' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SwitchyardRpcError);
    expect(err).toMatchObject({ status: 400, error: { type: 'invalid_request_error', param: 'temperature' } });
    const streamed = await lastValueFrom(served.rpc.stream({ model: 'm', input: 42 })).catch((e: unknown) => e);
    expect(streamed).toMatchObject({ status: 400, error: { type: 'invalid_request_error', param: 'input' } });
  });

  it('a malformed message names the offending field', async () => {
    const send = (data: unknown) => firstValueFrom(served.client.send(served.prefix + 'responses.create', data)).catch((e: unknown) => e);
    expect(await send({ model: 'm' })).toMatchObject({ status: 400, error: { param: 'body' } });
    expect(await send({ body: { model: 'm', input: 'x' }, owner: 7 })).toMatchObject({ status: 400, error: { param: 'owner' } });
    expect(await send({ body: { model: 'm', input: 'x' }, headers: { 'x-a': 1 } })).toMatchObject({ status: 400, error: { param: 'headers.x-a' } });
    expect(await send({ body: { model: 'm', input: 'x' }, runId: '' })).toMatchObject({ status: 400, error: { param: 'runId' } });
    expect(await send('just a string')).toMatchObject({ status: 400, error: { type: 'invalid_request_error' } });
  });

  it("the host's own RPC handlers keep their errors", async () => {
    const err = await firstValueFrom(served.client.send(served.prefix + 'host.fail', {})).catch((e: unknown) => e);
    expect(err).toEqual({ code: 'host_specific', detail: 'the host said no' });
  });

  it('an upstream failure travels as an RPC error with its status', async () => {
    served.simulator.setFault('status=503');
    try {
      const err = await firstValueFrom(served.rpc.create({ model: 'm', input: 'hi' })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SwitchyardRpcError);
      expect((err as SwitchyardRpcError).status).toBeGreaterThanOrEqual(500);
      expect((err as SwitchyardRpcError).error).toEqual(expect.objectContaining({ message: expect.any(String), type: expect.any(String) }));
    } finally {
      served.simulator.setFault(undefined);
    }
  });

  it('a caller that unsubscribes cancels the run and the upstream request', async () => {
    const before = served.simulator.stats.aborted;
    const first = await firstValueFrom(
      served.rpc.stream({ model: 'm', input: '[[delay token=50]] [[tokens 400]]' }).pipe(
        // Wait for a delta: the upstream request is then certainly in flight.
        take(5),
        toArray(),
      ),
    );
    expect(first.at(-1)?.type).toBe('response.output_text.delta');
    await until(() => served.simulator.stats.aborted === before + 1, 'the upstream abort');
    await until(() => served.runs.size === 0, 'the run to be released');
    expect(served.simulator.stats.active).toBe(0);
  });

  it('passes the caller headers to the upstream call', async () => {
    await firstValueFrom(served.rpc.create({ model: 'm', input: 'hi' }, { headers: { 'X-Tenant': 'acme' } }));
    expect(served.simulator.requests.at(-1)?.headers['x-tenant']).toBe('acme');
  });

  it.each([10, 100])('takes an input list of %i items over the broker', async (n) => {
    const input = Array.from({ length: n }, (_, i) => ({ role: 'user', content: `message ${i}` }));
    input.push({ role: 'user', content: '[[say counted]]' });
    const response = await firstValueFrom(served.rpc.create({ model: 'm', input }));
    expect(response.status).toBe('completed');
    expect((served.simulator.requests.at(-1)?.body as { input: unknown[] }).input).toHaveLength(n + 1);
  });
});

describe('patterns', () => {
  it('are prefixed as configured', () => {
    expect(responsesPatterns('a.')).toEqual({ create: 'a.responses.create', stream: 'a.responses.stream', cancel: 'a.responses.cancel' });
  });
});
