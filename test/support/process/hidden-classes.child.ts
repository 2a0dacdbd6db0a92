import 'reflect-metadata';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { SimulatedUpstream } from '../../../apps/simulator/src/simulated-upstream.js';
import { configureGatewayApp } from '#src/configure-app.js';
import { gatewayHttpAdapter } from '#src/gateway-http-adapter.js';
import { loadGatewayConfig } from '#src/gateway-config.loader.js';
import { GatewayModule } from '#src/gateway.module.js';

/**
 * Run with `--allow-natives-syntax` through the test loader: boots the
 * gateway on the adapter named by argv[2] (`gateway`: `gatewayHttpAdapter()`,
 * `nest`: Nest's own `ExpressAdapter`), answers eight blocking requests, and
 * prints as JSON whether the last two requests, and their responses, share
 * V8's hidden class (`%HaveSameMap`), and whether express's prototype was in
 * place when each request arrived.
 */
const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;
const fastProperties = new Function('a', 'return %HasFastProperties(a)') as (a: object) => boolean;

const simulator = new SimulatedUpstream({});
const { url: upstreamUrl } = await simulator.listen(0, '127.0.0.1');
const config = loadGatewayConfig({ env: { UPSTREAM_URL: upstreamUrl, STORAGE_DRIVER: 'memory', REQUEST_LOG: 'false', METRICS: 'false' } });
const adapter = process.argv[2] === 'gateway' ? gatewayHttpAdapter() : new ExpressAdapter();
const app = await NestFactory.create(GatewayModule.forRoot({ config }), adapter, { bodyParser: false, logger: false });
configureGatewayApp(app, { standalone: true });
await app.listen(0, '127.0.0.1');
const server = app.getHttpServer() as Server;
const expressRequest = (app.getHttpAdapter().getInstance() as { request: object }).request;
const seen: Array<{ req: IncomingMessage; res: ServerResponse; protoInPlace: boolean }> = [];
server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => seen.push({ req, res, protoInPlace: Object.getPrototypeOf(req) === expressRequest }));
const { port } = server.address() as { port: number };
for (let i = 0; i < 8; i++) {
  const answer = await fetch(`http://127.0.0.1:${port}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', input: `Say hi ${i}.`, store: false }),
  });
  if (answer.status !== 200) throw new Error(`request ${i} answered ${answer.status}`);
  await answer.json();
}
const [a, b] = seen.slice(-2);
process.stdout.write(
  `${JSON.stringify({
    requestsShareHiddenClass: sameMap(a.req, b.req),
    responsesShareHiddenClass: sameMap(a.res, b.res),
    fastProperties: fastProperties(b.req) && fastProperties(b.res),
    expressPrototypeOnArrival: seen.every((s) => s.protoInPlace),
    requests: seen.length,
  })}\n`,
);
await app.close();
await simulator.close();
