import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { withRequestCancellation } from './mcp-cancellable.fetch.js';

/** A real HTTP server that answers a JSON-RPC request POST with an SSE stream it never finishes by itself. */
async function streamingServer() {
  const closed: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const message = JSON.parse(body);
      if (message.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { n: 1 } })}\n\n`);
      res.on('close', () => closed.push(String(message.id)));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  return {
    url,
    closed,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const rpc = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('withRequestCancellation (real HTTP server)', () => {
  it('a notifications/cancelled for a request ends that request’s stream quietly and closes its HTTP exchange', async () => {
    const server = await streamingServer();
    const fetchLike = withRequestCancellation((input, init) => fetch(input, init));
    try {
      const first = await fetchLike(server.url, rpc({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: {} }));
      const other = await fetchLike(server.url, rpc({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: {} }));
      const reader = first.body!.getReader();
      expect(new TextDecoder().decode((await reader.read()).value)).toContain('notifications/progress');

      const cancel = await fetchLike(server.url, rpc({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } }));
      expect(cancel.status).toBe(202);
      // The cancelled request's stream ends as if the server had closed it: done, no error.
      expect((await reader.read()).done).toBe(true);
      for (let i = 0; i < 100 && !server.closed.includes('7'); i++) await new Promise((r) => setTimeout(r, 10));
      expect(server.closed).toEqual(['7']);
      // The other request is untouched.
      const otherReader = other.body!.getReader();
      expect(new TextDecoder().decode((await otherReader.read()).value)).toContain('notifications/progress');
      await otherReader.cancel();
    } finally {
      await server.close();
    }
  });

  it('a request cancelled before its answer arrives resolves as an empty 202, not an error', async () => {
    // A server that holds the request without answering.
    const held: http.ServerResponse[] = [];
    const server = http.createServer((req, res) => {
      req.resume();
      held.push(res);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    const fetchLike = withRequestCancellation((input, init) => fetch(input, init));
    try {
      const pending = fetchLike(url, rpc({ jsonrpc: '2.0', id: 'a', method: 'tools/call', params: {} }));
      for (let i = 0; i < 100 && held.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      // The notification itself is held too; only the cancelled request's outcome matters here.
      void fetchLike(url, rpc({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'a' } })).catch(() => undefined);
      const answer = await pending;
      expect(answer.status).toBe(202);
      expect(answer.body).toBeNull();
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
