import { fuseScores, spreadOverFiles } from './rank-fusion.js';

const hits = (...pairs: Array<[number, number]>) => pairs.map(([chunkId, score]) => ({ chunkId, score }));

describe('fuseScores', () => {
  it('is the weighted mean of the two relevances: a full match in both is 1, a chunk neither relates to is 0', () => {
    const fused = fuseScores(hits([1, 1], [2, 0.5], [3, 0]), hits([1, 1], [2, 0.1], [3, 0]), { text: 1, embedding: 1 });
    expect(fused.get(1)).toBeCloseTo(1);
    expect(fused.get(2)).toBeCloseTo(0.3);
    expect(fused.get(3)).toBe(0);
  });

  it('follows the weights, and counts a chunk missing from one list as 0 there', () => {
    const fused = fuseScores(hits([1, 0.8]), hits([2, 0.8]), { text: 3, embedding: 1 });
    expect(fused.get(1)).toBeCloseTo(0.6);
    expect(fused.get(2)).toBeCloseTo(0.2);
    const textOnly = fuseScores(hits([1, 0.8]), hits([1, 0.2]), { text: 1, embedding: 0 });
    expect(textOnly.get(1)).toBeCloseTo(0.8);
    expect(fuseScores(hits([1, 0.8]), hits([1, 0.2]), { text: 0, embedding: 0 }).get(1)).toBeCloseTo(0.5);
  });
});

describe('spreadOverFiles', () => {
  it("puts every file's best chunk before any file's second one, each round by score, scores unchanged", () => {
    const file: Record<number, string> = { 1: 'a', 2: 'a', 3: 'a', 4: 'b', 5: 'c', 6: 'b' };
    const out = spreadOverFiles(hits([1, 0.9], [2, 0.85], [3, 0.8], [4, 0.5], [5, 0.3], [6, 0.2]), (id) => file[id]);
    expect(out.map((h) => h.chunkId)).toEqual([1, 4, 5, 2, 6, 3]);
    expect(out.find((h) => h.chunkId === 2)!.score).toBe(0.85);
  });
});
