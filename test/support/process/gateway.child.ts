import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { validateGatewayConfig } from '#config/config.loader.js';
import { configureGatewayApp } from '#src/configure-app.js';
import { GatewayModule } from '#src/gateway.module.js';

/**
 * A gateway in a process of its own, for tests that must stop one abruptly
 * (SIGKILL: no shutdown hooks run, leases stop being renewed). Its config
 * arrives as JSON in argv[2]; it prints `{"port": N}` once it listens.
 */
const config = validateGatewayConfig(JSON.parse(process.argv[2]) as Record<string, unknown>);
const app = await NestFactory.create(GatewayModule.forRoot({ config }), { bodyParser: false, logger: ['error'] });
configureGatewayApp(app, { standalone: true });
await app.listen(0, '127.0.0.1');
const { port } = app.getHttpServer().address() as { port: number };
process.stdout.write(`${JSON.stringify({ port })}\n`);
