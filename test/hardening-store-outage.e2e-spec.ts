import { randomBytes } from 'node:crypto';
import OpenAI, { toFile } from 'openai';
import pg from 'pg';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { get, timed } from './support/hardening/growth.js';
import { TcpProxy } from './support/hardening/tcp-proxy.js';
import { rawPost } from './support/robustness/raw-http.js';

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `sy_outage_${randomBytes(4).toString('hex')}`;

/**
 * PostgreSQL unreachable at runtime (finding 8): the real database behind a
 * TCP proxy the test cuts. Stateful requests get a 503 with Retry-After
 * within the configured timeouts, /ready reports not-ready, and both recover
 * by themselves once the database is back.
 */
describe('state store outage (real PostgreSQL behind a cut proxy)', () => {
  let admin: pg.Pool;
  let proxy: TcpProxy;
  let stack: GatewayStack;
  let origin: string;

  beforeAll(async () => {
    admin = new pg.Pool({ connectionString: url, max: 1 });
    await admin.query(`CREATE SCHEMA ${schema}`);
    const target = new URL(url);
    proxy = await new TcpProxy(target.hostname, Number(target.port || 5432)).start();
    target.host = `127.0.0.1:${proxy.port}`;
    const storage = { driver: 'postgres', postgresUrl: `${target.href}?options=-c%20search_path%3D${schema}`, connectTimeoutMs: 500, queryTimeoutMs: 1_000 };
    stack = await startStack({ config: { storage } });
    origin = stack.url.replace(/\/v1$/, '');
  });
  afterAll(async () => {
    await stack?.close();
    await proxy?.cut();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });

  const create = (body: Record<string, unknown>) => rawPost(`${stack.url}/responses`, JSON.stringify({ model: 'm', ...body }), { timeoutMs: 20_000 });

  it('answers 503 with Retry-After quickly, reports not-ready, and recovers by itself', async () => {
    const first = await create({ input: '[[say stored]]' });
    expect(first.status).toBe(200);
    const firstId = JSON.parse(first.text).id;
    expect((await get(`${origin}/ready`)).status).toBe(200);

    await proxy.cut();

    // A continuation needs the store before anything else.
    const { ms, value: continued } = await timed(() => create({ input: 'more', previous_response_id: firstId }));
    expect(continued.status).toBe(503);
    expect(continued.headers['retry-after']).toMatch(/^\d+$/);
    expect(JSON.parse(continued.text).error).toMatchObject({ code: 'store_unavailable', type: 'server_error' });
    // Bounded by the connect timeout (500 ms), far from hanging: a generous margin for busy machines.
    expect(ms).toBeLessThan(8_000);

    // Reads and the stored-response routes answer the same way.
    const read = await get(`${stack.url}/responses/${firstId}`);
    expect(read.status).toBe(503);
    expect(read.headers['retry-after']).toBeDefined();
    // A new stored response runs, then cannot be saved: a 503, never a 500.
    const fresh = await create({ input: '[[say unsaved]]' });
    expect(fresh.status).toBe(503);
    // Streaming: the failure is a response.failed event naming the store.
    const streamed = await create({ input: '[[say unsaved]]', stream: true });
    expect(streamed.text).toContain('store_unavailable');
    expect(streamed.text).not.toContain('internal_error');
    // Requests that do not touch the store are still served.
    expect((await create({ input: '[[say no store]]', store: false })).status).toBe(200);

    const ready = await get(`${origin}/ready`);
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.text)).toMatchObject({ status: 'not_ready', state: 'unavailable', upstream: 'ok' });

    await proxy.restore();

    // No restart: the pool reconnects on its own.
    let back = 0;
    for (let i = 0; i < 50 && back !== 200; i++) {
      back = (await get(`${origin}/ready`)).status;
      if (back !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(back).toBe(200);
    const resumed = await create({ input: '[[say resumed]]', previous_response_id: firstId });
    expect(resumed.status).toBe(200);
    expect(JSON.parse(resumed.text).output.at(-1).content[0].text).toBe('resumed');
  }, 60_000);

  it('Files and Vector Stores routes answer 503 store_unavailable too, and a file_search call fails for the model, not the request', async () => {
    const file = await stack.openai.files.create({ file: await toFile(Buffer.from('The kettle warranty lasts 24 months.'), 'kettle.txt'), purpose: 'assistants' });
    const store = await stack.openai.vectorStores.create({ name: 'manuals', file_ids: [file.id] });
    let status = 'in_progress';
    for (let i = 0; i < 100 && status === 'in_progress'; i++) {
      status = (await stack.openai.vectorStores.files.retrieve(file.id, { vector_store_id: store.id })).status;
      if (status === 'in_progress') await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe('completed');
    const tools = [{ type: 'file_search' as const, vector_store_ids: [store.id] }];
    const search = '[[call file_search {"queries":["kettle warranty"]}]]';

    await proxy.cut();
    try {
      const unavailable = async (call: Promise<unknown>) => {
        const err = await call.then(
          () => null,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(OpenAI.APIError);
        const api = err as InstanceType<typeof OpenAI.APIError>;
        expect(api.status).toBe(503);
        expect(api.headers?.get('retry-after')).toMatch(/^\d+$/);
        expect(api.error).toMatchObject({ code: 'store_unavailable', type: 'server_error' });
      };
      await unavailable(stack.openai.files.list());
      await unavailable(stack.openai.files.retrieve(file.id));
      await unavailable(stack.openai.files.content(file.id));
      await unavailable(stack.openai.files.create({ file: await toFile(Buffer.from('more'), 'more.txt'), purpose: 'assistants' }));
      await unavailable(stack.openai.files.delete(file.id));
      await unavailable(stack.openai.vectorStores.list());
      await unavailable(stack.openai.vectorStores.create({ name: 'new' }));
      await unavailable(stack.openai.vectorStores.retrieve(store.id));
      await unavailable(stack.openai.vectorStores.search(store.id, { query: 'kettle' }));
      await unavailable(stack.openai.vectorStores.files.list(store.id));
      await unavailable(stack.openai.vectorStores.fileBatches.create(store.id, { file_ids: [file.id] }));

      // The tool call cannot reach its index: a failed call the model reads, the response itself completes.
      const answered = await stack.openai.responses.create({ model: 'm', input: search, tools, store: false });
      expect(answered.status).toBe('completed');
      const call = answered.output.find((i) => i.type === 'file_search_call');
      expect(call).toMatchObject({ status: 'failed', queries: ['kettle warranty'] });
      const toModel = (stack.simulator.requests.at(-1)!.body as any).input.find((i: any) => i.type === 'function_call_output');
      expect(JSON.parse(toModel.output).error).toMatchObject({ code: 'store_unavailable' });
      // Streamed the same way: the stream completes, never response.failed.
      const stream = await stack.openai.responses.create({ model: 'm', input: search, tools, store: false, stream: true });
      const types: string[] = [];
      for await (const event of stream) types.push(event.type);
      expect(types).toContain('response.file_search_call.completed');
      expect(types.at(-1)).toBe('response.completed');
    } finally {
      await proxy.restore();
    }

    let back = 0;
    for (let i = 0; i < 50 && back !== 200; i++) {
      back = await stack.openai.files
        .retrieve(file.id)
        .then(() => 200)
        .catch((e: { status?: number }) => e.status ?? 0);
      if (back !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(back).toBe(200);
    const found = await stack.openai.vectorStores.search(store.id, { query: 'kettle warranty' });
    expect(found.data[0].filename).toBe('kettle.txt');
  }, 60_000);

  it('a database that stops answering on open connections is a 503 after the query timeout, then recovers', async () => {
    const first = await create({ input: '[[say before freeze]]' });
    expect(first.status).toBe(200);
    const firstId = JSON.parse(first.text).id;

    proxy.freeze();
    const { ms, value: frozen } = await timed(() => create({ input: 'more', previous_response_id: firstId }));
    expect(frozen.status).toBe(503);
    expect(frozen.headers['retry-after']).toBeDefined();
    // Bounded by the query timeout (1 s) or the connect timeout (500 ms), not by TCP's own minutes.
    expect(ms).toBeLessThan(10_000);
    expect((await get(`${origin}/ready`)).status).toBe(503);

    proxy.thaw();
    let back = 0;
    for (let i = 0; i < 50 && back !== 200; i++) {
      back = (await get(`${origin}/ready`)).status;
      if (back !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(back).toBe(200);
    expect((await create({ input: '[[say thawed]]', previous_response_id: firstId })).status).toBe(200);
  }, 60_000);
});
