import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import pg from 'pg';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { rawPost } from './support/robustness/raw-http.js';
import { SocketClient } from './support/socket-client.js';

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const LONE = 'a\ud800b';
const NUL = 'a\u0000b';

/** The 400 the SDK raised, in the envelope, naming `param`. */
async function refused(call: Promise<unknown>, param: string): Promise<void> {
  const err = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenAI.BadRequestError);
  expect((err as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_unicode', param });
}

/**
 * NUL and unpaired surrogates (issue 22, "Bad input is a 4xx on every
 * store"): PostgreSQL refuses both where SQLite stored them, so they are
 * refused at the edge of every route, before any lookup or model run, with
 * the same 400 naming the field on both stores.
 */
describe.each(['sqlite', 'postgres'] as const)('unstorable text on %s', (driver) => {
  let stack: GatewayStack;
  let admin: pg.Pool | undefined;
  let dir: string;
  const schema = `sy_text_${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sy-text-'));
    let storage: Record<string, unknown> = { driver: 'sqlite', sqlitePath: join(dir, 'state.sqlite') };
    if (driver === 'postgres') {
      admin = new pg.Pool({ connectionString: url, max: 1 });
      await admin.query(`CREATE SCHEMA ${schema}`);
      storage = { driver: 'postgres', postgresUrl: `${url}?options=-c%20search_path%3D${schema}` };
    }
    stack = await startStack({ config: { storage } });
  });
  afterAll(async () => {
    await stack?.close();
    if (admin) {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses them in a Responses body before the model runs, streamed, background or not', async () => {
    const before = stack.simulator.requests.length;
    await refused(stack.openai.responses.create({ model: 'm', input: LONE }), 'input');
    await refused(stack.openai.responses.create({ model: 'm', input: [{ role: 'user', content: [{ type: 'input_text', text: NUL }] }] }), 'input[0].content[0].text');
    await refused(
      stack.openai.responses.create({ model: 'm', input: 'hi', stream: true }).then(() => stack.openai.responses.create({ model: 'm', input: LONE, stream: true })),
      'input',
    );
    await refused(stack.openai.responses.create({ model: 'm', input: 'hi', background: true, instructions: NUL }), 'instructions');
    await refused(stack.openai.responses.create({ model: 'm', input: 'hi', metadata: { k: '\udc00' } }), 'metadata.k');
    // One streamed request above was valid; none of the refused ones reached the model.
    expect(stack.simulator.requests.length).toBe(before + 1);
    // And a well-formed pair (an emoji) is text like any other.
    expect((await stack.openai.responses.create({ model: 'm', input: '[[say 😀]]' })).output_text).toBe('😀');
  });

  it('refuses them in every id-bearing path and in query strings, with the route parameter named', async () => {
    await refused(stack.openai.responses.retrieve(NUL), 'id');
    await refused(stack.openai.responses.inputItems.list(NUL), 'id');
    await refused(stack.openai.responses.delete(NUL), 'id');
    await refused(stack.openai.responses.cancel(NUL), 'id');
    await refused(stack.openai.conversations.retrieve(NUL), 'id');
    await refused(stack.openai.conversations.items.list(NUL), 'id');
    const conversation = await stack.openai.conversations.create({});
    await refused(stack.openai.conversations.items.retrieve(NUL, { conversation_id: conversation.id }), 'itemId');
    await refused(stack.openai.files.retrieve(NUL), 'id');
    await refused(stack.openai.files.content(NUL), 'id');
    await refused(stack.openai.files.delete(NUL), 'id');
    await refused(stack.openai.vectorStores.retrieve(NUL), 'id');
    await refused(stack.openai.vectorStores.files.list(NUL), 'id');
    await refused(stack.openai.vectorStores.search(NUL, { query: 'x' }), 'id');
    const store = await stack.openai.vectorStores.create({ name: 'ok' });
    await refused(stack.openai.vectorStores.files.retrieve(NUL, { vector_store_id: store.id }), 'fileId');
    await refused(stack.openai.responses.inputItems.list('resp_x', { after: NUL }), 'after');
    await refused(stack.openai.files.list({ purpose: NUL }), 'purpose');
    await refused(stack.openai.containers.retrieve(NUL), 'id');
    await refused(stack.openai.containers.files.list(NUL), 'id');
    // Percent-encoded by hand, as a client without the SDK's encoding sends it.
    for (const path of ['/responses/%00', '/responses/%00/input_items', '/conversations/%00', '/files/%00', '/vector_stores/%00', '/containers/%00']) {
      const res = await fetch(`${stack.url}${path}`);
      expect([path, res.status]).toEqual([path, 400]);
      expect(((await res.json()) as any).error).toMatchObject({ code: 'unsupported_unicode', param: 'id' });
    }
  });

  it('refuses them in Conversations, Files and Vector Stores bodies and in an uploaded file name', async () => {
    await refused(stack.openai.conversations.create({ metadata: { k: NUL } }), 'metadata.k');
    await refused(stack.openai.conversations.create({ items: [{ type: 'message', role: 'user', content: LONE }] }), 'items[0].content');
    await refused(stack.openai.vectorStores.create({ name: NUL }), 'name');
    await refused(stack.openai.files.create({ file: await toFile(Buffer.from('hello'), 'a.txt'), purpose: NUL as 'assistants' }), 'purpose');
    // A NUL in the part's file name is already refused by the multipart reader, as a 400 naming the file.
    const named = await stack.openai.files.create({ file: await toFile(Buffer.from('hello'), 'a\u0000.txt'), purpose: 'assistants' }).catch((e: unknown) => e);
    expect(named).toBeInstanceOf(OpenAI.BadRequestError);
    expect((named as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ param: 'file' });
    const file = await stack.openai.files.create({ file: await toFile(Buffer.from('hello'), 'résumé.txt'), purpose: 'assistants' });
    expect(file.filename).toBe('résumé.txt');
  });

  it('refuses them in a WebSocket response.create frame with an error frame, and the socket serves on', async () => {
    const before = stack.simulator.requests.length;
    const socket = await SocketClient.open(stack);
    try {
      socket.send('{"type":"response.create","model":"m","input":"x\\ud800"}');
      expect(await socket.next()).toMatchObject({ type: 'error', status: 400, error: { code: 'unsupported_unicode', param: 'input' } });
      expect(stack.simulator.requests.length).toBe(before);
      socket.create({ model: 'm', input: '[[say still here]]' });
      expect((await socket.untilDone()).at(-1).type).toBe('response.completed');
    } finally {
      socket.ws.close();
    }
  });

  it('answers raw JSON escapes the same way (no SDK in between)', async () => {
    // The JSON escape as a client library that does not check would send it.
    const res = await rawPost(`${stack.url}/responses`, '{"model":"m","input":"x\\ud800"}');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).error).toMatchObject({ param: 'input', code: 'unsupported_unicode' });
    const key = await rawPost(`${stack.url}/conversations`, '{"metadata":{"k\\u0000":"v"}}');
    expect(key.status).toBe(400);
    expect(JSON.parse(key.text).error.code).toBe('unsupported_unicode');
  });
});
