import type { INestApplication } from '@nestjs/common';
import { type MicroserviceOptions, Transport } from '@nestjs/microservices';
import { GATEWAY_CONFIG, type GatewayConfig } from '#config/gateway-config.js';
import { RedisServeLock } from './redis-serve-lock.js';
import { responsesPatterns } from './responses-rpc.patterns.js';
import { type TransportsConfig, readTransportsSettings } from './transports.config-section.js';

/** Nest microservice options for the configured brokers (`transports.natsUrl`, `transports.redisUrl`). */
export function gatewayTransports(transports: TransportsConfig | undefined): MicroserviceOptions[] {
  const out: MicroserviceOptions[] = [];
  // A queue group: several gateways on one NATS share the requests instead of each running every one.
  if (transports?.natsUrl) out.push({ transport: Transport.NATS, options: { servers: [transports.natsUrl], queue: transports.natsQueue || undefined } });
  if (transports?.redisUrl) {
    const url = new URL(transports.redisUrl);
    const db = url.pathname.replace(/^\//, '');
    out.push({
      transport: Transport.REDIS,
      options: {
        host: url.hostname,
        port: url.port ? Number(url.port) : 6379,
        username: url.username ? decodeURIComponent(url.username) : undefined,
        password: url.password ? decodeURIComponent(url.password) : undefined,
        db: db ? Number(db) : undefined,
        tls: url.protocol === 'rediss:' ? {} : undefined,
      },
    });
  }
  return out;
}

/**
 * Makes an HTTP app hybrid: connects every configured broker (the app must
 * import `GatewayMicroserviceModule`) and starts listening on them. Returns
 * how many were connected; with none configured it does nothing.
 */
export async function connectGatewayTransports(app: INestApplication): Promise<number> {
  const config = app.get<GatewayConfig>(GATEWAY_CONFIG);
  const settings = readTransportsSettings(config);
  const transports = gatewayTransports(settings);
  if (settings.redisUrl) {
    const lock = await RedisServeLock.acquire(settings.redisUrl, responsesPatterns(settings.patternPrefix).create);
    const close = app.close.bind(app);
    app.close = async () => {
      try {
        await close();
      } finally {
        await lock.release();
      }
    };
  }
  for (const options of transports) app.connectMicroservice<MicroserviceOptions>(options, { inheritAppConfig: true });
  if (transports.length > 0) await app.startAllMicroservices();
  return transports.length;
}
