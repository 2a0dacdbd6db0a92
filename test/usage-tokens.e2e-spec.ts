import Anthropic from '@anthropic-ai/sdk';
import { Global, Module } from '@nestjs/common';
import { OWNER_IDS, type OwnerIds } from '#config/owner-ids.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { LOG_SINK } from '#observability/logging/log-writer.service.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { StreamableTestServer } from './support/mcp/mcp-test-servers.js';
import { OtlpReceiver } from './support/otlp-receiver.js';

const KEY_A = 'sk-usage-a-1f2e';
const KEY_B = 'sk-usage-b-9c0d';
const ADMIN = 'sk-usage-admin-77aa';

const lines: any[] = [];
@Global()
@Module({ providers: [{ provide: LOG_SINK, useValue: { isTTY: false, write: (line: string) => lines.push(JSON.parse(line)) } }], exports: [LOG_SINK] })
class CapturedLogModule {}

interface Tokens {
  input: number;
  output: number;
  reasoning: number;
}
const sum = (list: Tokens[]): Tokens =>
  list.reduce((a, t) => ({ input: a.input + t.input, output: a.output + t.output, reasoning: a.reasoning + t.reasoning }), { input: 0, output: 0, reasoning: 0 });
const fromOpenAi = (u: any): Tokens => ({ input: u.input_tokens, output: u.output_tokens, reasoning: u.output_tokens_details?.reasoning_tokens ?? 0 });

function series(text: string, name: string, match: Record<string, string>): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(match).every(([k, v]) => labels[k] === v)) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/**
 * Tokens of every surface (Responses blocking, streaming, a two-round MCP run,
 * background, Messages) in the metrics, the log lines, the spans and the
 * usage API, each equal to what the clients were told in `usage`.
 */
describe('token usage: metrics, log lines, spans and GET /v1/usage', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sy-usage-e2e-'));
  let stack: GatewayStack;
  /** An API key's owner id, as this gateway derives it. */
  const hash = (key: string) => stack.app.get<OwnerIds>(OWNER_IDS).of(key);
  let mcp: StreamableTestServer;
  let receiver: OtlpReceiver;
  let base: string;
  const a: Record<string, Tokens> = {};
  const ids: Record<string, string> = {};
  let b: Tokens;
  const config = (tracesUrl: string) => ({
    auth: { apiKeys: [KEY_A, KEY_B, ADMIN] },
    usage: { adminKeys: [ADMIN] },
    storage: { driver: 'sqlite', sqlitePath: join(dir, 'state.sqlite') },
    observability: { requestLog: true, otlpTracesUrl: tracesUrl, metricsOwnerLabel: true },
    mcp: { allowedHosts: [`127.0.0.1:${mcp.port}`] },
  });
  const get = (path: string, key: string) => fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });

  beforeAll(async () => {
    mcp = await StreamableTestServer.start();
    receiver = new OtlpReceiver();
    stack = await startStack({ imports: [CapturedLogModule], config: config(await receiver.listen()) });
    base = stack.url.replace(/\/v1$/, '');
    const openai = new OpenAI({ baseURL: stack.url, apiKey: KEY_A, maxRetries: 0 });

    const blocking = await openai.responses.create({ model: 'm', input: 'Say hello.' });
    a.blocking = fromOpenAi(blocking.usage);
    ids.blocking = blocking.id;

    const stream = await openai.responses.create({ model: 'm', input: 'Stream a short answer.', stream: true });
    for await (const event of stream) {
      if (event.type === 'response.completed') {
        a.stream = fromOpenAi(event.response.usage);
        ids.stream = event.response.id;
      }
    }

    const tool = await openai.responses.create({
      model: 'm',
      input: 'Echo it. [[call demo__echo {"text":"x"}]]',
      tools: [{ type: 'mcp', server_label: 'demo', server_url: mcp.url, require_approval: 'never' } as any],
    });
    a.tool = fromOpenAi(tool.usage);
    ids.tool = tool.id;

    const queued = await openai.responses.create({ model: 'other-model', input: 'In the background.', background: true });
    let done = queued;
    for (let i = 0; i < 200 && (done.status === 'queued' || done.status === 'in_progress'); i++) {
      await new Promise((r) => setTimeout(r, 25));
      done = await openai.responses.retrieve(queued.id);
    }
    expect(done.status).toBe('completed');
    a.background = fromOpenAi(done.usage);
    ids.background = done.id;

    const anthropic = new Anthropic({ baseURL: base, apiKey: KEY_B, maxRetries: 0 });
    const message = await anthropic.messages.create({ model: 'm', max_tokens: 64, messages: [{ role: 'user', content: 'Hello there.' }] });
    b = { input: message.usage.input_tokens, output: message.usage.output_tokens, reasoning: 0 };
  }, 60_000);

  afterAll(async () => {
    await stack?.close();
    await Promise.all([mcp?.close(), receiver?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('counts tokens by model, kind, surface and (when asked) owner, equal to what the clients received', async () => {
    const text = await (await get('/metrics', ADMIN)).text();
    const all = sum([...Object.values(a), b]);
    expect(all.input).toBeGreaterThan(0);
    expect(series(text, 'switchyard_tokens_total', { kind: 'input' })).toBe(all.input);
    expect(series(text, 'switchyard_tokens_total', { kind: 'output' })).toBe(all.output);
    expect(series(text, 'switchyard_tokens_total', { kind: 'reasoning' })).toBe(all.reasoning);
    expect(series(text, 'switchyard_tokens_total', { kind: 'cached_input' })).toBe(0);
    expect(series(text, 'switchyard_tokens_total', { kind: 'input', model: 'other-model', surface: 'background' })).toBe(a.background.input);
    expect(series(text, 'switchyard_tokens_total', { kind: 'output', surface: 'messages' })).toBe(b.output);
    expect(series(text, 'switchyard_tokens_total', { kind: 'input', owner: `owner:${hash(KEY_B).slice(0, 16)}` })).toBe(b.input);
    // One observation per run in the per-request histogram, its sum the same total.
    expect(series(text, 'switchyard_tokens_per_request_count', { kind: 'output' })).toBe(5);
    expect(series(text, 'switchyard_tokens_per_request_sum', { kind: 'output' })).toBe(all.output);
  });

  it('puts each run’s tokens in its log line, the background run’s line included', () => {
    for (const name of ['blocking', 'stream', 'tool', 'background']) {
      const line = lines.find((l) => l.msg === 'request' && l.response_id === ids[name] && l.input_tokens !== undefined);
      expect(line).toMatchObject({ input_tokens: a[name].input, output_tokens: a[name].output, reasoning_tokens: a[name].reasoning, cached_input_tokens: 0 });
    }
    expect(lines.find((l) => l.response_id === ids.background && l.method === 'BACKGROUND')).toBeDefined();
    const messages = lines.find((l) => l.route === '/v1/messages');
    expect(messages).toMatchObject({ input_tokens: b.input, output_tokens: b.output });
  });

  it('sets the GenAI usage attributes on the request span and on each round', async () => {
    await receiver.waitFor((spans) => spans.some((s) => s.attributes['switchyard.response_id'] === ids.tool && s.kind === 2));
    const request = receiver.spans.find((s) => s.kind === 2 && s.attributes['switchyard.response_id'] === ids.tool)!;
    expect(request.attributes).toMatchObject({
      'gen_ai.request.model': 'm',
      'gen_ai.response.id': ids.tool,
      'gen_ai.usage.input_tokens': a.tool.input,
      'gen_ai.usage.output_tokens': a.tool.output,
    });
    const rounds = receiver.spans.filter((s) => s.parentSpanId === request.spanId && s.name === 'inference round');
    expect(rounds).toHaveLength(2);
    expect(rounds.reduce((n, r) => n + Number(r.attributes['gen_ai.usage.input_tokens']), 0)).toBe(a.tool.input);
    // The MCP server's tools/list has a span of its own under the request, before the first round.
    const discovery = receiver.spans.filter((s) => s.parentSpanId === request.spanId && s.name === 'discover mcp');
    expect(discovery).toHaveLength(1);
    expect(discovery[0].attributes).toMatchObject({ 'switchyard.tool.type': 'mcp', 'switchyard.tool.declaration': 'tools[0]', 'switchyard.tool.outcome': 'completed' });
  });

  it('does not trace metrics scrapes', async () => {
    expect((await get('/metrics', ADMIN)).status).toBe(200);
    // A request after the scrape: once its span is in, the scrape's would have been too.
    expect((await get('/v1/models', KEY_A)).status).toBe(200);
    await receiver.waitFor((spans) => spans.some((s) => s.name === 'GET /v1/models'));
    expect(receiver.spans.filter((s) => String(s.attributes['url.path']) === '/metrics' || s.name.includes('/metrics'))).toEqual([]);
  });

  it('GET /v1/usage reports a key its own usage, an administrator everyone’s, and refuses the rest with the field named', async () => {
    const mine = (await (await get('/v1/usage?group_by=model', KEY_A)).json()) as any;
    expect(mine.object).toBe('page');
    // The last day (the default window) in day buckets: today's holds everything.
    const results = mine.data.at(-1).results;
    const m = results.find((r: any) => r.model === 'm');
    const other = results.find((r: any) => r.model === 'other-model');
    const fg = sum([a.blocking, a.stream, a.tool]);
    expect(m).toMatchObject({ num_model_requests: 3, input_tokens: fg.input, output_tokens: fg.output, output_reasoning_tokens: fg.reasoning });
    expect(other).toMatchObject({ num_model_requests: 1, input_tokens: a.background.input });

    const everyone = (await (await get('/v1/usage?group_by=owner', ADMIN)).json()) as any;
    const byOwner = Object.fromEntries(everyone.data.at(-1).results.map((r: any) => [r.owner, r]));
    expect(Object.keys(byOwner).sort()).toEqual([hash(KEY_A), hash(KEY_B)].sort());
    expect(byOwner[hash(KEY_B)]).toMatchObject({ num_model_requests: 1, input_tokens: b.input, output_tokens: b.output });
    const onlyB = (await (await get(`/v1/usage?group_by=surface&owner=${hash(KEY_B)}`, ADMIN)).json()) as any;
    expect(onlyB.data.at(-1).results).toEqual([expect.objectContaining({ surface: 'messages', input_tokens: b.input })]);

    const forbidden = await get(`/v1/usage?owner=${hash(KEY_B)}`, KEY_A);
    expect(forbidden.status).toBe(403);
    expect(((await forbidden.json()) as any).error).toMatchObject({ param: 'owner' });
    const bad = await get('/v1/usage?bucket_width=7m', KEY_A);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error).toMatchObject({ param: 'bucket_width' });
    const wide = await get('/v1/usage?bucket_width=1m&start_time=0', KEY_A);
    expect(wide.status).toBe(400);
    expect(((await wide.json()) as any).error).toMatchObject({ param: 'start_time' });
    expect((await fetch(`${base}/v1/usage`)).status).toBe(401);
  });

  it('answers the same from another gateway on the same database, and after a restart', async () => {
    const before = (await (await get('/v1/usage?group_by=owner', ADMIN)).json()) as any;
    const second = await startStack({ config: { ...config(''), observability: { requestLog: false } } });
    try {
      const res = await fetch(`${second.url}/usage?group_by=owner`, { headers: { authorization: `Bearer ${ADMIN}` } });
      expect(((await res.json()) as any).data.at(-1).results).toEqual(before.data.at(-1).results);
    } finally {
      await second.close();
    }
  });
});
