import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { postgresBackend, sqliteBackend, type Backend } from './support/file-search/backends.js';
import { TOPICS } from './support/file-search/documents.js';

/**
 * Two API keys on one gateway: what one key uploads, stores, searches or
 * runs code in is not there for the other, who gets 404 (never 403, as
 * OpenAI answers) and never sees it listed.
 */
const KEY_A = 'sk-alpha-0123456789';
const KEY_B = 'sk-bravo-9876543210';
const MODEL = 'switchyard-sim';
const poll = { pollIntervalMs: 20 };
const searchFiles = (...queries: string[]) => `[[call file_search ${JSON.stringify({ queries })}]]`;

async function apiError(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await promise;
  } catch (e) {
    if (e instanceof OpenAI.APIError) return e;
    throw e;
  }
  throw new Error('expected the request to fail');
}

async function expect404(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const e = await apiError(promise);
  expect(e.status).toBe(404);
  return e;
}

const clients = (stack: GatewayStack): [OpenAI, OpenAI] => [
  new OpenAI({ baseURL: stack.url, apiKey: KEY_A, maxRetries: 0 }),
  new OpenAI({ baseURL: stack.url, apiKey: KEY_B, maxRetries: 0 }),
];

describe.each([
  ['SQLite', sqliteBackend],
  ['PostgreSQL', postgresBackend],
])('files and vector stores per API key on %s', (_name, makeBackend) => {
  let backend: Backend;
  let stack: GatewayStack;
  let alice: OpenAI;
  let bob: OpenAI;
  let aliceFile: string;
  let aliceStore: string;
  let aliceBatch: string;

  beforeAll(async () => {
    backend = await makeBackend();
    stack = await startStack({ config: { auth: { apiKeys: [KEY_A, KEY_B] }, storage: backend.storage, fileSearch: { ingestion: { pollMs: 50 } } } });
    [alice, bob] = clients(stack);
    aliceFile = (await alice.files.create({ file: await toFile(Buffer.from(`# Warranty\n${TOPICS.warranty}`), 'warranty.md'), purpose: 'assistants' })).id;
    aliceStore = (await alice.vectorStores.create({ name: 'alice docs' })).id;
    const batch = await alice.vectorStores.fileBatches.createAndPoll(aliceStore, { file_ids: [aliceFile], attributes: { team: 'a' } }, poll);
    expect(batch.file_counts.completed).toBe(1);
    aliceBatch = batch.id;
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
    await backend?.drop();
  });

  it('keeps a file to its key: the other key neither lists, reads, downloads nor deletes it', async () => {
    const bobFile = await bob.files.create({ file: await toFile(Buffer.from('bob only'), 'bob.txt'), purpose: 'assistants' });
    expect((await alice.files.list()).data.map((f) => f.id)).toEqual([aliceFile]);
    expect((await bob.files.list()).data.map((f) => f.id)).toEqual([bobFile.id]);
    // A cursor naming the other key's file shows nothing of it either.
    expect((await bob.files.list({ after: aliceFile })).data.map((f) => f.id)).toEqual([bobFile.id]);

    const missing = await expect404(bob.files.retrieve(aliceFile));
    expect(missing.message).toContain(aliceFile);
    await expect404(bob.files.content(aliceFile));
    await expect404(bob.files.delete(aliceFile));
    expect(await (await alice.files.content(aliceFile)).text()).toContain('thirty-six months');
    await expect404(alice.files.retrieve(bobFile.id));
  });

  it('keeps a vector store, its files and batches to its key', async () => {
    expect((await bob.vectorStores.list()).data.map((s) => s.id)).not.toContain(aliceStore);
    expect((await alice.vectorStores.list()).data.map((s) => s.id)).toContain(aliceStore);
    await expect404(bob.vectorStores.retrieve(aliceStore));
    await expect404(bob.vectorStores.update(aliceStore, { name: 'taken' }));
    await expect404(bob.vectorStores.delete(aliceStore));
    await expect404(bob.vectorStores.search(aliceStore, { query: 'warranty' }));

    await expect404(bob.vectorStores.files.list(aliceStore));
    await expect404(bob.vectorStores.files.retrieve(aliceFile, { vector_store_id: aliceStore }));
    await expect404(bob.vectorStores.files.content(aliceFile, { vector_store_id: aliceStore }));
    await expect404(bob.vectorStores.files.update(aliceFile, { vector_store_id: aliceStore, attributes: { team: 'b' } }));
    await expect404(bob.vectorStores.files.delete(aliceFile, { vector_store_id: aliceStore }));
    await expect404(bob.vectorStores.files.create(aliceStore, { file_id: (await bob.files.list()).data[0].id }));

    await expect404(bob.vectorStores.fileBatches.create(aliceStore, { file_ids: [aliceFile] }));
    await expect404(bob.vectorStores.fileBatches.retrieve(aliceBatch, { vector_store_id: aliceStore }));
    await expect404(bob.vectorStores.fileBatches.cancel(aliceBatch, { vector_store_id: aliceStore }));
    await expect404(bob.vectorStores.fileBatches.listFiles(aliceBatch, { vector_store_id: aliceStore }));

    // Nothing of it changed.
    const store = await alice.vectorStores.retrieve(aliceStore);
    expect(store).toMatchObject({ name: 'alice docs', file_counts: { completed: 1, total: 1 } });
    expect(await alice.vectorStores.files.retrieve(aliceFile, { vector_store_id: aliceStore })).toMatchObject({ status: 'completed', attributes: { team: 'a' } });
    expect((await alice.vectorStores.fileBatches.listFiles(aliceBatch, { vector_store_id: aliceStore })).data.map((f) => f.id)).toEqual([aliceFile]);
    const found = await alice.vectorStores.search(aliceStore, { query: 'kettle warranty' });
    expect(found.data[0]).toMatchObject({ file_id: aliceFile, filename: 'warranty.md' });
  });

  it("refuses another key's file in one's own store with a 404 naming the file id", async () => {
    const bobStore = await bob.vectorStores.create({ name: 'bob docs' });
    const single = await expect404(bob.vectorStores.files.create(bobStore.id, { file_id: aliceFile }));
    expect([single.param, single.message]).toEqual(['file_id', expect.stringContaining(aliceFile)]);
    const batch = await expect404(bob.vectorStores.fileBatches.create(bobStore.id, { file_ids: [aliceFile] }));
    expect([batch.param, batch.message]).toEqual(['file_ids[0]', expect.stringContaining(aliceFile)]);
    const listed = await expect404(bob.vectorStores.fileBatches.create(bobStore.id, { files: [{ file_id: aliceFile }] } as any));
    expect(listed.param).toBe('files[0]');
    const created = await expect404(bob.vectorStores.create({ name: 'sneaky', file_ids: [aliceFile] }));
    expect(created.param).toBe('file_ids[0]');
    expect((await bob.vectorStores.list()).data.map((s) => s.name)).toEqual(['bob docs']);
    expect((await bob.vectorStores.files.list(bobStore.id)).data).toEqual([]);
  });

  it("lets the file_search tool search only the stores of the request's key", async () => {
    const own = await alice.responses.create({
      model: MODEL,
      input: `Warranty? ${searchFiles('kettle warranty')}`,
      tools: [{ type: 'file_search', vector_store_ids: [aliceStore] }],
      include: ['file_search_call.results'],
    });
    expect(own.output[0]).toMatchObject({ type: 'file_search_call', status: 'completed' });
    expect((own.output[0] as any).results[0].file_id).toBe(aliceFile);
    expect(own.output_text).toContain('thirty-six months');

    const bobStore = (await bob.vectorStores.list()).data[0].id;
    for (const ids of [[aliceStore], [bobStore, aliceStore]]) {
      const foreign = await bob.responses.create({
        model: MODEL,
        input: `Warranty? ${searchFiles('kettle warranty')}`,
        tools: [{ type: 'file_search', vector_store_ids: ids }],
        include: ['file_search_call.results'],
      });
      // The call fails as for an unknown store; the request completes.
      expect(foreign.status).toBe('completed');
      expect(foreign.output[0]).toMatchObject({ type: 'file_search_call', status: 'failed', results: null });
      const toModel = (stack.simulator.requests.at(-1)!.body as any).input.find((i: any) => i.type === 'function_call_output').output;
      expect(JSON.parse(toModel).error).toEqual({ code: 'vector_store_not_found', message: `No vector store found with id '${aliceStore}'.` });
      expect(foreign.output_text).not.toContain('thirty-six months');
    }

    // Streaming takes the same path: the failed call, and no text of the other key's file.
    const stream = await bob.responses.create({
      model: MODEL,
      input: `Warranty? ${searchFiles('kettle warranty')}`,
      tools: [{ type: 'file_search', vector_store_ids: [aliceStore] }],
      stream: true,
    });
    const events: any[] = [];
    for await (const e of stream) events.push(e);
    const done = events.find((e) => e.type === 'response.output_item.done' && e.item.type === 'file_search_call');
    expect(done.item.status).toBe('failed');
    expect(JSON.stringify(events)).not.toContain('thirty-six months');
  });
});

describe('containers per API key', () => {
  let stack: GatewayStack;
  let alice: OpenAI;
  let bob: OpenAI;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'switchyard-tenants-'));
    // No interpreter is warmed: these requests never run code, only find (or not) their containers and files.
    stack = await startStack({ config: { auth: { apiKeys: [KEY_A, KEY_B] }, codeInterpreter: { backend: 'pyodide', dataDir, maxWorkers: 1, warmWorkers: 0 } } });
    [alice, bob] = clients(stack);
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps a container and its files to its key', async () => {
    const box = await alice.containers.create({ name: 'alice box' });
    const note = await alice.containers.files.create(box.id, { file: await toFile(Buffer.from('private note'), 'note.txt') });
    expect((await bob.containers.list()).data).toEqual([]);
    expect((await alice.containers.list()).data.map((c) => c.id)).toEqual([box.id]);

    await expect404(bob.containers.retrieve(box.id));
    await expect404(bob.containers.files.list(box.id));
    await expect404(bob.containers.files.retrieve(note.id, { container_id: box.id }));
    await expect404(bob.containers.files.content.retrieve(note.id, { container_id: box.id }));
    await expect404(bob.containers.files.create(box.id, { file: await toFile(Buffer.from('planted'), 'planted.txt') }));
    await expect404(bob.containers.files.delete(note.id, { container_id: box.id }));
    await expect404(bob.containers.delete(box.id));

    // Copying the other key's container file into one's own container: not found, by its id.
    const bobBox = await bob.containers.create({ name: 'bob box' });
    const copied = await expect404(bob.containers.files.create(bobBox.id, { file_id: note.id }));
    expect(copied.message).toContain(note.id);

    expect(await (await alice.containers.files.content.retrieve(note.id, { container_id: box.id })).text()).toBe('private note');
    expect((await alice.containers.files.list(box.id)).data.map((f) => f.id)).toEqual([note.id]);
  });

  it("runs the code_interpreter tool only in containers of the request's key", async () => {
    const box = (await alice.containers.list()).data[0];
    const [note] = (await alice.containers.files.list(box.id)).data;

    const named = await expect404(bob.responses.create({ model: MODEL, input: 'hi', tools: [{ type: 'code_interpreter', container: box.id }] }));
    expect([named.code, named.param]).toEqual(['container_not_found', 'tools[0].container']);
    const copied = await expect404(bob.responses.create({ model: MODEL, input: 'hi', tools: [{ type: 'code_interpreter', container: { type: 'auto', file_ids: [note.id] } }] }));
    expect([copied.code, copied.param]).toEqual(['file_not_found', 'tools[0].container.file_ids[0]']);

    // The owner may, and the container the tool makes for the request is the owner's.
    const before = new Set((await alice.containers.list()).data.map((c) => c.id));
    const own = await alice.responses.create({ model: MODEL, input: 'hi', tools: [{ type: 'code_interpreter', container: { type: 'auto', file_ids: [note.id] } }] });
    expect(own.status).toBe('completed');
    const made = (await alice.containers.list()).data.filter((c) => !before.has(c.id));
    expect(made).toHaveLength(1);
    expect((await alice.containers.files.list(made[0].id)).data.map((f) => f.path)).toEqual(['/mnt/data/note.txt']);
    expect((await bob.containers.list()).data.map((c) => c.id)).not.toContain(made[0].id);
    await expect404(bob.containers.retrieve(made[0].id));
    const explicit = await alice.responses.create({ model: MODEL, input: 'hi', tools: [{ type: 'code_interpreter', container: made[0].id }] });
    expect(explicit.status).toBe('completed');
  });
});
