import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText } from 'ai';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { StreamableTestServer } from './support/mcp/mcp-test-servers.js';

/**
 * The AI SDK's `openai.tools.mcp` against the gateway's MCP tool: its
 * response schema refuses `null` where OpenAI omits a field (a listed tool's
 * `description` and `annotations`, the listing's `error`), so every call
 * failed while the gateway sent them. Its hosted tools the gateway does not
 * run are refused by name, not dropped.
 */
const MODEL = 'switchyard-sim';

describe('AI SDK openai.tools.mcp', () => {
  let stack: GatewayStack;
  let mcp: StreamableTestServer;
  const bodies: any[] = [];

  beforeAll(async () => {
    mcp = await StreamableTestServer.start();
    stack = await startStack({ config: { mcp: { allowedHosts: [`127.0.0.1:${mcp.port}`] } } });
  });
  afterAll(async () => {
    await stack.close();
    await mcp.close();
  });

  const provider = () =>
    createOpenAI({
      baseURL: stack.url,
      apiKey: 'sk-test',
      fetch: async (url, init) => {
        const res = await fetch(url, init);
        if (!String(url).endsWith('/responses') || (init?.body && JSON.parse(String(init.body)).stream)) return res;
        bodies.push(await res.clone().json());
        return res;
      },
    });
  // `as any`: @ai-sdk/openai's provider-utils types and ai's differ by a schema symbol across their versions; the runtime objects are the SDK's.
  const tools = (openai: ReturnType<typeof provider>): any => ({ mcp: openai.tools.mcp({ serverLabel: 'demo', serverUrl: mcp.url, requireApproval: 'never' }) });

  it('generateText runs the server-side call and reads the listing, blocking', async () => {
    const openai = provider();
    const result = await generateText({ model: openai.responses(MODEL), prompt: 'Echo hello. [[call demo__echo {"text":"hello"}]]', tools: tools(openai) });
    expect(result.text).toBe('Based on the tool result: echo: hello');
    expect(result.toolResults.map((r: any) => r.toolName)).toEqual(['mcp.echo']);
    const listing = bodies.at(-1).output.find((i: any) => i.type === 'mcp_list_tools');
    expect(listing).not.toHaveProperty('error');
    const echo = listing.tools.find((t: any) => t.name === 'echo');
    expect(echo).toEqual({ name: 'echo', description: 'Echo the text back', input_schema: expect.any(Object), annotations: { read_only: true } });
    const destructive = listing.tools.find((t: any) => t.name === 'delete_item');
    expect(destructive.annotations).toEqual({ destructive: true });
    expect(JSON.stringify(listing)).not.toContain('null');
  });

  it('streamText runs it too, streaming', async () => {
    const openai = provider();
    const result = streamText({ model: openai.responses(MODEL), prompt: 'Echo two. [[call demo__echo {"text":"two"}]]', tools: tools(openai) });
    let errors = 0;
    for await (const part of result.fullStream) if (part.type === 'error') errors++;
    expect(errors).toBe(0);
    expect(await result.text).toBe('Based on the tool result: echo: two');
  });

  it('openai.tools.imageGeneration without a backend is a 400 naming the tool type, not a silent answer without it', async () => {
    const openai = createOpenAI({ baseURL: stack.url, apiKey: 'sk-test' });
    const before = stack.simulator.requests.length;
    const error = await generateText({
      model: openai.responses(MODEL),
      prompt: 'Draw a kettle.',
      tools: { image_generation: openai.tools.imageGeneration({}) } as any,
      maxRetries: 0,
    }).catch((e: unknown) => e as any);
    expect(error).toMatchObject({ name: 'AI_APICallError', statusCode: 400 });
    expect(JSON.parse(error.responseBody).error).toMatchObject({ param: 'tools[0].type', code: 'unsupported_tool_type', message: expect.stringContaining('"image_generation"') });
    expect(stack.simulator.requests.length).toBe(before);
  });
});
