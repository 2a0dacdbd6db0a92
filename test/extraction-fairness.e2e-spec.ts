import OpenAI, { toFile } from 'openai';
import { makeFlateBombPdf } from './support/file-search/documents.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';

/**
 * Two tenants on one gateway's extraction threads (the defaults: two
 * threads, one owner holding one at most): tenant A's backlog of flate-bomb
 * PDFs (400 KB-class files whose page stream inflates to 200 MB) each fail
 * as `invalid_file` at the inflation cap, and tenant B's small text
 * `input_file`, sent while A's backlog is being worked through, is answered
 * before that backlog drains.
 */
describe('extraction shared by tenants: a flate bomb backlog beside a small input_file', () => {
  let stack: GatewayStack;
  let a: OpenAI;
  let b: OpenAI;

  beforeAll(async () => {
    stack = await startStack({ config: { auth: { apiKeys: ['sk-tenant-a', 'sk-tenant-b'] }, fileSearch: { ingestion: { pollMs: 20 } } } });
    a = new OpenAI({ baseURL: stack.url, apiKey: 'sk-tenant-a', maxRetries: 0, timeout: 60_000 });
    b = new OpenAI({ baseURL: stack.url, apiKey: 'sk-tenant-b', maxRetries: 0, timeout: 60_000 });
  });
  afterAll(() => stack.close());

  it("fails each bomb as invalid_file and answers B's input_file while A's backlog is still waiting", async () => {
    const BOMBS = 12;
    const bomb = await makeFlateBombPdf(200 * 1024 * 1024);
    expect(bomb.length).toBeLessThan(400 * 1024);
    const ids: string[] = [];
    for (let i = 0; i < BOMBS; i++) ids.push((await a.files.create({ file: await toFile(bomb, `report-${i}.pdf`), purpose: 'assistants' })).id);
    const store = await a.vectorStores.create({ name: 'bombs' });
    const batch = await a.vectorStores.fileBatches.create(store.id, { file_ids: ids });

    // A's backlog is being worked through: its first file has been refused.
    for (const deadline = Date.now() + 60_000; (await a.vectorStores.fileBatches.retrieve(batch.id, { vector_store_id: store.id })).file_counts.failed < 1;) {
      if (Date.now() > deadline) throw new Error("tenant A's files were never taken up");
      await new Promise((r) => setTimeout(r, 10));
    }

    const answer = await b.responses.create({
      model: 'm',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: '[[say read]] What does the note say?' },
            { type: 'input_file', filename: 'note.txt', file_data: `data:text/plain;base64,${Buffer.from('fourteen bytes').toString('base64')}` },
          ],
        },
      ],
    });
    const countsWhenAnswered = (await a.vectorStores.fileBatches.retrieve(batch.id, { vector_store_id: store.id })).file_counts;
    expect(answer.output_text).toBe('read');
    expect(JSON.stringify(stack.simulator.requests.at(-1)!.body)).toContain('fourteen bytes');
    // B did not wait for A's backlog: some of A's files were still to be done when B had its answer.
    expect(countsWhenAnswered.in_progress).toBeGreaterThan(0);

    const done = await a.vectorStores.fileBatches.poll(store.id, batch.id, { pollIntervalMs: 50 });
    expect(done.file_counts).toMatchObject({ failed: BOMBS, completed: 0, in_progress: 0 });
    const files = await a.vectorStores.files.list(store.id, { limit: 100 });
    expect(files.data).toHaveLength(BOMBS);
    for (const f of files.data) expect(f.last_error).toMatchObject({ code: 'invalid_file', message: expect.stringContaining('inflates past') });
  }, 180_000);
});
