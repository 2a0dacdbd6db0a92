import type { RankedChunk } from '../storage/file-search-rows.js';

export interface HybridWeights {
  text: number;
  embedding: number;
}

/**
 * Hybrid fusion by a weighted mean of the two relevance scores (normalised
 * BM25 and cosine similarity, both in [0, 1]): the fused score stays a
 * relevance on the same scale, 0 for a chunk neither ranking relates to the
 * query and 1 for one both call a full match, so `score_threshold` reads
 * the same in either mode. A chunk absent from one list scores 0 there
 * (callers fill in the scores of each list's candidates from the other
 * ranking first, so absence means no relation). Weights that are both 0
 * count as equal.
 */
export function fuseScores(lexical: readonly RankedChunk[], vector: readonly RankedChunk[], weights: HybridWeights): Map<number, number> {
  const total = weights.text + weights.embedding;
  const [wt, we] = total > 0 ? [weights.text / total, weights.embedding / total] : [0.5, 0.5];
  const text = new Map(lexical.map((h) => [h.chunkId, h.score]));
  const embedding = new Map(vector.map((h) => [h.chunkId, h.score]));
  const fused = new Map<number, number>();
  for (const id of new Set([...text.keys(), ...embedding.keys()])) fused.set(id, wt * (text.get(id) ?? 0) + we * (embedding.get(id) ?? 0));
  return fused;
}

/**
 * The order results are given in: by score, except that a file's second
 * and later chunks come after the first chunks of every other file that
 * matched (as a search engine limits results per site). Overlapping chunks
 * of one file mostly repeat each other; this keeps one long file from
 * filling the first results. Scores are left as they are.
 */
export function spreadOverFiles<T extends { chunkId: number; score: number }>(hits: readonly T[], fileOf: (chunkId: number) => string): T[] {
  const sorted = [...hits].sort((a, b) => b.score - a.score || a.chunkId - b.chunkId);
  const seen = new Map<string, number>();
  const round = new Map<number, number>();
  for (const h of sorted) {
    const f = fileOf(h.chunkId);
    const n = seen.get(f) ?? 0;
    seen.set(f, n + 1);
    round.set(h.chunkId, n);
  }
  return sorted.sort((a, b) => round.get(a.chunkId)! - round.get(b.chunkId)! || b.score - a.score || a.chunkId - b.chunkId);
}
