import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { postgresBackend, type Backend } from './support/file-search/backends.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';

type Line = { custom_id: string; method: string; url: string; body: Record<string, unknown> };

const FINAL = new Set(['completed', 'failed', 'expired', 'cancelled']);

async function upload(client: OpenAI, lines: Array<Line | string>, purpose: 'batch' | 'assistants' = 'batch') {
  const text = lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n';
  return client.files.create({ file: await toFile(Buffer.from(text), 'requests.jsonl'), purpose });
}

async function settle(client: OpenAI, id: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const batch = await client.batches.retrieve(id);
    if (FINAL.has(batch.status)) return batch;
    if (Date.now() > deadline) throw new Error(`batch ${id} still ${batch.status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function jsonl(client: OpenAI, fileId: string | null | undefined): Promise<any[]> {
  if (!fileId) return [];
  const text = await (await client.files.content(fileId)).text();
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

const chatLine = (id: string, content: string): Line => ({
  custom_id: id,
  method: 'POST',
  url: '/v1/chat/completions',
  body: { model: 'switchyard-sim', messages: [{ role: 'user', content }] },
});

describe('the Batch API through the openai client', () => {
  let stack: GatewayStack;
  let client: OpenAI;

  beforeAll(async () => {
    stack = await startStack({ config: { batches: { pollMs: 50, maxConcurrentRequests: 16 }, auth: { apiKeys: ['sk-test', 'sk-other'] } } });
    client = stack.openai;
  });
  afterAll(() => stack.close());

  it('runs a chat completions batch: output in input order, a refused line in the error file', async () => {
    const input = await upload(client, [
      chatLine('a', '[[say alpha]]'),
      chatLine('b', '[[say beta]]'),
      { ...chatLine('bad', 'x'), body: { model: 'm', messages: [] } },
      chatLine('c', '[[say gamma]]'),
    ]);
    const created = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { job: 'nightly' } });
    expect(created).toMatchObject({ object: 'batch', endpoint: '/v1/chat/completions', input_file_id: input.id, completion_window: '24h', metadata: { job: 'nightly' } });
    expect(created.id).toMatch(/^batch_/);
    expect(['validating', 'in_progress']).toContain(created.status);
    const done = await settle(client, created.id);
    expect(done.status).toBe('completed');
    expect(done.request_counts).toEqual({ total: 4, completed: 3, failed: 1 });
    expect(done.completed_at).toBeGreaterThanOrEqual(done.created_at);
    expect(done.model).toBe('switchyard-sim');
    const output = await jsonl(client, done.output_file_id);
    expect(output.map((l) => l.custom_id)).toEqual(['a', 'b', 'c']);
    expect(output.map((l) => l.response.body.choices[0].message.content)).toEqual(['alpha', 'beta', 'gamma']);
    expect(output[0]).toMatchObject({ id: expect.stringMatching(/^batch_req_/), response: { status_code: 200, request_id: expect.any(String) }, error: null });
    const errors = await jsonl(client, done.error_file_id);
    expect(errors).toEqual([
      expect.objectContaining({ custom_id: 'bad', response: expect.objectContaining({ status_code: 400, body: { error: expect.objectContaining({ param: 'messages' }) } }) }),
    ]);
    const outputFile = await client.files.retrieve(done.output_file_id!);
    expect(outputFile.purpose).toBe('batch_output');
  });

  it('runs embeddings and responses batches', async () => {
    const emb = await upload(
      client,
      ['one', 'two'].map((word) => ({ custom_id: word, method: 'POST', url: '/v1/embeddings', body: { model: 'switchyard-sim', input: word } })),
    );
    const responses = await upload(
      client,
      ['first', 'second'].map((word) => ({ custom_id: word, method: 'POST', url: '/v1/responses', body: { model: 'm', input: `[[say ${word} answer]]` } })),
    );
    const [b1, b2] = await Promise.all([
      client.batches.create({ input_file_id: emb.id, endpoint: '/v1/embeddings', completion_window: '24h' }),
      client.batches.create({ input_file_id: responses.id, endpoint: '/v1/responses', completion_window: '24h' }),
    ]);
    const [d1, d2] = [await settle(client, b1.id), await settle(client, b2.id)];
    expect(d1.status).toBe('completed');
    const vectors = await jsonl(client, d1.output_file_id);
    expect(vectors.map((l) => [l.custom_id, l.response.body.object, l.response.body.data[0].embedding.length])).toEqual([
      ['one', 'list', 256],
      ['two', 'list', 256],
    ]);
    expect(d2.status).toBe('completed');
    const answers = await jsonl(client, d2.output_file_id);
    expect(answers.map((l) => [l.custom_id, l.response.body.object, l.response.body.output.at(-1).content[0].text])).toEqual([
      ['first', 'response', 'first answer'],
      ['second', 'response', 'second answer'],
    ]);
  });

  it('fails a batch whose input has bad lines, naming each line and field', async () => {
    const input = await upload(client, [
      chatLine('a', 'x'),
      'not json',
      { ...chatLine('a', 'y') },
      { ...chatLine('u', 'z'), url: '/v1/embeddings' },
      { ...chatLine('m', 'z'), method: 'GET' },
    ]);
    const batch = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect(batch.status).toBe('failed');
    expect(batch.failed_at).toEqual(expect.any(Number));
    expect(batch.errors?.data).toEqual([
      { code: 'invalid_json_line', line: 2, message: expect.any(String), param: null },
      { code: 'duplicate_custom_id', line: 3, message: expect.any(String), param: 'custom_id' },
      { code: 'mismatched_endpoint', line: 4, message: expect.any(String), param: 'url' },
      { code: 'invalid_method', line: 5, message: expect.any(String), param: 'method' },
    ]);
  });

  it('refuses bad create requests with the field named', async () => {
    const notBatch = await upload(client, [chatLine('a', 'x')], 'assistants');
    const errorOf = (p: Promise<unknown>) =>
      p.then(
        () => null,
        (e: InstanceType<typeof OpenAI.APIError>) => ({ status: e.status, param: (e.error as any)?.param }),
      );
    expect(await errorOf(client.batches.create({ input_file_id: notBatch.id, endpoint: '/v1/chat/completions', completion_window: '24h' }))).toEqual({
      status: 400,
      param: 'input_file_id',
    });
    expect(await errorOf(client.batches.create({ input_file_id: 'file-missing', endpoint: '/v1/chat/completions', completion_window: '24h' }))).toEqual({
      status: 404,
      param: 'input_file_id',
    });
    expect(await errorOf(client.batches.create({ input_file_id: notBatch.id, endpoint: '/v1/moderations', completion_window: '24h' }))).toEqual({ status: 400, param: 'endpoint' });
    expect(await errorOf(client.batches.create({ input_file_id: notBatch.id, endpoint: '/v1/embeddings', completion_window: '1h' as '24h' }))).toEqual({
      status: 400,
      param: 'completion_window',
    });
    expect(await errorOf(client.batches.retrieve('batch_nope'))).toEqual({ status: 404, param: 'batch_id' });
  });

  it('cancels a running batch: cancelling, then cancelled with the results it had', async () => {
    const input = await upload(
      client,
      Array.from({ length: 12 }, (_, i) => chatLine(`slow-${i}`, `[[delay ttft=150]] [[say slow ${i}]]`)),
    );
    const batch = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const cancelling = await client.batches.cancel(batch.id);
    expect(cancelling.status).toBe('cancelling');
    expect(cancelling.cancelling_at).toEqual(expect.any(Number));
    const done = await settle(client, batch.id);
    expect(done.status).toBe('cancelled');
    expect(done.cancelled_at).toEqual(expect.any(Number));
    expect(done.request_counts!.completed).toBeLessThan(12);
    const output = await jsonl(client, done.output_file_id);
    expect(output.length).toBe(done.request_counts!.completed);
    // The lines that never ran are in the error file: every line of the input once, in one file or the other.
    const errors = await jsonl(client, done.error_file_id);
    expect(errors.every((l) => l.error?.code === 'batch_cancelled' && l.response === null)).toBe(true);
    expect([...output, ...errors].map((l) => l.custom_id).sort()).toEqual(Array.from({ length: 12 }, (_, i) => `slow-${i}`).sort());
    const again = await client.batches.cancel(batch.id).catch((e: InstanceType<typeof OpenAI.APIError>) => e.status);
    expect(again).toBe(409);
  });

  it('keeps each key’s batches and their files to itself', async () => {
    const input = await upload(client, [chatLine('mine', '[[say mine]]')]);
    const batch = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const other = new OpenAI({ baseURL: stack.url, apiKey: 'sk-other', maxRetries: 0 });
    await expect(other.batches.retrieve(batch.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(other.batches.cancel(batch.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(other.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect((await other.batches.list()).data).toEqual([]);
    const done = await settle(client, batch.id);
    await expect(other.files.content(done.output_file_id!)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('lists batches newest first, page by page', async () => {
    const input = await upload(client, [chatLine('x', '[[say x]]')]);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' })).id);
    const page = await client.batches.list({ limit: 2 });
    expect(page.data.map((b) => b.id)).toEqual([ids[2], ids[1]]);
    expect(page.hasNextPage()).toBe(true);
    const next = await client.batches.list({ limit: 2, after: ids[1] });
    expect(next.data[0].id).toBe(ids[0]);
    for (const id of ids) await settle(client, id);
  });

  it('grows with the batch: 10× and 100× the lines give every result, in order', async () => {
    for (const size of [5, 50, 500]) {
      const lines = Array.from({ length: size }, (_, i) => ({
        custom_id: `r${i}`,
        method: 'POST',
        url: '/v1/embeddings',
        body: { model: 'switchyard-sim', input: `line number ${i}` },
      }));
      const input = await upload(client, lines);
      const batch = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/embeddings', completion_window: '24h' });
      const done = await settle(client, batch.id, 60_000);
      expect(done.status).toBe('completed');
      expect(done.request_counts).toEqual({ total: size, completed: size, failed: 0 });
      const output = await jsonl(client, done.output_file_id);
      expect(output.map((l) => l.custom_id)).toEqual(lines.map((l) => l.custom_id));
      expect(new Set(output.map((l) => l.id)).size).toBe(size);
    }
  }, 90_000);
});

describe('batches across restarts and replicas (SQLite on disk)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sy-batches-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const options = (extra: Record<string, unknown> = {}) => ({
    config: { storage: { driver: 'sqlite', sqlitePath: join(dir, 'state.sqlite') }, batches: { pollMs: 30, maxConcurrentRequests: 2, ...extra } },
  });

  it('a batch interrupted by a restart finishes on the next gateway, each request once in the output', async () => {
    const first = await startStack(options());
    const lines = Array.from({ length: 8 }, (_, i) => chatLine(`k${i}`, `[[delay ttft=120]] [[say kept ${i}]]`));
    const input = await upload(first.openai, lines);
    const batch = await first.openai.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    for (let i = 0; i < 400 && (await first.openai.batches.retrieve(batch.id)).request_counts!.completed < 1; i++) await new Promise((r) => setTimeout(r, 20));
    await first.close();

    const second = await startStack(options());
    try {
      const interrupted = await second.openai.batches.retrieve(batch.id);
      expect(interrupted.status).toBe('in_progress');
      expect(interrupted.request_counts!.completed).toBeGreaterThanOrEqual(1);
      expect(interrupted.request_counts!.completed).toBeLessThan(8);
      const done = await settle(second.openai, batch.id);
      expect(done.status).toBe('completed');
      expect(done.request_counts).toEqual({ total: 8, completed: 8, failed: 0 });
      const output = await jsonl(second.openai, done.output_file_id);
      expect(output.map((l) => l.custom_id)).toEqual(lines.map((l) => l.custom_id));
      expect(output.map((l) => l.response.body.choices[0].message.content)).toEqual(lines.map((_, i) => `kept ${i}`));
      // The second gateway ran only what the first had not finished.
      expect(second.simulator.requests.filter((r) => r.path === '/v1/chat/completions').length).toBe(8 - interrupted.request_counts!.completed);
    } finally {
      await second.close();
    }
  }, 60_000);

  it('two replicas sharing the store run one batch, each request once, and either reads the result', async () => {
    const sim = new SimulatedUpstream({ ttftMs: 20 });
    await sim.listen(0, '127.0.0.1');
    const a = await startStack({ ...options(), upstreamUrl: sim.url });
    const b = await startStack({ ...options(), upstreamUrl: sim.url });
    try {
      const lines = Array.from({ length: 30 }, (_, i) => chatLine(`s${i}`, `[[say shared ${i}]]`));
      const input = await upload(a.openai, lines);
      const batch = await a.openai.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      const done = await settle(b.openai, batch.id);
      expect(done.request_counts).toEqual({ total: 30, completed: 30, failed: 0 });
      const output = await jsonl(b.openai, done.output_file_id);
      expect(output.map((l) => l.custom_id)).toEqual(lines.map((l) => l.custom_id));
      const served = sim.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => (r.body as any).messages[0].content);
      expect(served.sort()).toEqual(lines.map((l) => (l.body.messages as any)[0].content).sort());
    } finally {
      await a.close();
      await b.close();
      await sim.close();
    }
  }, 60_000);
});

describe('batches on PostgreSQL, two replicas', () => {
  let backend: Backend;
  beforeAll(async () => {
    backend = await postgresBackend();
  });
  afterAll(() => backend.drop());

  it('a batch created on one replica runs on the replicas sharing the database and reads back from the other, in order, each request once', async () => {
    const sim = new SimulatedUpstream({ ttftMs: 10 });
    await sim.listen(0, '127.0.0.1');
    const options = { upstreamUrl: sim.url, config: { storage: backend.storage, batches: { pollMs: 30, maxConcurrentRequests: 2 } } };
    const a = await startStack(options);
    const b = await startStack(options);
    try {
      const lines = Array.from({ length: 24 }, (_, i) => chatLine(`p${i}`, `[[say pg ${i}]]`));
      const input = await upload(a.openai, lines);
      const batch = await a.openai.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      const done = await settle(b.openai, batch.id);
      expect(done.request_counts).toEqual({ total: 24, completed: 24, failed: 0 });
      const output = await jsonl(b.openai, done.output_file_id);
      expect(output.map((l) => l.response.body.choices[0].message.content)).toEqual(lines.map((_, i) => `pg ${i}`));
      expect(sim.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(24);
      const rows = await backend.query!('SELECT count(*)::int AS n FROM {schema}.sy_batch_requests');
      // Finished batches keep their results in the files only.
      expect(rows[0].n).toBe(0);
    } finally {
      await a.close();
      await b.close();
      await sim.close();
    }
  }, 60_000);

  it('a replica stopped mid-batch, claims left by a crashed one, then a cancel under load: every line once in the output or the error file', async () => {
    const sim = new SimulatedUpstream({ ttftMs: 2 });
    await sim.listen(0, '127.0.0.1');
    const options = { upstreamUrl: sim.url, config: { storage: backend.storage, batches: { pollMs: 30, maxConcurrentRequests: 8, leaseMs: 1000 } } };
    const a = await startStack(options);
    const b = await startStack(options);
    const TOTAL = 5_000;
    try {
      const lines = Array.from({ length: TOTAL }, (_, i) => ({ custom_id: `e${i}`, method: 'POST', url: '/v1/embeddings', body: { model: 'switchyard-sim', input: `line ${i}` } }));
      const input = await upload(a.openai, lines);
      const batch = await a.openai.batches.create({ input_file_id: input.id, endpoint: '/v1/embeddings', completion_window: '24h' });
      const progressed = async (n: number) => {
        for (const deadline = Date.now() + 60_000; (await b.openai.batches.retrieve(batch.id)).request_counts!.completed < n;) {
          if (Date.now() > deadline) throw new Error(`batch never reached ${n} lines`);
          await new Promise((r) => setTimeout(r, 20));
        }
      };
      await progressed(200);
      // A restart: replica A stops while it runs lines (it gives its claims back).
      await a.close();
      // A crash: a replica that claimed 40 pending lines and died; its lease lapses, nobody gives them back.
      await backend.query!(
        `UPDATE {schema}.sy_batch_requests SET claimed_by = 'crashed-replica', lease_until = ${Date.now() + 800}, attempts = attempts + 1
         WHERE (batch_id, line) IN (SELECT batch_id, line FROM {schema}.sy_batch_requests WHERE batch_id = '${batch.id}' AND status = 'pending' AND claimed_by IS NULL ORDER BY line LIMIT 40)`,
      );
      const before = (await b.openai.batches.retrieve(batch.id)).request_counts!.completed;
      await progressed(before + 300);
      const cancelling = await b.openai.batches.cancel(batch.id);
      expect(cancelling.status).toBe('cancelling');
      const done = await settle(b.openai, batch.id, 60_000);
      expect(done.status).toBe('cancelled');
      const output = await jsonl(b.openai, done.output_file_id);
      const errors = await jsonl(b.openai, done.error_file_id);
      expect(output.length).toBe(done.request_counts!.completed);
      expect(errors.every((l) => l.error?.code === 'batch_cancelled')).toBe(true);
      // Counted against the requests: each of the 5,000 lines once, in one file or the other.
      const seen = [...output, ...errors].map((l) => l.custom_id);
      expect(seen.length).toBe(TOTAL);
      expect(new Set(seen)).toEqual(new Set(lines.map((l) => l.custom_id)));
      // Finished batches keep their results in the files only: no row is left behind to be counted again.
      expect((await backend.query!(`SELECT count(*)::int AS n FROM {schema}.sy_batch_requests WHERE batch_id = '${batch.id}'`))[0].n).toBe(0);
    } finally {
      await b.close();
      await a.close().catch(() => undefined);
      await sim.close();
    }
  }, 180_000);
});
