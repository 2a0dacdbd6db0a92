import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer } from 'node:net';
import OpenAI from 'openai';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { type GatewayProcess, requestLines, startGatewayProcess } from './support/process/gateway-process.js';
import { parseSse } from './support/gateway-harness.js';

/**
 * What a tenant reads of a failure names no internal address and no
 * transport detail; the operator's log keeps both. The real entry point in a
 * child process, so that the log checked is what an operator reads.
 */

/** A port nothing listens on: bound, read, closed. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** An HTTP server that is not an MCP server: every request gets `status` with `contentType`. */
async function plainHttp(status: number, contentType: string): Promise<{ server: Server; port: number }> {
  const server = createHttpServer((req, res) => {
    req.resume();
    res.writeHead(status, { 'content-type': contentType });
    res.end(contentType.includes('html') ? '<html><body>intranet wiki</body></html>' : 'not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port };
}

/** Text a tenant reads must not say where anything is or what a transport said. */
function expectNothingInternal(text: string, ports: number[]): void {
  expect(text).not.toMatch(/127\.0\.0\.1|localhost|http:\/\//);
  for (const port of ports) expect(text).not.toContain(String(port));
  expect(text).not.toMatch(/ECONNREFUSED|ECONNRESET|Non-200|content type|status code|fetch failed|socket/i);
}

/** The stdout lines of a gateway process parsed, JSON ones only. */
function logLines(gateway: GatewayProcess): any[] {
  return gateway.stdout.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
}

async function until<T>(find: () => T | undefined, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`no ${what} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('errors a tenant sees name no internal address; the log keeps the detail', () => {
  let simulator: SimulatedUpstream;
  let simulatorPort: number;
  let notFound: { server: Server; port: number };
  let html: { server: Server; port: number };
  let nothing: number;
  let deadUpstreamPort: number;
  let live: GatewayProcess & { url: string };
  let dead: GatewayProcess & { url: string };

  beforeAll(async () => {
    simulator = new SimulatedUpstream({});
    const listening = await simulator.listen(0, '127.0.0.1');
    simulatorPort = listening.port;
    [notFound, html, nothing, deadUpstreamPort] = await Promise.all([plainHttp(404, 'text/plain'), plainHttp(200, 'text/html'), closedPort(), closedPort()]);
    const common = { STORAGE_DRIVER: 'memory', REQUEST_LOG: 'true', MCP_ALLOWED_HOSTS: [nothing, notFound.port, html.port].map((p) => `127.0.0.1:${p}`).join(',') };
    [live, dead] = await Promise.all([
      startGatewayProcess({ ...common, UPSTREAM_URL: listening.url }),
      startGatewayProcess({ ...common, UPSTREAM_URL: `http://127.0.0.1:${deadUpstreamPort}/v1` }),
    ]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([live?.kill(), dead?.kill()]);
    await simulator.close();
    notFound.server.close();
    html.server.close();
  });

  const client = (gateway: { url: string }) => new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'none', maxRetries: 0, timeout: 30_000 });

  it('an unreachable upstream: a 502 saying so, the address and the socket error in the request log', async () => {
    const refused = await client(dead)
      .responses.create({ model: 'm', input: 'hi' })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    const error = refused as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(502);
    expect(error.message).toContain('The model server is unreachable.');
    expectNothingInternal(JSON.stringify(error.error), [deadUpstreamPort]);

    const line = await until(() => requestLines(dead).find((l) => l.path === '/v1/responses' && l.status === 502), 'request log line');
    expect(line.error_code).toBe('upstream_unavailable');
    expect(line.error_detail).toContain(`http://127.0.0.1:${deadUpstreamPort}/v1/responses`);
    expect(line.error_detail).toContain('ECONNREFUSED');
  });

  it('the same in a streamed response.failed', async () => {
    const res = await fetch(`${dead.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', input: 'hi', stream: true }),
    });
    const text = await res.text();
    // Refused before any event: the gateway answers JSON, or a failed stream; either way the text is the tenant's.
    expectNothingInternal(text, [deadUpstreamPort]);
    expect(text).toContain('The model server is unreachable.');
    const lines = await until(() => {
      const found = requestLines(dead).filter((l) => l.path === '/v1/responses' && l.stream === true);
      return found.length > 0 ? found : undefined;
    }, 'streamed request log line');
    expect(lines.at(-1).error_detail).toContain(`127.0.0.1:${deadUpstreamPort}`);
  });

  it('an upstream that resets mid-stream: response.failed without its address, the address in the log', async () => {
    const res = await fetch(`${live.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', input: '[[fault reset_after=10]] [[tokens 30]]', stream: true }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    const events = parseSse(text);
    const last = events.at(-1)!.data;
    expect(last.type).toBe('response.failed');
    expect(last.response.error).toMatchObject({ code: 'upstream_stream_error', message: 'The model server closed the connection in the middle of the response.' });
    // Some text was relayed first: this is the reset in the middle, not a refusal before it.
    expect(events.some((e) => e.data?.type === 'response.output_text.delta')).toBe(true);
    expectNothingInternal(text, [simulatorPort]);
    const line = await until(() => requestLines(live).find((l) => l.path === '/v1/responses' && l.stream === true), 'request log line');
    // The response failed, not the request: the line says how the upstream call ended, and where.
    expect(line).toMatchObject({
      response_status: 'failed',
      upstream_status: 'bad_response',
      error_detail: expect.stringContaining(`http://127.0.0.1:${simulatorPort}/v1/responses`),
    });
  });

  it('MCP discovery: a closed port is "unreachable", a web server "not an MCP server", nothing of the transport; the log has it', async () => {
    const tools = [
      { type: 'mcp' as const, server_label: 'closed', server_url: `http://127.0.0.1:${nothing}/mcp`, require_approval: 'never' as const },
      { type: 'mcp' as const, server_label: 'web404', server_url: `http://127.0.0.1:${notFound.port}/mcp`, require_approval: 'never' as const },
      { type: 'mcp' as const, server_label: 'wiki', server_url: `http://127.0.0.1:${html.port}/mcp`, require_approval: 'never' as const },
    ];
    const response = await client(live).responses.create({ model: 'm', input: 'hi', tools });
    const listings = response.output.filter((i) => i.type === 'mcp_list_tools') as Array<{ server_label: string; error?: string | null }>;
    const errorOf = (label: string) => listings.find((l) => l.server_label === label)?.error ?? '';
    expect(errorOf('closed')).toBe('MCP server "closed" is unreachable.');
    expect(errorOf('web404')).toBe('MCP server "web404" is not an MCP server: something answered, but not over MCP.');
    // A 404 and an HTML 200 read the same: a tenant cannot tell what answers on which port.
    expect(errorOf('wiki')).toBe(errorOf('web404').replace('web404', 'wiki'));
    // The response echoes the tenant's own declarations (their server_urls); what the gateway says of them is the listings.
    expectNothingInternal(JSON.stringify(listings), [nothing, notFound.port, html.port, simulatorPort]);

    const warnings = await until(() => {
      const found = logLines(live).filter((l) => typeof l.msg === 'string' && l.msg.startsWith('discovery failed'));
      return found.length >= 3 ? found : undefined;
    }, 'three discovery warnings');
    const about = (port: number) => warnings.find((w) => w.msg.includes(`127.0.0.1:${port}`))?.msg ?? '';
    expect(about(nothing)).toMatch(/ECONNREFUSED|fetch failed/);
    expect(about(notFound.port)).toMatch(/404/);
    expect(about(html.port)).toMatch(/content type|text\/html|405|Non-200/i);
  });
});
