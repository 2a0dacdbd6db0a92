import { ownerIdOf } from '#config/owner-ids.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { requestLines, startGatewayProcess, type GatewayProcess } from './support/process/gateway-process.js';

const OWNER_SECRET = 'owner-id-secret-of-this-test-0123456789';

const API_KEY = 'sk-untraced-5e21';

/**
 * With tracing off (the default) the gateway enters no async context: on Node
 * 20 an AsyncLocalStorage in use costs every promise of every request a hook
 * call. Each run and relayed call finds the record of the HTTP request it
 * answers through that request instead. The real gateway process, tracing
 * off, and the official clients: every surface's log line must still carry
 * what its run or relayed call learned, as with tracing on.
 */
describe('request log lines without tracing', () => {
  let simulator: SimulatedUpstream;
  let gateway: GatewayProcess & { url: string; startup: any };
  let dir: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-untraced-'));
    simulator = new SimulatedUpstream({});
    const { url: upstreamUrl } = await simulator.listen(0, '127.0.0.1');
    gateway = await startGatewayProcess({
      UPSTREAM_URL: upstreamUrl,
      API_KEYS: API_KEY,
      OWNER_ID_SECRET: OWNER_SECRET,
      STORAGE_DRIVER: 'sqlite',
      SQLITE_PATH: join(dir, 'state.sqlite'),
    });
    expect(gateway.startup.tracing).toMatch(/^off/);
    const openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: API_KEY, maxRetries: 0, timeout: 20_000 });
    const anthropic = new Anthropic({ baseURL: gateway.url, apiKey: API_KEY, maxRetries: 0, timeout: 20_000 });

    ids.blocking = (await openai.responses.create({ model: 'm', input: '[[say one]]' })).id;
    const stream = await openai.responses.create({ model: 'm-stream', input: '[[say two]]', stream: true });
    for await (const event of stream) if (event.type === 'response.completed') ids.streaming = event.response.id;
    ids.background = (await openai.responses.create({ model: 'm-bg', input: '[[say three]]', background: true })).id;
    for (let i = 0; i < 100 && (await openai.responses.retrieve(ids.background)).status !== 'completed'; i++) await new Promise((r) => setTimeout(r, 50));
    await anthropic.messages.create({ model: 'm-messages', max_tokens: 64, messages: [{ role: 'user', content: '[[say four]]' }] });
    await openai.chat.completions.create({ model: 'm-chat', messages: [{ role: 'user', content: 'hello' }] });
    // The line of a request is written when its answer is finished.
    await new Promise((r) => setTimeout(r, 200));
  }, 60_000);

  afterAll(async () => {
    await gateway?.kill();
    await simulator?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const owner = `owner:${ownerIdOf(Buffer.from(OWNER_SECRET), API_KEY).slice(0, 16)}`;
  const line = (route: string, model: string) => requestLines(gateway).find((l) => l.route === route && l.model === model);

  it('names the run of a blocking and of a streamed response in their requests’ lines', () => {
    expect(line('/v1/responses', 'm')).toMatchObject({ method: 'POST', status: 200, response_id: ids.blocking, rounds: 1, upstream_status: '200', owner });
    expect(line('/v1/responses', 'm-stream')).toMatchObject({ method: 'POST', status: 200, response_id: ids.streaming, stream: true, rounds: 1, upstream_status: '200' });
  });

  it('names a background response queued in the line of the request that queued it, and runs it under a line of its own', () => {
    expect(line('/v1/responses', 'm-bg')).toMatchObject({ method: 'POST', status: 200, response_id: ids.background, response_status: 'queued', owner });
    const run = requestLines(gateway).find((l) => l.method === 'BACKGROUND' && l.response_id === ids.background);
    expect(run).toMatchObject({ model: 'm-bg', rounds: 1, upstream_status: '200', owner });
  });

  it('names the run of an Anthropic Messages request, and the model and upstream status of a relayed call', () => {
    expect(line('/v1/messages', 'm-messages')).toMatchObject({ method: 'POST', status: 200, rounds: 1, upstream_status: '200', owner });
    expect(line('/v1/chat/completions', 'm-chat')).toMatchObject({ method: 'POST', status: 200, upstream_status: '200', owner });
  });
});
