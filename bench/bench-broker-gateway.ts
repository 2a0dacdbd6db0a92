import 'reflect-metadata';
import type { Server } from 'node:http';
import { bootGateway } from '../apps/gateway/src/gateway-app.js';
import { validateGatewayConfig } from '#src/gateway-config.loader.js';
import { childConfig, serveParent } from './lib/child-endpoint.js';

/** The deployable gateway, hybrid (HTTP + NATS + Redis), in its own process for `broker-latency`. */
export interface BenchBrokerGatewayConfig {
  upstreamUrl: string;
  natsUrl: string;
  redisUrl: string;
  prefix: string;
}

async function main(): Promise<void> {
  const options = childConfig<BenchBrokerGatewayConfig>();
  const config = validateGatewayConfig({
    upstream: { baseUrl: options.upstreamUrl, dialect: 'responses' },
    server: { host: '127.0.0.1', port: 0 },
    storage: { driver: 'memory' },
    transports: { natsUrl: options.natsUrl, redisUrl: options.redisUrl, patternPrefix: options.prefix },
  });
  const { app } = await bootGateway(config, false);
  await app.listen(0, '127.0.0.1');
  const server = app.getHttpServer() as Server;
  const { port } = server.address() as { port: number };
  serveParent(`http://127.0.0.1:${port}/v1`, {}, async () => {
    const closing = app.close();
    server.closeAllConnections();
    await closing;
  });
}

main().catch((err: unknown) => {
  console.error('bench broker gateway failed to start:', err);
  process.exit(1);
});
