import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { toFile } from 'openai';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { sqliteBackend, type Backend } from './support/file-search/backends.js';
import { cpuMs } from './support/hardening/growth.js';

/**
 * Deleting what a tenant indexed, at 1x, 10x and 100x (20 KB, 200 KB and
 * 2 MB of text, each word its own index term): through the official client,
 * the deleted file is gone from search, its chunks and index entries
 * are all removed afterwards, and while the large file's rows go, other
 * requests are answered between the statements that remove them. One
 * statement used to delete them all on the event loop: a file of six
 * million entries held every request for five seconds, and no request could
 * ever see its index half removed. The longest loop stall is printed for the
 * reader; it is a speed, so `bench/` owns it, not this test.
 */
describe('deleting indexed files grows without stalling the gateway', () => {
  let backend: Backend;
  let stack: GatewayStack;
  let db: Database.Database;

  beforeAll(async () => {
    backend = await sqliteBackend();
    // The index's own file, read beside the gateway to see its rows go.
    const index = join(dirname(String(backend.storage.sqlitePath)), 'index.sqlite');
    stack = await startStack({ config: { storage: backend.storage, fileSearch: { sqlitePath: index, ingestion: { pollMs: 20 } } } });
    db = new Database(index, { readonly: true, fileMustExist: true });
  });
  afterAll(async () => {
    db?.close();
    await stack?.close();
    await backend?.drop();
  });

  /** Text of about `bytes` bytes whose words are mostly distinct terms, so the index holds many entries per chunk. */
  const text = (bytes: number): string => {
    const words: string[] = [];
    for (let i = 0, size = 0; size < bytes; i++) {
      const word = `term${(i * 7919) % 100_003}x`;
      words.push(word);
      size += word.length + 1;
    }
    return words.join(' ');
  };

  const rowsOf = (fileId: string): { chunks: number; postings: number } => ({
    chunks: (db.prepare('SELECT COUNT(*) AS n FROM fs_chunks WHERE file_id = ?').get(fileId) as { n: number }).n,
    postings: (db.prepare('SELECT COUNT(*) AS n FROM fs_postings WHERE file_id = ?').get(fileId) as { n: number }).n,
  });

  /**
   * The longest the event loop went without running a timer, each gap counted as the lesser of its
   * wall time and the CPU time the process spent in it (the measure `probeHealth` takes). Printed only.
   */
  function watchStalls(): { stop(): number } {
    let worst = 0;
    let wall = performance.now();
    let cpu = cpuMs();
    const timer = setInterval(() => {
      const [nowWall, nowCpu] = [performance.now(), cpuMs()];
      worst = Math.max(worst, Math.min(nowWall - wall, nowCpu - cpu));
      [wall, cpu] = [nowWall, nowCpu];
    }, 5);
    return {
      stop: () => {
        clearInterval(timer);
        return worst;
      },
    };
  }

  /**
   * Deletes the file through the client, then sends other requests through it until the file's last
   * row is gone. After each answer it counts the file's index entries left: every count strictly
   * between none and all is a request the gateway answered in the middle of the removal.
   */
  async function deleteWatched(fileId: string, postingsBefore: number): Promise<{ answer: unknown; answeredMidway: number; maxDelayMs: number }> {
    const stalls = watchStalls();
    const answer = await stack.openai.files.delete(fileId);
    const midway = new Set<number>();
    for (;;) {
      await stack.openai.models.list();
      const left = rowsOf(fileId);
      if (left.chunks === 0 && left.postings === 0) break;
      if (left.postings > 0 && left.postings < postingsBefore) midway.add(left.postings);
    }
    return { answer, answeredMidway: midway.size, maxDelayMs: stalls.stop() };
  }

  it('deletes files of 20 KB, 200 KB and 2 MB of indexed text', async () => {
    const client = stack.openai;
    const store = await client.vectorStores.create({ name: 'delete-growth' });
    for (const scale of [1, 10, 100]) {
      const file = await client.files.create({ file: await toFile(Buffer.from(text(20_000 * scale)), `big-${scale}.txt`), purpose: 'assistants' });
      const added = await client.vectorStores.files.createAndPoll(store.id, { file_id: file.id }, { pollIntervalMs: 50 });
      expect(added.status).toBe('completed');
      const before = rowsOf(file.id);
      expect(before.postings).toBeGreaterThan(before.chunks);

      const { answer, answeredMidway, maxDelayMs } = await deleteWatched(file.id, before.postings);
      expect(answer).toEqual({ id: file.id, object: 'file', deleted: true });
      const hits = await client.vectorStores.search(store.id, { query: 'term7919x' });
      expect(hits.data.map((h) => h.file_id)).not.toContain(file.id);
      expect(rowsOf(file.id)).toEqual({ chunks: 0, postings: 0 });
      console.log(
        `x${scale}: ${before.chunks} chunks, ${before.postings} index entries removed; ` +
          `${answeredMidway} requests answered midway; longest loop stall ${maxDelayMs.toFixed(0)} ms`,
      );
      // The large file's 370 000 entries go in dozens of statements with the loop running between
      // them: requests are answered at several points of the removal, each seeing fewer entries.
      if (scale === 100) expect(answeredMidway).toBeGreaterThanOrEqual(3);
    }
  }, 180_000);
});
