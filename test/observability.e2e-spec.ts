import { ownerIdOf } from '#config/owner-ids.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { StreamableTestServer } from './support/mcp/mcp-test-servers.js';
import { OtlpReceiver, type ReceivedSpan } from './support/otlp-receiver.js';
import { requestLines, startGatewayProcess, type GatewayProcess } from './support/process/gateway-process.js';

const OWNER_SECRET = 'owner-id-secret-of-this-test-0123456789';

const API_KEY = 'sk-obs-secret-4d1c9e';
const UPSTREAM_KEY = 'sk-upstream-secret-77ab';
const ARG_MARKER = 'ARG-MARKER-7f3a21';
const CLIENT_TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN_ID = '00f067aa0ba902b7';

/** Prometheus text as `name{labels}` → value (labels in the order the client writes them). */
function parseMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    out.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return out;
}

function childrenOf(spans: ReceivedSpan[], parent: ReceivedSpan): ReceivedSpan[] {
  return spans.filter((s) => s.parentSpanId === parent.spanId && s.traceId === parent.traceId);
}

/**
 * The done-when run of issue 16: the real gateway process, a scripted run (a
 * success, a 400, a gateway tool call, an upstream failure), then its
 * metrics scraped, its spans received by an OTLP receiver, and its log lines
 * read back, each checked for what must be there and what must never be.
 */
describe('request logs, metrics and traces of a scripted run', () => {
  let simulator: SimulatedUpstream;
  let mcp: StreamableTestServer;
  let receiver: OtlpReceiver;
  let gateway: GatewayProcess & { url: string; startup: any };
  let client: OpenAI;
  let dir: string;
  let tracesUrl: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-obs-'));
    simulator = new SimulatedUpstream({});
    const { url: upstreamUrl } = await simulator.listen(0, '127.0.0.1');
    mcp = await StreamableTestServer.start();
    receiver = new OtlpReceiver();
    tracesUrl = await receiver.listen();
    gateway = await startGatewayProcess({
      UPSTREAM_URL: upstreamUrl,
      UPSTREAM_API_KEY: UPSTREAM_KEY,
      API_KEYS: API_KEY,
      OWNER_ID_SECRET: OWNER_SECRET,
      STORAGE_DRIVER: 'sqlite',
      SQLITE_PATH: join(dir, 'state.sqlite'),
      MCP_ALLOWED_HOSTS: `127.0.0.1:${mcp.port}`,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: tracesUrl,
    });
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: API_KEY, maxRetries: 0, timeout: 20_000 });

    // 1. a success, carrying the client's trace context
    const ok = await client.responses.create({ model: 'm', input: 'Say hello.' }, { headers: { traceparent: `00-${CLIENT_TRACE_ID}-${CLIENT_SPAN_ID}-01` } });
    ids.ok = ok.id;
    // 2. a 400
    await expect(client.responses.create({ model: 'm', input: 'x', temperature: 9 })).rejects.toMatchObject({ status: 400 });
    // 3. a gateway tool call (MCP), its arguments carrying a marker that must not leak
    const tool = await client.responses.create({
      model: 'm',
      input: `Echo it. [[call demo__echo {"text":"${ARG_MARKER}"}]]`,
      tools: [{ type: 'mcp', server_label: 'demo', server_url: mcp.url, require_approval: 'never' } as any],
    });
    ids.tool = tool.id;
    expect(tool.output.some((item) => item.type === 'mcp_call')).toBe(true);
    // 4. an upstream failure
    await expect(client.responses.create({ model: 'm', input: 'Fail. [[fault status=503]]' })).rejects.toMatchObject({ status: 502 });
  }, 90_000);

  afterAll(async () => {
    await gateway?.kill();
    await Promise.all([simulator?.close(), mcp?.close(), receiver?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('the start-up line says where it listens, the upstream without its key, the storage and the tool types with reasons', () => {
    const s = gateway.startup;
    expect(s.level).toBe('info');
    expect(s.listen).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(s.upstream).toMatchObject({ dialect: 'responses', api_key: 'set' });
    expect(s.storage).toEqual({ driver: 'sqlite', location: join(dir, 'state.sqlite') });
    // file_search runs in the gateway since its module (libs/tools/file-search) is built in.
    expect(Object.keys(s.tools.active)).toEqual(expect.arrayContaining(['function', 'custom', 'namespace', 'mcp', 'file_search']));
    expect(s.tools.inactive.web_search).toMatch(/WEB_SEARCH_PROVIDER/);
    // Its aliases are the same tool: idle for the same reason, not refused.
    expect(s.tools.inactive.web_search_preview).toMatch(/^an alias of web_search: .*WEB_SEARCH_PROVIDER/);
    expect(s.tracing).toBe(tracesUrl);
    expect(JSON.stringify(s)).not.toContain(UPSTREAM_KEY);
    expect(JSON.stringify(s)).not.toContain(API_KEY);
  });

  it('/metrics counts the run by route and status, tool type and outcome, upstream status, rounds and store operations', async () => {
    const unauthenticated = await fetch(`${gateway.url}/metrics`);
    expect(unauthenticated.status).toBe(401);
    const res = await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${API_KEY}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    const m = parseMetrics(text);
    expect(m.get('switchyard_http_requests_total{method="POST",route="/v1/responses",status="200"}')).toBe(2);
    expect(m.get('switchyard_http_requests_total{method="POST",route="/v1/responses",status="400"}')).toBe(1);
    expect(m.get('switchyard_http_requests_total{method="POST",route="/v1/responses",status="502"}')).toBe(1);
    expect(m.get('switchyard_http_request_duration_seconds_count{method="POST",route="/v1/responses",status="200"}')).toBe(2);
    expect(m.get('switchyard_gateway_tool_calls_total{type="mcp",outcome="completed"}')).toBe(1);
    expect(m.get('switchyard_gateway_tool_call_duration_seconds_count{type="mcp",outcome="completed"}')).toBe(1);
    // Rounds: 1 (success) + 2 (tool call, then the answer) + 1 (failed).
    expect(m.get('switchyard_upstream_requests_total{status="200"}')).toBe(3);
    expect(m.get('switchyard_upstream_requests_total{status="503"}')).toBe(1);
    expect(m.get('switchyard_response_rounds_count')).toBe(3);
    expect(m.get('switchyard_response_rounds_sum')).toBe(4);
    // The failed request never produced an event.
    expect(m.get('switchyard_time_to_first_event_seconds_count{stream="false"}')).toBe(2);
    expect(m.get('switchyard_store_operation_duration_seconds_count{operation="saveResponse",driver="sqlite",outcome="ok"}')).toBe(2);
    expect(m.get('switchyard_open_streams')).toBe(0);
    expect(m.get('switchyard_open_websockets')).toBe(0);
    expect(text).not.toContain(ARG_MARKER);
  });

  it('one JSON log line per request with its outcome, and never arguments, outputs or keys', () => {
    const lines = requestLines(gateway).filter((l) => l.route === '/v1/responses');
    expect(lines).toHaveLength(4);
    const owner = `owner:${ownerIdOf(Buffer.from(OWNER_SECRET), API_KEY).slice(0, 16)}`;
    const [ok, bad, tool, failed] = lines;
    expect(ok).toMatchObject({ level: 'info', method: 'POST', status: 200, response_id: ids.ok, model: 'm', rounds: 1, upstream_status: '200', owner, trace_id: CLIENT_TRACE_ID });
    expect(typeof ok.duration_ms).toBe('number');
    expect(bad).toMatchObject({ status: 400, owner, error_code: 'invalid_request', error_param: 'temperature' });
    expect(bad.rounds).toBeUndefined();
    expect(tool).toMatchObject({ status: 200, response_id: ids.tool, rounds: 2, tool_calls: { mcp: { completed: 1 } }, upstream_status: '200' });
    expect(failed).toMatchObject({ level: 'error', status: 502, rounds: 1, upstream_status: '503', error_code: 'upstream_503' });
    const all = gateway.stdout.join('\n');
    expect(all).not.toContain(ARG_MARKER);
    expect(all).not.toContain(`echo: `);
    expect(all).not.toContain(API_KEY);
    expect(all).not.toContain(UPSTREAM_KEY);
    // Not a terminal: no colour codes.
    expect(all).not.toMatch(/\u001b\[/);
  });

  it('spans reach the OTLP receiver as a tree: request, rounds, upstream and tool calls, store operations', async () => {
    await receiver.waitFor((spans) => spans.filter((s) => s.kind === 2 && s.name === 'POST /v1/responses').length >= 4);
    const spans = receiver.spans;
    expect(spans.every((s) => s.serviceName === 'switchyard')).toBe(true);
    const requests = spans.filter((s) => s.kind === 2 && s.name === 'POST /v1/responses');
    const byResponse = (id: string) => requests.find((s) => s.attributes['switchyard.response_id'] === id)!;

    // The client's trace is continued, and handed on to the upstream under the upstream span.
    const ok = byResponse(ids.ok);
    expect(ok.traceId).toBe(CLIENT_TRACE_ID);
    expect(ok.parentSpanId).toBe(CLIENT_SPAN_ID);
    const [okRound] = childrenOf(spans, ok).filter((s) => s.name === 'inference round');
    const [okUpstream] = childrenOf(spans, okRound).filter((s) => s.name === 'upstream inference');
    expect(okUpstream.kind).toBe(3);
    const forwarded = simulator.requests.find((r) => String(r.headers.traceparent ?? '').includes(CLIENT_TRACE_ID));
    expect(forwarded?.headers.traceparent).toBe(`00-${CLIENT_TRACE_ID}-${okUpstream.spanId}-01`);

    // The tool-call request: two rounds, the MCP call under the first, stored at the end.
    const tool = byResponse(ids.tool);
    expect(tool.attributes).toMatchObject({ 'http.response.status_code': 200, 'switchyard.rounds': 2 });
    const rounds = childrenOf(spans, tool).filter((s) => s.name === 'inference round');
    expect(rounds.map((r) => r.attributes['switchyard.round']).sort()).toEqual([1, 2]);
    const first = rounds.find((r) => r.attributes['switchyard.round'] === 1)!;
    const calls = childrenOf(spans, first).filter((s) => s.name === 'tool mcp');
    expect(calls).toHaveLength(1);
    expect(calls[0].attributes).toMatchObject({ 'switchyard.tool.type': 'mcp', 'switchyard.tool.name': 'echo', 'switchyard.tool.outcome': 'completed' });
    for (const round of rounds) expect(childrenOf(spans, round).filter((s) => s.name === 'upstream inference')).toHaveLength(1);
    expect(childrenOf(spans, tool).map((s) => s.name)).toContain('store saveResponse');

    // The failed request's span says so.
    const failed = requests.find((s) => s.attributes['http.response.status_code'] === 502)!;
    expect(failed.status?.code).toBe(2);

    // Nothing the model or client sent as arguments, and no key, in any attribute or body.
    const raw = receiver.rawBodies.join('\n');
    expect(raw).not.toContain(ARG_MARKER);
    expect(raw).not.toContain(API_KEY);
    expect(raw).not.toContain(UPSTREAM_KEY);
  });
});
