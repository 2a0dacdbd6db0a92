import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/**
 * A small MCP server for the demo: one `lookup_order` tool over streamable
 * HTTP, stateless (a fresh server and transport per request, the SDK's
 * stateless pattern). The gateway discovers and calls it itself; the client
 * only declares it.
 */
const ORDERS: Record<string, { status: string; eta: string }> = {
  'ORD-1234': { status: 'shipped', eta: 'Thursday' },
  'ORD-5678': { status: 'processing', eta: 'next week' },
};

function buildServer(): McpServer {
  const server = new McpServer({ name: 'demo-orders', version: '1.0.0' });
  server.registerTool(
    'lookup_order',
    {
      description: 'Look up the status of an order by its id (for example ORD-1234).',
      inputSchema: { order_id: z.string() },
      annotations: { readOnlyHint: true },
    },
    async ({ order_id }) => {
      const order = ORDERS[order_id.toUpperCase()];
      return order
        ? { content: [{ type: 'text', text: `Order ${order_id}: ${order.status}, arriving ${order.eta}.` }] }
        : { content: [{ type: 'text', text: `No order ${order_id}.` }], isError: true };
    },
  );
  return server;
}

export async function startOrdersMcpServer(): Promise<{ url: string; hostPort: string; close(): Promise<void> }> {
  const httpServer = http.createServer((req, res) => {
    if (req.method !== 'POST' || !req.url?.startsWith('/mcp')) {
      res.writeHead(405).end();
      return;
    }
    const server = buildServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const { port } = httpServer.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    hostPort: `127.0.0.1:${port}`,
    close: () => new Promise((resolve) => httpServer.close(() => resolve())),
  };
}
