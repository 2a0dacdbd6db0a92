import type OpenAI from 'openai';
import { toFile } from 'openai';
import { OpenResponsesValidator } from './support/openresponses-validator.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { TOPICS, makePdf } from './support/file-search/documents.js';
import { collect, weatherTool } from './support/fixtures.js';

const validator = new OpenResponsesValidator();
const MODEL = 'switchyard-sim';
const poll = { pollIntervalMs: 20 };
const searchFiles = (...queries: string[]) => `[[call file_search ${JSON.stringify({ queries })}]]`;

async function storeWith(client: OpenAI, docs: Record<string, string | Buffer>): Promise<{ storeId: string; ids: Record<string, string> }> {
  const ids: Record<string, string> = {};
  await Promise.all(
    Object.entries(docs).map(async ([name, content]) => {
      ids[name] = (await client.files.create({ file: await toFile(Buffer.from(content), name), purpose: 'assistants' })).id;
    }),
  );
  const store = await client.vectorStores.create({ name: 'docs' });
  const batch = await client.vectorStores.fileBatches.createAndPoll(store.id, { file_ids: Object.values(ids) }, poll);
  expect(batch.file_counts.completed).toBe(Object.keys(docs).length);
  return { storeId: store.id, ids };
}

describe.each([
  ['lexical (no embeddings configured)', {}],
  ['hybrid (the simulated upstream serves embeddings)', { embeddings: { model: MODEL, batchSize: 2 } }],
])('file_search in a Responses request, %s', (_mode, fileSearch) => {
  let stack: GatewayStack;
  let client: OpenAI;
  let storeId: string;
  let ids: Record<string, string>;

  beforeAll(async () => {
    stack = await startStack({ config: { fileSearch: { ...fileSearch, ingestion: { pollMs: 50 } } } });
    client = stack.openai;
    ({ storeId, ids } = await storeWith(client, {
      'manual.pdf': await makePdf(['Larkspur kettle manual', TOPICS.warranty]),
      'shipping.md': `# Shipping\n${TOPICS.shipping}`,
      'returns.txt': TOPICS.returns,
      'security.txt': TOPICS.security,
    }));
  }, 60_000);
  afterAll(async () => stack?.close());

  it('retrieves the right chunk and answers from it, blocking', async () => {
    const response = await client.responses.create({
      model: MODEL,
      input: `How long is the kettle warranty? ${searchFiles('kettle warranty months')}`,
      tools: [{ type: 'file_search', vector_store_ids: [storeId], max_num_results: 3 }],
      include: ['file_search_call.results'],
    });
    validator.assertResponse(response);
    expect(response.status).toBe('completed');
    expect(response.output.map((i) => i.type)).toEqual(['file_search_call', 'message']);
    const call = response.output[0] as any;
    expect(call).toMatchObject({ id: expect.stringMatching(/^fs_/), type: 'file_search_call', status: 'completed', queries: ['kettle warranty months'] });
    expect(call.results[0]).toEqual({
      file_id: ids['manual.pdf'],
      filename: 'manual.pdf',
      score: expect.any(Number),
      text: expect.stringContaining('thirty-six months'),
      attributes: {},
    });
    expect(call.results.length).toBeLessThanOrEqual(3);
    expect(response.output_text).toMatch(/^Based on the tool result: /);
    expect(response.output_text).toContain('thirty-six months');
    expect(response.output_text).toContain(`file_id=${ids['manual.pdf']}`);
    // The answer names its sources (the simulator echoes the labelled results): each mention is a file_citation.
    const text = response.output_text;
    const annotations = (response.output[1] as any).content[0].annotations;
    expect(annotations[0]).toEqual({ type: 'file_citation', file_id: ids['manual.pdf'], filename: 'manual.pdf', index: text.indexOf(ids['manual.pdf']) });
    expect(annotations.map((a: any) => a.index)).toEqual([...annotations.map((a: any) => a.index)].sort((a: number, b: number) => a - b));
    for (const a of annotations) expect([ids[a.filename], text.slice(a.index).startsWith(a.file_id) || text.slice(a.index).startsWith(a.filename)]).toEqual([a.file_id, true]);

    // The model was offered one function taking queries, and read the results as its output.
    const upstream = stack.simulator.requests.slice(-2).map((r) => r.body as any);
    expect(upstream[0].tools).toEqual([expect.objectContaining({ type: 'function', name: 'file_search', parameters: expect.objectContaining({ required: ['queries'] }) })]);
    const output = upstream[1].input.find((i: any) => i.type === 'function_call_output').output;
    expect(output.indexOf('thirty-six months')).toBeLessThan(output.indexOf('[2]') === -1 ? Infinity : output.indexOf('[2]'));
  });

  it('leaves results out unless include asks, and echoes the declaration', async () => {
    const response = await client.responses.create({
      model: MODEL,
      input: `Returns? ${searchFiles('refund returned items')}`,
      tools: [{ type: 'file_search', vector_store_ids: [storeId] }],
    });
    validator.assertResponse(response);
    expect(response.output[0]).toEqual({ id: expect.any(String), type: 'file_search_call', status: 'completed', queries: ['refund returned items'], results: null });
    expect(response.output_text).toContain('full refund');
    expect(response.tools).toEqual([expect.objectContaining({ type: 'file_search', vector_store_ids: [storeId] })]);
  });

  it('streams the file_search_call lifecycle before the answer, each event valid', async () => {
    const events = await collect(
      await client.responses.create({
        model: MODEL,
        input: `Where do orders ship from? ${searchFiles('warehouse courier')}`,
        tools: [{ type: 'file_search', vector_store_ids: [storeId] }],
        include: ['file_search_call.results'],
        stream: true,
      }),
    );
    events.forEach((e) => validator.assertEvent(e));
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const types = events.map((e) => e.type);
    expect(types.slice(0, 9)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.file_search_call.in_progress',
      'response.file_search_call.searching',
      'response.file_search_call.completed',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
    ]);
    expect(types.at(-1)).toBe('response.completed');
    expect(events[2].item).toEqual({ id: expect.stringMatching(/^fs_/), type: 'file_search_call', status: 'in_progress', queries: ['warehouse courier'], results: null });
    for (const e of events.slice(3, 6)) expect([e.item_id, e.output_index]).toEqual([events[2].item.id, 0]);
    const done = events[6].item;
    expect(done).toMatchObject({ status: 'completed', queries: ['warehouse courier'] });
    expect(done.results[0].file_id).toBe(ids['shipping.md']);
    const final = events.at(-1).response;
    validator.assertResponse(final);
    expect(final.output[0]).toEqual(done);
    expect(final.output[1].content[0].text).toContain('Rotterdam');
    // Citations are announced after the text deltas and before output_text.done, as the final part carries them.
    const added = events.filter((e) => e.type === 'response.output_text.annotation.added');
    expect(added.length).toBeGreaterThan(0);
    expect(added.map((e) => e.annotation)).toEqual(final.output[1].content[0].annotations);
    expect(added.map((e) => e.annotation_index)).toEqual(added.map((_, i) => i));
    const textDone = types.indexOf('response.output_text.done');
    expect(types.lastIndexOf('response.output_text.delta')).toBeLessThan(types.indexOf('response.output_text.annotation.added'));
    expect(types.lastIndexOf('response.output_text.annotation.added')).toBeLessThan(textDone);
    expect(added[0].annotation).toMatchObject({ type: 'file_citation', file_id: ids['shipping.md'], filename: 'shipping.md' });
  });

  it('fails the call, not the request, for an unknown vector store id', async () => {
    const response = await client.responses.create({
      model: MODEL,
      input: `Anything? ${searchFiles('kettle')}`,
      tools: [{ type: 'file_search', vector_store_ids: [storeId, 'vs_missing'] }],
    });
    validator.assertResponse(response);
    expect(response.status).toBe('completed');
    expect(response.output[0]).toMatchObject({ type: 'file_search_call', status: 'failed', queries: ['kettle'] });
    expect(response.output_text).toContain('vs_missing');
  });

  it('applies the declaration filters and max_num_results', async () => {
    const attrs = await client.vectorStores.files.update(ids['returns.txt'], { vector_store_id: storeId, attributes: { team: 'billing' } });
    expect(attrs.attributes).toEqual({ team: 'billing' });
    const response = await client.responses.create({
      model: MODEL,
      input: `Anything? ${searchFiles('kettle warranty refund warehouse')}`,
      tools: [{ type: 'file_search', vector_store_ids: [storeId], filters: { type: 'eq', key: 'team', value: 'billing' }, max_num_results: 5 }],
      include: ['file_search_call.results'],
    });
    const results = (response.output[0] as any).results;
    expect(results.map((r: any) => r.file_id)).toEqual([ids['returns.txt']]);
    expect(results[0].attributes).toEqual({ team: 'billing' });
  });

  it('refuses a bad declaration with a 400 naming the field', async () => {
    for (const [tool, param] of [
      [{ type: 'file_search' }, 'tools[0].vector_store_ids'],
      [{ type: 'file_search', vector_store_ids: [storeId], max_num_results: 0 }, 'tools[0].max_num_results'],
      [{ type: 'file_search', vector_store_ids: [storeId], filters: { type: 'eq', key: 'k' } }, 'tools[0].filters.value'],
      [{ type: 'file_search', vector_store_ids: [storeId], ranking_options: { score_threshold: 2 } }, 'tools[0].ranking_options.score_threshold'],
    ] as const) {
      const err = await client.responses.create({ model: MODEL, input: 'x', tools: [tool as any] }).catch((e) => e);
      expect([err.status, err.param]).toEqual([400, param]);
    }
  });

  it('runs alongside a client function tool in one mixed turn', async () => {
    const response = await client.responses.create({
      model: MODEL,
      input: `Kettle warranty and weather in Oslo. ${searchFiles('warranty')} [[call get_weather {"city": "Oslo"}]]`,
      tools: [{ type: 'file_search', vector_store_ids: [storeId] }, weatherTool],
    });
    validator.assertResponse(response);
    expect(response.output.map((i) => i.type)).toEqual(['file_search_call', 'function_call']);
    expect(response.output[0]).toMatchObject({ status: 'completed' });
  });
});

describe('hybrid retrieval with deterministic embeddings', () => {
  let lexical: GatewayStack;
  let hybrid: GatewayStack;

  beforeAll(async () => {
    [lexical, hybrid] = await Promise.all([
      startStack({ config: { fileSearch: { ingestion: { pollMs: 50 } } } }),
      startStack({ config: { fileSearch: { embeddings: { model: MODEL }, ingestion: { pollMs: 50 } } } }),
    ]);
  }, 60_000);
  afterAll(async () => Promise.all([lexical?.close(), hybrid?.close()]));

  it('embeds chunks in batches at ingestion and each query at search time', async () => {
    const batched = await startStack({ config: { fileSearch: { embeddings: { model: MODEL, batchSize: 3 }, ingestion: { pollMs: 50 } } } });
    try {
      const text = Array.from({ length: 300 }, (_, i) => `Line ${i} of the long kettle handbook.`).join(' ');
      const f = await batched.openai.files.create({ file: await toFile(Buffer.from(text), 'long.txt'), purpose: 'assistants' });
      const store = await batched.openai.vectorStores.create({
        file_ids: [f.id],
        chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: 200, chunk_overlap_tokens: 0 } },
      });
      expect((await batched.openai.vectorStores.files.poll(store.id, f.id, poll)).status).toBe('completed');
      const chunks = (await batched.openai.vectorStores.files.content(f.id, { vector_store_id: store.id })).data.map((c) => c.text);
      const sizes = batched.simulator.embeddingRequests.map((r) => (r.body as any).input.length);
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(chunks.length);
      expect(sizes).toEqual([...Array(Math.floor(chunks.length / 3)).fill(3), ...(chunks.length % 3 ? [chunks.length % 3] : [])]);
      expect(batched.simulator.embeddingRequests[0].body).toMatchObject({ model: MODEL, encoding_format: 'float', input: chunks.slice(0, 3) });
      await batched.openai.vectorStores.search(store.id, { query: ['warranty', 'courier'] });
      expect((batched.simulator.embeddingRequests.at(-1)!.body as any).input).toEqual(['warranty', 'courier']);
    } finally {
      await batched.close();
    }
  });

  it('finds by similarity what the lexical index cannot match, and fuses both rankings', async () => {
    const docs = { 'security.txt': TOPICS.security, 'shipping.txt': TOPICS.shipping, 'returns.txt': TOPICS.returns };
    const [lex, hyb] = await Promise.all([storeWith(lexical.openai, docs), storeWith(hybrid.openai, docs)]);
    // "password" is no token of "passwordless": BM25 has nothing, the embedding's shared trigrams do.
    expect((await lexical.openai.vectorStores.search(lex.storeId, { query: 'password' })).data).toEqual([]);
    const found = (await hybrid.openai.vectorStores.search(hyb.storeId, { query: 'password' })).data;
    expect(found[0].file_id).toBe(hyb.ids['security.txt']);

    // Weights decide: all weight on text reproduces the lexical order.
    const textOnly = await hybrid.openai.vectorStores.search(hyb.storeId, {
      query: 'refund warehouse',
      ranking_options: { hybrid_search: { embedding_weight: 0, text_weight: 1 } },
    } as any);
    const lexicalOrder = await lexical.openai.vectorStores.search(lex.storeId, { query: 'refund warehouse' });
    const names = (page: { data: Array<{ filename: string }> }) => page.data.map((r) => r.filename);
    expect(names(textOnly).slice(0, names(lexicalOrder).length)).toEqual(names(lexicalOrder));
  });

  it('fails a file whose embedding call fails, with server_error', async () => {
    const broken = await startStack({ config: { fileSearch: { embeddings: { model: 'no-such-model' }, ingestion: { pollMs: 50 } } } });
    try {
      const f = await broken.openai.files.create({ file: await toFile(Buffer.from('some text'), 'x.txt'), purpose: 'assistants' });
      const store = await broken.openai.vectorStores.create({ file_ids: [f.id] });
      const file = await broken.openai.vectorStores.files.poll(store.id, f.id, poll);
      expect(file.status).toBe('failed');
      expect(file.last_error).toEqual({ code: 'server_error', message: expect.stringContaining('400') });
    } finally {
      await broken.close();
    }
  });
});

describe('file_search input sizes and limits', () => {
  let stack: GatewayStack;
  let client: OpenAI;
  let storeIds: string[];
  let ids: Record<string, string>;

  beforeAll(async () => {
    stack = await startStack({ config: { fileSearch: { maxFileBytes: 4096, ingestion: { pollMs: 50 } } } });
    client = stack.openai;
    const docs: Record<string, string> = {};
    for (let i = 0; i < 100; i++) docs[`doc${i}.txt`] = `Document ${i} is about topic${i}.`;
    ({ ids, storeId: storeIds } = await storeWith(client, docs).then((r) => ({ ...r, storeId: [r.storeId] })));
    // 99 more (empty) stores, so that declarations can list 1, 10 and 100 of them.
    const empty = await Promise.all(Array.from({ length: 99 }, (_, i) => client.vectorStores.create({ name: `empty-${i}` })));
    storeIds.push(...empty.map((s) => s.id));
  }, 120_000);
  afterAll(async () => stack?.close());

  it('grows: 1, 10 and 100 queries in one call and 1, 10 and 100 stores in one declaration are all answered', async () => {
    for (const n of [1, 10, 100]) {
      const queries = Array.from({ length: n }, (_, i) => `topic${i}`);
      const [response, other] = await Promise.all([
        client.responses.create({
          model: MODEL,
          input: `Search. ${searchFiles(...queries)}`,
          tools: [{ type: 'file_search', vector_store_ids: storeIds.slice(0, n), max_num_results: 50 }],
          include: ['file_search_call.results'],
        }),
        client.responses.create({ model: MODEL, input: '[[say still served]]' }),
      ]);
      expect(other.output_text).toBe('still served');
      const call = response.output[0] as any;
      expect(call.status).toBe('completed');
      expect(call.queries).toHaveLength(n);
      expect(call.results).toHaveLength(Math.min(n, 50));
      // Every query's one document scores alike, so which 50 of 100 are kept is a tie: each result is a queried document, none twice.
      const queried = new Set(queries.map((_, i) => ids[`doc${i}.txt`]));
      const found = call.results.map((r: any) => r.file_id);
      expect(new Set(found).size).toBe(Math.min(n, 50));
      expect(found.every((id: string) => queried.has(id))).toBe(true);
    }
  }, 120_000);

  it('fails a call with more queries than allowed, and refuses a declaration with too many stores', async () => {
    const queries = Array.from({ length: 101 }, (_, i) => `q${i}`);
    const response = await client.responses.create({
      model: MODEL,
      input: `x ${searchFiles(...queries)}`,
      tools: [{ type: 'file_search', vector_store_ids: storeIds.slice(0, 1) }],
    });
    expect(response.output[0]).toMatchObject({ type: 'file_search_call', status: 'failed' });
    expect(response.output_text).toContain('At most 100 queries');
    const tooMany = await client.responses.create({ model: MODEL, input: 'x', tools: [{ type: 'file_search', vector_store_ids: [...storeIds, 'vs_extra'] }] }).catch((e) => e);
    expect([tooMany.status, tooMany.param]).toEqual([400, 'tools[0].vector_store_ids']);
  });

  it('refuses an upload over fileSearch.maxFileBytes with a 413 naming the file', async () => {
    const err = await client.files.create({ file: await toFile(Buffer.alloc(5000, 'a'), 'big.txt'), purpose: 'assistants' }).catch((e) => e);
    expect([err.status, err.param, err.code]).toEqual([413, 'file', 'file_too_large']);
    const ok = await client.files.create({ file: await toFile(Buffer.alloc(4000, 'a'), 'fits.txt'), purpose: 'assistants' });
    expect(ok.bytes).toBe(4000);
    const notMultipart = await fetch(`${stack.url}/files`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(notMultipart.status).toBe(400);
    expect(((await notMultipart.json()) as any).error.param).toBe('file');
  });
});
