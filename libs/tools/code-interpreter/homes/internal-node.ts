import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Logger } from '@nestjs/common';
import type { ContainerRecordStore } from '#tool-sdk/index.js';
import type { InternalSettings } from '../config/code-interpreter-settings.js';
import { decodeFrame, encodeFrame, OPERATION_KINDS, type ContainerOperation } from './container-operation.js';
import { INTERNAL_SECRET_HEADER, OPERATION_PATH } from './home-client.js';

/** Runs one operation here, for the internal listener. Throws an `OperationFailedError` to report a failure. */
export type OperationHandler = (op: ContainerOperation, signal: AbortSignal) => Promise<Record<string, unknown>>;

/** Above the largest upload (64 MiB) with room for the JSON part. */
const MAX_FRAME_BYTES = 80 * 1024 * 1024;

/**
 * This process as the others see it: a node id recorded as a container's
 * home, an internal address they forward operations to, and a lease it
 * renews. A process whose lease lapsed (killed, hung, cut off) is taken for
 * gone and its containers are re-homed by whoever needs them next.
 *
 * With the memory driver there is nobody to reach this process: no listener
 * is opened.
 */
export class InternalNode {
  readonly id = `node_${randomBytes(12).toString('hex')}`;
  readonly secret: string;
  url = '';
  private server: Server | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private readonly logger = new Logger('CodeInterpreter');

  constructor(
    private readonly settings: InternalSettings,
    private readonly records: ContainerRecordStore,
    private readonly shared: boolean,
  ) {
    this.secret = settings.secret ?? randomBytes(32).toString('base64url');
  }

  async start(handler: OperationHandler): Promise<void> {
    if (this.shared) {
      const server = createServer((req, res) => void this.serve(req, res, handler));
      await new Promise<void>((resolve, reject) => {
        server.once('error', (err) => reject(new Error(`codeInterpreter.internal: cannot listen on ${this.settings.host}:${this.settings.port}: ${err.message}`, { cause: err })));
        server.listen(this.settings.port, this.settings.host, () => resolve());
      });
      this.server = server;
      const { port } = server.address() as AddressInfo;
      this.url = this.settings.url ?? `http://${this.settings.host.includes(':') ? `[${this.settings.host}]` : this.settings.host}:${port}`;
    }
    await this.renew();
    // Three renewals per lease: one slow write does not make this process look gone.
    this.heartbeat = setInterval(
      () => void this.renew().catch((err) => this.logger.warn(`lease renewal failed: ${(err as Error).message}`)),
      Math.floor(this.settings.leaseMs / 3),
    );
    this.heartbeat.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.heartbeat);
    await this.records.leave(this.id).catch(() => undefined);
    const server = this.server;
    this.server = undefined;
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  /** Whether the node is there to answer: its lease holds. */
  async alive(nodeId: string): Promise<{ url: string } | undefined> {
    if (nodeId === this.id) return { url: this.url };
    const node = await this.records.node(nodeId);
    return node && node.leaseExpiresAt > Date.now() ? { url: node.url } : undefined;
  }

  private renew(): Promise<void> {
    return this.records.heartbeat({ id: this.id, url: this.url, leaseExpiresAt: Date.now() + this.settings.leaseMs });
  }

  private authorized(req: IncomingMessage): boolean {
    const given = Buffer.from(String(req.headers[INTERNAL_SECRET_HEADER] ?? ''));
    const expected = Buffer.from(this.secret);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private async serve(req: IncomingMessage, res: ServerResponse, handler: OperationHandler): Promise<void> {
    if (req.method !== 'POST' || req.url !== OPERATION_PATH) return void res.writeHead(404).end();
    if (!this.authorized(req)) return void res.writeHead(401).end();
    // The caller hanging up (its client went away) cancels the operation here.
    const ac = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) ac.abort();
    });
    let answer: Record<string, unknown>;
    try {
      const op = decodeFrame<ContainerOperation>(await readBody(req));
      if (!OPERATION_KINDS.has(op.kind)) throw Object.assign(new Error(`unknown operation ${op.kind}`), { failure: 'invalid' });
      const result = await handler(op, ac.signal);
      const { data, ...rest } = result as { data?: Uint8Array };
      answer = { ok: true, result: rest, ...(data !== undefined ? { data } : {}) };
    } catch (err) {
      const failure = (err as { failure?: string }).failure;
      if (!failure) this.logger.error(`forwarded container operation failed: ${(err as Error).message}`);
      answer = { ok: false, failure: failure ?? 'invalid', message: failure ? (err as Error).message : 'the operation failed on the process holding the container' };
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(encodeFrame(answer));
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_FRAME_BYTES) {
        req.destroy();
        reject(Object.assign(new Error('operation too large'), { failure: 'invalid' }));
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
