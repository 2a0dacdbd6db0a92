import { createHash } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { bodyOf, messageAt, requestLine } from './http1-framing.js';

/**
 * A replay of the simulated upstream, for throughput runs where the model's
 * side must cost next to nothing. It is not a model and not a second
 * simulator: the first request with a given method, path and body is
 * forwarded to the real simulated upstream (`origin`), whose answer, as
 * vLLM's wire format gives it, becomes that request's template; the same
 * request again gets the template's bytes with fresh ids. A scaling run
 * sends one request over and over, so all but the first are replays
 * (`stats` says how many).
 *
 * Why: on a two-core host the simulator's `node:http` server and prompt
 * scripting cost about 0.45 of a core for what one gateway worker serves,
 * so "two workers against one" measured the harness's share of the cores as
 * much as the gateway. Raw sockets and a copied template cost a fraction.
 */
export interface ReplayStats {
  /** Requests forwarded to the origin (one per distinct request, more if they raced). */
  recorded: number;
  replayed: number;
}

interface Template {
  /** Status line, headers, the blank line and the body. */
  bytes: Buffer;
  /** Where each id's varying tail sits in `bytes`, grouped by id: an id repeated in an answer stays one id. */
  ids: Array<{ offsets: number[]; length: number }>;
}

/** vLLM's and the simulator's ids: a prefix, `_` or `-`, then hex. Replays rewrite the hex, same length. */
const ID = /\b(?:resp|msg|rs|fc|ctc|mcp|chatcmpl|cmpl)[_-]([0-9a-f]{8,})/g;

export class ReplayUpstream {
  readonly stats: ReplayStats = { recorded: 0, replayed: 0 };
  private readonly templates = new Map<string, Template>();
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private serial = 0;

  constructor(private readonly origin: string) {
    this.server = createServer((socket) => this.serve(socket));
  }

  listen(port = 0, host = '127.0.0.1'): Promise<{ url: string }> {
    return new Promise((resolve) => {
      this.server.listen(port, host, () => {
        const { port: bound } = this.server.address() as AddressInfo;
        resolve({ url: `http://${host}:${bound}/v1` });
      });
    });
  }

  close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private serve(socket: Socket): void {
    this.sockets.add(socket);
    socket.setNoDelay(true);
    let pending: Buffer = Buffer.alloc(0);
    // Answers leave in request order even when a recording is still on its way.
    let queue: Promise<void> = settled;
    let last: { method: string; path: string; body: Buffer; key: string } | undefined;
    socket.on('data', (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      let from = 0;
      for (;;) {
        let message;
        try {
          message = messageAt(pending, from, false);
        } catch (err) {
          socket.end(`HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`);
          return;
        }
        if (!message) break;
        const { method, path } = requestLine(message.head);
        const body = bodyOf(pending, message);
        from = message.end;
        // A connection mostly repeats its last request: equal bytes skip the digest.
        const same = last !== undefined && last.method === method && last.path === path && last.body.equals(body);
        const key = same ? last!.key : routeKey(method, path, body);
        const template = this.templates.get(key);
        if (template && queue === settled) {
          this.stats.replayed++;
          if (!same) last = { method, path, body: Buffer.from(body), key };
          socket.write(this.fill(template));
        } else {
          const headers = message.head;
          const copy = Buffer.from(body);
          const chained: Promise<void> = queue
            .then(async () => socket.write(this.fill(await this.templateFor(key, method, path, headers, copy))))
            .catch((err: unknown) => {
              socket.destroy(err instanceof Error ? err : new Error(String(err)));
            })
            .then(() => {
              // Only the last answer queued frees the connection for direct replays; an earlier one would let a later request overtake those still queued.
              if (queue === chained) queue = settled;
            });
          queue = chained;
        }
      }
      pending = from === pending.length ? Buffer.alloc(0) : pending.subarray(from);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => this.sockets.delete(socket));
  }

  private async templateFor(key: string, method: string, path: string, head: string, body: Buffer): Promise<Template> {
    const known = this.templates.get(key);
    if (known) {
      this.stats.replayed++;
      return known;
    }
    this.stats.recorded++;
    const contentType = /\r\ncontent-type:[ \t]*([^\r]*)/i.exec(head)?.[1];
    const answer = await fetch(new URL(path, this.origin), {
      method,
      headers: contentType ? { 'content-type': contentType } : {},
      body: method === 'GET' || method === 'HEAD' ? undefined : body,
    });
    const answerBody = Buffer.from(await answer.arrayBuffer());
    const template = templateOf(answer.status, answer.statusText, answer.headers, answerBody);
    this.templates.set(key, template);
    return template;
  }

  /** The template's bytes with every id's hex replaced by the next serial number's, as long as the original. */
  private fill(template: Template): Buffer {
    if (template.ids.length === 0) return template.bytes;
    const bytes = Buffer.from(template.bytes);
    for (const id of template.ids) {
      const hex = (this.serial++).toString(16).padStart(id.length, '0').slice(-id.length);
      for (const offset of id.offsets) bytes.write(hex, offset, 'latin1');
    }
    return bytes;
  }
}

const settled: Promise<void> = Promise.resolve();

/** A request's route and a digest of its body: the same question gets the same answer. */
function routeKey(method: string, path: string, body: Buffer): string {
  return `${method} ${path} ${createHash('sha1').update(body).digest('base64')}`;
}

/** Framing headers the replay writes itself; the origin's others (its content type, the simulator's label) are kept. */
const FRAMING = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date']);

function templateOf(status: number, statusText: string, headers: Headers, body: Buffer): Template {
  const kept = [...headers].filter(([name]) => !FRAMING.has(name)).map(([name, value]) => `${name}: ${value}\r\n`);
  const head = Buffer.from(
    `HTTP/1.1 ${status} ${statusText || 'OK'}\r\n${kept.join('')}content-length: ${body.length}\r\nconnection: keep-alive\r\nkeep-alive: timeout=5\r\n\r\n`,
    'latin1',
  );
  const text = body.toString('latin1');
  const byId = new Map<string, number[]>();
  for (const match of text.matchAll(ID)) {
    const hexStart = head.length + match.index + match[0].length - match[1].length;
    const offsets = byId.get(match[0]) ?? [];
    offsets.push(hexStart);
    byId.set(match[0], offsets);
  }
  const ids = [...byId].map(([id, offsets]) => ({ offsets, length: id.length - id.search(/[_-]/) - 1 }));
  return { bytes: Buffer.concat([head, body]), ids };
}
