import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { serveParent } from './lib/child-endpoint.js';

/**
 * An MCP server for the benchmark, in its own process so that its CPU is not
 * counted as the gateway's: the SDK's `McpServer` over streamable HTTP at
 * `/mcp`, stateful sessions, one SDK server per session (as the SDK's
 * examples do it). Six tools, so that a listing is not trivially small; `add`
 * declares an output schema, so the client validates its structured result.
 */
function buildServer(): McpServer {
  const server = new McpServer({ name: 'switchyard-bench', version: '1.0.0' });
  server.registerTool('echo', { description: 'Echo the text back', inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } }, async ({ text }) => ({
    content: [{ type: 'text', text: `echo: ${text}` }],
  }));
  server.registerTool(
    'add',
    { description: 'Add two numbers', inputSchema: { a: z.number(), b: z.number() }, outputSchema: { sum: z.number() }, annotations: { readOnlyHint: true } },
    async ({ a, b }) => ({ content: [{ type: 'text', text: `${a + b}` }], structuredContent: { sum: a + b } }),
  );
  for (const name of ['lookup', 'search', 'fetch_page', 'summarize']) {
    server.registerTool(name, { description: `The ${name} tool`, inputSchema: { query: z.string(), limit: z.number().int().optional() } }, async ({ query }) => ({
      content: [{ type: 'text', text: `${name}: ${query}` }],
    }));
  }
  return server;
}

async function main(): Promise<void> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  let requests = 0;
  let connections = 0;
  const server = http.createServer((req, res) => {
    requests++;
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    });
  });
  server.on('connection', () => connections++);
  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const sessionId = req.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (existing) return existing.handleRequest(req, res);
    if (sessionId !== undefined || req.method !== 'POST') {
      res.writeHead(sessionId !== undefined ? 404 : 405).end();
      return;
    }
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await buildServer().connect(transport);
    await transport.handleRequest(req, res);
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  serveParent(
    `http://127.0.0.1:${port}/mcp`,
    // HTTP requests, TCP connections and sessions seen: how many exchanges one tool round costs.
    { stats: () => ({ requests, connections, sessions: sessions.size }) },
    async () => {
      await Promise.allSettled([...sessions.values()].map((t) => t.close()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  );
}

main().catch((err: unknown) => {
  console.error('bench MCP server failed to start:', err);
  process.exit(1);
});
