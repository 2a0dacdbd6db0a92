import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A JSON body parsed, else its text; null when empty. */
function bodyOf(raw: Buffer): any {
  if (raw.length === 0) return null;
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return raw.toString('utf8');
  }
}

/**
 * A pass-through in front of the gateway that keeps the bodies a client
 * binary sent (Codex, Claude Code): what the client put on the wire is the
 * subject of its tests, and the gateway passes little of it on to the
 * upstream verbatim.
 */
export class RecordingProxy {
  readonly requests: Array<{ method: string; path: string; body: any }> = [];
  private server!: Server;
  url = '';

  static async start(target: string): Promise<RecordingProxy> {
    const proxy = new RecordingProxy();
    const base = new URL(target);
    proxy.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const body = bodyOf(raw);
        proxy.requests.push({ method: req.method ?? '', path: req.url ?? '', body });
        const upstream = request({ host: base.hostname, port: base.port, method: req.method, path: req.url, headers: { ...req.headers, host: base.host } }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        upstream.on('error', () => res.destroy());
        upstream.end(raw);
      });
    });
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    proxy.url = `http://127.0.0.1:${(proxy.server.address() as AddressInfo).port}/v1`;
    return proxy;
  }

  /** Bodies of `POST /responses`, in order. */
  get responses(): any[] {
    return this.requests.filter((r) => r.method === 'POST' && /^(\/v1)?\/responses(\?|$)/.test(r.path)).map((r) => r.body);
  }

  /** Bodies of `POST /v1/messages`, in order. */
  get messages(): any[] {
    return this.requests.filter((r) => r.method === 'POST' && /^\/v1\/messages(\?|$)/.test(r.path)).map((r) => r.body);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
