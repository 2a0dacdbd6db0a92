import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { ConfigError, loadGatewayConfig } from '../../../libs/config/config.loader.js';
import { bootGateway } from './gateway-app.js';
import { listeningMessage } from './startup-message.js';
import { isWorker, runPrimary, workerCount } from './workers.js';

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
  // Broker patterns are served from one process (see below), so with a broker and no
  // WORKERS setting the gateway runs as one process rather than one per core.
  const brokers = !!(config.transports.natsUrl || config.transports.redisUrl);
  const workers = brokers && config.server.workers === undefined ? 1 : workerCount(config.server.workers);
  if (workers > 1 && config.storage.driver === 'memory') {
    console.error('storage.driver=memory keeps state inside one process; with WORKERS > 1 use sqlite or postgres (or set WORKERS=1).');
    process.exit(2);
  }
  if (workers > 1 && brokers) {
    // Every worker would subscribe to the patterns and run each broker request once per worker
    // (Redis has no queue groups; a NATS queue group would deliver a cancel to one worker only).
    console.error('NATS_URL / REDIS_URL serve the broker patterns from one process: set WORKERS=1, or run a separate replica for the brokers.');
    process.exit(2);
  }
  if (workers > 1 && !isWorker()) return runPrimary(workers);
  const { app, brokers: served } = await bootGateway(config);
  await app.listen(config.server.port, config.server.host);
  new Logger('Switchyard').log(listeningMessage(config, served));
}

void bootstrap();
