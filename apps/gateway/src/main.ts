import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ConfigError, loadGatewayConfig } from '../../../libs/config/config.loader.js';
import { GatewayModule } from '../../../src/gateway.module.js';
import { configureGatewayApp } from '../../../src/configure-app.js';

/**
 * The deployable gateway: config from the environment (and SWITCHYARD_CONFIG),
 * then listen on HTTP, and on NATS / Redis too when `NATS_URL` / `REDIS_URL`
 * are set (a hybrid app serving the `responses.*` patterns).
 */
async function bootstrap(): Promise<void> {
  let config;
  try {
    config = loadGatewayConfig({ env: process.env });
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  // Named, not printed: a broker URL may carry a password.
  const brokers = [config.transports.natsUrl && 'NATS', config.transports.redisUrl && 'Redis'].filter((name): name is string => !!name);
  // Loaded only when a broker is configured: an HTTP-only gateway needs no broker client installed.
  const microservice = brokers.length > 0 ? await import('../../../src/microservice.js') : undefined;
  const imports = microservice ? [microservice.GatewayMicroserviceModule.forRoot({ prefix: config.transports.patternPrefix })] : [];
  const app = await NestFactory.create(GatewayModule.forRoot({ config, imports }), { bodyParser: false, logger: ['error', 'warn', 'log'] });
  configureGatewayApp(app, { standalone: true });
  if (microservice) await microservice.connectGatewayTransports(app);
  await app.listen(config.server.port, config.server.host);
  new Logger('Switchyard').log(
    `listening on http://${config.server.host}:${config.server.port}${brokers.length ? ` and ${brokers.join(', ')}` : ''} → upstream ${config.upstream.baseUrl} (${config.upstream.dialect} dialect)`,
  );
}

void bootstrap();
