import 'reflect-metadata';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Body, Controller, HttpCode, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import express from 'express';
import { gatewayHttpAdapter } from '#src/gateway-http-adapter.js';
import { childConfig, serveParent } from './lib/child-endpoint.js';

/**
 * The floor of the gateway's stack for one hop: what any gateway built on
 * express (`mode: "express"`), or on Nest over express (`mode: "nest"`; with
 * the gateway's `gatewayHttpAdapter()`, `mode: "nest-gateway-adapter"`), pays
 * before doing anything of its own. POST /v1/responses parses the JSON body,
 * sends it to the upstream as JSON over a keep-alive agent, parses the
 * upstream's JSON answer and answers with it re-serialized. No validation,
 * no mapping, no loop, no storage, no observability: next to the raw proxy
 * (bytes piped, nothing parsed) and the gateway, it says how much of the
 * gateway's CPU per request is the framework and the JSON work every
 * request needs, and how much is the gateway's own.
 */
interface FloorConfig {
  upstreamUrl: string;
  mode: 'express' | 'nest' | 'nest-gateway-adapter';
}

const config = childConfig<FloorConfig>();
const upstream = new URL(config.upstreamUrl);
const agent = new http.Agent({ keepAlive: true, maxSockets: 2048, scheduling: 'lifo' });

/** One upstream exchange: the body out as JSON, the answer parsed. */
function relay(body: unknown): Promise<unknown> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: 'POST',
        path: `${upstream.pathname.replace(/\/+$/, '')}/responses`,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
        agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.once('end', () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch (err) {
            reject(err);
          }
        });
        res.once('error', reject);
      },
    );
    req.once('error', reject);
    req.end(text);
  });
}

@Controller('v1')
class FloorController {
  @Post('responses')
  @HttpCode(200)
  create(@Body() body: unknown): Promise<unknown> {
    return relay(body);
  }
}

@Module({ controllers: [FloorController] })
class FloorModule {}

async function listenExpress(): Promise<{ server: http.Server; close(): Promise<void> }> {
  const app = express();
  app.use(express.json({ limit: '10mb' }));
  app.post('/v1/responses', (req, res, next) => {
    relay(req.body).then((answer) => res.json(answer), next);
  });
  const server = http.createServer({ keepAlive: true, noDelay: true }, app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function listenNest(): Promise<{ server: http.Server; close(): Promise<void> }> {
  const app = await NestFactory.create(FloorModule, config.mode === 'nest-gateway-adapter' ? gatewayHttpAdapter() : new ExpressAdapter(), { logger: false });
  await app.listen(0, '127.0.0.1');
  return { server: app.getHttpServer() as http.Server, close: () => app.close() };
}

async function main(): Promise<void> {
  const { server, close } = config.mode === 'express' ? await listenExpress() : await listenNest();
  const { port } = server.address() as AddressInfo;
  serveParent(`http://127.0.0.1:${port}/v1`, {}, async () => {
    server.closeAllConnections();
    await close();
    agent.destroy();
  });
}

main().catch((err: unknown) => {
  console.error('framework floor failed to start:', err);
  process.exit(1);
});
