import { SqliteDatabase } from '#storage/sql/sql-database.js';
import { FileSearchStore } from '../storage/file-search.store.js';
import { ingestJudged } from '../testing/judged-corpus.js';

/** Prose of `paragraphs` paragraphs, each of the same shape and vocabulary size, different words from one to the next. */
function document(paragraphs: number): string {
  const out: string[] = [];
  for (let p = 0; p < paragraphs; p++) {
    const words = Array.from({ length: 40 }, (_, i) => `term${(p * 7 + i * 13) % 997}x`);
    out.push(`Section ${p}. The engine reads ${words.join(' ')} and writes the result.`);
  }
  return out.join('\n\n');
}

/**
 * Ingestion's work per file grows linearly with the file: a file 10x and
 * 100x as long becomes 10x and 100x the chunks and index entries (counted,
 * not timed), through the real worker, threads and chunk writer.
 */
describe('ingestion cost as a file grows', () => {
  it('writes chunks and index entries in proportion to the file at 1x, 10x and 100x', async () => {
    const sizes = [1, 10, 100] as const;
    const corpus = {
      description: 'growth',
      documents: sizes.map((n) => ({ id: `x${n}`, text: document(20 * n) })),
      queries: [],
    };
    const store = new FileSearchStore(new SqliteDatabase(':memory:'));
    await store.init();
    try {
      await ingestJudged(store, 'vs_growth', corpus, { maxChunkSizeTokens: 800, chunkOverlapTokens: 400, auto: true }, null);
      const counts = new Map<number, { chunks: number; postings: number }>();
      for (const n of sizes) {
        const file = `vs_growth-doc-x${n}`;
        const [c] = await store.db.all<{ n: unknown }>('SELECT COUNT(*) AS n FROM fs_chunks WHERE file_id = ?', [file]);
        const [p] = await store.db.all<{ n: unknown }>('SELECT COUNT(*) AS n FROM fs_postings WHERE file_id = ?', [file]);
        counts.set(n, { chunks: Number(c.n), postings: Number(p.n) });
      }
      const base = counts.get(1)!;
      expect(base.chunks).toBeGreaterThanOrEqual(2);
      const ten = counts.get(10)!;
      const hundred = counts.get(100)!;
      // Overlapping windows plus a partial one at the end: at 1x the end is a large share, so 1x to 10x has slack.
      expect(ten.chunks / base.chunks).toBeGreaterThan(7);
      expect(ten.chunks / base.chunks).toBeLessThan(13);
      expect(hundred.chunks / ten.chunks).toBeGreaterThan(9);
      expect(hundred.chunks / ten.chunks).toBeLessThan(11);
      // Index entries per chunk stay what they are: no entry grows with the file.
      for (const grown of [ten, hundred]) {
        expect(grown.postings / grown.chunks).toBeGreaterThan((base.postings / base.chunks) * 0.85);
        expect(grown.postings / grown.chunks).toBeLessThan((base.postings / base.chunks) * 1.15);
      }
    } finally {
      await store.close();
    }
  }, 120_000);
});
