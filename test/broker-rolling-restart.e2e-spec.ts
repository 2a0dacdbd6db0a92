import { randomUUID } from 'node:crypto';
import { type ClientProxy, ClientProxyFactory, Transport } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { SwitchyardRpcClient } from '#src/microservice.js';
import { spawnGateway, startGatewayProcess, type GatewayProcess } from './support/process/gateway-process.js';

// Real brokers on this machine (and in CI); a prefix (and queue group) per run, since others share them.
const NATS_URL = 'nats://127.0.0.1:4222';
const REDIS_URL = 'redis://127.0.0.1:6379';

/**
 * Callers sending one request after another (`width` at a time) until stopped:
 * what a service calling the gateway does while the gateways are replaced.
 */
function traffic(rpc: SwitchyardRpcClient, width: number) {
  const outcomes: Array<{ ok: boolean; error?: unknown }> = [];
  let running = true;
  const loops = Array.from({ length: width }, async (_, lane) => {
    for (let i = 0; running; i++) {
      try {
        const answer = await firstValueFrom(rpc.create({ model: 'm', input: `[[delay token=20]] [[say lane ${lane} request ${i}]]` }));
        outcomes.push({ ok: answer.status === 'completed', error: answer.status === 'completed' ? undefined : answer.status });
      } catch (error) {
        outcomes.push({ ok: false, error });
      }
    }
  });
  return {
    outcomes,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

const describeError = (e: unknown) => (e instanceof Error ? `${e.name}: ${(e as { code?: string }).code ?? ''} ${e.message}` : String(e));

async function untilMore(outcomes: unknown[], more: number, what: string): Promise<void> {
  const target = outcomes.length + more;
  const deadline = Date.now() + 30_000;
  while (outcomes.length < target) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('a rolling restart of two gateways on NATS', () => {
  const prefix = `t-${randomUUID()}`;
  const simulator = new SimulatedUpstream();
  const gateways: GatewayProcess[] = [];
  let client: ClientProxy;
  let env: Record<string, string>;

  beforeAll(async () => {
    const { url } = await simulator.listen(0, '127.0.0.1');
    env = {
      UPSTREAM_URL: url,
      STORAGE_DRIVER: 'memory',
      NATS_URL,
      NATS_QUEUE: `q-${randomUUID()}`,
      TRANSPORT_PATTERN_PREFIX: prefix,
      TRANSPORT_HEARTBEAT_MS: '300',
      SHUTDOWN_GRACE_MS: '5000',
    };
    for (let i = 0; i < 2; i++) gateways.push(await startGatewayProcess(env));
    client = ClientProxyFactory.create({ transport: Transport.NATS, options: { servers: [NATS_URL] } });
    await client.connect();
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await Promise.all(gateways.map((g) => g.kill()));
    await simulator.close();
  });

  it('replacing each gateway in turn while requests keep coming: no caller sees an error, and each request runs once', async () => {
    const load = traffic(new SwitchyardRpcClient(client, { prefix, silenceMs: 2000 }), 3);
    await untilMore(load.outcomes, 6, 'requests before the restart');
    for (const old of [...gateways]) {
      // Its replacement first, as a rolling update does, then the old one drains.
      gateways.push(await startGatewayProcess(env));
      old.child.kill('SIGTERM');
      expect((await old.exited).code).toBe(0);
      await untilMore(load.outcomes, 6, 'requests after a gateway left');
    }
    await load.stop();
    expect(load.outcomes.filter((o) => !o.ok).map((o) => describeError(o.error))).toEqual([]);
    expect(load.outcomes.length).toBeGreaterThanOrEqual(18);
    // Counted at the upstream: each request ran exactly once (none twice after a retry).
    expect(simulator.stats.requests).toBe(load.outcomes.length);
  }, 180_000);
});

describe('a rolling restart on Redis, the new gateway standing by for the lease', () => {
  const prefix = `t-${randomUUID()}`;
  const simulator = new SimulatedUpstream();
  const gateways: GatewayProcess[] = [];
  let client: ClientProxy;
  let env: Record<string, string>;

  beforeAll(async () => {
    const { url } = await simulator.listen(0, '127.0.0.1');
    env = {
      HOST: '127.0.0.1',
      PORT: '0',
      UPSTREAM_URL: url,
      STORAGE_DRIVER: 'memory',
      REDIS_URL,
      TRANSPORT_PATTERN_PREFIX: prefix,
      TRANSPORT_HEARTBEAT_MS: '300',
      SHUTDOWN_GRACE_MS: '5000',
      REDIS_LEASE_WAIT_MS: '120000',
    };
    gateways.push(await startGatewayProcess(env));
    client = ClientProxyFactory.create({ transport: Transport.REDIS, options: { host: '127.0.0.1', port: 6379 } });
    await client.connect();
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await Promise.all(gateways.map((g) => g.kill()));
    await simulator.close();
  });

  it('the old gateway gives the lease up when it starts draining, the standby takes over, and no caller sees an error', async () => {
    const load = traffic(new SwitchyardRpcClient(client, { prefix, silenceMs: 2000 }), 3);
    await untilMore(load.outcomes, 6, 'requests before the restart');
    for (let round = 0; round < 2; round++) {
      const old = gateways.at(-1)!;
      const standby = spawnGateway(env);
      gateways.push(standby);
      // Booted and waiting for the lease (it says so), not yet serving.
      await standby.waitForLine((l) => l.includes('standing by'), 60_000);
      old.child.kill('SIGTERM');
      await standby.waitForLine((l) => l.includes('"msg":"listening"'), 60_000);
      expect((await old.exited).code).toBe(0);
      await untilMore(load.outcomes, 6, 'requests on the new gateway');
    }
    await load.stop();
    expect(load.outcomes.filter((o) => !o.ok).map((o) => describeError(o.error))).toEqual([]);
    expect(load.outcomes.length).toBeGreaterThanOrEqual(18);
    // Pub/sub gives a request to every subscriber: one run per request says only one gateway heard each.
    expect(simulator.stats.requests).toBe(load.outcomes.length);
  }, 180_000);
});
