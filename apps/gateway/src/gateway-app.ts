import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { GatewayConfig } from '../../../libs/config/gateway-config.js';
import { configureGatewayApp } from '../../../src/configure-app.js';
import { GatewayModule } from '../../../src/gateway.module.js';

export interface BootedGateway {
  app: INestApplication;
  /** The brokers it also serves the Responses patterns on (names, not URLs: those may carry passwords). */
  brokers: string[];
}

/**
 * The deployable gateway as one app: HTTP always, and the `responses.*`
 * patterns on NATS and/or Redis when `transports.natsUrl` / `transports.redisUrl`
 * are set (a hybrid app). Listening is left to the caller.
 */
export async function bootGateway(config: GatewayConfig, logger: Array<'error' | 'warn' | 'log'> | false = ['error', 'warn', 'log']): Promise<BootedGateway> {
  const brokers = [config.transports?.natsUrl && 'NATS', config.transports?.redisUrl && 'Redis'].filter((name): name is string => !!name);
  // Loaded only when a broker is configured: an HTTP-only gateway needs no broker client installed.
  const microservice = brokers.length > 0 ? await import('../../../src/microservice.js') : undefined;
  const imports = microservice ? [microservice.GatewayMicroserviceModule.forRoot({ prefix: config.transports.patternPrefix })] : [];
  const app = await NestFactory.create(GatewayModule.forRoot({ config, imports }), { bodyParser: false, logger });
  configureGatewayApp(app, { standalone: true });
  if (microservice) await microservice.connectGatewayTransports(app);
  return { app, brokers };
}
