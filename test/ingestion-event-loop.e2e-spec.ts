import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { toFile } from 'openai';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { sqliteBackend, type Backend } from './support/file-search/backends.js';

/**
 * A file's chunks and index entries are written by the ingestion thread on
 * SQLite, not on the event loop: the CPU time the gateway's main thread
 * spends while a file is ingested, beyond what it spends idle over the same
 * wall time, must not grow with the file. It is read from /proc for that
 * thread alone, so neither the ingestion thread nor other load on the
 * machine counts. Before, the main thread wrote every row itself, in slices
 * with the loop free between them: a file of 10x the chunks cost it about
 * 10x the time, which is what slowed plain requests during a batch. And
 * while the large file's one write transaction is open, requests through the
 * client are answered again and again: written on the event loop in one go,
 * no request could be answered before it committed. The longest loop delay
 * is printed for the reader; it is a speed, measured beside a real batch by
 * `bench/file-search-ingestion.bench.ts`.
 */
/** Clock ticks per second of /proc's times: USER_HZ, 100 on every Linux this runs on. */
const TICKS_PER_SECOND = 100;

/** CPU time (user + system) of this process's main thread, in milliseconds, from /proc (worker threads are tasks of their own). */
function mainThreadCpuMs(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at the state, field 3; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** Prose of distinct made-up words, so that each chunk has many index entries: `words` words, `tag` among them. */
function manyTermsText(words: number, tag: string): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(i === words - 7 ? tag : `w${(i * 7919) % 60_000}x`);
  return out.join(' ');
}

/** Small chunks: a row per chunk and one per distinct term in it, so rows grow with the text. */
const chunking = { type: 'static' as const, static: { max_chunk_size_tokens: 100, chunk_overlap_tokens: 50 } };

describe('a large file is written off the event loop (SQLite)', () => {
  let backend: Backend;
  let stack: GatewayStack;
  let index: string;
  beforeAll(async () => {
    backend = await sqliteBackend();
    // The index in a file of its own, so that a lock on it is file search's alone (see `writeInProgress`).
    index = join(dirname(String(backend.storage.sqlitePath)), 'index.sqlite');
    stack = await startStack({ config: { storage: backend.storage, fileSearch: { sqlitePath: index, ingestion: { concurrency: 1 } } } });
  });
  afterAll(async () => {
    await stack?.close();
    await backend?.drop();
  });

  /** The main thread's CPU time per wall millisecond while nothing is ingested (timers, the test's own work). */
  async function idleShare(): Promise<number> {
    const cpuStart = mainThreadCpuMs();
    const wallStart = Date.now();
    await new Promise((r) => setTimeout(r, 2000));
    return (mainThreadCpuMs() - cpuStart) / (Date.now() - wallStart);
  }

  /** Ingests one file; the main thread's CPU time, the wall time and the longest event-loop delay from adding it until it is done. */
  async function ingest(storeId: string, words: number, tag: string): Promise<{ status: string; cpuMs: number; wallMs: number; maxDelayMs: number }> {
    const file = await stack.openai.files.create({ file: await toFile(Buffer.from(manyTermsText(words, tag)), `${tag}.txt`), purpose: 'assistants' });
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const cpuStart = mainThreadCpuMs();
    const wallStart = Date.now();
    await stack.openai.vectorStores.files.create(storeId, { file_id: file.id, chunking_strategy: chunking });
    let status = 'in_progress';
    // Polled ever more sparingly: each poll is main-thread work too, and a larger file takes longer.
    for (let waitMs = 100; status === 'in_progress'; waitMs = Math.min(2000, waitMs * 1.5)) {
      await new Promise((r) => setTimeout(r, waitMs));
      status = (await stack.openai.vectorStores.files.retrieve(file.id, { vector_store_id: storeId })).status;
    }
    const cpuMs = mainThreadCpuMs() - cpuStart;
    delay.disable();
    return { status, cpuMs, wallMs: Date.now() - wallStart, maxDelayMs: delay.max / 1e6 };
  }

  it("the main thread's time for a file does not grow with its chunks, and the whole file is searchable", async () => {
    const store = await stack.openai.vectorStores.create({ name: 'event-loop' });
    // Warm-up: the thread's start and the first statements' preparation are not the file's cost.
    await ingest(store.id, 2_000, 'warmup');
    const small = await ingest(store.id, 10_000, 'smalltag');
    const large = await ingest(store.id, 100_000, 'largetag');
    const idle = await idleShare();
    // What ingesting cost the main thread beyond idling for as long.
    const extra = (r: { cpuMs: number; wallMs: number }) => r.cpuMs - idle * r.wallMs;
    console.log(
      `main thread: ${small.cpuMs.toFixed(0)} ms CPU in ${small.wallMs} ms for 10k words, ${large.cpuMs.toFixed(0)} ms in ${large.wallMs} ms for 100k; ` +
        `idle ${(idle * 1000).toFixed(0)} ms/s; longest loop delay ${small.maxDelayMs.toFixed(0)} / ${large.maxDelayMs.toFixed(0)} ms`,
    );
    expect([small.status, large.status]).toEqual(['completed', 'completed']);
    // Ten times the rows (about 2,000 chunks and 150,000 index entries): written here, that cost about ten times the small file's.
    expect(extra(large)).toBeLessThan(3 * Math.max(extra(small), 50) + 300);
    // Written whole: the word near the large file's end is found, in a chunk of that file.
    const hits = await stack.openai.vectorStores.search(store.id, { query: 'largetag' });
    expect([...new Set(hits.data.map((h) => h.filename))]).toEqual(['largetag.txt']);
  }, 120_000);

  /**
   * Whether another connection holds the index's write lock now, asked with `BEGIN IMMEDIATE` on a
   * connection of the test's own that does not wait (a lock taken is let go at once). The gateway's
   * main thread takes it only for statements that end before its loop runs again, so whenever this
   * test's code runs and the lock is held, it is the writer thread's transaction: the file's rows are
   * being written, and none is committed yet.
   */
  function lockProbe(): { writeInProgress(): boolean; close(): void } {
    const db = new Database(index, { fileMustExist: true, timeout: 0 });
    return {
      writeInProgress() {
        try {
          db.exec('BEGIN IMMEDIATE');
        } catch (e) {
          if ((e as { code?: string }).code === 'SQLITE_BUSY') return true;
          throw e;
        }
        db.exec('ROLLBACK');
        return false;
      },
      close: () => db.close(),
    };
  }

  it('answers requests again and again while the large file is being written', async () => {
    const client = stack.openai;
    const store = await client.vectorStores.create({ name: 'answered-while-writing' });
    const file = await client.files.create({ file: await toFile(Buffer.from(manyTermsText(100_000, 'midtag')), 'midtag.txt'), purpose: 'assistants' });
    const probe = lockProbe();
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    let answeredWhileWriting = 0;
    let answered = 0;
    try {
      await client.vectorStores.files.create(store.id, { file_id: file.id, chunking_strategy: chunking });
      // The status is read after the lock: a write that committed in between is seen completed, not counted.
      for (;;) {
        await client.models.list();
        answered++;
        const writing = probe.writeInProgress();
        const { status } = await client.vectorStores.files.retrieve(file.id, { vector_store_id: store.id });
        if (status !== 'in_progress') {
          expect(status).toBe('completed');
          break;
        }
        if (writing) answeredWhileWriting++;
        // A pause between rounds: back to back, over a thousand rounds (2,400 requests) took the CPU from the
        // write they wait on, while a few dozen answered during it show the same.
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      delay.disable();
      probe.close();
    }
    console.log(
      `${answered} requests answered during the 100k-word file's ingestion, ${answeredWhileWriting} while its rows were being written; longest loop delay ${(delay.max / 1e6).toFixed(0)} ms`,
    );
    // Dozens on any machine: the write of about 150,000 rows outlasts many round trips on a fast machine
    // and a slow one alike. Written on the event loop in one go, none could be answered before it committed.
    expect(answeredWhileWriting).toBeGreaterThanOrEqual(3);
    const hits = await client.vectorStores.search(store.id, { query: 'midtag' });
    expect([...new Set(hits.data.map((h) => h.filename))]).toEqual(['midtag.txt']);
  }, 120_000);
});
