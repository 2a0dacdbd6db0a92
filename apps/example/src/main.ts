import 'reflect-metadata';
import { ConsoleLogger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { codeExecutionRefusal, ConfigError, configureGatewayApp, gatewayHttpAdapter, loadGatewayConfig } from 'switchyard-gateway';
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
  const logger = new ConsoleLogger({ logLevels: ['error', 'warn'] });
  const codeOff = codeExecutionRefusal(config);
  if (codeOff) console.warn(`code execution is off: ${codeOff}`);
  const app = await NestFactory.create(ExampleAppModule.forRoot(config), gatewayHttpAdapter(), { bodyParser: false, logger });
  configureGatewayApp(app);
  const brokers = await connectGatewayTransports(app);
  try {
    // Nest would log a failed listen as an error with its own stack: this says it in one line below instead.
    logger.setLogLevels(['fatal']);
    await app.listen(config.server.port, config.server.host);
    logger.setLogLevels(['error', 'warn']);
  } catch (err) {
    await app.close();
    // A taken port is the usual first-run mistake: one line naming the variable, as the gateway says it.
    if ((err as { code?: string }).code === 'EADDRINUSE') {
      throw new Error(
        `Port ${config.server.port} on ${config.server.host} is already in use (variable PORT): stop the process holding it or choose another port, e.g. PORT=${config.server.port + 1}.`,
        { cause: err },
      );
    }
    throw err;
  }
  const { port } = app.getHttpServer().address() as { port: number };
  // One plain line that scripts (and the package test) wait for.
  console.log(`example listening on http://${config.server.host}:${port}/v1 with ${brokers} broker(s)`);
}

bootstrap().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
