import OpenAI, { toFile } from 'openai';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { postgresBackend, sqliteBackend, type Backend } from './support/file-search/backends.js';
import { TOPICS, makeDocx, makePdf } from './support/file-search/documents.js';

const poll = { pollIntervalMs: 20 };

async function upload(client: OpenAI, name: string, content: string | Buffer, purpose: 'assistants' | 'user_data' = 'assistants') {
  return client.files.create({ file: await toFile(Buffer.from(content), name), purpose });
}

async function apiError(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await promise;
  } catch (e) {
    if (e instanceof OpenAI.APIError) return e;
    throw e;
  }
  throw new Error('expected the request to fail');
}

describe.each([
  ['SQLite', sqliteBackend],
  ['PostgreSQL', postgresBackend],
])('Files and Vector Stores APIs over the openai client on %s', (_name, makeBackend) => {
  let backend: Backend;
  let stack: GatewayStack;
  let client: OpenAI;

  beforeAll(async () => {
    backend = await makeBackend();
    stack = await startStack({ config: { storage: backend.storage, fileSearch: { ingestion: { pollMs: 50 } } } });
    client = stack.openai;
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
    await backend?.drop();
  });

  it('uploads, lists with a cursor and a purpose, retrieves, reads back and deletes files', async () => {
    const a = await upload(client, 'a.txt', 'alpha');
    const b = await upload(client, 'b.md', '# beta', 'user_data');
    const c = await upload(client, 'c.txt', 'gamma');
    expect(a).toMatchObject({ id: expect.stringMatching(/^file-/), object: 'file', bytes: 5, filename: 'a.txt', purpose: 'assistants', status: 'processed' });

    const firstPage = await client.files.list({ limit: 2, order: 'asc' });
    const ids = firstPage.data.map((f) => f.id);
    expect(ids).toEqual([a.id, b.id]);
    expect(firstPage.hasNextPage()).toBe(true);
    const next = await firstPage.getNextPage();
    expect(next.data.map((f) => f.id)).toContain(c.id);
    expect((await client.files.list({ purpose: 'user_data' })).data.map((f) => f.id)).toEqual([b.id]);

    expect(await client.files.retrieve(b.id)).toEqual(b);
    expect(await (await client.files.content(b.id)).text()).toBe('# beta');

    expect(await client.files.delete(c.id)).toEqual({ id: c.id, object: 'file', deleted: true });
    const gone = await apiError(client.files.retrieve(c.id));
    expect(gone.status).toBe(404);
  });

  it('sets expires_at from expires_after and refuses a bad anchor, naming the field', async () => {
    const f = await client.files.create({
      file: await toFile(Buffer.from('short-lived'), 'e.txt'),
      purpose: 'assistants',
      expires_after: { anchor: 'created_at', seconds: 3600 },
    });
    expect(f.expires_at).toBe(f.created_at + 3600);
    const bad = await apiError(client.files.create({ file: await toFile(Buffer.from('x'), 'x.txt'), purpose: 'assistants', expires_after: { anchor: 'created_at', seconds: 5 } }));
    expect(bad.status).toBe(400);
    expect(bad.param).toBe('expires_after.seconds');
    const noPurpose = await apiError(client.files.create({ file: await toFile(Buffer.from('x'), 'x.txt'), purpose: 'wrong' as any }));
    expect(noPurpose.param).toBe('purpose');
  });

  it('ingests a PDF and a DOCX written in the test, HTML, Markdown and code; fails a broken and an unsupported file; searches with filters', async () => {
    const pdf = await upload(client, 'kettle-manual.pdf', await makePdf(['Larkspur kettle manual', TOPICS.warranty]));
    const docx = await upload(client, 'care-guide.docx', await makeDocx(['Care guide', TOPICS.descaling]));
    const html = await upload(client, 'shipping.html', `<html><body><h1>Shipping</h1><p>${TOPICS.shipping}</p><script>var x = 1;</script></body></html>`);
    const md = await upload(client, 'returns.md', `# Returns\n\n${TOPICS.returns}\n`);
    const code = await upload(client, 'security.py', `def enrol():\n    """${TOPICS.security}"""\n    return True\n`);
    const broken = await upload(client, 'broken.pdf', '%PDF-1.7 this is not really a PDF');
    const binary = await upload(client, 'firmware.bin', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2]));

    const store = await client.vectorStores.create({ name: 'kettle docs', metadata: { team: 'support' }, expires_after: { anchor: 'last_active_at', days: 7 } });
    expect(store).toMatchObject({ object: 'vector_store', name: 'kettle docs', metadata: { team: 'support' }, status: 'completed', usage_bytes: 0 });
    expect(store.expires_at).toBe(store.last_active_at! + 7 * 86_400);

    const batch = await client.vectorStores.fileBatches.createAndPoll(
      store.id,
      {
        files: [
          { file_id: pdf.id, attributes: { kind: 'manual', year: 2024 } },
          { file_id: docx.id, attributes: { kind: 'guide', year: 2023 } },
          { file_id: html.id, attributes: { kind: 'policy', year: 2025 } },
          { file_id: md.id, attributes: { kind: 'policy', year: 2022 } },
          { file_id: code.id, attributes: { kind: 'code', year: 2025 } },
          { file_id: broken.id },
          { file_id: binary.id },
        ],
      } as any,
      poll,
    );
    expect(batch).toMatchObject({ object: 'vector_store.files_batch', vector_store_id: store.id, status: 'completed' });
    expect(batch.file_counts).toEqual({ in_progress: 0, completed: 5, failed: 2, cancelled: 0, total: 7 });

    const failed = await client.vectorStores.files.list(store.id, { filter: 'failed' });
    const errors = Object.fromEntries(failed.data.map((f) => [f.id, f.last_error?.code]));
    expect(errors).toEqual({ [broken.id]: 'invalid_file', [binary.id]: 'unsupported_file' });

    const retrieved = await client.vectorStores.retrieve(store.id);
    expect(retrieved.file_counts).toEqual({ in_progress: 0, completed: 5, failed: 2, cancelled: 0, total: 7 });
    expect(retrieved.usage_bytes).toBeGreaterThan(0);

    const pdfFile = await client.vectorStores.files.retrieve(pdf.id, { vector_store_id: store.id });
    expect(pdfFile).toMatchObject({
      status: 'completed',
      attributes: { kind: 'manual', year: 2024 },
      chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: 800, chunk_overlap_tokens: 400 } },
    });
    const pdfText = (await client.vectorStores.files.content(pdf.id, { vector_store_id: store.id })).data.map((p) => p.text).join(' ');
    expect(pdfText).toContain('thirty-six months');
    const docxText = (await client.vectorStores.files.content(docx.id, { vector_store_id: store.id })).data.map((p) => p.text).join(' ');
    expect(docxText).toContain('citric acid');
    const htmlText = (await client.vectorStores.files.content(html.id, { vector_store_id: store.id })).data.map((p) => p.text).join(' ');
    expect(htmlText).toContain('Rotterdam');
    expect(htmlText).not.toContain('var x');

    const top = async (query: string | string[], extra: Record<string, unknown> = {}) => (await client.vectorStores.search(store.id, { query, ...extra } as any)).data;

    expect((await top('How long is the warranty on the heating element?'))[0]).toMatchObject({ file_id: pdf.id, filename: 'kettle-manual.pdf' });
    expect((await top('limescale citric acid'))[0].file_id).toBe(docx.id);
    expect((await top('Rotterdam warehouse courier'))[0].file_id).toBe(html.id);
    expect((await top('refund for returned items'))[0].file_id).toBe(md.id);
    expect((await top('hardware keys recovery codes'))[0].file_id).toBe(code.id);

    const hit = (await top('warranty'))[0];
    expect(hit.score).toBeGreaterThan(0);
    expect(hit.score).toBeLessThanOrEqual(1);
    expect(hit.content[0]).toEqual({ type: 'text', text: expect.stringContaining('thirty-six months') });
    expect(hit.attributes).toEqual({ kind: 'manual', year: 2024 });

    // Filters apply before ranking: the best lexical match is excluded, not merely demoted.
    const policies = await top('warranty kettle refund shipping', { filters: { type: 'eq', key: 'kind', value: 'policy' } });
    expect(new Set(policies.map((r) => r.file_id))).toEqual(new Set([html.id, md.id]));
    const recent = await top('warranty kettle refund shipping limescale', {
      filters: {
        type: 'and',
        filters: [
          { type: 'gte', key: 'year', value: 2024 },
          { type: 'ne', key: 'kind', value: 'code' },
        ],
      },
    });
    expect(new Set(recent.map((r) => r.file_id))).toEqual(new Set([pdf.id, html.id]));
    const either = await top('kettle', {
      filters: {
        type: 'or',
        filters: [
          { type: 'eq', key: 'kind', value: 'guide' },
          { type: 'eq', key: 'kind', value: 'manual' },
        ],
      },
    });
    expect(new Set(either.map((r) => r.file_id))).toEqual(new Set([pdf.id, docx.id]));

    // A list of queries: each result keeps its best rank over the queries.
    const multi = await client.vectorStores.search(store.id, { query: ['warranty thermostat', 'Rotterdam'], max_num_results: 2 });
    expect(new Set(multi.data.map((r) => r.file_id))).toEqual(new Set([pdf.id, html.id]));
    // The SDK's page keeps only `data`; the page's own fields are read from the body.
    const rewritten = (await (await client.vectorStores.search(store.id, { query: 'What is the warranty of the kettle?', rewrite_query: true }).asResponse()).json()) as any;
    expect(rewritten).toMatchObject({ object: 'vector_store.search_results.page', search_query: ['warranty kettle'], has_more: false, next_page: null });
    expect(rewritten.data[0].file_id).toBe(pdf.id);
    const strict = await top('warranty', { ranking_options: { score_threshold: 1 } });
    expect(strict.every((r) => r.score >= 1)).toBe(true);

    // Scores are relevance, not rank: a query sharing no word with the store finds nothing, one
    // matching half its distinctive words scores in between, one matching all of them near 1,
    // and score_threshold tells them apart.
    expect(await top('zeppelin orchestra saxophone')).toEqual([]);
    const partial = (await top('thermostat zeppelin'))[0];
    expect(partial.file_id).toBe(pdf.id);
    expect(partial.score).toBeGreaterThan(0.2);
    expect(partial.score).toBeLessThan(0.8);
    const exact = (await top('Larkspur kettle warranty thermostat'))[0];
    expect(exact.file_id).toBe(pdf.id);
    expect(exact.score).toBeGreaterThan(0.9);
    expect(await top('thermostat zeppelin', { ranking_options: { score_threshold: 0.8 } })).toEqual([]);
    expect((await top('Larkspur kettle warranty thermostat', { ranking_options: { score_threshold: 0.8 } })).map((r) => r.file_id)).toEqual([pdf.id]);

    // Attributes can change after ingestion, and filters see the change at once.
    await client.vectorStores.files.update(md.id, { vector_store_id: store.id, attributes: { kind: 'archived', year: 2022 } });
    const afterUpdate = await top('refund shipping', { filters: { type: 'eq', key: 'kind', value: 'policy' } });
    expect(afterUpdate.map((r) => r.file_id)).toEqual([html.id]);

    // Deleting a file unlinks it from the store: gone from listings and from search.
    await client.files.delete(pdf.id);
    expect((await top('warranty thermostat heating element')).map((r) => r.file_id)).not.toContain(pdf.id);
    const listed = await client.vectorStores.files.list(store.id, { limit: 100 });
    expect(listed.data.map((f) => f.id)).not.toContain(pdf.id);

    await client.vectorStores.files.delete(docx.id, { vector_store_id: store.id });
    expect((await top('limescale citric acid')).map((r) => r.file_id)).not.toContain(docx.id);
    expect((await client.vectorStores.retrieve(store.id)).file_counts.total).toBe(5);
  });

  it('creates a store with file_ids and a static chunking strategy, updates, lists and deletes it', async () => {
    const long = Array.from({ length: 400 }, (_, i) => `Sentence ${i} about the topic number ${i % 7}.`).join(' ');
    const f = await upload(client, 'long.txt', long);
    const created = await client.vectorStores.create({
      name: 'chunks',
      file_ids: [f.id],
      chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: 200, chunk_overlap_tokens: 50 } },
    });
    const file = await client.vectorStores.files.poll(created.id, f.id, poll);
    expect(file.status).toBe('completed');
    expect(file.chunking_strategy).toEqual({ type: 'static', static: { max_chunk_size_tokens: 200, chunk_overlap_tokens: 50 } });
    const parts = (await client.vectorStores.files.content(f.id, { vector_store_id: created.id })).data;
    expect(parts.length).toBeGreaterThan(10);

    const updated = await client.vectorStores.update(created.id, { name: 'renamed', metadata: { a: 'b' } });
    expect(updated).toMatchObject({ id: created.id, name: 'renamed', metadata: { a: 'b' } });
    const listed = await client.vectorStores.list({ limit: 100 });
    expect(listed.data.map((s) => s.id)).toContain(created.id);
    expect(await client.vectorStores.delete(created.id)).toEqual({ id: created.id, object: 'vector_store.deleted', deleted: true });
    expect((await apiError(client.vectorStores.retrieve(created.id))).status).toBe(404);
  });

  it('answers bad input with a 4xx naming the field', async () => {
    const f = await upload(client, 'ok.txt', 'fine');
    const store = await client.vectorStores.create({ name: 'errors' });
    const missing = await apiError(client.vectorStores.create({ file_ids: [f.id, 'file-nope'] }));
    expect([missing.status, missing.param, missing.code]).toEqual([404, 'file_ids[1]', 'file_not_found']);
    const chunking = await apiError(client.vectorStores.create({ chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: 200, chunk_overlap_tokens: 150 } } }));
    expect([chunking.status, chunking.param]).toEqual([400, 'chunking_strategy.static.chunk_overlap_tokens']);
    const filter = await apiError(client.vectorStores.search(store.id, { query: 'x', filters: { type: 'like', key: 'a', value: 'b' } as any }));
    expect([filter.status, filter.param]).toEqual([400, 'filters.type']);
    const nested = await apiError(client.vectorStores.search(store.id, { query: 'x', filters: { type: 'and', filters: [{ type: 'eq', key: 'a', value: {} }] } as any }));
    expect(nested.param).toBe('filters.filters[0].value');
    const noQuery = await apiError(client.vectorStores.search(store.id, { query: 42 } as any));
    expect(noQuery.param).toBe('query');
    const attrs = await apiError(client.vectorStores.files.create(store.id, { file_id: f.id, attributes: { a: { nested: true } } as any }));
    expect(attrs.param).toBe('attributes.a');
    const unknownStore = await apiError(client.vectorStores.search('vs_nope', { query: 'x' }));
    expect([unknownStore.status, unknownStore.code]).toEqual([404, 'vector_store_not_found']);
    const listFilter = await apiError(client.vectorStores.files.list(store.id, { filter: 'done' as any }));
    expect(listFilter.param).toBe('filter');
    const limit = await apiError(client.files.list({ limit: 1000 }));
    expect(limit.param).toBe('limit');
  });

  it('reads a file as what its bytes are, not its name, and says which surface an image belongs to', async () => {
    const docxAsPdf = await upload(client, 'care-guide.pdf', await makeDocx(['Care guide', TOPICS.descaling]));
    const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
    const image = await upload(client, 'diagram.txt', png);
    const store = await client.vectorStores.create({ name: 'sniffed', file_ids: [docxAsPdf.id, image.id] });
    for (;;) {
      const counts = (await client.vectorStores.retrieve(store.id)).file_counts;
      if (counts.in_progress === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await client.vectorStores.files.retrieve(docxAsPdf.id, { vector_store_id: store.id })).status).toBe('completed');
    const [hit] = (await client.vectorStores.search(store.id, { query: 'descaling limescale' })).data;
    expect(hit.file_id).toBe(docxAsPdf.id);
    const refused = await client.vectorStores.files.retrieve(image.id, { vector_store_id: store.id });
    expect(refused.status).toBe('failed');
    expect(refused.last_error?.code).toBe('unsupported_file');
    expect(refused.last_error?.message).toMatch(/PNG image.*input_image/);

    // The same bytes as an input_file part: refused with the part's path, and told where images go.
    const asInputFile = await apiError(
      client.responses.create({
        model: 'switchyard-sim',
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'What is this?' },
              { type: 'input_file', file_id: image.id },
            ],
          },
        ],
      }),
    );
    expect(asInputFile.status).toBe(400);
    expect(asInputFile.param).toBe('input[0].content[1].file_id');
    expect(asInputFile.message).toMatch(/input\[0\]\.content\[1\]: .*PNG image.*input_image/);
  });

  it('honours every ranking option or refuses it with a 400 naming the field, on the API and in the tool', async () => {
    const store = await client.vectorStores.create({ name: 'ranking-options' });
    const ranker = await apiError(client.vectorStores.search(store.id, { query: 'x', ranking_options: { ranker: 'bogus' as 'auto' } }));
    expect([ranker.status, ranker.param]).toEqual([400, 'ranking_options.ranker']);
    // This gateway has no embeddings: weights between two rankings it does not have are refused, not ignored.
    const hybrid = await apiError(client.vectorStores.search(store.id, { query: 'x', ranking_options: { hybrid_search: { embedding_weight: 2, text_weight: 1 } } as never }));
    expect([hybrid.status, hybrid.param]).toEqual([400, 'ranking_options.hybrid_search']);
    expect(hybrid.message).toContain('lexically');
    const unknown = await apiError(client.vectorStores.search(store.id, { query: 'x', ranking_options: { rerank_depth: 10 } as never }));
    expect([unknown.status, unknown.param]).toEqual([400, 'ranking_options.rerank_depth']);
    for (const name of ['auto', 'default-2024-11-15'] as const) {
      expect((await client.vectorStores.search(store.id, { query: 'x', ranking_options: { ranker: name, score_threshold: 0.5 } })).data).toEqual([]);
    }
    const tool = await apiError(
      client.responses.create({
        model: 'switchyard-sim',
        input: 'hi',
        tools: [{ type: 'file_search', vector_store_ids: [store.id], ranking_options: { ranker: 'bogus' as 'auto' } }],
      }),
    );
    expect([tool.status, tool.param]).toEqual([400, 'tools[0].ranking_options.ranker']);
  });

  it('grows: 10x and 100x file_ids and queries are served, and other requests still are', async () => {
    const files = await Promise.all(Array.from({ length: 200 }, (_, i) => upload(client, `n${i}.txt`, `note ${i} mentions token${i} and the shared word lantern`)));
    // Ids in upload order (the uploads above ran concurrently).
    files.sort((a, b) => Number(a.filename.slice(1, -4)) - Number(b.filename.slice(1, -4)));
    const ids = files.map((f) => f.id);
    for (const n of [2, 20, 200]) {
      const store = await client.vectorStores.create({ name: `grow-${n}` });
      const [batch, other] = await Promise.all([client.vectorStores.fileBatches.createAndPoll(store.id, { file_ids: ids.slice(0, n) }, poll), client.files.retrieve(ids[0])]);
      expect(other.id).toBe(ids[0]);
      expect(batch.file_counts).toMatchObject({ completed: n, total: n });
      const listed = await client.vectorStores.fileBatches.listFiles(batch.id, { vector_store_id: store.id, limit: 100 });
      expect(listed.data).toHaveLength(Math.min(n, 100));
      const queries = Array.from({ length: Math.min(n, 100) }, (_, i) => `token${i}`);
      const result = await client.vectorStores.search(store.id, { query: queries, max_num_results: 50 });
      expect(result.data.length).toBe(Math.min(n, 50));
      expect(result.data.every((r) => r.content[0].text.includes('lantern'))).toBe(true);
    }
    const tooMany = await apiError(client.vectorStores.create({ file_ids: Array.from({ length: 501 }, (_, i) => `file-${i}`) }));
    expect([tooMany.status, tooMany.param]).toEqual([400, 'file_ids']);
  }, 240_000);
});
