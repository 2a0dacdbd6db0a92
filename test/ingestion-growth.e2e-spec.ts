import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { toFile } from 'openai';
import { startStack, type GatewayStack } from './support/gateway-harness.js';

/**
 * Hostile uploads at 1x, 10x and 100x (HTML nesting depth; length of a run
 * without spaces): each ends `completed`, or `failed` with `invalid_file`
 * once the HTML is nested too deep, and while the 1 MB run is tokenized,
 * chunked and written, requests through the client are answered again and
 * again. Before ingestion ran in worker threads, 100x depth froze the
 * gateway for minutes and 100x run length (1 MB) for about a minute: the
 * tokenizer was quadratic in a run. The slowest answer is printed for the
 * reader only: it is a speed, and this test asserts order.
 */

describe('ingestion of hostile files grows without stalling the gateway', () => {
  let dir: string;
  let stack: GatewayStack;
  let db: Database.Database;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sy-hostile-'));
    // The index in a file, read beside the gateway to see when the worker holds a job.
    const index = join(dir, 'index.sqlite');
    stack = await startStack({ config: { fileSearch: { sqlitePath: index, ingestion: { pollMs: 20, concurrency: 1 } } } });
    db = new Database(index, { readonly: true, fileMustExist: true });
  });
  afterAll(async () => {
    db?.close();
    await stack?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The job's row: `in_progress` with a `claimed_by` while a worker extracts, tokenizes and writes it. */
  const jobOf = (storeId: string, fileId: string) =>
    db.prepare('SELECT status, claimed_by AS claimedBy FROM fs_store_files WHERE store_id = ? AND file_id = ?').get(storeId, fileId) as {
      status: string;
      claimedBy: string | null;
    };

  /**
   * Ingests one file while sending other requests through the client, one after another; returns its
   * final state, how many requests were answered while the worker held its job, and the slowest answer.
   */
  async function ingestWhileAsking(
    name: string,
    bytes: Buffer,
  ): Promise<{ status: string; code: string | undefined; answeredWhileHeld: number; answers: number; slowestMs: number }> {
    const client = stack.openai;
    const file = await client.files.create({ file: await toFile(bytes, name), purpose: 'assistants' });
    const store = await client.vectorStores.create({ name });
    await client.vectorStores.files.create(store.id, { file_id: file.id });
    let answeredWhileHeld = 0;
    let answers = 0;
    let slowestMs = 0;
    for (;;) {
      const sent = performance.now();
      await client.models.list();
      slowestMs = Math.max(slowestMs, performance.now() - sent);
      answers++;
      const job = jobOf(store.id, file.id);
      if (job.status !== 'in_progress') {
        const row = await client.vectorStores.files.retrieve(file.id, { vector_store_id: store.id });
        return { status: row.status, code: row.last_error?.code, answeredWhileHeld, answers, slowestMs };
      }
      if (job.claimedBy !== null) answeredWhileHeld++;
    }
  }

  /**
   * A label, the file at a scale, how its ingestion must end at that scale, and the scale whose work
   * outlasts many round trips on a fast machine and a slow one alike (a megabyte to tokenize, chunk
   * and write), if any. The refused HTML stops after 1,025 elements at every scale: too little work to
   * be answered in the middle of, on a fast machine, and too little to hold the loop for long.
   */
  const cases: Array<[string, (scale: number) => [string, Buffer], (scale: number) => string, number | null]> = [
    [
      'HTML nesting depth (1,000 / 10,000 / 100,000 <div>s)',
      (n) => ['nested.html', Buffer.from('<div>'.repeat(1000 * n) + 'deep' + '</div>'.repeat(1000 * n))],
      // Deeper than the 1,024 levels allowed: refused at the first element past them, whatever follows.
      (n) => (n === 1 ? 'completed' : 'failed invalid_file'),
      null,
    ],
    ['a run without spaces (10 KB / 100 KB / 1 MB)', (n) => ['run.txt', Buffer.from('x'.repeat(10_000 * n))], () => 'completed', 100],
  ];

  it.each(cases)(
    '%s',
    async (_label, make, outcome, longWorkAt) => {
      for (const scale of [1, 10, 100]) {
        const [name, bytes] = make(scale);
        const result = await ingestWhileAsking(name, bytes);
        console.log(
          `${name} x${scale}: ${result.status} ${result.code ?? ''}, ${result.answers} requests answered, ` +
            `${result.answeredWhileHeld} while the job was held; slowest answer ${result.slowestMs.toFixed(1)} ms`,
        );
        expect(`${result.status} ${result.code ?? ''}`.trim()).toBe(outcome(scale));
        // Done on the event loop, the work would end before any request sent meanwhile was answered.
        if (scale === longWorkAt) expect(result.answeredWhileHeld).toBeGreaterThanOrEqual(3);
      }
    },
    60_000,
  );
});
