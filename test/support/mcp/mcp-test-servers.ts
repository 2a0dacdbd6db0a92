import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/**
 * Real MCP servers for tests, built with the SDK's server side and served on
 * 127.0.0.1 port 0: streamable HTTP (stateful sessions), the legacy SSE
 * transport, and a low-level server whose tool list comes in pages. They
 * record what they were asked, so tests can check what reached the server.
 */

export interface ToolCallRecord {
  name: string;
  args: Record<string, unknown>;
}

export class ServerLog {
  readonly calls: ToolCallRecord[] = [];
  /** Tool names whose request was cancelled by the client (signal aborted). */
  readonly cancelled: string[] = [];
  /** Headers of every HTTP request the server received. */
  readonly httpRequests: Array<{ method: string; path: string; headers: http.IncomingHttpHeaders }> = [];
  private waiters: Array<{ name: string; resolve: () => void }> = [];
  /** Calls to `hang` running right now, and the most ever running at once. */
  hanging = 0;
  peakHanging = 0;
  /** Aborted when the server shuts down, so slow tool handlers do not keep timers alive after a test. */
  readonly shutdown = new AbortController();

  record(name: string, args: Record<string, unknown>): void {
    this.calls.push({ name, args });
    this.waiters = this.waiters.filter((w) => (w.name === name ? (w.resolve(), false) : true));
  }

  /** Resolves when a call to `name` arrives (or has already). */
  waitForCall(name: string): Promise<void> {
    if (this.calls.some((c) => c.name === name)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ name, resolve }));
  }
}

function waitForAbort(signal: AbortSignal, ms: number, shutdown: AbortSignal): Promise<'aborted' | 'elapsed' | 'shutdown'> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve('aborted');
    const timer = setTimeout(() => resolve('elapsed'), ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve('aborted');
    });
    shutdown.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve('shutdown');
    });
  });
}

/** The demo tool set: read-only and destructive tools, errors of both kinds, slow and hung calls. */
export function buildDemoServer(log: ServerLog): McpServer {
  const server = new McpServer({ name: 'switchyard-test', version: '1.0.0' });
  server.registerTool('echo', { description: 'Echo the text back', inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } }, async ({ text }) => {
    log.record('echo', { text });
    return { content: [{ type: 'text', text: `echo: ${text}` }] };
  });
  server.registerTool(
    'add',
    {
      description: 'Add two numbers',
      inputSchema: { a: z.number(), b: z.number() },
      outputSchema: { sum: z.number() },
      annotations: { readOnlyHint: true },
    },
    async ({ a, b }) => {
      log.record('add', { a, b });
      return { content: [{ type: 'text', text: `${a + b}` }], structuredContent: { sum: a + b } };
    },
  );
  server.registerTool('delete_item', { description: 'Delete an item by id', inputSchema: { id: z.string() }, annotations: { destructiveHint: true } }, async ({ id }) => {
    log.record('delete_item', { id });
    return {
      content: [
        { type: 'text', text: `deleted ${id}` },
        { type: 'text', text: 'done' },
      ],
    };
  });
  server.registerTool('fail', { description: 'Report a tool-level failure' }, async () => {
    log.record('fail', {});
    return { isError: true, content: [{ type: 'text', text: 'the widget is broken' }] };
  });
  server.registerTool('explode', { description: 'Throw inside the tool' }, async () => {
    log.record('explode', {});
    throw new Error('kaboom');
  });
  server.registerTool('hang', { description: 'Never answer until cancelled', inputSchema: { ms: z.number().optional() } }, async ({ ms }, extra) => {
    log.record('hang', { ms });
    log.peakHanging = Math.max(log.peakHanging, ++log.hanging);
    const outcome = await waitForAbort(extra.signal, ms ?? 60_000, log.shutdown.signal);
    log.hanging--;
    if (outcome === 'aborted') log.cancelled.push('hang');
    return { content: [{ type: 'text', text: `hang ${outcome}` }] };
  });
  return server;
}

type McpServerLike = Pick<McpServer, 'connect' | 'close'>;

abstract class HttpMcpServer {
  readonly log = new ServerLog();
  protected readonly sockets = new Set<Socket>();
  protected readonly http: http.Server;
  port = 0;

  constructor(protected readonly factory: (log: ServerLog) => McpServerLike) {
    this.http = http.createServer((req, res) => {
      this.log.httpRequests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers });
      this.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500).end(String(err));
      });
    });
    this.http.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  protected abstract handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void>;
  protected abstract closeSessions(): Promise<void>;

  async listen(port = 0): Promise<this> {
    await new Promise<void>((resolve) => this.http.listen(port, '127.0.0.1', resolve));
    this.port = (this.http.address() as AddressInfo).port;
    return this;
  }

  abstract get url(): string;

  /** Cuts every connection at once, as a crashed server would, and stops listening. */
  async kill(): Promise<void> {
    this.log.shutdown.abort();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  async close(): Promise<void> {
    this.log.shutdown.abort();
    await this.closeSessions().catch(() => undefined);
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }
}

/** Streamable HTTP at `/mcp`, one SDK server per session, as the SDK's examples do it. */
export class StreamableTestServer extends HttpMcpServer {
  private readonly sessions = new Map<string, StreamableHTTPServerTransport>();

  /** Without the optional standalone GET stream, a client only learns the server restarted on its next request. */
  private standaloneStream = true;
  /**
   * Drop `notifications/cancelled` (receivers MAY ignore it): tools run to
   * the end and their results are sent after the client stopped waiting.
   */
  private ignoreCancellation = false;
  /** Cancellations received and dropped while `ignoreCancellation` is on. */
  ignoredCancellations = 0;

  static start(
    factory: (log: ServerLog) => McpServerLike = buildDemoServer,
    port = 0,
    options: { standaloneStream?: boolean; ignoreCancellation?: boolean } = {},
  ): Promise<StreamableTestServer> {
    const server = new StreamableTestServer(factory);
    server.standaloneStream = options.standaloneStream ?? true;
    server.ignoreCancellation = options.ignoreCancellation ?? false;
    return server.listen(port);
  }

  /** The JSON body of a POST, read here so that it can be inspected before the transport sees it. */
  private async readBody(req: http.IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  protected async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (!req.url?.startsWith('/mcp')) {
      res.writeHead(404).end();
      return;
    }
    if (req.method === 'GET' && !this.standaloneStream) {
      res.writeHead(405).end();
      return;
    }
    let parsed: unknown;
    if (this.ignoreCancellation && req.method === 'POST') {
      parsed = await this.readBody(req);
      if ((parsed as { method?: unknown })?.method === 'notifications/cancelled') {
        this.ignoredCancellations++;
        res.writeHead(202).end();
        return;
      }
    }
    const sessionId = req.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? this.sessions.get(sessionId) : undefined;
    if (existing) return existing.handleRequest(req, res, parsed);
    if (sessionId !== undefined) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void this.sessions.set(id, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
    };
    await this.factory(this.log).connect(transport);
    await transport.handleRequest(req, res, parsed);
  }

  protected async closeSessions(): Promise<void> {
    await Promise.allSettled([...this.sessions.values()].map((t) => t.close()));
    this.sessions.clear();
  }
}

/** The legacy HTTP+SSE transport: `GET /sse` opens the stream, `POST /messages` carries requests. */
export class SseTestServer extends HttpMcpServer {
  private readonly sessions = new Map<string, SSEServerTransport>();

  /** As for `StreamableTestServer`: drop `notifications/cancelled`, so that cancelled tools answer late. */
  private ignoreCancellation = false;
  ignoredCancellations = 0;

  static start(factory: (log: ServerLog) => McpServerLike = buildDemoServer, options: { ignoreCancellation?: boolean } = {}): Promise<SseTestServer> {
    const server = new SseTestServer(factory);
    server.ignoreCancellation = options.ignoreCancellation ?? false;
    return server.listen();
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/sse`;
  }

  protected async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method === 'GET' && url.pathname === '/sse') {
      const transport = new SSEServerTransport('/messages', res);
      this.sessions.set(transport.sessionId, transport);
      transport.onclose = () => this.sessions.delete(transport.sessionId);
      await this.factory(this.log).connect(transport);
      return;
    }
    if (req.method === 'POST' && url.pathname === '/messages') {
      const transport = this.sessions.get(url.searchParams.get('sessionId') ?? '');
      if (!transport) {
        res.writeHead(404).end('unknown session');
        return;
      }
      if (this.ignoreCancellation) {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        if ((parsed as { method?: unknown })?.method === 'notifications/cancelled') {
          this.ignoredCancellations++;
          res.writeHead(202).end();
          return;
        }
        await transport.handlePostMessage(req, res, parsed);
        return;
      }
      await transport.handlePostMessage(req, res);
      return;
    }
    // What an SSE-only server answers to the streamable HTTP initialize POST.
    res.writeHead(405).end();
  }

  protected async closeSessions(): Promise<void> {
    await Promise.allSettled([...this.sessions.values()].map((t) => t.close()));
    this.sessions.clear();
  }
}

/**
 * A low-level SDK `Server` whose `tools/list` answers `pageSize` tools per
 * page with a `nextCursor`, for `total` tools named `tool_000`, `tool_001`...
 * Odd-numbered tools are annotated read-only.
 */
export function buildPagedServer(total: number, pageSize: number) {
  return (log: ServerLog): McpServerLike => {
    const server = new Server({ name: 'paged', version: '1.0.0' }, { capabilities: { tools: {} } });
    const tools = Array.from({ length: total }, (_, i) => ({
      name: `tool_${String(i).padStart(3, '0')}`,
      description: `Tool number ${i}`,
      inputSchema: { type: 'object' as const, properties: {} },
      annotations: { readOnlyHint: i % 2 === 1 },
    }));
    server.setRequestHandler(ListToolsRequestSchema, async (request) => {
      const start = request.params?.cursor ? Number(request.params.cursor) : 0;
      log.record('tools/list', { cursor: request.params?.cursor ?? null });
      const end = start + pageSize;
      return { tools: tools.slice(start, end), ...(end < tools.length ? { nextCursor: String(end) } : {}) };
    });
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      log.record(request.params.name, request.params.arguments ?? {});
      return { content: [{ type: 'text', text: `ran ${request.params.name}` }] };
    });
    return server;
  };
}

/**
 * One tool list shared by every session of a server that declares
 * `tools.listChanged`: a test changes it and announces the change to each
 * session's client (`notifications/tools/list_changed`), as the spec asks of
 * such a server. `tools/list` answers `pageSize` tools per page.
 */
export class SharedToolList {
  readonly names: string[];
  private readonly sessions: Server[] = [];

  constructor(count: number) {
    this.names = Array.from({ length: count }, (_, i) => `tool_${String(i).padStart(5, '0')}`);
  }

  server(pageSize: number): (log: ServerLog) => McpServerLike {
    return (log) => {
      const server = new Server({ name: 'listed', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
      server.setRequestHandler(ListToolsRequestSchema, async (request) => {
        const start = request.params?.cursor ? Number(request.params.cursor) : 0;
        log.record('tools/list', { cursor: request.params?.cursor ?? null });
        const end = start + pageSize;
        const page = this.names.slice(start, end).map((name) => ({ name, description: `Looks ${name} up`, inputSchema: { type: 'object' as const, properties: {} } }));
        return { tools: page, ...(end < this.names.length ? { nextCursor: String(end) } : {}) };
      });
      server.setRequestHandler(CallToolRequestSchema, async (request) => {
        log.record(request.params.name, request.params.arguments ?? {});
        return { content: [{ type: 'text', text: `ran ${request.params.name}` }] };
      });
      this.sessions.push(server);
      return server;
    };
  }

  /** Adds a tool and tells every connected session's client that the list changed. */
  async add(name: string): Promise<void> {
    this.names.push(name);
    await Promise.allSettled(this.sessions.map((session) => session.sendToolListChanged()));
  }
}

/** A plain HTTP server that answers every request with a redirect to `location`. */
export async function startRedirectServer(location: string, status = 307): Promise<{ url: string; hits: () => number; close(): Promise<void> }> {
  let hits = 0;
  const server = http.createServer((_req, res) => {
    hits++;
    res.writeHead(status, { location }).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    hits: () => hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A TCP listener that accepts connections and never answers: a server that hangs on connect. */
export async function startSilentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(() => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
