import { dirname, join } from 'node:path';
import { toFile } from 'openai';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { postgresBackend, sqliteBackend, type Backend } from './support/file-search/backends.js';
import { get } from './support/hardening/growth.js';

const poll = { pollIntervalMs: 20 };

async function uploadNotes(stack: GatewayStack, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    ids.push((await stack.openai.files.create({ file: await toFile(Buffer.from(`note ${i} about item${i}`), `n${i}.txt`), purpose: 'assistants' })).id);
  }
  return ids;
}

describe('ingestion jobs outlive the process that accepted them (SQLite)', () => {
  let backend: Backend;
  afterAll(async () => backend?.drop());

  it('a batch accepted by a gateway that never ingests is completed by the next one on the same file', async () => {
    backend = await sqliteBackend();
    const accepting = await startStack({ config: { storage: backend.storage, fileSearch: { ingestion: { enabled: false } } } });
    let storeId: string;
    let batchId: string;
    try {
      const ids = await uploadNotes(accepting, 5);
      storeId = (await accepting.openai.vectorStores.create({ name: 'restart' })).id;
      const batch = await accepting.openai.vectorStores.fileBatches.create(storeId, { file_ids: ids });
      batchId = batch.id;
      expect(batch).toMatchObject({ status: 'in_progress', file_counts: { in_progress: 5, total: 5 } });
    } finally {
      await accepting.close();
    }
    const next = await startStack({ config: { storage: backend.storage, fileSearch: { ingestion: { pollMs: 50 } } } });
    try {
      const done = await next.openai.vectorStores.fileBatches.poll(storeId!, batchId!, poll);
      expect(done).toMatchObject({ status: 'completed', file_counts: { completed: 5, in_progress: 0, total: 5 } });
      expect((await next.openai.vectorStores.search(storeId!, { query: 'item3' })).data[0].content[0].text).toBe('note 3 about item3');
    } finally {
      await next.close();
    }
  }, 120_000);

  it('cancels a batch still waiting: its files become cancelled and are never ingested', async () => {
    const sqlite = await sqliteBackend();
    const stack = await startStack({ config: { storage: sqlite.storage, fileSearch: { ingestion: { enabled: false } } } });
    try {
      const ids = await uploadNotes(stack, 3);
      const store = await stack.openai.vectorStores.create({ name: 'cancel' });
      const batch = await stack.openai.vectorStores.fileBatches.create(store.id, { file_ids: ids });
      const cancelled = await stack.openai.vectorStores.fileBatches.cancel(batch.id, { vector_store_id: store.id });
      expect(cancelled).toMatchObject({ status: 'cancelled', file_counts: { cancelled: 3, in_progress: 0, total: 3 } });
      const files = await stack.openai.vectorStores.fileBatches.listFiles(batch.id, { vector_store_id: store.id, filter: 'cancelled' });
      expect(files.data.map((f) => f.id).sort()).toEqual([...ids].sort());
      expect((await stack.openai.vectorStores.retrieve(store.id)).file_counts).toMatchObject({ cancelled: 3, total: 3 });
    } finally {
      await stack.close();
      await sqlite.drop();
    }
  });
});

describe('two replicas on one PostgreSQL database share the ingestion queue', () => {
  let backend: Backend;
  let a: GatewayStack;
  let b: GatewayStack;

  beforeAll(async () => {
    backend = await postgresBackend();
    const config = { storage: backend.storage, fileSearch: { ingestion: { pollMs: 20, concurrency: 3 } } };
    [a, b] = await Promise.all([startStack({ config }), startStack({ config })]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await backend?.drop();
  });

  it('ingests every file exactly once, whichever replica claims it, and both serve the result', async () => {
    const ids = await uploadNotes(a, 30);
    const store = await b.openai.vectorStores.create({ name: 'shared' });
    const batch = await a.openai.vectorStores.fileBatches.create(store.id, { file_ids: ids });
    const done = await b.openai.vectorStores.fileBatches.poll(store.id, batch.id, poll);
    expect(done.file_counts).toEqual({ in_progress: 0, completed: 30, failed: 0, cancelled: 0, total: 30 });
    const rows = await backend.query!('SELECT attempts, claimed_by FROM {schema}.fs_store_files');
    expect(rows).toHaveLength(30);
    expect(rows.every((r) => r.attempts === 1 && r.claimed_by === null)).toBe(true);
    const chunks = await backend.query!('SELECT file_id, count(*)::int AS n FROM {schema}.fs_chunks GROUP BY file_id');
    expect(chunks.every((r) => r.n === 1)).toBe(true);
    expect(chunks).toHaveLength(30);
    expect((await a.openai.vectorStores.search(store.id, { query: 'item17' })).data[0].file_id).toBe(ids[17]);
  }, 120_000);
});

describe('a file whose extraction outlasts its deadline', () => {
  it('fails as invalid_file and the worker goes on with the next file', async () => {
    const { makePdf } = await import('./support/file-search/documents.js');
    // A deadline a small text file meets even on a loaded machine (100 ms did not, beside a full suite and two busy loops).
    const stack = await startStack({ config: { fileSearch: { ingestion: { pollMs: 50, concurrency: 1, extractTimeoutMs: 1_000 } } } });
    try {
      // 1 000 pages of text: pdf.js needs well over a second for them on any machine this runs on.
      const pages = Array.from({ length: 1_000 * 45 }, (_, i) => `Line ${i} of a very long scanned report.`);
      const slow = await stack.openai.files.create({ file: await toFile(await makePdf(pages), 'huge.pdf'), purpose: 'assistants' });
      const quick = await stack.openai.files.create({ file: await toFile(Buffer.from('small note'), 'small.txt'), purpose: 'assistants' });
      const store = await stack.openai.vectorStores.create({ name: 'deadline' });
      const batch = await stack.openai.vectorStores.fileBatches.createAndPoll(store.id, { file_ids: [slow.id, quick.id] }, poll);
      expect(batch.file_counts).toMatchObject({ completed: 1, failed: 1 });
      const failed = await stack.openai.vectorStores.files.retrieve(slow.id, { vector_store_id: store.id });
      expect(failed.last_error).toEqual({ code: 'invalid_file', message: expect.stringContaining('took longer than 1000 ms') });
      // The parse ran in a thread of its own: this process kept serving meanwhile, and serves now.
      expect((await stack.openai.files.retrieve(quick.id)).id).toBe(quick.id);
    } finally {
      await stack.close();
    }
  }, 120_000);
});

describe.each([
  ['SQLite', sqliteBackend],
  ['PostgreSQL', postgresBackend],
])('a job whose process died on every attempt (%s)', (_name, make) => {
  it('is failed by the next gateway instead of run again, and that gateway serves meanwhile', async () => {
    const backend = await make();
    const accepting = await startStack({ config: { storage: backend.storage, fileSearch: { ingestion: { enabled: false } } } });
    let storeId: string;
    let fileId: string;
    try {
      [fileId] = await uploadNotes(accepting, 1);
      storeId = (await accepting.openai.vectorStores.create({ name: 'poison', file_ids: [fileId] })).id;
    } finally {
      await accepting.close();
    }
    // As three processes left it, each killed while it held the job: claimed three times, its lease run out.
    const poison = `UPDATE {schema}fs_store_files SET attempts = 3, claimed_by = 'crashed', lease_until = 1`;
    if (backend.query) await backend.query(poison.replace('{schema}', '{schema}.'));
    else {
      const { default: Database } = await import('better-sqlite3');
      const db = new Database(join(dirname(backend.storage.sqlitePath as string), 'files.sqlite'));
      db.prepare(poison.replace('{schema}', '')).run();
      db.close();
    }
    const next = await startStack({ config: { storage: backend.storage, fileSearch: { ingestion: { pollMs: 20, maxAttempts: 3 } } } });
    try {
      expect((await get(`${next.url.replace(/\/v1$/, '')}/health`)).status).toBe(200);
      let file = await next.openai.vectorStores.files.retrieve(fileId!, { vector_store_id: storeId! });
      for (let i = 0; i < 500 && file.status === 'in_progress'; i++) {
        await new Promise((r) => setTimeout(r, 20));
        file = await next.openai.vectorStores.files.retrieve(fileId!, { vector_store_id: storeId! });
      }
      expect(file).toMatchObject({ status: 'failed', last_error: { code: 'server_error', message: expect.stringContaining('started 3 times') } });
      // Never run again: no chunks were written for it.
      expect((await next.openai.vectorStores.search(storeId!, { query: 'item0' })).data).toEqual([]);
      expect((await next.openai.files.retrieve(fileId!)).id).toBe(fileId!);
    } finally {
      await next.close();
      await backend.drop();
    }
  }, 60_000);
});
