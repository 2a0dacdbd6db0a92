import type { RankedChunk } from '../storage/file-search-rows.js';

/** The usual RRF constant: damps the head of each list so one ranking cannot dominate. */
export const RRF_K = 60;

export interface WeightedRanking {
  weight: number;
  ranking: readonly RankedChunk[];
}

/**
 * Reciprocal rank fusion: each list adds `weight / (k + rank)` per chunk.
 * Scores are divided by the best a chunk could get (first in every list),
 * so they fall in (0, 1] and `score_threshold` means the same with one
 * ranking or two.
 */
export function fuseRankings(lists: readonly WeightedRanking[]): Map<number, number> {
  const scores = new Map<number, number>();
  const best = lists.reduce((sum, l) => sum + l.weight / (RRF_K + 1), 0);
  if (best <= 0) return scores;
  for (const { weight, ranking } of lists) {
    ranking.forEach((hit, i) => scores.set(hit.chunkId, (scores.get(hit.chunkId) ?? 0) + weight / (RRF_K + i + 1) / best));
  }
  return scores;
}
