import { RRF_K, fuseRankings } from './rank-fusion.js';

const ranking = (...ids: number[]) => ids.map((chunkId, i) => ({ chunkId, score: 100 - i }));

describe('fuseRankings', () => {
  it('gives a chunk first in every list the score 1', () => {
    const fused = fuseRankings([
      { weight: 1, ranking: ranking(7, 8) },
      { weight: 1, ranking: ranking(7, 9) },
    ]);
    expect(fused.get(7)).toBeCloseTo(1);
    expect(fused.get(8)).toBeCloseTo((0.5 * (RRF_K + 1)) / (RRF_K + 2));
  });

  it('lets a chunk ranked well in both lists beat one that tops only one', () => {
    const fused = fuseRankings([
      { weight: 1, ranking: ranking(1, 2, 3) },
      { weight: 1, ranking: ranking(4, 2, 5) },
    ]);
    expect(fused.get(2)!).toBeGreaterThan(fused.get(1)!);
    expect(fused.get(2)!).toBeGreaterThan(fused.get(4)!);
  });

  it('follows the weights: a zero-weight list changes nothing', () => {
    const fused = fuseRankings([
      { weight: 1, ranking: ranking(1, 2) },
      { weight: 0, ranking: ranking(2, 1) },
    ]);
    expect(fused.get(1)!).toBeGreaterThan(fused.get(2)!);
    const embeddingHeavy = fuseRankings([
      { weight: 1, ranking: ranking(1, 2) },
      { weight: 3, ranking: ranking(2, 1) },
    ]);
    expect(embeddingHeavy.get(2)!).toBeGreaterThan(embeddingHeavy.get(1)!);
  });
});
