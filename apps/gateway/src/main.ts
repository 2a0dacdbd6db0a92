import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ConfigError, loadGatewayConfig } from '../../../libs/config/config.loader.js';
import { GatewayModule } from '../../../src/gateway.module.js';
import { configureGatewayApp } from '../../../src/configure-app.js';
import { listeningMessage } from './startup-message.js';
import { isWorker, runPrimary, workerCount } from './workers.js';

/** The deployable gateway: config from the environment (and SWITCHYARD_CONFIG), then listen. */
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
  const workers = workerCount(config.server.workers);
  if (workers > 1 && config.storage.driver === 'memory') {
    console.error('storage.driver=memory keeps state inside one process; with WORKERS > 1 use sqlite or postgres (or set WORKERS=1).');
    process.exit(2);
  }
  if (workers > 1 && !isWorker()) return runPrimary(workers);
  const app = await NestFactory.create(GatewayModule.forRoot({ config }), { bodyParser: false, logger: ['error', 'warn', 'log'] });
  configureGatewayApp(app);
  await app.listen(config.server.port, config.server.host);
  new Logger('Switchyard').log(listeningMessage(config));
}

void bootstrap();
