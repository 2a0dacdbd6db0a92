import { Global, Module } from '@nestjs/common';
import WebSocket from 'ws';
import { LOG_SINK } from '#observability/logging/log-writer.service.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { StreamableTestServer } from './support/mcp/mcp-test-servers.js';

const lines: any[] = [];

/** The gateway's log lines, captured in this process (the sink is the one seam the writer offers). */
@Global()
@Module({ providers: [{ provide: LOG_SINK, useValue: { isTTY: false, write: (line: string) => lines.push(JSON.parse(line)) } }], exports: [LOG_SINK] })
class CapturedLogModule {}

function metricValue(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

/**
 * The record a request leaves grows with what it did: tool calls counted by
 * type and outcome in the log line and the metrics at 1, 10 and 100 calls
 * per response, while other requests keep being served.
 */
describe('observability as a response grows', () => {
  let stack: GatewayStack;
  let mcp: StreamableTestServer;
  const metrics = async () => (await fetch(`${stack.url.replace(/\/v1$/, '')}/metrics`)).text();

  beforeAll(async () => {
    mcp = await StreamableTestServer.start();
    stack = await startStack({
      imports: [CapturedLogModule],
      config: {
        observability: { requestLog: true },
        mcp: { allowedHosts: [`127.0.0.1:${mcp.port}`] },
        tools: { maxConcurrentGatewayCalls: 16 },
      },
    });
  });
  afterAll(async () => {
    await stack.close();
    await mcp.close();
  });

  it.each([1, 10, 100])(
    '%i gateway calls in one response: counted in its log line and in the metrics',
    async (n) => {
      const before = metricValue(await metrics(), 'switchyard_gateway_tool_calls_total{type="mcp",outcome="completed"}');
      const directives = Array.from({ length: n }, (_, i) => `[[call demo__echo {"text":"t${i}"}]]`).join(' ');
      const big = stack.openai.responses.create({
        model: 'm',
        input: `Echo all. ${directives}`,
        tools: [{ type: 'mcp', server_label: 'demo', server_url: mcp.url, require_approval: 'never' } as any],
      });
      // Another request meanwhile is answered, and logged on its own.
      const small = await stack.openai.responses.create({ model: 'm', input: 'Just say hi.' });
      const response = await big;
      expect(response.output.filter((item) => item.type === 'mcp_call')).toHaveLength(n);

      const line = lines.find((l) => l.response_id === response.id);
      expect(line).toMatchObject({ msg: 'request', status: 200, rounds: 2, tool_calls: { mcp: { completed: n } } });
      expect(lines.find((l) => l.response_id === small.id)).toMatchObject({ status: 200, rounds: 1 });
      expect(lines.find((l) => l.response_id === small.id).tool_calls).toBeUndefined();
      // One line per request, whatever it did: the line does not grow with the calls' arguments.
      expect(JSON.stringify(line)).not.toContain('t0');
      const after = metricValue(await metrics(), 'switchyard_gateway_tool_calls_total{type="mcp",outcome="completed"}');
      expect(after - before).toBe(n);
    },
    60_000,
  );

  it('failed tool calls are counted by outcome', async () => {
    const response = await stack.openai.responses.create({
      model: 'm',
      input: 'Break it. [[call demo__fail {}]] [[call demo__echo {"text":"x"}]]',
      tools: [{ type: 'mcp', server_label: 'demo', server_url: mcp.url, require_approval: 'never' } as any],
    });
    expect(lines.find((l) => l.response_id === response.id).tool_calls).toEqual({ mcp: { failed: 1, completed: 1 } });
    expect(metricValue(await metrics(), 'switchyard_gateway_tool_calls_total{type="mcp",outcome="failed"}')).toBe(1);
  });

  it('an open stream and an open WebSocket are in the gauges while open, and out of them after', async () => {
    // The upstream pauses mid-stream, so the stream is certainly open when scraped.
    const stream = await stack.openai.responses.create({ model: 'm', input: 'Talk. [[tokens 20]] [[fault stall_after=3 ms=1500]]', stream: true });
    const iterator = stream[Symbol.asyncIterator]();
    await iterator.next();
    expect(metricValue(await metrics(), 'switchyard_open_streams')).toBe(1);
    while (!(await iterator.next()).done);
    expect(metricValue(await metrics(), 'switchyard_open_streams')).toBe(0);

    const ws = new WebSocket(`${stack.url.replace(/^http/, 'ws')}/responses`);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    expect(metricValue(await metrics(), 'switchyard_open_websockets')).toBe(1);
    const completed = new Promise<any>((resolve) =>
      ws.on('message', (data) => {
        const frame = JSON.parse(String(data));
        if (frame.type === 'response.completed') resolve(frame.response);
      }),
    );
    ws.send(JSON.stringify({ type: 'response.create', model: 'm', input: 'Over the socket.' }));
    const response = await completed;
    // A WebSocket response has no HTTP request of its own: it writes its own line.
    expect(lines.find((l) => l.response_id === response.id)).toMatchObject({ method: 'WS', route: '/v1/responses', rounds: 1, response_status: 'completed' });
    ws.close();
    for (let i = 0; i < 50 && metricValue(await metrics(), 'switchyard_open_websockets') !== 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(metricValue(await metrics(), 'switchyard_open_websockets')).toBe(0);
  });

  it('a background response writes its own line when it ends, after the line of the request that queued it', async () => {
    const queued = await stack.openai.responses.create({ model: 'm', input: 'In the background.', background: true } as any);
    expect(queued.status).toBe('queued');
    for (let i = 0; i < 100 && !lines.some((l) => l.method === 'BACKGROUND' && l.response_id === queued.id); i++) await new Promise((r) => setTimeout(r, 50));
    const queuing = lines.find((l) => l.method === 'POST' && l.response_id === queued.id);
    expect(queuing).toMatchObject({ status: 200, response_status: 'queued' });
    expect(queuing.rounds).toBeUndefined();
    const run = lines.find((l) => l.method === 'BACKGROUND' && l.response_id === queued.id);
    expect(run).toMatchObject({ route: '/v1/responses', status: 200, rounds: 1, response_status: 'completed', upstream_status: '200' });
    expect(lines.indexOf(run)).toBeGreaterThan(lines.indexOf(queuing));
  });
});
