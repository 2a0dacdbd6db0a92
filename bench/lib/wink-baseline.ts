import { createRequire } from 'node:module';
import { documentText, type JudgedCorpus } from '#tools/file-search/testing/judged-corpus.js';

const require = createRequire(import.meta.url);

interface WinkEngine {
  defineConfig(cfg: { fldWeights: Record<string, number> }): void;
  definePrepTasks(tasks: Array<(x: unknown) => unknown>): void;
  addDoc(doc: Record<string, string>, id: string): void;
  consolidate(): void;
  search(text: string, limit: number): Array<[string, number]>;
}

/**
 * The classical baseline: wink-bm25-text-search (BM25, k1 1.2, b 0.75) over
 * whole documents, with wink-nlp-utils' usual English pipeline (lower case,
 * tokenize, stop words out, Porter2 stems), as its own documentation sets it up.
 */
export function rankWithWinkBm25(corpus: JudgedCorpus): Map<string, string[]> {
  const bm25 = require('wink-bm25-text-search') as () => WinkEngine;
  const nlp = require('wink-nlp-utils') as {
    string: Record<string, (x: unknown) => unknown>;
    tokens: Record<string, (x: unknown) => unknown>;
  };
  const engine = bm25();
  engine.defineConfig({ fldWeights: { body: 1 } });
  engine.definePrepTasks([nlp.string.lowerCase, nlp.string.removeExtraSpaces, nlp.string.tokenize0, nlp.tokens.removeWords, nlp.tokens.stem]);
  for (const d of corpus.documents) engine.addDoc({ body: documentText(d) }, d.id);
  engine.consolidate();
  return new Map(corpus.queries.map((q) => [q.id, engine.search(q.text, 10).map(([id]) => String(id))]));
}

/** Words per chunk for the chunked baseline: about OpenAI's auto chunk of 800 tokens, half of it overlapping as there. */
const WINK_CHUNK_WORDS = 600;

/**
 * wink-bm25-text-search indexing the corpus cut into chunks of about file
 * search's size (600 words, 300 overlapping): the ingestion CPU baseline.
 * Returns the number of chunks indexed.
 */
export function indexWithWinkChunked(corpus: JudgedCorpus): number {
  const bm25 = require('wink-bm25-text-search') as () => WinkEngine;
  const nlp = require('wink-nlp-utils') as {
    string: Record<string, (x: unknown) => unknown>;
    tokens: Record<string, (x: unknown) => unknown>;
  };
  const engine = bm25();
  engine.defineConfig({ fldWeights: { body: 1 } });
  engine.definePrepTasks([nlp.string.lowerCase, nlp.string.removeExtraSpaces, nlp.string.tokenize0, nlp.tokens.removeWords, nlp.tokens.stem]);
  let chunks = 0;
  for (const d of corpus.documents) {
    const words = documentText(d).split(/\s+/);
    for (let start = 0; start === 0 || start < words.length - WINK_CHUNK_WORDS / 2; start += WINK_CHUNK_WORDS / 2) {
      engine.addDoc({ body: words.slice(start, start + WINK_CHUNK_WORDS).join(' ') }, `${d.id}#${chunks++}`);
    }
  }
  engine.consolidate();
  return chunks;
}
