import 'reflect-metadata';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { Socket } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type ClientProxy, ClientProxyFactory, Transport } from '@nestjs/microservices';
import { Redis } from 'ioredis';
import { type Subscription, firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { configureGatewayApp } from '#src/configure-app.js';
import { GatewayModule } from '#src/gateway.module.js';
import { TracingService } from '#observability/tracing/tracing.service.js';
import { GatewayMicroserviceModule, RedisPatternsTakenError, RpcRunRegistry, SwitchyardRpcClient, SwitchyardRpcError, connectGatewayTransports } from '#src/microservice.js';
import { StreamableTestServer } from './support/mcp/mcp-test-servers.js';
import { OtlpReceiver } from './support/otlp-receiver.js';

// Real brokers on this machine (and in CI); a prefix per test, since other runs share them.
const NATS_URL = 'nats://127.0.0.1:4222';
const REDIS_URL = 'redis://127.0.0.1:6379';

const prefixOf = () => `t-${randomUUID()}`;

async function until(condition: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A hybrid host as an embedding application builds it: GatewayModule, the microservice module, connectGatewayTransports. */
async function host(config: Record<string, unknown>, module: { prefix?: string } = {}): Promise<INestApplication> {
  const app = await NestFactory.create(GatewayModule.forRoot({ config: { storage: { driver: 'memory' }, ...config }, imports: [GatewayMicroserviceModule.forRoot(module)] }), {
    bodyParser: false,
    logger: false,
    abortOnError: false,
  });
  configureGatewayApp(app);
  try {
    await connectGatewayTransports(app);
    await app.listen(0, '127.0.0.1');
  } catch (err) {
    await app.close();
    throw err;
  }
  return app;
}

async function closeHost(app: INestApplication | undefined): Promise<void> {
  if (!app) return;
  const closing = app.close();
  (app.getHttpServer() as Server).closeAllConnections();
  await closing;
}

const httpUrl = (app: INestApplication) => `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;

describe('one prefix, served and locked the same way (embedded hosts on Redis)', () => {
  const prefix = prefixOf();
  const simulator = new SimulatedUpstream();
  const hosts: INestApplication[] = [];
  let client: ClientProxy;
  let upstream: string;

  beforeAll(async () => {
    ({ url: upstream } = await simulator.listen(0, '127.0.0.1'));
    client = ClientProxyFactory.create({ transport: Transport.REDIS, options: { host: '127.0.0.1', port: 6379 } });
    await client.connect();
  });

  afterAll(async () => {
    await client?.close();
    for (const app of hosts) await closeHost(app);
    await simulator.close();
  });

  it('a bare forRoot() serves transports.patternPrefix; a second host on it is refused at once, naming the live holder; conflicting prefixes are refused', async () => {
    const config = { upstream: { baseUrl: upstream }, transports: { redisUrl: REDIS_URL, patternPrefix: prefix } };
    hosts.push(await host(config));

    const started = Date.now();
    const second = await host(config).catch((e: unknown) => e);
    expect(second).toBeInstanceOf(RedisPatternsTakenError);
    expect((second as Error).message).toMatch(/Redis broker is reachable, but another live gateway holds the lease/);
    expect((second as Error).message).toContain(`${prefix}.responses.create`);
    // Seen alive by its refresh, not by waiting out the lease (6 s).
    expect(Date.now() - started).toBeLessThan(6000);

    // The module's prefix and the config's differ: refused rather than serving one and locking the other.
    const split = await host({ ...config, transports: { redisUrl: REDIS_URL, patternPrefix: `${prefix}-other` } }, { prefix }).catch((e: unknown) => e);
    expect(String(split)).toMatch(/differ; set the prefix in one place/);

    const rpc = new SwitchyardRpcClient(client, { prefix, silenceMs: 3000 });
    const before = simulator.stats.requests;
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => firstValueFrom(rpc.create({ model: 'm', input: `[[say once ${i}]]` }))));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill('completed'));
    // Counted at the upstream: each request ran exactly once.
    expect(simulator.stats.requests - before).toBe(10);
  }, 60_000);
});

describe('a closed gateway leaves nothing on Redis', () => {
  const simulator = new SimulatedUpstream();
  let upstream: string;
  let admin: Redis;

  beforeAll(async () => {
    ({ url: upstream } = await simulator.listen(0, '127.0.0.1'));
    admin = new Redis(REDIS_URL);
  });

  afterAll(async () => {
    await admin?.quit();
    await simulator.close();
  });

  /** The names of the connections Redis holds for the gateway serving `prefix` (see `redisConnectionName`). */
  async function namedFor(prefix: string): Promise<string[]> {
    const list = (await admin.client('LIST')) as string;
    const names = list.split('\n').map((line) => / name=(\S*)/.exec(line)?.[1] ?? '');
    return names.filter((name) => name.startsWith('switchyard:') && name.endsWith(`:${prefix}.responses.create`)).sort();
  }

  /** This process's open sockets to the Redis port, by local port. */
  function redisSockets(): number[] {
    const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
    return handles
      .filter((h): h is Socket => h instanceof Socket && h.remotePort === 6379 && !h.destroyed)
      .map((s) => s.localPort!)
      .sort();
  }

  it('app.close() closes its lease and transport connections and gives the lease up, so a replacement on the prefix starts at once', async () => {
    const prefix = prefixOf();
    const pattern = `${prefix}.responses.create`;
    const config = { upstream: { baseUrl: upstream }, transports: { redisUrl: REDIS_URL, patternPrefix: prefix } };
    await admin.ping();
    const before = redisSockets();

    const app = await host(config);
    // Named, so that their absence below means closed: the lease's connection, the transport's subscriber and publisher.
    expect(await namedFor(prefix)).toEqual([`switchyard:lease:${pattern}`, `switchyard:rpc:${pattern}`, `switchyard:rpc:${pattern}`]);
    expect(redisSockets()).toHaveLength(before.length + 3);
    await closeHost(app);

    await until(async () => (await namedFor(prefix)).length === 0, "the closed gateway's connections to leave Redis");
    await until(() => redisSockets().join() === before.join(), "the closed gateway's sockets to close");
    expect(await admin.get(`switchyard:serving:${pattern}`)).toBeNull();
    // A rolling restart: the next gateway on the prefix serves at once, rather than being refused as a second live holder.
    const next = await host(config);
    expect(await namedFor(prefix)).toHaveLength(3);
    await closeHost(next);
    await until(async () => (await namedFor(prefix)).length === 0, "the replacement's connections to leave Redis");
  }, 60_000);
});

describe('one error shape on both transports', () => {
  let nats: ClientProxy;
  let redis: ClientProxy;
  const simulator = new SimulatedUpstream();
  let upstream: string;
  const hosts: INestApplication[] = [];

  beforeAll(async () => {
    ({ url: upstream } = await simulator.listen(0, '127.0.0.1'));
    nats = ClientProxyFactory.create({ transport: Transport.NATS, options: { servers: [NATS_URL] } });
    redis = ClientProxyFactory.create({ transport: Transport.REDIS, options: { host: '127.0.0.1', port: 6379 } });
    await Promise.all([nats.connect(), redis.connect()]);
  });

  afterAll(async () => {
    await Promise.all([nats?.close(), redis?.close()]);
    for (const app of hosts) await closeHost(app);
    await simulator.close();
  });

  it('nobody serving the pattern is a SwitchyardRpcError 503 gateway_unreachable, code and status on the error, on NATS and on Redis', async () => {
    for (const proxy of [nats, redis]) {
      const err = await firstValueFrom(
        new SwitchyardRpcClient(proxy, { prefix: prefixOf(), silenceMs: 500, retry: { attempts: 1, delayMs: 50 } }).create({ model: 'm', input: 'hi' }),
      ).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SwitchyardRpcError);
      expect(err).toMatchObject({ status: 503, code: 'gateway_unreachable', type: 'server_error', runStarted: false, error: { code: 'gateway_unreachable' } });
    }
  });

  it('a refusal before the run started is retried: a call made while no gateway serves its prefix is answered once one comes up', async () => {
    const prefix = prefixOf();
    const before = simulator.stats.requests;
    const answer = firstValueFrom(new SwitchyardRpcClient(nats, { prefix, retry: { attempts: 8, delayMs: 100 } }).create({ model: 'm', input: '[[say late]]' }));
    hosts.push(await host({ upstream: { baseUrl: upstream }, transports: { natsUrl: NATS_URL, natsQueue: `q-${randomUUID()}`, patternPrefix: prefix } }));
    expect((await answer).status).toBe('completed');
    expect(simulator.stats.requests - before).toBe(1);
  }, 60_000);

  it('a draining gateway leaves the queue group at once and finishes what it holds; with retries off, a new call is refused in the same shape', async () => {
    const prefix = prefixOf();
    const app = await host({ upstream: { baseUrl: upstream }, transports: { natsUrl: NATS_URL, natsQueue: `q-${randomUUID()}`, patternPrefix: prefix } });
    hosts.push(app);
    const rpc = new SwitchyardRpcClient(nats, { prefix, silenceMs: 5000 });
    const held = lastValueFrom(rpc.stream({ model: 'm', input: '[[delay token=50]] [[tokens 40]]' }).pipe(toArray()));
    await until(() => simulator.stats.active >= 1, 'the held run upstream');
    const drained = app.get(RpcRunRegistry).drain(20_000);
    // Left at once: a new call meets no responder (the one gateway no longer takes requests), not a queue behind the held run.
    await until(async () => {
      const err = await firstValueFrom(new SwitchyardRpcClient(nats, { prefix, retry: { attempts: 0 } }).create({ model: 'm', input: 'x' })).catch((e: unknown) => e);
      return err instanceof SwitchyardRpcError && err.code === 'gateway_unreachable' && err.status === 503;
    }, 'the drained gateway to leave the queue group');
    const events = await held;
    expect(events.at(-1)?.type).toBe('response.completed');
    await drained;
  }, 60_000);
});

describe('tracing and usage of broker runs', () => {
  const simulator = new SimulatedUpstream();
  const receiver = new OtlpReceiver();
  let mcp: StreamableTestServer;
  let app: INestApplication;
  let nats: ClientProxy;
  const prefix = prefixOf();
  const KEY = 'sk-broker-traced';
  // The cancelled run's own key and model: its usage, series and budget are then its alone.
  const CANCEL_KEY = 'sk-broker-cancel';
  const CANCEL_MODEL = 'm-cancelled';
  const DAY = 100_000;
  const keyPrefix = `sy-broker-usage:${randomBytes(4).toString('hex')}:`;

  beforeAll(async () => {
    const { url: upstream } = await simulator.listen(0, '127.0.0.1');
    const tracesUrl = await receiver.listen();
    mcp = await StreamableTestServer.start();
    app = await host({
      upstream: { baseUrl: upstream },
      auth: { apiKeys: [KEY, CANCEL_KEY] },
      limits: { tokensPerDay: DAY, redisUrl: REDIS_URL, keyPrefix },
      mcp: { allowedHosts: [`127.0.0.1:${mcp.port}`] },
      observability: { otlpTracesUrl: tracesUrl, requestLog: false },
      transports: { natsUrl: NATS_URL, natsQueue: `q-${randomUUID()}`, patternPrefix: prefix },
    });
    nats = ClientProxyFactory.create({ transport: Transport.NATS, options: { servers: [NATS_URL] } });
    await nats.connect();
  }, 60_000);

  afterAll(async () => {
    await nats?.close();
    await closeHost(app);
    await Promise.all([simulator.close(), mcp?.close(), receiver.close()]);
    const admin = new Redis(REDIS_URL);
    const found = await admin.keys(`${keyPrefix}*`);
    if (found.length > 0) await admin.del(...found);
    await admin.quit();
  });

  it("a broker run's store operations are spans under its RPC span, in its trace", async () => {
    const answer = await firstValueFrom(new SwitchyardRpcClient(nats, { prefix, apiKey: KEY }).create({ model: 'm', input: '[[say traced]]' }));
    expect(answer.status).toBe('completed');
    await app.get(TracingService).flush();
    const rpcName = `RPC ${prefix}.responses.create`;
    await receiver.waitFor((spans) => spans.some((s) => s.name === rpcName) && spans.some((s) => s.name === 'store saveResponse'));
    const rpcSpan = receiver.spans.find((s) => s.name === rpcName && s.attributes['switchyard.response_id'] === answer.id)!;
    expect(rpcSpan).toBeDefined();
    const children = receiver.spans.filter((s) => s.traceId === rpcSpan.traceId && s.parentSpanId === rpcSpan.spanId).map((s) => s.name);
    expect(children).toEqual(expect.arrayContaining(['inference round', 'store saveResponse']));
    // Nothing of this run's store work started a trace of its own.
    const stray = receiver.spans.filter((s) => s.name.startsWith('store ') && !s.parentSpanId);
    expect(stray).toEqual([]);
  }, 30_000);

  it('a run cancelled after one finished round of a tool run is charged that round: usage API, metrics and budget agree', async () => {
    const rpc = new SwitchyardRpcClient(nats, { prefix, apiKey: CANCEL_KEY });
    let toolStarted = false;
    const subscription: Subscription = rpc
      .stream({
        model: CANCEL_MODEL,
        input: 'Wait for it. [[call demo__hang {}]]',
        tools: [{ type: 'mcp', server_label: 'demo', server_url: mcp.url, require_approval: 'never' }],
      })
      .subscribe({ next: (event) => (toolStarted ||= event.type === 'response.mcp_call.in_progress'), error: () => undefined });
    // The first round is over (its tool call is running in the gateway): cancel now.
    await until(() => toolStarted, 'the tool call to start');
    const rounds = simulator.requests.filter((r) => (r.body as { model?: string } | undefined)?.model === CANCEL_MODEL).length;
    subscription.unsubscribe();

    const headers = { authorization: `Bearer ${CANCEL_KEY}` };
    let used = 0;
    await until(async () => {
      const report = (await (await fetch(`${httpUrl(app)}/v1/usage?group_by=model,surface`, { headers })).json()) as { data: Array<{ results: Array<Record<string, unknown>> }> };
      const rows = report.data.flatMap((b) => b.results).filter((r) => r.model === CANCEL_MODEL && r.surface === 'broker');
      used = rows.reduce((sum, r) => sum + Number(r.input_tokens) + Number(r.output_tokens), 0);
      return used > 0;
    }, 'the cancelled run in GET /v1/usage');
    // One round had run (the one that called the tool), and that is what was charged.
    expect(rounds).toBe(1);

    const metrics = await (await fetch(`${httpUrl(app)}/metrics`, { headers })).text();
    const counted = metrics
      .split('\n')
      .filter((l) => l.startsWith('switchyard_tokens_total{') && l.includes(`model="${CANCEL_MODEL}"`) && l.includes('surface="broker"') && /kind="(input|output)"/.test(l))
      .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
    expect(counted).toBe(used);

    // The budget saw the same: a request that would need the whole day is refused with what is left.
    const refused = await firstValueFrom(rpc.create({ model: CANCEL_MODEL, input: 'hi', max_output_tokens: DAY })).catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 429, headers: { 'x-ratelimit-remaining-tokens': String(DAY - used) } });
  }, 60_000);
});
