import 'reflect-metadata';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Body, Controller, HttpCode, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import express from 'express';
import { gatewayHttpAdapter } from '#src/gateway-http-adapter.js';
import { childConfig, serveParent } from './lib/child-endpoint.js';

/**
 * The floor of the gateway's stack for one hop: what any gateway built on
 * express (`mode: "express"`), or on Nest over express (`mode: "nest"`; with
 * the gateway's `gatewayHttpAdapter()`, `mode: "nest-gateway-adapter"`), pays
 * before doing anything of its own. POST /v1/responses parses the JSON body,
 * sends it to the upstream as JSON over a keep-alive agent, parses the
 * upstream's JSON answer and answers with it re-serialized. No validation,
 * no mapping, no loop, no storage, no observability: next to the raw proxy
 * (bytes piped, nothing parsed) and the gateway, it says how much of the
 * gateway's CPU per request is the framework and the JSON work every
 * request needs, and how much is the gateway's own. A body declaring an MCP
 * server gets the floor of a tool round (`toolRound`).
 */
interface FloorConfig {
  upstreamUrl: string;
  mode: 'express' | 'nest' | 'nest-gateway-adapter';
}

const config = childConfig<FloorConfig>();
const upstream = new URL(config.upstreamUrl);
const agent = new http.Agent({ keepAlive: true, maxSockets: 2048, scheduling: 'lifo' });

/** One JSON POST over the keep-alive agent: the answer's headers and text. */
function post(url: URL, text: string, headers: Record<string, string> = {}): Promise<{ headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path: url.pathname,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers },
        agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.once('end', () => resolve({ headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.once('error', reject);
      },
    );
    req.once('error', reject);
    req.end(text);
  });
}

const responsesUrl = new URL(`${upstream.pathname.replace(/\/+$/, '')}/responses`, upstream);

/** One upstream exchange: the body out as JSON, the answer parsed. */
async function relay(body: unknown): Promise<unknown> {
  return JSON.parse((await post(responsesUrl, JSON.stringify(body))).text);
}

interface Body {
  input?: unknown;
  tools?: Array<{ type?: string; server_url?: string }>;
  [key: string]: unknown;
}

interface OutputItem {
  type: string;
  call_id?: string;
  name?: string;
  arguments?: string;
}

/**
 * The floor of a gateway tool round: for a body that declares an MCP server, the exchanges a
 * round needs and nothing else. The model is asked with the server's `add` tool as a function
 * (declared here, not listed), its call goes to the server as one JSON-RPC `tools/call` on a
 * session opened once, and the model is asked again with the call and its output appended. No
 * listing, validation, items, events or scheduling: beside `relay`, it says how much of a tool
 * round's CPU is the two more exchanges themselves.
 */
async function toolRound(body: Body, serverUrl: string): Promise<unknown> {
  const tools = [{ type: 'function', name: 'bench__add', parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] } }];
  const { tools: _declared, ...rest } = body;
  const first = (await relay({ ...rest, tools })) as { output: OutputItem[] };
  const call = first.output.find((item) => item.type === 'function_call');
  if (!call) return first;
  const session = await mcpSession(serverUrl);
  const rpc = JSON.stringify({ jsonrpc: '2.0', id: session.nextId++, method: 'tools/call', params: { name: 'add', arguments: JSON.parse(call.arguments ?? '{}') } });
  const answer = await post(new URL(serverUrl), rpc, session.headers);
  const result = JSON.parse(sseData(answer.text)) as { result?: { content?: Array<{ text?: string }> } };
  const output = result.result?.content?.map((c) => c.text ?? '').join('') ?? '';
  const input = [{ type: 'message', role: 'user', content: rest.input }, call, { type: 'function_call_output', call_id: call.call_id, output }];
  return relay({ ...rest, input, tools });
}

/** The JSON of an answer's `data:` line when it came as an SSE stream, or the answer itself. */
function sseData(text: string): string {
  const at = text.indexOf('data: ');
  return at === -1 ? text : text.slice(at + 6, text.indexOf('\n', at));
}

interface McpSession {
  headers: Record<string, string>;
  nextId: number;
}

const sessions = new Map<string, Promise<McpSession>>();

function mcpSession(serverUrl: string): Promise<McpSession> {
  let session = sessions.get(serverUrl);
  if (!session) {
    session = (async () => {
      const url = new URL(serverUrl);
      const accept = { accept: 'application/json, text/event-stream' };
      const init = await post(
        url,
        JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'floor', version: '1' } } }),
        accept,
      );
      const headers = { ...accept, 'mcp-session-id': String(init.headers['mcp-session-id']), 'mcp-protocol-version': '2025-06-18' };
      await post(url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), headers);
      return { headers, nextId: 1 };
    })();
    sessions.set(serverUrl, session);
  }
  return session;
}

/** The plain hop, or a tool round when the body declares an MCP server. */
function answer(body: Body): Promise<unknown> {
  const mcp = body.tools?.find((tool) => tool.type === 'mcp' && typeof tool.server_url === 'string');
  return mcp ? toolRound(body, mcp.server_url!) : relay(body);
}

@Controller('v1')
class FloorController {
  @Post('responses')
  @HttpCode(200)
  create(@Body() body: Body): Promise<unknown> {
    return answer(body);
  }
}

@Module({ controllers: [FloorController] })
class FloorModule {}

async function listenExpress(): Promise<{ server: http.Server; close(): Promise<void> }> {
  const app = express();
  app.use(express.json({ limit: '10mb' }));
  app.post('/v1/responses', (req, res, next) => {
    answer(req.body as Body).then((answered) => res.json(answered), next);
  });
  const server = http.createServer({ keepAlive: true, noDelay: true }, app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function listenNest(): Promise<{ server: http.Server; close(): Promise<void> }> {
  const app = await NestFactory.create(FloorModule, config.mode === 'nest-gateway-adapter' ? gatewayHttpAdapter() : new ExpressAdapter(), { logger: false });
  await app.listen(0, '127.0.0.1');
  return { server: app.getHttpServer() as http.Server, close: () => app.close() };
}

async function main(): Promise<void> {
  const { server, close } = config.mode === 'express' ? await listenExpress() : await listenNest();
  const { port } = server.address() as AddressInfo;
  serveParent(`http://127.0.0.1:${port}/v1`, {}, async () => {
    server.closeAllConnections();
    await close();
    agent.destroy();
  });
}

main().catch((err: unknown) => {
  console.error('framework floor failed to start:', err);
  process.exit(1);
});
