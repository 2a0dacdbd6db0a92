// The config classes carry class-validator decorators, which need the metadata polyfill.
import 'reflect-metadata';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { TimeoutConfig, UpstreamConfig } from '#config/gateway-config.js';

/**
 * A real HTTP server standing in for a model server in tests: each request is
 * recorded and answered by the current handler, so tests exercise the client's
 * sockets, timers and parsers for real.
 */

export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  raw: string;
  /** The body parsed as JSON, or `undefined` when it was empty or not JSON. */
  body: unknown;
  /** Remote port of the connection, to tell a reused keep-alive socket from a new one. */
  remotePort: number;
}

export type UpstreamHandler = (req: http.IncomingMessage, res: http.ServerResponse, recorded: RecordedRequest) => void | Promise<void>;

export class ScriptedUpstream {
  readonly requests: RecordedRequest[] = [];
  /** Requests whose connection closed before the response was finished (client went away). */
  readonly disconnects: RecordedRequest[] = [];
  handler: UpstreamHandler = (_req, res) => sendJson(res, 200, {});
  /** TCP connections currently open, keep-alive ones included. */
  openConnections = 0;
  private disconnectWaiters: Array<() => void> = [];

  private constructor(
    private readonly server: http.Server,
    readonly port: number,
  ) {}

  static async start(handler?: UpstreamHandler): Promise<ScriptedUpstream> {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const upstream = new ScriptedUpstream(server, (server.address() as AddressInfo).port);
    if (handler) upstream.handler = handler;
    server.on('request', (req, res) => upstream.onRequest(req, res));
    server.on('connection', (socket) => {
      upstream.openConnections++;
      socket.on('close', () => upstream.openConnections--);
    });
    return upstream;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  /** Resolves at the first client disconnect (or at once if one already happened). */
  nextDisconnect(): Promise<void> {
    if (this.disconnects.length) return Promise.resolve();
    return new Promise((resolve) => this.disconnectWaiters.push(resolve));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private onRequest(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        body = undefined;
      }
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        raw,
        body,
        remotePort: req.socket.remotePort ?? 0,
      };
      this.requests.push(recorded);
      // The way a real server notices a client that went away mid-response.
      res.on('close', () => {
        if (res.writableFinished) return;
        this.disconnects.push(recorded);
        for (const wake of this.disconnectWaiters.splice(0)) wake();
      });
      void this.handler(req, res, recorded);
    });
  }
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function startSse(res: http.ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
}

/** Writes each payload as one SSE event (`data: <payload>\n\n`), one write per event, then ends. */
export async function sendSse(res: http.ServerResponse, payloads: Array<string | object>, options: { gapMs?: number; end?: boolean } = {}): Promise<void> {
  startSse(res);
  for (const payload of payloads) {
    if (res.destroyed) return;
    res.write(`data: ${typeof payload === 'string' ? payload : JSON.stringify(payload)}\n\n`);
    if (options.gapMs) await sleep(options.gapMs);
  }
  if (options.end !== false) res.end();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A port nothing listens on: bound, read back, and released again. */
export async function deadPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export function upstreamConfig(baseUrl: string, overrides: Partial<UpstreamConfig> = {}): UpstreamConfig {
  return Object.assign(new UpstreamConfig(), { baseUrl }, overrides);
}

/**
 * Deadlines for tests: generous by default so a loaded CI machine never trips
 * them by accident; a timeout test passes `SHORT_MS` for the one it exercises.
 */
export function testTimeouts(overrides: Partial<TimeoutConfig> = {}): TimeoutConfig {
  return Object.assign(new TimeoutConfig(), { connectMs: 2_000, firstByteMs: 2_000, idleMs: 2_000, totalMs: 5_000 }, overrides);
}

/** The deadline a timeout test exercises: tens of milliseconds. */
export const SHORT_MS = 50;
