import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { ConfigError, loadGatewayConfig } from '../../../libs/config/config.loader.js';
import { bootGateway } from './gateway-app.js';

/**
 * The deployable gateway: config from the environment (and SWITCHYARD_CONFIG),
 * then listen on HTTP, and on NATS / Redis too when `NATS_URL` / `REDIS_URL`
 * are set.
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
  const { app, brokers } = await bootGateway(config);
  await app.listen(config.server.port, config.server.host);
  new Logger('Switchyard').log(
    `listening on http://${config.server.host}:${config.server.port}${brokers.length ? ` and ${brokers.join(', ')}` : ''} → upstream ${config.upstream.baseUrl} (${config.upstream.dialect} dialect)`,
  );
}

void bootstrap();
