import { StreamableTestServer } from './support/mcp/mcp-test-servers.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';

const MODEL = 'switchyard-sim';

/**
 * Rounds served by a kept MCP listing (`mcp.toolsListCacheMs`): the writers
 * splice the listing's kept JSON text into the answer, its events and the
 * upstream requests (frozen-json.ts). What a client reads must be what
 * `JSON.stringify` writes, byte for byte, on every round, blocking and
 * streamed, and the same as for the round that listed the tools itself.
 */
describe('MCP rounds from a kept listing, on the wire', () => {
  let server: StreamableTestServer;
  let stack: GatewayStack;

  beforeAll(async () => {
    server = await StreamableTestServer.start();
    stack = await startStack({ config: { mcp: { allowedHosts: [`127.0.0.1:${server.port}`], toolsListCacheMs: 60_000 } } });
  });

  afterAll(async () => {
    await stack.close();
    await server.close();
  });

  const round = (stream: boolean) =>
    fetch(`${stack.url}/responses`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        model: MODEL,
        stream,
        input: 'Add. [[call kept__add {"a":2,"b":3}]]',
        tools: [{ type: 'mcp', server_label: 'kept', server_url: server.url, require_approval: 'never' }],
      }),
    });

  /** The answer with its per-request ids and times blanked, to compare rounds. */
  const stable = (text: string) => text.replace(/"(resp|mcpl|mcp|msg|fc|rs)_[0-9a-f]+"/g, '"$1_"').replace(/"(created_at|completed_at)":\d+/g, '"$1":0');

  it('answers every round with the bytes JSON.stringify writes, the listing included', async () => {
    const bodies: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await round(false);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toBe(JSON.stringify(JSON.parse(text)));
      const output = (JSON.parse(text) as { output: Array<{ type: string; tools?: Array<{ name: string }> }> }).output;
      expect(output.map((item) => item.type)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
      expect(output[0].tools!.map((tool) => tool.name)).toContain('add');
      bodies.push(stable(text));
    }
    // The first round listed; the later ones were served from the kept listing: the same answer.
    expect(bodies[2]).toBe(bodies[0]);
    expect(bodies[1]).toBe(bodies[0]);
    // Each round's two model requests carried the server's tools as functions, the same in every round.
    const tools = stack.simulator.requests.slice(-6).map((request) => (request.body as { tools: Array<{ name: string }> }).tools);
    expect(tools).toHaveLength(6);
    expect(tools[0].map((tool) => tool.name)).toContain('kept__add');
    for (const list of tools) expect(list).toEqual(tools[0]);
  });

  it('streams every event of a round from the kept listing as JSON.stringify writes its data', async () => {
    await (await round(false)).text();
    const res = await round(true);
    const text = await res.text();
    const events = text.split('\n\n').filter((block) => block.startsWith('event: '));
    const completed = events.find((block) => block.startsWith('event: response.completed\n'));
    expect(completed).toBeDefined();
    for (const block of events) {
      const data = block.slice(block.indexOf('\ndata: ') + '\ndata: '.length);
      expect(data).toBe(JSON.stringify(JSON.parse(data)));
    }
    const response = JSON.parse(completed!.slice(completed!.indexOf('\ndata: ') + 7)) as { response: { output: Array<{ type: string; tools?: unknown[] }> } };
    expect(response.response.output[0].type).toBe('mcp_list_tools');
    expect(response.response.output[0].tools!.length).toBeGreaterThan(0);
  });

  it('reads as OpenAI answers through the openai SDK, blocking and streamed, on rounds from the kept listing', async () => {
    const params = {
      model: MODEL,
      input: 'Add. [[call kept__add {"a":2,"b":3}]]',
      tools: [{ type: 'mcp' as const, server_label: 'kept', server_url: server.url, require_approval: 'never' as const }],
    };
    await stack.openai.responses.create(params);
    const blocking = await stack.openai.responses.create(params);
    expect(blocking.output.map((item) => item.type)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
    const listing = blocking.output[0] as { tools: Array<{ name: string; input_schema: unknown }> };
    expect(listing.tools.map((tool) => tool.name)).toContain('add');
    expect(listing.tools.every((tool) => typeof tool.input_schema === 'object')).toBe(true);

    const stream = stack.openai.responses.stream(params);
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    const streamed = await stream.finalResponse();
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(streamed.output.map((item) => item.type)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
    expect((streamed.output[0] as { tools: unknown[] }).tools).toEqual(listing.tools);
  });
});
