import { fuseScores, spreadOverFiles } from './rank-fusion.js';

/** Hits of a score each, ranked by that score (a vector ranking's, or an uncapped lexical one's). */
const hits = (...pairs: Array<[number, number]>) => pairs.map(([chunkId, score]) => ({ chunkId, score, rank: score }));

describe('fuseScores', () => {
  it('is the weighted mean of the two relevances, in [0, 1]', () => {
    const fused = fuseScores(hits([1, 1], [2, 0.5], [3, 0]), hits([1, 1], [2, 0.1], [3, 0]), { text: 1, embedding: 1 });
    expect(fused.get(1)!.score).toBeCloseTo(1);
    expect(fused.get(2)!.score).toBeCloseTo(0.3);
    expect(fused.get(3)!.score).toBe(0);
  });
  it('weighs the two rankings as asked; both weights 0 count as equal', () => {
    const fused = fuseScores(hits([1, 0.8]), hits([2, 0.8]), { text: 3, embedding: 1 });
    expect(fused.get(1)!.score).toBeCloseTo(0.6);
    expect(fused.get(2)!.score).toBeCloseTo(0.2);
    const textOnly = fuseScores(hits([1, 0.8]), hits([1, 0.2]), { text: 1, embedding: 0 });
    expect(textOnly.get(1)!.score).toBeCloseTo(0.8);
    expect(fuseScores(hits([1, 0.8]), hits([1, 0.2]), { text: 0, embedding: 0 }).get(1)!.score).toBeCloseTo(0.5);
  });
  it('orders by the full lexical score where the reported one is capped', () => {
    const lexical = [
      { chunkId: 1, score: 1, rank: 1.6 },
      { chunkId: 2, score: 1, rank: 1.1 },
    ];
    const fused = fuseScores(lexical, hits([1, 0.5], [2, 0.5]), { text: 1, embedding: 1 });
    expect(fused.get(1)!.score).toBeCloseTo(fused.get(2)!.score);
    expect(fused.get(1)!.rank).toBeGreaterThan(fused.get(2)!.rank);
  });
});

describe('spreadOverFiles', () => {
  const at = (file: string, position = 0) => ({ file, position });
  it("puts every file's best chunk before any file's second one, each round by score, scores unchanged", () => {
    const file: Record<number, string> = { 1: 'a', 2: 'a', 3: 'a', 4: 'b', 5: 'c', 6: 'b' };
    const out = spreadOverFiles(hits([1, 0.9], [2, 0.85], [3, 0.8], [4, 0.5], [5, 0.3], [6, 0.2]), (id) => at(file[id]));
    expect(out.map((h) => h.chunkId)).toEqual([1, 4, 5, 2, 6, 3]);
    expect(out.find((h) => h.chunkId === 2)!.score).toBe(0.85);
  });
  it('orders by the full score, not the capped one, and never by upload order', () => {
    // Chunk ids follow upload order: the later upload ranks higher here on its full score.
    const capped = [
      { chunkId: 1, score: 1, rank: 1.2 },
      { chunkId: 2, score: 1, rank: 1.7 },
      { chunkId: 3, score: 1, rank: 1.4 },
    ];
    expect(spreadOverFiles(capped, (id) => at(`f${id}`)).map((h) => h.chunkId)).toEqual([2, 3, 1]);
  });
  it('breaks exact ties by place in the document, then by file id, not by chunk id', () => {
    const tied = [
      { chunkId: 1, score: 0.5, rank: 0.5 },
      { chunkId: 2, score: 0.5, rank: 0.5 },
      { chunkId: 3, score: 0.5, rank: 0.5 },
    ];
    const place: Record<number, { file: string; position: number }> = { 1: at('file-zz', 3), 2: at('file-bb', 0), 3: at('file-aa', 0) };
    expect(spreadOverFiles(tied, (id) => place[id]).map((h) => h.chunkId)).toEqual([3, 2, 1]);
  });
});
