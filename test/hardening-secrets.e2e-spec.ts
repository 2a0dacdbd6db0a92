import net from 'node:net';
import { STATE_STORE, type StateStore } from '#storage/index.js';
import { parseSse, startStack, type GatewayStack } from './support/gateway-harness.js';
import { get } from './support/hardening/growth.js';
import { FrameSocket } from './support/hardening/socket-frames.js';
import { StreamableTestServer } from './support/mcp/mcp-test-servers.js';
import { rawPost } from './support/robustness/raw-http.js';

const UPSTREAM_PASSWORD = 'hunter2-upstream-pass';
const UPSTREAM_QUERY_KEY = 'qk-upstream-9f8e7d';
const MCP_TOKEN = 'tok-mcp-query-5a4b3c';
const MCP_BEARER = 'sk-mcp-bearer-7777';

/** A port that accepts connections and never answers: the upstream goes silent. */
async function silentPort(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

/** A port nothing listens on (bound, then released). */
async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

const expectClean = (text: string, ...secrets: string[]) => {
  for (const secret of secrets) expect(text).not.toContain(secret);
};

describe('upstream credentials never leave the gateway (finding 5)', () => {
  it('502 bodies and /ready hide userinfo and query values of UPSTREAM_URL', async () => {
    const port = await deadPort();
    const stack = await startStack({ upstreamUrl: `http://switchyard:${UPSTREAM_PASSWORD}@127.0.0.1:${port}/v1?key=${UPSTREAM_QUERY_KEY}` });
    try {
      const res = await rawPost(`${stack.url}/responses`, JSON.stringify({ model: 'm', input: 'hi' }));
      expect(res.status).toBe(502);
      // The caller reads that the model server is unreachable, not where it is (the log's error_detail has that).
      expect(JSON.parse(res.text).error.message).toBe('The model server is unreachable.');
      expect(res.text).not.toContain(`127.0.0.1:${port}`);
      expectClean(res.text, UPSTREAM_PASSWORD, UPSTREAM_QUERY_KEY);
      const ready = await get(`${stack.url.replace(/\/v1$/, '')}/ready`);
      expect(ready.status).toBe(200);
      expect(JSON.parse(ready.text).upstream_error.message).toBe('The model server is unreachable.');
      expect(ready.text).not.toContain(`127.0.0.1:${port}`);
      expectClean(ready.text, UPSTREAM_PASSWORD, UPSTREAM_QUERY_KEY);
      const models = await get(`${stack.url}/models`);
      expect(models.status).toBeGreaterThanOrEqual(500);
      expectClean(models.text, UPSTREAM_PASSWORD, UPSTREAM_QUERY_KEY);
    } finally {
      await stack.close();
    }
  });

  it('504 bodies and response.failed events hide them too', async () => {
    const silent = await silentPort();
    const stack = await startStack({
      upstreamUrl: `http://switchyard:${UPSTREAM_PASSWORD}@127.0.0.1:${silent.port}/v1?key=${UPSTREAM_QUERY_KEY}`,
      config: { timeouts: { firstByteMs: 400 }, server: { keepAliveMs: 100 } },
    });
    try {
      const blocking = await rawPost(`${stack.url}/responses`, JSON.stringify({ model: 'm', input: 'hi' }));
      expect(blocking.status).toBe(504);
      expectClean(blocking.text, UPSTREAM_PASSWORD, UPSTREAM_QUERY_KEY);
      // The stream starts (keep-alive) before the upstream times out, so the failure is an event.
      const streamed = await rawPost(`${stack.url}/responses`, JSON.stringify({ model: 'm', input: 'hi', stream: true }));
      const failed = parseSse(streamed.text).find((e) => e.data.type === 'response.failed');
      expect(failed?.data.response.error.message).toMatch(/^The model server sent no response headers within \d+ ms/);
      expect(streamed.text).not.toContain(`127.0.0.1:${silent.port}`);
      expectClean(streamed.text, UPSTREAM_PASSWORD, UPSTREAM_QUERY_KEY);
    } finally {
      await stack.close();
      await silent.close();
    }
  });
});

describe('MCP server_url secrets and approval replays (findings 6 and 7, real MCP server)', () => {
  let server: StreamableTestServer;
  let stack: GatewayStack;
  let origin: string;
  beforeAll(async () => {
    server = await StreamableTestServer.start();
    stack = await startStack({ config: { mcp: { allowedHosts: [`127.0.0.1:${server.port}`] } } });
    origin = stack.url.replace(/\/v1$/, '');
  });
  afterAll(async () => {
    await stack.close();
    await server.close();
  });

  const tokenTool = () => ({ type: 'mcp', server_label: 'demo', server_url: `${server.url}?token=${MCP_TOKEN}`, require_approval: 'never' });

  it('a token in the server_url query reaches the server but is never echoed, streamed or stored', async () => {
    const body = { model: 'm', input: 'Echo. [[call demo__echo {"text":"q"}]]', tools: [tokenTool()] };
    const blocking = await rawPost(`${stack.url}/responses`, JSON.stringify(body));
    expect(blocking.status).toBe(200);
    const response = JSON.parse(blocking.text);
    expect(response.output.map((i: any) => i.type)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
    expect(response.tools[0].server_url).toBe(`${server.url}?token=***`);
    expectClean(blocking.text, MCP_TOKEN);
    // The server saw the query it was given.
    expect(server.log.httpRequests.some((r) => r.path.includes(`token=${MCP_TOKEN}`))).toBe(true);

    expectClean((await get(`${stack.url}/responses/${response.id}`)).text, MCP_TOKEN);
    const stored = await stack.app.get<StateStore>(STATE_STORE).getResponse(response.id, null);
    expectClean(JSON.stringify(stored), MCP_TOKEN);

    const streamed = await rawPost(`${stack.url}/responses`, JSON.stringify({ ...body, stream: true }));
    expect(parseSse(streamed.text).at(-1)?.data.type).toBe('response.completed');
    expectClean(streamed.text, MCP_TOKEN);

    const socket = await FrameSocket.open(origin);
    socket.send({ type: 'response.create', ...body });
    const frames = await socket.untilTerminal();
    expect(frames.at(-1).type).toBe('response.completed');
    expectClean(JSON.stringify(frames), MCP_TOKEN);
    await socket.close();
  });

  it('an MCP error message naming the URL does not carry the query token', async () => {
    const res = await rawPost(
      `${stack.url}/responses`,
      JSON.stringify({
        model: 'm',
        input: 'hi',
        tools: [{ type: 'mcp', server_label: 'gone', server_url: `http://127.0.0.1:${await deadPort()}/mcp?token=${MCP_TOKEN}`, require_approval: 'never' }],
      }),
    );
    expect(res.status).toBeLessThan(500);
    expectClean(res.text, MCP_TOKEN);
  });

  it('approving via previous_response_id without tools is refused, not run without the credentials', async () => {
    const tool = { type: 'mcp', server_label: 'demo', server_url: server.url, authorization: MCP_BEARER, require_approval: 'always' };
    const first = JSON.parse(
      (await rawPost(`${stack.url}/responses`, JSON.stringify({ model: 'm', input: 'Delete it. [[call demo__delete_item {"id":"x1"}]]', tools: [tool] }))).text,
    );
    const approval = first.output.find((i: any) => i.type === 'mcp_approval_request');
    expect(approval).toMatchObject({ name: 'delete_item', server_label: 'demo' });
    const approve = { type: 'mcp_approval_response', approval_request_id: approval.id, approve: true };

    const callsBefore = server.log.calls.length;
    const requestsBefore = server.log.httpRequests.length;
    const replay = await rawPost(`${stack.url}/responses`, JSON.stringify({ model: 'm', previous_response_id: first.id, input: [approve] }));
    expect(replay.status).toBe(400);
    expect(JSON.parse(replay.text).error).toMatchObject({ param: 'tools', code: 'mcp_credentials_required' });
    expect(server.log.calls.length).toBe(callsBefore);
    expect(server.log.httpRequests.length).toBe(requestsBefore);

    // With the declaration sent again the approved call runs, under the approved identity.
    const approved = await rawPost(`${stack.url}/responses`, JSON.stringify({ model: 'm', previous_response_id: first.id, input: [approve], tools: [tool] }));
    expect(approved.status).toBe(200);
    const output = JSON.parse(approved.text).output;
    expect(output.find((i: any) => i.type === 'mcp_call')).toMatchObject({ name: 'delete_item', status: 'completed' });
    expect(server.log.calls.slice(callsBefore)).toEqual([{ name: 'delete_item', args: { id: 'x1' } }]);
    const callRequests = server.log.httpRequests.slice(requestsBefore).filter((r) => r.method === 'POST');
    expect(callRequests.length).toBeGreaterThan(0);
    for (const r of callRequests) expect(r.headers.authorization).toBe(`Bearer ${MCP_BEARER}`);
  });
});
