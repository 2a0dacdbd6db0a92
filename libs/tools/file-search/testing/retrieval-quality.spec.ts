import { SimulatedUpstream } from '../../../../apps/simulator/src/simulated-upstream.js';
import { EmbeddingsClient } from '../ingestion/embeddings.client.js';
import { SqliteDatabase } from '#storage/sql/sql-database.js';
import { evaluateRetrieval, loadLabelledCorpus } from './retrieval-eval.js';

/**
 * A quality floor on the labelled corpus, so that a change that breaks
 * ranking fails here. The numbers themselves are reported by
 * `bench/retrieval-quality.ts` in bench/README.md.
 */
describe('retrieval quality on the labelled corpus (recall@5)', () => {
  const corpus = loadLabelledCorpus();
  let sim: SimulatedUpstream;
  let url: string;
  beforeAll(async () => {
    sim = new SimulatedUpstream();
    ({ url } = await sim.listen());
  });
  afterAll(() => sim.close());

  it('BM25 alone finds nearly every answer; hybrid with the simulated embeddings finds as many and ranks them higher', async () => {
    const lexical = await evaluateRetrieval(corpus, new SqliteDatabase(':memory:'), null);
    const embeddings = new EmbeddingsClient({ baseUrl: url, model: 'switchyard-sim', batchSize: 16, timeoutMs: 10_000 });
    const hybrid = await evaluateRetrieval(corpus, new SqliteDatabase(':memory:'), embeddings);
    expect(lexical.queries).toBe(40);
    expect(lexical.recallAtK).toBeGreaterThanOrEqual(0.9);
    expect(hybrid.recallAtK).toBeGreaterThanOrEqual(lexical.recallAtK);
    expect(hybrid.mrr).toBeGreaterThanOrEqual(lexical.mrr);
    // A paraphrase sharing no word (or stem, or trigram) with its document is beyond both.
    expect(lexical.misses).toContain('which datacentres can host my app');
  });
});
