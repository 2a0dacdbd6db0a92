import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { StreamableTestServer, buildDemoServer, type ServerLog } from '../../../test/support/mcp/mcp-test-servers.js';
import { guardedLookup } from './mcp-guarded.fetch.js';
import { HostPolicy, RefusedDestinationError } from './mcp-host.policy.js';
import { McpHttpTransport, type McpHttpTransportOptions } from './mcp-http.transport.js';

const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
afterAll(() => {
  agents.http.destroy();
  agents.https.destroy();
});

const transportTo = (url: string, extra: Partial<McpHttpTransportOptions> = {}) => new McpHttpTransport({ url: new URL(url), headers: {}, agents, ...extra });

async function connected(url: string, extra: Partial<McpHttpTransportOptions> = {}) {
  const transport = transportTo(url, extra);
  const errors: Error[] = [];
  const client = new Client({ name: 'spec', version: '1.0.0' });
  await client.connect(transport);
  // After connect: the client installs its own handlers on the transport.
  const onerror = transport.onerror;
  transport.onerror = (e) => {
    errors.push(e);
    onerror?.(e);
  };
  return { client, transport, errors };
}

const until = async (done: () => boolean) => {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
};

async function listen(handler: http.RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * A started transport to `server` with what it reported collected, closed
 * (and the server with it) however `body` ends.
 */
async function withTransport(
  server: { url: string; close(): Promise<void> },
  extra: Partial<McpHttpTransportOptions>,
  body: (seen: { transport: McpHttpTransport; messages: JSONRPCMessage[]; errors: Error[] }) => Promise<void>,
): Promise<void> {
  const transport = transportTo(server.url, extra);
  const messages: JSONRPCMessage[] = [];
  const errors: Error[] = [];
  transport.onmessage = (m) => void messages.push(m);
  transport.onerror = (e) => void errors.push(e);
  try {
    await transport.start();
    await body({ transport, messages, errors });
  } finally {
    await transport.close();
    await server.close();
  }
}

/** A real HTTP server that answers a JSON-RPC request POST with an SSE stream it never finishes by itself. */
async function streamingServer() {
  const closed: string[] = [];
  const server = await listen((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const message = JSON.parse(body);
      if (message.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { n: message.id } })}\n\n`);
      res.on('close', () => closed.push(String(message.id)));
    });
  });
  return { ...server, closed };
}

describe('McpHttpTransport against the SDK server (real sockets)', () => {
  let server: StreamableTestServer;
  let mcp: McpServer | undefined;
  beforeAll(async () => {
    server = await StreamableTestServer.start((log: ServerLog) => (mcp = buildDemoServer(log)));
  });
  afterAll(() => server.close());

  it('initialises a session, then lists and calls with the session and protocol-version headers', async () => {
    const { client, transport, errors } = await connected(server.url, { headers: { 'X-Key': 'k1' } });
    try {
      expect(transport.sessionId).toMatch(/[0-9a-f-]{36}/);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('add');
      const result = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
      expect(result.structuredContent).toEqual({ sum: 5 });
      const posts = server.log.httpRequests.filter((r) => r.method === 'POST');
      const last = posts.at(-1)!;
      expect(last.headers['mcp-session-id']).toBe(transport.sessionId);
      expect(last.headers['mcp-protocol-version']).toBe(transport.protocolVersion);
      expect(last.headers['x-key']).toBe('k1');
      expect(errors).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it('receives server-initiated notifications on the GET stream', async () => {
    const { client, errors } = await connected(server.url);
    try {
      let changed = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
      await until(() => server.log.httpRequests.some((r) => r.method === 'GET'));
      // Give the GET stream its headers before the server sends on it.
      await new Promise((r) => setTimeout(r, 50));
      mcp!.registerTool('late', { description: 'added later' }, async () => ({ content: [] }));
      await until(() => changed > 0);
      expect(changed).toBe(1);
      expect(errors).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it('ends the session with DELETE carrying its id, and forgets it', async () => {
    const { client, transport } = await connected(server.url);
    const session = transport.sessionId;
    await transport.terminateSession();
    expect(transport.sessionId).toBeUndefined();
    expect(server.log.httpRequests.at(-1)).toMatchObject({ method: 'DELETE', headers: { 'mcp-session-id': session } });
    await client.close();
  });

  it('a cancelled tool call rejects for the caller and leaves the connection working', async () => {
    const { client, errors } = await connected(server.url);
    try {
      const abort = new AbortController();
      const call = client.callTool({ name: 'hang', arguments: { ms: 30_000 } }, undefined, { signal: abort.signal });
      await server.log.waitForCall('hang');
      abort.abort(new Error('caller left'));
      await expect(call).rejects.toThrow();
      await until(() => server.log.cancelled.includes('hang'));
      expect(server.log.cancelled).toContain('hang');
      expect((await client.callTool({ name: 'add', arguments: { a: 1, b: 1 } })).structuredContent).toEqual({ sum: 2 });
      expect(errors).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

describe('McpHttpTransport.request: a call whose answer the caller reads itself (the SDK server, real sockets)', () => {
  let server: StreamableTestServer;
  beforeAll(async () => {
    server = await StreamableTestServer.start();
  });
  afterAll(() => server.close());

  it('resolves with the answer, under an id of its own, and never hands it to the SDK', async () => {
    const { client, transport, errors } = await connected(server.url);
    const seen: JSONRPCMessage[] = [];
    const onmessage = transport.onmessage;
    transport.onmessage = (m: JSONRPCMessage) => {
      seen.push(m);
      onmessage?.(m);
    };
    try {
      const answers = await Promise.all([
        transport.request('tools/call', { name: 'add', arguments: { a: 2, b: 3 } }, new AbortController().signal),
        transport.request('tools/call', { name: 'echo', arguments: { text: 'x' } }, new AbortController().signal),
      ]);
      expect(answers[0]).toMatchObject({ result: { structuredContent: { sum: 5 } } });
      expect(answers[1]).toMatchObject({ result: { content: [{ type: 'text', text: 'echo: x' }] } });
      expect(answers.map((a) => a.id)).toEqual([expect.stringMatching(/^switchyard-\d+$/), expect.stringMatching(/^switchyard-\d+$/)]);
      expect(answers[0].id).not.toBe(answers[1].id);
      // The SDK's own requests on the same session go on as before, numbered by the SDK.
      expect((await client.callTool({ name: 'add', arguments: { a: 1, b: 1 } })).structuredContent).toEqual({ sum: 2 });
      expect(seen.filter((m) => 'id' in m && String(m.id).startsWith('switchyard-'))).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it('answers a JSON-RPC error as the server sent it', async () => {
    const { client, transport } = await connected(server.url);
    try {
      const answer = await transport.request('tools/call', { name: 'no_such_tool', arguments: {} }, new AbortController().signal);
      // The SDK's server reports an unknown tool either as an error answer or as an isError result, by version.
      const text = JSON.stringify(answer.error ?? answer.result);
      expect(text).toContain('no_such_tool');
    } finally {
      await client.close();
    }
  });

  it('an aborted request rejects with the reason, ends its exchange and tells the server; the session goes on', async () => {
    const { client, transport, errors } = await connected(server.url);
    try {
      const abort = new AbortController();
      const call = transport.request('tools/call', { name: 'hang', arguments: { ms: 30_000 } }, abort.signal);
      await server.log.waitForCall('hang');
      const reason = new Error('caller left');
      abort.abort(reason);
      await expect(call).rejects.toBe(reason);
      await until(() => server.log.cancelled.includes('hang'));
      expect(server.log.cancelled).toContain('hang');
      await expect(transport.request('tools/call', { name: 'add', arguments: { a: 1, b: 2 } }, new AbortController().signal)).resolves.toMatchObject({
        result: { structuredContent: { sum: 3 } },
      });
      await expect(transport.request('tools/call', { name: 'add', arguments: { a: 1, b: 2 } }, AbortSignal.abort(reason))).rejects.toBe(reason);
      expect(errors).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it('a request still waiting when the transport closes fails as the SDK fails its own (connection closed)', async () => {
    const { client, transport } = await connected(server.url);
    const call = transport.request('tools/call', { name: 'hang', arguments: { ms: 30_000 } }, new AbortController().signal);
    await server.log.waitForCall('hang');
    await client.close();
    await expect(call).rejects.toMatchObject({ code: -32000, message: expect.stringMatching(/Connection closed/) });
    await expect(transport.request('tools/call', { name: 'add', arguments: {} }, new AbortController().signal)).rejects.toMatchObject({ code: -32000 });
  });
});

describe('McpHttpTransport, protocol edges (real HTTP servers)', () => {
  it('reads answers sent as JSON instead of SSE', async () => {
    const jsonServer = await listen((req, res) => {
      const mcp = new McpServer({ name: 'json', version: '1.0.0' });
      mcp.registerTool('twice', { inputSchema: { n: z.number() } }, async ({ n }) => ({ content: [{ type: 'text', text: String(2 * n) }] }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => void transport.close());
      void mcp.connect(transport).then(() => transport.handleRequest(req, res));
    });
    const { client, errors } = await connected(jsonServer.url);
    try {
      expect(await client.callTool({ name: 'twice', arguments: { n: 21 } })).toMatchObject({ content: [{ type: 'text', text: '42' }] });
      expect(errors).toEqual([]);
    } finally {
      await client.close();
      await jsonServer.close();
    }
  });

  it('a notifications/cancelled ends that request’s stream quietly and closes its HTTP exchange; others go on', async () => {
    const server = await streamingServer();
    await withTransport(server, {}, async ({ transport, messages, errors }) => {
      await transport.send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: {} });
      await transport.send({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: {} });
      await until(() => messages.length === 2);
      await transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } });
      await until(() => server.closed.includes('7'));
      expect(server.closed).toEqual(['7']);
      expect(errors).toEqual([]);
    });
  });

  it('a request cancelled before its answer arrives ends its send quietly, not as an error', async () => {
    const held: http.ServerResponse[] = [];
    const server = await listen((req, res) => {
      req.resume();
      held.push(res);
    });
    await withTransport(server, {}, async ({ transport, errors }) => {
      const pending = transport.send({ jsonrpc: '2.0', id: 'a', method: 'tools/call', params: {} });
      await until(() => held.length === 1);
      // The notification itself is held too; only the cancelled request's outcome matters here.
      void transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'a' } }).catch(() => undefined);
      await expect(pending).resolves.toBeUndefined();
      expect(errors).toEqual([]);
    });
  });

  it('an HTTP error answer fails the send with the status, as the SDK transport reports it', async () => {
    const server = await listen((req, res) => {
      req.resume();
      res.writeHead(404, { 'content-type': 'text/plain' }).end('no MCP here');
    });
    await withTransport(server, {}, async ({ transport }) => {
      const sent = transport.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
      await expect(sent).rejects.toBeInstanceOf(StreamableHTTPError);
      await expect(sent).rejects.toMatchObject({ code: 404, message: expect.stringContaining('no MCP here') });
    });
  });

  it('an SSE event larger than the limit fails its stream instead of growing without bound', async () => {
    const server = await listen((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: {"jsonrpc":"2.0","id":1,"result":{"text":"${'x'.repeat(4096)}`);
        res.write('x'.repeat(4096));
      });
    });
    await withTransport(server, { maxMessageChars: 2048 }, async ({ transport, messages, errors }) => {
      await transport.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: {} });
      await until(() => errors.length > 0);
      expect(errors[0].message).toMatch(/exceeds 2048 characters/);
      expect(messages).toEqual([]);
    });
  });
});

describe('McpHttpTransport with the guarded lookup', () => {
  let server: StreamableTestServer;
  beforeAll(async () => {
    server = await StreamableTestServer.start();
  });
  afterAll(() => server.close());

  /** A resolver with a fixed zone: `*.example.test` names point at loopback, where the test server is. */
  const zone = async (hostname: string) => {
    if (hostname.endsWith('.example.test')) return [{ address: '127.0.0.1', family: 4 }];
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  };

  it('refuses a name that resolves to a non-public address, before anything reaches it', async () => {
    const policy = new HostPolicy(['*.example.test']);
    const refusals: Error[] = [];
    const url = new URL(`http://rebind.example.test:${server.port}/mcp`);
    const onRefusal = (e: RefusedDestinationError) => void refusals.push(e);
    const transport = new McpHttpTransport({ url, headers: {}, agents, guard: { lookup: guardedLookup(policy, policy.vet(url), zone, onRefusal), policy, onRefusal } });
    const before = server.log.httpRequests.length;
    await transport.start();
    await expect(transport.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} })).rejects.toThrow('resolves to a loopback, private or link-local address');
    expect(refusals).toHaveLength(1);
    expect(server.log.httpRequests).toHaveLength(before);
    await transport.close();
  });

  it('refuses a redirect towards a destination the policy refuses', async () => {
    const redirecting = await listen((req, res) => {
      req.resume();
      res.writeHead(307, { location: 'http://169.254.169.254/latest/meta-data' }).end();
    });
    const url = new URL(redirecting.url);
    const policy = new HostPolicy([url.host]);
    const refusals: Error[] = [];
    const onRefusal = (e: RefusedDestinationError) => void refusals.push(e);
    const transport = new McpHttpTransport({ url, headers: {}, agents, guard: { lookup: guardedLookup(policy, policy.vet(url), zone, onRefusal), policy, onRefusal } });
    try {
      await transport.start();
      await expect(transport.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} })).rejects.toBeInstanceOf(RefusedDestinationError);
      expect(refusals).toHaveLength(1);
    } finally {
      await transport.close();
      await redirecting.close();
    }
  });
});
