import type OpenAI from 'openai';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { StreamableTestServer } from './support/mcp/mcp-test-servers.js';
import { settleAndReport, activeTimeouts, waitFor } from './support/robustness/leak-probe.js';
import { FlakyToolModule, flakyLedger } from './support/robustness/flaky-tool.module.js';
import { openSseStream } from './support/robustness/raw-http.js';
import { startToolServerProcess } from './support/robustness/tool-server.process.js';
import { NapToolModule, napLedger } from '#core/testing/nap-tool.module.js';

/**
 * Gateway tools that fail (too slow, throwing, their server killed mid-call):
 * the failure becomes that call's error output, the model reads it in the
 * next round, and the response still ends with an answer. A client that
 * disconnects mid-stream cancels the upstream request and the tool calls in
 * flight, which is checked at the simulator and at the tool, not assumed.
 */
const NAP_DEADLINE_MS = 400;

const nap = (name: string) => ({ type: 'nap', name }) as any;
const flaky = (name: string) => ({ type: 'flaky', name }) as any;

describe('tool faults', () => {
  let stack: GatewayStack;
  let client: OpenAI;

  beforeAll(async () => {
    stack = await startStack({
      imports: [NapToolModule, FlakyToolModule],
      config: { tools: { maxRounds: 3, timeoutMsByType: { nap: NAP_DEADLINE_MS } } },
    });
    client = stack.openai;
  });
  afterAll(() => stack.close());
  beforeEach(() => {
    napLedger.reset();
    flakyLedger.length = 0;
  });

  const finalText = (response: any) => response.output.filter((i: any) => i.type === 'message').at(-1)?.content[0]?.text ?? '';

  it('a slow tool hits its deadline: its signal fires, the model reads the timeout, the response completes', async () => {
    // The error names the deadline and the nap was aborted: the deadline, not the 10 s nap, ended the call.
    const response: any = await client.responses.create({
      model: 'm',
      input: 'Nap, please. [[call nap_a {"ms": 10000, "tag": "slow"}]]',
      tools: [nap('nap_a')],
    });
    expect(response.status).toBe('completed');
    const call = response.output.find((i: any) => i.type === 'nap_call');
    expect(call).toMatchObject({ status: 'failed' });
    expect(call.error).toMatch(new RegExp(`did not finish within ${NAP_DEADLINE_MS} ms`));
    expect(napLedger.records[0].aborted).toBe(true);
    // Round 2 carried the error output to the model, which answered from it.
    expect(finalText(response)).toMatch(/^Based on the tool result: .*tool_timeout/);
  });

  it('a tool that throws and one that rejects fail alone; the loop continues to an answer', async () => {
    const response: any = await client.responses.create({
      model: 'm',
      input: '[[call f_throw {"mode": "throw"}]] [[call f_reject {"mode": "reject"}]] [[call nap_ok {"ms": 5, "tag": "fine"}]]',
      tools: [flaky('f_throw'), flaky('f_reject'), nap('nap_ok')],
    });
    expect(response.status).toBe('completed');
    const [thrown, rejected] = response.output.filter((i: any) => i.type === 'flaky_call');
    expect(thrown).toMatchObject({ status: 'failed', error: 'flaky tool threw on purpose' });
    expect(rejected).toMatchObject({ status: 'failed', error: 'flaky tool rejected on purpose' });
    expect(response.output.find((i: any) => i.type === 'nap_call')).toMatchObject({ status: 'completed', output: 'slept 5ms fine' });
    const text = finalText(response);
    expect(text).toContain('threw on purpose');
    expect(text).toContain('rejected on purpose');
    expect(text).toContain('slept 5ms fine');
  });

  it('a tool whose server is killed mid-call fails that call, and the response still completes', async () => {
    const server = await startToolServerProcess();
    try {
      const arrived = server.nextRequest();
      const pending = client.responses.create({
        model: 'm',
        input: `[[call f_remote {"mode": "remote", "url": "${server.url}", "ms": 15000}]]`,
        tools: [flaky('f_remote')],
      });
      await arrived;
      await server.kill();
      const response: any = await pending;
      // A connection error, not the call deadline: the kill was noticed, not waited out.
      expect(response.status).toBe('completed');
      const call = response.output.find((i: any) => i.type === 'flaky_call');
      expect(call.status).toBe('failed');
      expect(call.error).toMatch(/fetch failed|socket|closed|reset/i);
      expect(finalText(response)).toMatch(/^Based on the tool result: .*tool_error/);
    } finally {
      await server.kill();
    }
  });

  it('a client that disconnects mid-stream aborts the upstream request AND the tool call in flight', async () => {
    const baseline = activeTimeouts();
    const abortedBefore = stack.simulator.stats.aborted;
    // The first call completes (and starts running) while the model is still streaming the second
    // call's long arguments, one delta per 100 ms: both are in flight when the client leaves.
    const stream = openSseStream(`${stack.url}/responses`, {
      model: 'm',
      stream: true,
      input: `[[delay token=100]] [[call f_hang {"mode": "hang"}]] [[call f_hang {"mode": "hang", "pad": "${'x'.repeat(400)}"}]]`,
      tools: [flaky('f_hang')],
    });
    await stream.waitForEvent((e) => e.data?.type === 'response.output_item.added' && e.data.item?.type === 'flaky_call', 5000);
    expect(await waitFor(() => flakyLedger.length === 1, 1000)).toBe(true);
    expect(stack.simulator.stats.active).toBe(1);
    stream.abort();

    expect(await waitFor(() => stack.simulator.stats.aborted === abortedBefore + 1 && flakyLedger[0].aborted, 2000)).toBe(true);
    expect(flakyLedger).toHaveLength(1); // the second call never started
    expect(flakyLedger[0].abortReason).toMatch(/cancelled/);
    const leaks = await settleAndReport(stack, baseline);
    expect(leaks.simulatorActive).toBe(0);
    expect(leaks.upstream).toMatchObject({ active: 0, queued: 0 });
    expect(leaks.timeouts).toBeLessThanOrEqual(baseline);
  });

  it('a client that disconnects while only a tool runs (between rounds) aborts that tool', async () => {
    const stream = openSseStream(`${stack.url}/responses`, {
      model: 'm',
      stream: true,
      input: '[[call f_hang {"mode": "hang"}]]',
      tools: [flaky('f_hang')],
    });
    await stream.waitForEvent((e) => e.data?.type === 'response.output_item.added' && e.data.item?.type === 'flaky_call');
    expect(await waitFor(() => flakyLedger.length === 1 && stack.simulator.stats.active === 0, 1000)).toBe(true);
    const requestsBefore = stack.simulator.stats.requests;
    stream.abort();
    expect(await waitFor(() => flakyLedger[0].aborted, 2000)).toBe(true);
    // No second round was started for a client that is gone.
    await new Promise((r) => setTimeout(r, 100));
    expect(stack.simulator.stats.requests).toBe(requestsBefore);
  });
});

/**
 * The same faults with real MCP servers (the SDK's `McpServer` over
 * streamable HTTP): one that goes down between discovery and the call, one
 * too slow for the call deadline, one killed mid-call. Each failure becomes
 * the call's error output and the model still answers. A disconnecting
 * client cancels the MCP call at the server.
 */
describe('MCP server faults', () => {
  /** Long enough that a killed server is noticed first on a busy machine; the timeout case waits it out once. */
  const MCP_DEADLINE_MS = 5000;
  const servers: Record<'down' | 'slow' | 'killed' | 'left', StreamableTestServer> = {} as any;
  let stack: GatewayStack;
  let client: OpenAI;

  beforeAll(async () => {
    for (const name of ['down', 'slow', 'killed', 'left'] as const) servers[name] = await StreamableTestServer.start();
    stack = await startStack({
      config: {
        mcp: { allowedHosts: Object.values(servers).map((s) => `127.0.0.1:${s.port}`), discoveryTimeoutMs: 3_000 },
        tools: { maxRounds: 3, timeoutMsByType: { mcp: MCP_DEADLINE_MS } },
      },
    });
    client = stack.openai;
  });
  afterAll(async () => {
    await stack.close();
    await Promise.all(Object.values(servers).map((s) => s.close().catch(() => undefined)));
  });

  const mcp = (label: keyof typeof servers) => ({ type: 'mcp', server_label: label, server_url: servers[label].url, require_approval: 'never' }) as any;
  const mcpCall = (response: any) => response.output.find((i: any) => i.type === 'mcp_call');
  const finalText = (response: any) => response.output.filter((i: any) => i.type === 'message').at(-1)?.content[0]?.text ?? '';

  it('a server that goes down between discovery and the call: the call fails, the model answers', async () => {
    // The model takes 300 ms to answer; the server dies as soon as the model has been asked.
    stack.simulator.once('request', () => void servers.down.kill());
    const response: any = await client.responses.create({
      model: 'm',
      input: '[[delay ttft=300]] [[call down__echo {"text": "anyone there?"}]]',
      tools: [mcp('down')],
    });
    expect(response.status).toBe('completed');
    expect(response.output[0]).toMatchObject({ type: 'mcp_list_tools', server_label: 'down' });
    expect(response.output[0].error ?? null).toBeNull();
    expect(mcpCall(response)).toMatchObject({ status: 'failed', name: 'echo' });
    // The tenant reads the verdict, not the socket error or the address (the log keeps those).
    expect(mcpCall(response).error).toBe('MCP server "down" is unreachable.');
    expect(servers.down.log.calls.filter((c) => c.name === 'echo')).toHaveLength(0);
    expect(finalText(response)).toMatch(/^Based on the tool result: MCP server "down" is unreachable/);
  });

  it('a server too slow for the call deadline: the call times out, the server sees it cancelled, the model answers', async () => {
    const response: any = await client.responses.create({
      model: 'm',
      input: '[[call slow__hang {"ms": 30000}]]',
      tools: [mcp('slow')],
    });
    expect(response.status).toBe('completed');
    expect(mcpCall(response)).toMatchObject({ status: 'failed' });
    expect(mcpCall(response).error).toMatch(new RegExp(`${MCP_DEADLINE_MS} ms`));
    expect(await waitFor(() => servers.slow.log.cancelled.includes('hang'), 2000)).toBe(true);
    expect(finalText(response)).toMatch(/^Based on the tool result: .*tool_timeout/);
  });

  it('a server killed mid-call: the call fails at once, the model answers', async () => {
    const pending = client.responses.create({
      model: 'm',
      input: '[[call killed__hang {"ms": 30000}]]',
      tools: [mcp('killed')],
    });
    await servers.killed.log.waitForCall('hang');
    await servers.killed.kill();
    const response: any = await pending;
    // The dead connection is noticed, not waited out: the error is the lost connection, not the deadline.
    expect(response.status).toBe('completed');
    expect(mcpCall(response)).toMatchObject({ status: 'failed' });
    expect(mcpCall(response).error).toBe('The connection to MCP server "killed" was lost.');
    expect(finalText(response)).toMatch(/^Based on the tool result: The connection to MCP server "killed"/);
  });

  it('a client that disconnects mid-call cancels the MCP call at the server', async () => {
    const stream = openSseStream(`${stack.url}/responses`, {
      model: 'm',
      stream: true,
      input: '[[call left__hang {"ms": 30000}]]',
      tools: [mcp('left')],
    });
    await servers.left.log.waitForCall('hang');
    stream.abort();
    expect(await waitFor(() => servers.left.log.cancelled.includes('hang'), 2000)).toBe(true);
    expect(servers.left.log.hanging).toBe(0);
  });
});
