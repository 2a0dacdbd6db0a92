import type OpenAI from 'openai';
import { StreamableTestServer } from './support/mcp/mcp-test-servers.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';

const MODEL = 'switchyard-sim';

const fn = (name: string) => ({ type: 'function' as const, name, parameters: { type: 'object', properties: { q: { type: 'string' } } }, strict: false });

/** The model's calls of one round, as `[[call ...]]` directives, in the order it writes them. */
const CALLS: Record<string, string> = {
  lookup: '[[call lookup {"q":"first"}]]',
  echo: '[[call demo__echo {"text":"second"}]]',
  shell: '[[call shell {"commands":["ls"]}]]',
  other: '[[call other {"q":"fourth"}]]',
  add: '[[call demo__add {"a":1,"b":2}]]',
};
const ITEM_TYPES: Record<string, string> = { lookup: 'function_call', echo: 'mcp_call', shell: 'shell_call', other: 'function_call', add: 'mcp_call' };

/**
 * Gateway calls (MCP) and client calls (functions, shell) of one round are
 * published in the order the model wrote them, on both upstream dialects,
 * blocking and streaming.
 */
describe.each(['responses', 'chat'] as const)('item order follows the model, upstream dialect %s', (dialect) => {
  let server: StreamableTestServer;
  let stack: GatewayStack;
  let client: OpenAI;

  beforeAll(async () => {
    server = await StreamableTestServer.start();
    stack = await startStack({ dialect, config: { mcp: { allowedHosts: [`127.0.0.1:${server.port}`] } } });
    client = stack.openai;
  });
  afterAll(async () => {
    await stack.close();
    await server.close();
  });

  const tools = () => [fn('lookup'), fn('other'), { type: 'shell' }, { type: 'mcp', server_label: 'demo', server_url: server.url, require_approval: 'never' }] as any;
  const expected = (order: string[]) => ['mcp_list_tools', ...order.map((name) => ITEM_TYPES[name])];

  it.each([[['lookup', 'echo', 'shell', 'other']], [['echo', 'lookup', 'add', 'other']], [['shell', 'add', 'echo', 'lookup']]])('blocking: %j', async (order) => {
    const response = await client.responses.create({ model: MODEL, tools: tools(), input: `Do it all. ${order.map((name) => CALLS[name]).join(' ')}` });
    expect(response.output.map((item) => item.type)).toEqual(expected(order));
    const names = response.output.filter((item: any) => item.type === 'function_call').map((item: any) => item.name);
    expect(names).toEqual(order.filter((name) => ITEM_TYPES[name] === 'function_call'));
  });

  it.each([[['lookup', 'echo', 'shell', 'other']], [['add', 'lookup', 'echo', 'shell']]])('streaming: %j, output indexes announced in order', async (order) => {
    const stream = await client.responses.create({ model: MODEL, tools: tools(), stream: true, input: `Do it all. ${order.map((name) => CALLS[name]).join(' ')}` });
    const added: Array<{ index: number; type: string }> = [];
    let final: any;
    for await (const event of stream) {
      if (event.type === 'response.output_item.added') added.push({ index: event.output_index, type: event.item.type });
      if (event.type === 'response.completed') final = event.response;
    }
    expect(added.map((a) => a.index)).toEqual(added.map((_, i) => i));
    expect(added.map((a) => a.type)).toEqual(expected(order));
    expect(final.output.map((item: any) => item.type)).toEqual(expected(order));
  });
});
