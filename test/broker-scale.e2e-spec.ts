import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { type ClientProxy, ClientProxyFactory, Transport } from '@nestjs/microservices';
import { firstValueFrom, lastValueFrom, take, toArray } from 'rxjs';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { SwitchyardRpcClient, SwitchyardRpcError } from '#src/microservice.js';
import { requestLines, spawnGateway, startGatewayProcess, type GatewayProcess } from './support/process/gateway-process.js';

// Real brokers on this machine (and in CI); a prefix and queue group per run, since others share them.
const NATS_URL = 'nats://127.0.0.1:4222';
const REDIS_URL = 'redis://127.0.0.1:6379';
const KEY = 'sk-broker-test';
const SILENCE_MS = 1500;

async function until(condition: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const rpcLines = (gateways: GatewayProcess[]) => gateways.flatMap((g) => requestLines(g)).filter((l) => l.method === 'RPC');

describe('three gateway processes on one NATS', () => {
  const prefix = `t-${randomUUID()}`;
  const simulator = new SimulatedUpstream();
  const gateways: Array<GatewayProcess & { url: string }> = [];
  const clients: ClientProxy[] = [];
  const rpc = (options: { apiKey?: string } = { apiKey: KEY }) => {
    const client = ClientProxyFactory.create({ transport: Transport.NATS, options: { servers: [NATS_URL] } });
    clients.push(client);
    return new SwitchyardRpcClient(client, { prefix, silenceMs: SILENCE_MS, ...options });
  };

  beforeAll(async () => {
    const { url } = await simulator.listen(0, '127.0.0.1');
    const env = {
      UPSTREAM_URL: url,
      STORAGE_DRIVER: 'memory',
      NATS_URL,
      NATS_QUEUE: `q-${randomUUID()}`,
      TRANSPORT_PATTERN_PREFIX: prefix,
      TRANSPORT_HEARTBEAT_MS: '300',
      API_KEYS: KEY,
      SHUTDOWN_GRACE_MS: '4000',
    };
    // One after the other: three cold starts at once on a loaded machine take longer than one start's bound.
    for (let i = 0; i < 3; i++) gateways.push(await startGatewayProcess(env));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await Promise.all(gateways.map((g) => g.kill()));
    await simulator.close();
  });

  it('refuses a caller without a key with the OpenAI envelope, and runs nothing', async () => {
    const before = simulator.stats.requests;
    const err = await firstValueFrom(rpc({}).create({ model: 'm', input: 'hi' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SwitchyardRpcError);
    expect(err).toMatchObject({ status: 401, error: { type: 'authentication_error' } });
    const wrong = await firstValueFrom(rpc({ apiKey: 'sk-wrong' }).create({ model: 'm', input: 'hi' })).catch((e: unknown) => e);
    expect(wrong).toMatchObject({ status: 401 });
    expect(simulator.stats.requests).toBe(before);
  });

  it('runs each request once, shared across the group, logged and counted by pattern', async () => {
    const client = rpc();
    const before = simulator.stats.requests;
    const beforeLines = rpcLines(gateways).length;
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => firstValueFrom(client.create({ model: 'm', input: `[[say run ${i}]]` }))));
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill('completed'));
    expect(simulator.stats.requests - before).toBe(6);
    await until(() => rpcLines(gateways).length - beforeLines >= 6, 'six RPC log lines');
    const lines = rpcLines(gateways).slice(-6);
    for (const line of lines) expect(line).toMatchObject({ method: 'RPC', route: `${prefix}.responses.create`, status: 200, response_id: expect.stringMatching(/^resp_/) });
    // No cancel followed a normal answer: nothing was aborted upstream.
    expect(simulator.stats.aborted).toBe(0);
    const metrics = await Promise.all(gateways.map(async (g) => (await fetch(`${g.url}/metrics`, { headers: { authorization: `Bearer ${KEY}` } })).text()));
    const counted = metrics
      .flatMap((m) => m.split('\n'))
      .filter((l) => l.startsWith('switchyard_broker_requests_total') && l.includes(`pattern="${prefix}.responses.create"`) && l.includes('status="200"'))
      .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
    expect(counted).toBe(6);
  });

  it('a cancel from any client stops the run on whichever gateway holds it', async () => {
    const before = simulator.stats.aborted;
    const streamLines = () => rpcLines(gateways).filter((l) => l.route === `${prefix}.responses.stream`);
    const streams = await Promise.all([0, 1, 2, 3].map(() => firstValueFrom(rpc().stream({ model: 'm', input: '[[delay token=100]] [[tokens 300]]' }).pipe(take(4), toArray()))));
    for (const events of streams) expect(events.map((e) => e.type).slice(0, 2)).toEqual(['response.created', 'response.in_progress']);
    await until(() => simulator.stats.aborted - before >= 4, 'four upstream aborts');
    await until(() => streamLines().length >= 4, 'four stream log lines');
    expect(streamLines()).toHaveLength(4);
    for (const line of streamLines()) expect(line).toMatchObject({ response_status: 'cancelled', response_id: expect.stringMatching(/^resp_/) });
  });

  it('SIGTERM drains: a short run finishes, a long one ends with response.failed', async () => {
    const short = lastValueFrom(rpc().stream({ model: 'm', input: '[[delay token=100]] [[tokens 10]]' }).pipe(toArray()));
    const long = lastValueFrom(rpc().stream({ model: 'm', input: '[[delay token=200]] [[tokens 400]]' }).pipe(toArray()));
    await until(() => simulator.stats.active >= 2, 'both runs upstream');
    for (const g of gateways) g.child.kill('SIGTERM');
    const [shortEvents, longEvents] = await Promise.all([short, long]);
    expect(shortEvents.at(-1)?.type).toBe('response.completed');
    const last = longEvents.at(-1) as any;
    expect(last).toMatchObject({ type: 'response.failed', response: { status: 'failed', error: { code: 'gateway_shutdown' } } });
    expect(longEvents.map((e) => e.sequence_number)).toEqual(longEvents.map((_, i) => i));
    const exits = await Promise.all(gateways.map((g) => g.exited));
    expect(exits.map((e) => e.code)).toEqual([0, 0, 0]);
  }, 30_000);
});

describe('gateways on one Redis', () => {
  const prefix = `t-${randomUUID()}`;
  const simulator = new SimulatedUpstream();
  let first: GatewayProcess;
  let client: ClientProxy;
  let env: Record<string, string>;

  beforeAll(async () => {
    const { url } = await simulator.listen(0, '127.0.0.1');
    env = { HOST: '127.0.0.1', PORT: '0', UPSTREAM_URL: url, STORAGE_DRIVER: 'memory', REDIS_URL, TRANSPORT_PATTERN_PREFIX: prefix, TRANSPORT_HEARTBEAT_MS: '300' };
    first = await startGatewayProcess(env);
    client = ClientProxyFactory.create({ transport: Transport.REDIS, options: { host: '127.0.0.1', port: 6379 } });
    await client.connect();
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await first?.kill();
    await simulator.close();
  });

  it('refuses a second gateway on the same patterns at boot (pub/sub would run every request twice)', async () => {
    const second = spawnGateway(env);
    const exit = await second.exited;
    expect(exit.code).not.toBe(0);
    // One line, saying what is wrong (the lease is held by a live gateway), nothing else.
    expect(second.stderr().trim().split('\n')).toEqual([expect.stringMatching(/^Cannot serve on Redis: the Redis broker is reachable, but another live gateway holds the lease/)]);
    expect(second.stdout.filter((l) => l.includes('"level":"error"'))).toEqual([]);
    // The first still serves, once.
    const before = simulator.stats.requests;
    const answer = await firstValueFrom(new SwitchyardRpcClient(client, { prefix }).create({ model: 'm', input: '[[say once]]' }));
    expect(answer.status).toBe('completed');
    expect(simulator.stats.requests - before).toBe(1);
  }, 30_000);

  it('a SIGKILLed gateway is reported to the streaming client as gateway_unreachable within the silence bound', async () => {
    const events: string[] = [];
    const failed = new Promise<unknown>((resolve) =>
      new SwitchyardRpcClient(client, { prefix, silenceMs: SILENCE_MS }).stream({ model: 'm', input: '[[delay token=100]] [[tokens 300]]' }).subscribe({
        next: (e) => events.push(e.type),
        error: resolve,
        complete: () => resolve(new Error('completed')),
      }),
    );
    await until(() => events.length >= 4, 'the stream under way');
    const killedAt = Date.now();
    await first.kill();
    const err = await failed;
    const waited = Date.now() - killedAt;
    expect(err).toBeInstanceOf(SwitchyardRpcError);
    expect(err).toMatchObject({ status: 503, error: { code: 'gateway_unreachable' } });
    // Seen by silence: not before the bound, and long before any rpc timeout (generous: the machine is shared).
    expect(waited).toBeGreaterThanOrEqual(SILENCE_MS - 100);
    expect(waited).toBeLessThan(SILENCE_MS * 8);
    expect(events).not.toContain('response.completed');
  }, 30_000);
});

describe('a gateway on NATS', () => {
  const prefix = `t-${randomUUID()}`;
  const simulator = new SimulatedUpstream();
  let gateway: GatewayProcess;
  const clients: ClientProxy[] = [];
  const rpc = () => {
    const client = ClientProxyFactory.create({ transport: Transport.NATS, options: { servers: [NATS_URL] } });
    clients.push(client);
    return new SwitchyardRpcClient(client, { prefix, silenceMs: SILENCE_MS, apiKey: KEY });
  };

  beforeAll(async () => {
    const { url } = await simulator.listen(0, '127.0.0.1');
    gateway = await startGatewayProcess({
      UPSTREAM_URL: url,
      STORAGE_DRIVER: 'memory',
      NATS_URL,
      NATS_QUEUE: `q-${randomUUID()}`,
      TRANSPORT_PATTERN_PREFIX: prefix,
      TRANSPORT_HEARTBEAT_MS: '300',
      API_KEYS: KEY,
      LIMIT_CONCURRENT_REQUESTS: '1',
    });
  }, 60_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await gateway?.kill();
    await simulator.close();
  });

  it("applies the key's limits as HTTP does: a second concurrent run of one key is a 429", async () => {
    const first = lastValueFrom(rpc().stream({ model: 'm', input: '[[delay token=50]] [[tokens 40]]' }).pipe(toArray()));
    await until(() => simulator.stats.active >= 1, 'the first run upstream');
    const second = await firstValueFrom(rpc().create({ model: 'm', input: 'hi' })).catch((e: unknown) => e);
    expect(second).toBeInstanceOf(SwitchyardRpcError);
    expect(second).toMatchObject({ status: 429 });
    expect((await first).at(-1)?.type).toBe('response.completed');
  }, 30_000);

  it('a SIGKILLed gateway is reported to the streaming client as gateway_unreachable within the silence bound', async () => {
    const events: string[] = [];
    const failed = new Promise<unknown>((resolve) =>
      rpc()
        .stream({ model: 'm', input: '[[delay token=100]] [[tokens 300]]' })
        .subscribe({ next: (e) => events.push(e.type), error: resolve, complete: () => resolve(new Error('completed')) }),
    );
    await until(() => events.length >= 4, 'the stream under way');
    const killedAt = Date.now();
    await gateway.kill();
    const err = await failed;
    const waited = Date.now() - killedAt;
    expect(err).toMatchObject({ status: 503, error: { code: 'gateway_unreachable' } });
    expect(waited).toBeGreaterThanOrEqual(SILENCE_MS - 100);
    expect(waited).toBeLessThan(SILENCE_MS * 8);
    expect(events).not.toContain('response.completed');
  }, 30_000);
});

describe('a gateway on NATS with OIDC', () => {
  const prefix = `t-${randomUUID()}`;
  const simulator = new SimulatedUpstream();
  let idp: Server;
  let issuer = '';
  let gateway: GatewayProcess;
  const clients: ClientProxy[] = [];
  const rpc = (apiKey: string) => {
    const client = ClientProxyFactory.create({ transport: Transport.NATS, options: { servers: [NATS_URL] } });
    clients.push(client);
    return new SwitchyardRpcClient(client, { prefix, silenceMs: SILENCE_MS, apiKey });
  };
  let sign: (claims: Record<string, unknown>) => Promise<string>;

  beforeAll(async () => {
    // A local identity provider (discovery and JWKS); tokens signed with the official JOSE library.
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    idp = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/.well-known/openid-configuration') res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks` }));
      else res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(idp.address() as { port: number }).port}`;
    sign = (claims) =>
      new SignJWT({ sub: 'alice', ...claims })
        .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
        .setIssuer(issuer)
        .setAudience('switchyard')
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(privateKey);
    const { url } = await simulator.listen(0, '127.0.0.1');
    gateway = await startGatewayProcess({
      UPSTREAM_URL: url,
      STORAGE_DRIVER: 'memory',
      NATS_URL,
      NATS_QUEUE: `q-${randomUUID()}`,
      TRANSPORT_PATTERN_PREFIX: prefix,
      OIDC_ISSUER: issuer,
      OIDC_AUDIENCE: 'switchyard',
    });
  }, 60_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await gateway?.kill();
    await simulator.close();
    idp.closeAllConnections();
    await new Promise((resolve) => idp.close(resolve));
  });

  it('checks a bearer token as HTTP does: a valid one runs, an empty subject or a foreign signature is a 401 that runs nothing', async () => {
    const answer = await firstValueFrom(rpc(await sign({})).create({ model: 'm', input: '[[say hello]]' }));
    expect(answer.status).toBe('completed');
    const before = simulator.stats.requests;
    const emptySub = await firstValueFrom(rpc(await sign({ sub: '' })).create({ model: 'm', input: 'hi' })).catch((e: unknown) => e);
    expect(emptySub).toMatchObject({ status: 401 });
    const { privateKey: foreign } = await generateKeyPair('ES256');
    const forged = await new SignJWT({ sub: 'alice' })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer(issuer)
      .setAudience('switchyard')
      .setExpirationTime('5m')
      .sign(foreign);
    expect(await firstValueFrom(rpc(forged).create({ model: 'm', input: 'hi' })).catch((e: unknown) => e)).toMatchObject({ status: 401 });
    expect(simulator.stats.requests).toBe(before);
  }, 30_000);
});
