import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { ConfigError, configureGatewayApp, gatewayHttpAdapter, loadGatewayConfig } from 'switchyard-gateway';
import { connectGatewayTransports } from 'switchyard-gateway/microservice';
import { ExampleAppModule } from './example-app.module.js';

/** The example host: HTTP, plus NATS / Redis when NATS_URL / REDIS_URL are set (a hybrid app). */
async function bootstrap(): Promise<void> {
  let config;
  try {
    config = loadGatewayConfig({ env: process.env });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(err.message);
    process.exit(2);
  }
  const app = await NestFactory.create(ExampleAppModule.forRoot(config), gatewayHttpAdapter(), { bodyParser: false, logger: ['error', 'warn'] });
  configureGatewayApp(app);
  const brokers = await connectGatewayTransports(app);
  await app.listen(config.server.port, config.server.host);
  const { port } = app.getHttpServer().address() as { port: number };
  // One plain line that scripts (and the package test) wait for.
  console.log(`example listening on http://${config.server.host}:${port}/v1 with ${brokers} broker(s)`);
}

bootstrap().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
