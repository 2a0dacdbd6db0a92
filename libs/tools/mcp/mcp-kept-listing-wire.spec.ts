import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Logger } from '@nestjs/common';
import type { Response } from 'express';
import type { ModelRequest } from '#core/protocol/model-events.js';
import { writeJson } from '#edge/response/send-json.js';
import { SseWriter } from '#edge/sse/sse-writer.js';
import { type FunctionToolDef, type PublicItem, RequestToolContext } from '#tool-sdk/index.js';
import { jsonChunks, stringifyJson } from '#tool-sdk/helpers/frozen-json.js';
import { toChatCompletionRequest } from '#upstream/chat-request.mapper.js';
import { toResponsesRequest } from '#upstream/responses-request.mapper.js';
import { StreamableTestServer } from '../../../test/support/mcp/mcp-test-servers.js';
import { parseMcpSettings } from './mcp.config.js';
import { McpConnectionPool } from './mcp-connection-pool.service.js';
import { listToolsItem } from './mcp-items.js';
import { McpToolHandler } from './mcp.tool-handler.js';

beforeAll(() => Logger.overrideLogger(false));

/** An `mcp_list_tools` item as this spec reads it. */
type ListingItem = PublicItem & { tools: Array<Record<string, unknown>> };

/**
 * A kept listing (here by `mcp.toolsListCacheMs`) is frozen and shared by the
 * requests it serves, and so are its functions and its item's `tools`: the
 * writers splice their kept JSON text in. The bytes must be what
 * `JSON.stringify` writes for the same values, and a listing that is not kept
 * is serialized as before.
 */
describe('a kept MCP listing on the wire', () => {
  let server: StreamableTestServer;
  let pool: McpConnectionPool;
  let handler: McpToolHandler;

  beforeAll(async () => {
    server = await StreamableTestServer.start();
    const settings = parseMcpSettings({ allowedHosts: [`127.0.0.1:${server.port}`], toolsListCacheMs: 60_000 });
    pool = new McpConnectionPool(settings);
    handler = new McpToolHandler(pool, settings);
  });

  afterAll(async () => {
    await pool.onModuleDestroy();
    await server.close();
  });

  /** One request's discovery and normalization: its listing item and its functions. */
  async function prepare(takenNames: ReadonlySet<string> = new Set(), serverDescription?: string): Promise<{ item: ListingItem; functions: FunctionToolDef[] }> {
    const params = handler.validate(
      { type: 'mcp', server_label: 'kept', server_url: server.url, ...(serverDescription === undefined ? {} : { server_description: serverDescription }) },
      'tools[0]',
    );
    const { state, items } = await handler.discover(params, {
      request: new RequestToolContext('r', 'alice'),
      signal: new AbortController().signal,
      history: [],
      requestId: 'r',
      owner: 'alice',
    });
    return { item: items![0] as ListingItem, functions: handler.normalize(params, state, { takenNames }).map((tool) => tool.fn) };
  }

  function modelRequest(functions: readonly FunctionToolDef[], stream: boolean): ModelRequest {
    return {
      model: 'm',
      input: [
        { type: 'message', role: 'user', content: 'add 2 and 3' },
        { type: 'function_call', call_id: 'c1', name: functions[0].name, arguments: '{"a":2,"b":3}' },
        { type: 'function_call_output', call_id: 'c1', output: '5' },
      ],
      instructions: 'Be brief — ünïcödé ☀️',
      tools: functions,
      tool_choice: 'auto',
      parallel_tool_calls: true,
      stream,
    };
  }

  function answer(item: ListingItem): Record<string, unknown> {
    return {
      id: 'resp_1',
      object: 'response',
      status: 'completed',
      output: [
        item,
        { id: 'mcp_1', type: 'mcp_call', server_label: 'kept', name: 'add', arguments: '{"a":2,"b":3}', output: '5', error: null, status: 'completed' },
        { id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: '5 ☀️', annotations: [] }] },
      ],
      tools: [{ type: 'mcp', server_label: 'kept', server_url: server.url }],
      usage: { input_tokens: 10, output_tokens: 2, total_tokens: 12 },
    };
  }

  /** What `writeJson` hands the response, joined, and in how many chunks. */
  function written(body: unknown): { text: string; chunks: number } {
    const chunks: Buffer[] = [];
    const res = {
      writeHead: () => res,
      write: (chunk: Buffer) => chunks.push(chunk),
      end: (chunk?: Buffer) => {
        if (chunk) chunks.push(chunk);
      },
    };
    writeJson(res as unknown as Response, 200, body);
    return { text: Buffer.concat(chunks).toString('utf8'), chunks: chunks.length };
  }

  /** The body a client reads for events written by a real `SseWriter` on a real socket. */
  async function streamed(events: Array<[string, unknown]>): Promise<string> {
    const http1 = http.createServer((_req, res) => {
      const sse = new SseWriter(res, 60_000);
      for (const [type, payload] of events) sse.event(type, payload);
      sse.end();
    });
    await new Promise<void>((resolve) => http1.listen(0, '127.0.0.1', resolve));
    try {
      return await (await fetch(`http://127.0.0.1:${(http1.address() as AddressInfo).port}/`)).text();
    } finally {
      await new Promise((resolve) => http1.close(resolve));
    }
  }

  it('shares one frozen listing, item tools and functions between the requests the listing serves', async () => {
    const first = await prepare();
    const second = await prepare();
    expect(second.item.tools).toBe(first.item.tools);
    expect(Object.isFrozen(first.item.tools)).toBe(true);
    expect(second.item.id).not.toBe(first.item.id);
    expect(second.functions).toHaveLength(first.functions.length);
    second.functions.forEach((fn, i) => expect(fn).toBe(first.functions[i]));
    expect(Object.isFrozen(first.functions[0].parameters)).toBe(true);
  });

  it('writes the upstream bodies, the answer and its events byte for byte as JSON.stringify does, with the kept texts spliced in', async () => {
    await prepare();
    const { item, functions } = await prepare();
    for (const stream of [false, true]) {
      for (const body of [toResponsesRequest(modelRequest(functions, stream)), toChatCompletionRequest(modelRequest(functions, stream))]) {
        const chunks = jsonChunks(body);
        // Each function's kept bytes are a chunk of their own.
        expect(chunks.length).toBeGreaterThan(functions.length);
        expect(Buffer.concat(chunks).equals(Buffer.from(JSON.stringify(body)))).toBe(true);
      }
    }

    const response = answer(item);
    const blocking = written(response);
    expect(blocking.chunks).toBeGreaterThan(1);
    expect(blocking.text).toBe(JSON.stringify(response));

    const events: Array<[string, unknown]> = [
      ['response.output_item.done', { type: 'response.output_item.done', sequence_number: 3, output_index: 0, item }],
      ['response.completed', { type: 'response.completed', sequence_number: 9, response }],
    ];
    for (const [, payload] of events) expect(jsonChunks(payload, 4).length).toBeGreaterThan(1);
    expect(await streamed(events)).toBe(events.map(([type, payload]) => `event: ${type}\ndata: ${JSON.stringify(payload)}\n\n`).join(''));
  });

  it('serializes a listing that is not kept, and a function the request names otherwise, afresh: the same bytes', async () => {
    const { item: keptItem, functions: keptFunctions } = await prepare();
    // Another declaration took the first tool's name: that function is the request's own.
    const { functions } = await prepare(new Set([keptFunctions[0].name]));
    expect(functions[0]).not.toBe(keptFunctions[0]);
    expect(Object.isFrozen(functions[0])).toBe(false);
    expect(functions[1]).toBe(keptFunctions[1]);
    const body = toResponsesRequest(modelRequest(functions, false));
    expect(Buffer.concat(jsonChunks(body)).toString('utf8')).toBe(JSON.stringify(body));

    // A listing nothing keeps is not frozen: its item's tools are made per request and serialized whole.
    const listed = keptItem.tools.map((tool) => ({ name: tool.name, inputSchema: structuredClone(tool.input_schema) }));
    const open = listToolsItem('open', listed as never, null) as ListingItem;
    expect(Object.isFrozen(open.tools)).toBe(false);
    const response = answer(open);
    expect(written(response)).toEqual({ text: JSON.stringify(response), chunks: 1 });
    open.tools[0].name = 'changed';
    expect(stringifyJson(answer(open), 3)).toContain('"name":"changed"');
  });

  it('keeps the functions of a few descriptions per listing, and names the rest per request: a tenant varying them grows nothing', async () => {
    const described = [];
    for (let i = 0; i < 40; i++) described.push(await prepare(new Set(), `variant ${i}`));
    const again = await prepare(new Set(), 'variant 0');
    expect(again.functions[0]).toBe(described[0].functions[0]);
    const late = described[39].functions;
    expect(Object.isFrozen(late[0])).toBe(false);
    expect(late[0].description).toContain('variant 39');
    expect((await prepare(new Set(), 'variant 39')).functions[0]).not.toBe(late[0]);
    const kept = described.filter(({ functions }) => Object.isFrozen(functions[0])).length;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(40);
  });
});
