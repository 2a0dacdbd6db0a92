import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { ClientProxyFactory, Transport, type ClientProxy } from '@nestjs/microservices';
import OpenAI from 'openai';
import { firstValueFrom } from 'rxjs';
import { bootGateway } from '../apps/gateway/src/gateway-app.js';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { loadGatewayConfig } from '#src/gateway-config.loader.js';
import { SwitchyardRpcClient } from '#src/microservice.js';

describe('the deployable gateway with NATS_URL and REDIS_URL set', () => {
  let simulator: SimulatedUpstream;
  let app: INestApplication;
  let brokers: string[];
  let url: string;
  const prefix = `deploy-${randomUUID()}.`;

  beforeAll(async () => {
    simulator = new SimulatedUpstream();
    const upstream = await simulator.listen(0, '127.0.0.1');
    // The same environment an operator sets.
    const config = loadGatewayConfig({
      env: {
        UPSTREAM_URL: upstream.url,
        HOST: '127.0.0.1',
        PORT: '0',
        STORAGE_DRIVER: 'memory',
        NATS_URL: 'nats://127.0.0.1:4222',
        REDIS_URL: 'redis://127.0.0.1:6379',
        TRANSPORT_PATTERN_PREFIX: prefix,
      },
    });
    ({ app, brokers } = await bootGateway(config, false));
    await app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}/v1`;
  });

  afterAll(async () => {
    if (app) {
      const closing = app.close();
      (app.getHttpServer() as import('node:http').Server).closeAllConnections();
      await closing;
    }
    await simulator?.close();
  });

  it('serves HTTP and the Responses patterns on both brokers, sharing stored state', async () => {
    expect(brokers).toEqual(['NATS', 'Redis']);
    const http = new OpenAI({ baseURL: url, apiKey: 'x', maxRetries: 0 });
    const first = await http.responses.create({ model: 'm', input: '[[say over http]]' });

    const clients: ClientProxy[] = [
      ClientProxyFactory.create({ transport: Transport.NATS, options: { servers: ['nats://127.0.0.1:4222'] } }),
      ClientProxyFactory.create({ transport: Transport.REDIS, options: { host: '127.0.0.1', port: 6379 } }),
    ];
    try {
      for (const client of clients) {
        const rpc = new SwitchyardRpcClient(client, { prefix });
        // A continuation of the HTTP response: one gateway, one store, whichever edge.
        const next = await firstValueFrom(rpc.create({ model: 'm', input: '[[say over a broker]]', previous_response_id: first.id }));
        expect(next).toMatchObject({ status: 'completed', previous_response_id: first.id });
        expect((await http.responses.retrieve(next.id)).output_text).toBe('over a broker');
      }
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it('an unknown route answers in the envelope: this app is only the gateway', async () => {
    const res = await fetch(`${url}/nowhere`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('a broker URL of the wrong scheme stops boot, naming the setting and its variable', () => {
    expect(() => loadGatewayConfig({ env: { NATS_URL: 'http://127.0.0.1:4222' } })).toThrow(/transports\.natsUrl \(NATS_URL\)/);
    expect(() => loadGatewayConfig({ env: { REDIS_URL: 'nats://x' } })).toThrow(/transports\.redisUrl \(REDIS_URL\)/);
  });
});
