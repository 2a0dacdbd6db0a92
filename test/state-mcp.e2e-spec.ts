import type OpenAI from 'openai';
import { STATE_STORE, type StateStore } from '#storage/index.js';
import { StreamableTestServer } from './support/mcp/mcp-test-servers.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';

const SECRET = 'sk-state-mcp-secret-4242';

describe('stored state with MCP tools (real MCP server)', () => {
  let server: StreamableTestServer;
  let stack: GatewayStack;
  let client: OpenAI;

  beforeAll(async () => {
    server = await StreamableTestServer.start();
    stack = await startStack({ config: { mcp: { allowedHosts: [`127.0.0.1:${server.port}`] } } });
    client = stack.openai;
  });
  afterAll(async () => {
    await stack.close();
    await server.close();
  });

  it('never stores MCP credentials, and a continuation that omits their tools is refused rather than run without them', async () => {
    const tool = { type: 'mcp', server_label: 'demo', server_url: server.url, require_approval: 'never', authorization: SECRET, headers: { 'X-Trace': SECRET } } as any;
    const first = await client.responses.create({ model: 'm', input: 'Echo one. [[call demo__echo {"text":"one"}]]', tools: [tool] });
    expect(first.output.map((i) => i.type)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);

    const stored = await stack.app.get<StateStore>(STATE_STORE).getResponse(first.id, null);
    expect(JSON.stringify(stored)).not.toContain(SECRET);
    expect(stored!.tools).toEqual([{ type: 'mcp', server_label: 'demo', server_url: server.url, require_approval: 'never', credentials_withheld: true }]);
    expect(first.tools).toEqual([{ type: 'mcp', server_label: 'demo', server_url: server.url, require_approval: 'never' }]);

    // Without the credentials the call would reach the server as someone else.
    const requestsBefore = server.log.httpRequests.length;
    const refused = await client.responses.create({ model: 'm', previous_response_id: first.id, input: 'Echo two. [[call demo__echo {"text":"two"}]]' }).catch((e) => e);
    expect(refused).toMatchObject({ status: 400, param: 'tools', code: 'mcp_credentials_required' });
    expect(server.log.httpRequests.length).toBe(requestsBefore);

    // Sending the tools again continues the conversation, under the declared identity.
    const second = await client.responses.create({ model: 'm', previous_response_id: first.id, input: 'Echo two. [[call demo__echo {"text":"two"}]]', tools: [tool] });
    expect(second.output.map((i) => i.type)).toEqual(['mcp_call', 'message']);
    expect(server.log.calls.filter((c) => c.name === 'echo').map((c) => c.args.text)).toEqual(['one', 'two']);
    expect(server.log.httpRequests.slice(requestsBefore).every((r) => r.headers.authorization === `Bearer ${SECRET}`)).toBe(true);
  });

  it('a continuation that omits tools declared without credentials lists nothing again and still calls the server', async () => {
    const tool = { type: 'mcp', server_label: 'open', server_url: server.url, require_approval: 'never' } as any;
    const first = await client.responses.create({ model: 'm', input: 'Echo one. [[call open__echo {"text":"uno"}]]', tools: [tool] });
    expect(first.output.map((i) => i.type)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
    const listingsBefore = server.log.httpRequests.length;
    const second = await client.responses.create({ model: 'm', previous_response_id: first.id, input: 'Echo two. [[call open__echo {"text":"dos"}]]' });
    // The listing is in the stored history, so it is not emitted again; the inherited declaration still works.
    expect(second.output.map((i) => i.type)).toEqual(['mcp_call', 'message']);
    expect(second.output[0]).toMatchObject({ name: 'echo', status: 'completed' });
    expect(server.log.calls.filter((c) => c.name === 'echo').map((c) => c.args.text)).toEqual(expect.arrayContaining(['uno', 'dos']));
    expect(server.log.httpRequests.length).toBeGreaterThan(listingsBefore);

    // The model saw the first turn's call and its result as a function call pair, then this turn's.
    const upstream = (stack.simulator.requests.at(-1)!.body as any).input;
    expect(upstream.map((i: any) => i.type)).toEqual(['message', 'function_call', 'function_call_output', 'message', 'message', 'function_call', 'function_call_output']);
  });
});
