import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { StreamableTestServer } from './support/mcp/mcp-test-servers.js';
import { OpenAiItemShapes, type ShapeViolation } from './support/openai-item-shapes.js';
import { OpenResponsesValidator } from './support/openresponses-validator.js';
import { FakeSearxng } from './support/web-search/fake-searxng.js';
import { weatherTool } from './support/fixtures.js';

/**
 * Every public item the gateway builds, walked beside the openai SDK's own
 * types: no `null` where OpenAI omits the field (the SDK marks it optional)
 * and none where the type has no null. The AI SDK's schemas refuse those
 * nulls (`mcp_list_tools` did, and every `openai.tools.mcp` call failed).
 * Items are gathered from blocking responses, from every streamed
 * `output_item.added`/`.done` and terminal response, from compaction and
 * from what the stores list back. The same runs also validate against the
 * Open Responses spec (every response and event).
 */
const MODEL = 'switchyard-sim';
const KEY = 'item-shapes-test-key-0123456789';
const call = (name: string, args: unknown) => `[[call ${name} ${JSON.stringify(args)}]]`;

describe('public items carry no null where OpenAI omits the field (openai SDK types as the judge)', () => {
  let stack: GatewayStack;
  let client: OpenAI;
  let mcp: StreamableTestServer;
  let searxng: FakeSearxng;
  let dataDir: string;
  let storeId: string;
  const shapes = new OpenAiItemShapes();
  /** The Open Responses spec (openresponses-openapi.json) as the second judge of the same runs. */
  const spec = new OpenResponsesValidator();
  /** Every item seen, with where it came from. */
  const seen: Array<{ where: string; item: any }> = [];

  beforeAll(async () => {
    mcp = await StreamableTestServer.start();
    searxng = await FakeSearxng.start();
    dataDir = mkdtempSync(join(tmpdir(), 'switchyard-shapes-'));
    stack = await startStack({
      simulator: { reasoning: false },
      config: {
        state: { compactionKey: KEY },
        mcp: { allowedHosts: [`127.0.0.1:${mcp.port}`] },
        webSearch: { provider: 'searxng', searxng: { baseUrl: searxng.baseUrl } },
        fileSearch: { ingestion: { pollMs: 50 } },
        codeInterpreter: { dataDir, timeoutMs: 60_000, graceMs: 1_000, maxWorkers: 1, warmWorkers: 0 },
      },
    });
    client = new OpenAI({ baseURL: stack.url, apiKey: 'sk-test', maxRetries: 0, timeout: 120_000 });
    const file = await client.files.create({ file: await toFile(Buffer.from('The kettle warranty lasts 24 months from purchase.'), 'warranty.txt'), purpose: 'assistants' });
    storeId = (await client.vectorStores.create({ name: 'docs' })).id;
    await client.vectorStores.fileBatches.createAndPoll(storeId, { file_ids: [file.id] }, { pollIntervalMs: 20 });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    await mcp?.close();
    await searxng?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const mcpTool = (requireApproval: 'never' | 'always') => ({ type: 'mcp' as const, server_label: 'demo', server_url: mcp.url, require_approval: requireApproval });

  /** Runs one request blocking and streaming, and keeps every item either way. */
  async function both(name: string, body: Record<string, any>): Promise<OpenAI.Responses.Response> {
    const blocking = await client.responses.create({ model: MODEL, ...body, stream: false } as any);
    blocking.output.forEach((item, i) => seen.push({ where: `${name} (blocking).output[${i}]`, item }));
    spec.assertResponse(blocking);
    const stream = await client.responses.create({ model: MODEL, ...body, stream: true } as any);
    for await (const event of stream as unknown as AsyncIterable<any>) {
      spec.assertEvent(event);
      if (event.type === 'response.output_item.added' || event.type === 'response.output_item.done')
        seen.push({ where: `${name} (${event.type} #${event.output_index})`, item: event.item });
      if (event.type === 'response.completed' || event.type === 'response.incomplete') {
        event.response.output.forEach((item: any, i: number) => seen.push({ where: `${name} (${event.type}).output[${i}]`, item }));
      }
    }
    return blocking;
  }

  it('runs every kind of item through the gateway', async () => {
    await both('reasoning with summary and encrypted_content', {
      input: '[[reason Think first.]] [[say Done.]]',
      reasoning: { summary: 'auto' },
      include: ['reasoning.encrypted_content'],
      store: false,
    });
    await both('reasoning without include', { input: '[[reason Think.]] [[say Done.]]' });
    await both('function call', { input: `Weather? ${call('get_weather', { city: 'Oslo' })}`, tools: [weatherTool] });
    await both('custom tool call', {
      input: `Patch. ${call('apply_patch', { input: '*** Begin Patch\n*** End Patch' })}`,
      tools: [{ type: 'custom', name: 'apply_patch', description: 'Apply a patch' }],
    });
    await both('tool search call', { input: `Find. ${call('tool_search', { query: 'tickets' })}`, tools: [weatherTool, { type: 'tool_search', execution: 'client' } as any] });
    await both('mcp list and call', { input: `Echo. ${call('demo__echo', { text: 'hi' })}`, tools: [mcpTool('never')] });
    await both('mcp failing call', { input: `Fail. ${call('demo__fail', {})}`, tools: [mcpTool('never')] });
    const approval = await both('mcp approval request', { input: `Delete. ${call('demo__delete_item', { id: '7' })}`, tools: [mcpTool('always')] });
    const request = approval.output.find((i) => i.type === 'mcp_approval_request')!;
    await both('mcp approved call', {
      previous_response_id: approval.id,
      input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }],
      tools: [mcpTool('always')],
    });
    await both('web search with citations', {
      input: `News? ${call('web_search', { query: 'node 22 release' })}`,
      tools: [{ type: 'web_search' }],
      include: ['web_search_call.action.sources'],
    });
    await both('file search with results', {
      input: `Warranty? ${call('file_search', { queries: ['kettle warranty'] })}`,
      tools: [{ type: 'file_search', vector_store_ids: [storeId] }],
      include: ['file_search_call.results'],
    });
    await both('code interpreter with outputs', {
      input: `Compute. ${call('code_interpreter', { code: 'print(6 * 7)' })}`,
      tools: [{ type: 'code_interpreter', container: { type: 'auto' } }],
      include: ['code_interpreter_call.outputs'],
    });
    const compacted = await client.responses.compact({
      model: MODEL,
      input: [
        { role: 'user', content: 'one' },
        { role: 'assistant', content: 'two' },
        { role: 'user', content: 'three' },
        { role: 'assistant', content: 'four' },
      ] as any,
    });
    compacted.output.forEach((item, i) => seen.push({ where: `compact.output[${i}]`, item }));
    const conversation = await client.conversations.create({});
    const stored = await client.responses.create({
      model: MODEL,
      conversation: conversation.id,
      input: `Echo. ${call('demo__echo', { text: 'stored' })}`,
      tools: [mcpTool('never')],
    });
    for await (const item of client.responses.inputItems.list(stored.id)) seen.push({ where: 'stored input_items', item });
    for await (const item of client.conversations.items.list(conversation.id)) seen.push({ where: 'conversation items', item });

    // The runs produced what they were meant to: every kind of item is in the sample.
    const kinds = new Set(seen.map((s) => s.item.type));
    for (const kind of [
      'message',
      'reasoning',
      'function_call',
      'custom_tool_call',
      'tool_search_call',
      'mcp_list_tools',
      'mcp_call',
      'mcp_approval_request',
      'web_search_call',
      'file_search_call',
      'code_interpreter_call',
      'compaction',
    ]) {
      expect({ kind, present: kinds.has(kind) }).toEqual({ kind, present: true });
    }
    expect(seen.some((s) => s.item.type === 'mcp_call' && s.item.status === 'failed')).toBe(true);
    expect(seen.some((s) => s.item.type === 'message' && s.item.content?.[0]?.annotations?.some((a: any) => a.type === 'url_citation'))).toBe(true);

    const violations: Array<ShapeViolation & { where: string }> = seen.flatMap(({ where, item }) => shapes.check(item).map((v) => ({ ...v, where })));
    // One line per distinct field, with the first run that showed it.
    const distinct = new Map<string, string>();
    for (const v of violations) {
      const key = `${v.path.replace(/\[\d+\]/g, '[]')}: ${v.why}`;
      if (!distinct.has(key)) distinct.set(key, `${key} (${v.where})`);
    }
    expect([...distinct.values()]).toEqual([]);
  }, 120_000);

  it('the judge itself finds the nulls the AI SDK refused', () => {
    const listing = { id: 'mcpl_1', type: 'mcp_list_tools', server_label: 'demo', error: null, tools: [{ name: 'n', input_schema: {}, annotations: null, description: null }] };
    expect(shapes.check(listing).map((v) => v.path)).toEqual(['item.tools[0].annotations', 'item.tools[0].description', 'item.error']);
    const citation = { type: 'url_citation', url: 'https://x.example', title: null, start_index: 0, end_index: 1 };
    expect(shapes.check({ id: 'm', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 't', annotations: [citation] }] })).toEqual([
      { path: 'item.content[0].annotations[0].title', why: 'null where the type has no null' },
    ]);
    // What OpenAI itself sends as null passes; the same null one level down does not.
    expect(shapes.check({ id: 'mcp_1', type: 'mcp_call', server_label: 'demo', name: 'echo', arguments: '{}', output: null, error: null, approval_request_id: null })).toEqual([]);
    expect(shapes.check({ id: 'fs_1', type: 'file_search_call', status: 'completed', queries: ['q'], results: [{ file_id: 'f', filename: null }] } as any)).toEqual([
      { path: 'item.results[0].filename', why: 'null where OpenAI omits the field' },
    ]);
  });
});
