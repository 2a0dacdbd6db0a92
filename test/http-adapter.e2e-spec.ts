import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Controller, Get, Module, Post, Req, Res, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Request, Response } from 'express';
import OpenAI from 'openai';
import { gatewayHttpAdapter } from '#src/gateway-http-adapter.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';

const REGISTER = fileURLToPath(new URL('./support/process/ts-register.mjs', import.meta.url));
const PROBE = fileURLToPath(new URL('./support/process/hidden-classes.child.ts', import.meta.url));

interface Probe {
  requestsShareHiddenClass: boolean;
  responsesShareHiddenClass: boolean;
  fastProperties: boolean;
  expressPrototypeOnArrival: boolean;
  requests: number;
}

/** The probe child on one adapter; V8's hidden classes can only be read with `--allow-natives-syntax`. */
function probe(adapter: 'gateway' | 'nest'): Promise<Probe> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--allow-natives-syntax', '--import', REGISTER, PROBE, adapter], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').at(-1)!) as Probe) : reject(new Error(`probe exited ${code}: ${err}`))));
  });
}

/** Express's request and response helpers, as a host's own controller would use them. */
@Controller('echo')
class EchoController {
  @Post()
  echo(@Req() req: Request, @Res() res: Response): void {
    res
      .set('x-echo', 'yes')
      .status(201)
      .json({ host: req.get('host'), json: req.is('application/json'), body: req.body, protocol: req.protocol });
  }

  @Get('redirect')
  redirect(@Res() res: Response): void {
    res.redirect(302, '/echo/elsewhere');
  }
}

@Module({ controllers: [EchoController] })
class EchoModule {}

describe('gatewayHttpAdapter: requests made with express’s prototypes', () => {
  it('gives every request and response one hidden class (Nest’s own adapter gives each its own)', async () => {
    const [gateway, nest] = await Promise.all([probe('gateway'), probe('nest')]);
    expect(gateway).toEqual({ requestsShareHiddenClass: true, responsesShareHiddenClass: true, fastProperties: true, expressPrototypeOnArrival: true, requests: 8 });
    // The control: what the adapter changes. Should express stop setting prototypes per request, this flips and the adapter can go.
    expect(nest).toMatchObject({ requestsShareHiddenClass: false, responsesShareHiddenClass: false, expressPrototypeOnArrival: false });
  }, 60_000);

  describe('express’s request and response API is whole', () => {
    let app: INestApplication;
    let base: string;
    beforeAll(async () => {
      app = await NestFactory.create(EchoModule, gatewayHttpAdapter(), { logger: false });
      await app.listen(0, '127.0.0.1');
      base = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    });
    afterAll(() => app?.close());

    it('reads the request and writes the answer with express’s helpers', async () => {
      const answer = await fetch(`${base}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
      expect(answer.status).toBe(201);
      expect(answer.headers.get('x-echo')).toBe('yes');
      expect(await answer.json()).toEqual({ host: base.slice('http://'.length), json: 'application/json', body: { a: 1 }, protocol: 'http' });
      const moved = await fetch(`${base}/echo/redirect`, { redirect: 'manual' });
      expect(moved.status).toBe(302);
      expect(moved.headers.get('location')).toBe('/echo/elsewhere');
    });
  });

  it('serves HTTPS with the same classes when the app is given httpsOptions', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-tls-'));
    try {
      await promisify(execFile)('openssl', [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-subj',
        '/CN=localhost',
        '-days',
        '1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ]);
      const cert = readFileSync(join(dir, 'cert.pem'));
      const app = await NestFactory.create(EchoModule, gatewayHttpAdapter(), { logger: false, httpsOptions: { key: readFileSync(join(dir, 'key.pem')), cert } });
      try {
        await app.listen(0, '127.0.0.1');
        const expressRequest = (app.getHttpAdapter().getInstance() as { request: object }).request;
        const onArrival: boolean[] = [];
        app.getHttpServer().prependListener('request', (req: object) => onArrival.push(Object.getPrototypeOf(req) === expressRequest));
        const { port } = app.getHttpServer().address() as { port: number };
        const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
          const req = https.request(
            { host: '127.0.0.1', port, path: '/echo', method: 'POST', ca: cert, servername: 'localhost', headers: { 'content-type': 'application/json' } },
            (res) => {
              let body = '';
              res.on('data', (d) => (body += d));
              res.on('end', () => resolve({ status: res.statusCode!, body }));
            },
          );
          req.on('error', reject);
          req.end('{"b":2}');
        });
        expect(answer.status).toBe(201);
        expect(JSON.parse(answer.body)).toMatchObject({ body: { b: 2 }, protocol: 'https' });
        expect(onArrival).toEqual([true]);
      } finally {
        await app.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('the gateway on it, through the openai client', () => {
    let stack: GatewayStack;
    beforeAll(async () => {
      stack = await startStack();
    });
    afterAll(() => stack?.close());

    it('answers blocking and streaming requests and an unknown route in the envelope', async () => {
      const client = new OpenAI({ baseURL: stack.url, apiKey: 'unused', maxRetries: 0 });
      const response = await client.responses.create({ model: 'm', input: 'Say hello.' });
      expect(response.status).toBe('completed');
      const types: string[] = [];
      for await (const event of await client.responses.create({ model: 'm', input: 'Say hello.', stream: true })) types.push(event.type);
      expect(types[0]).toBe('response.created');
      expect(types.at(-1)).toBe('response.completed');
      const missing = await fetch(`${stack.url}/nowhere`);
      expect(missing.status).toBe(404);
      expect(await missing.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
    });
  });
});
