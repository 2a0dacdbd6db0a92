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
 * the same in either mode. The order comes from the same mean of the full
 * scores (`rank`: lexical ones uncapped), so hybrid mode orders by the
 * lexical ranking's document evidence too. A chunk absent from one list
 * scores 0 there (callers fill in the scores of each list's candidates from
 * the other ranking first, so absence means no relation). Weights that are
 * both 0 count as equal.
 */
export function fuseScores(lexical: readonly RankedChunk[], vector: readonly RankedChunk[], weights: HybridWeights): Map<number, { score: number; rank: number }> {
  const total = weights.text + weights.embedding;
  const [wt, we] = total > 0 ? [weights.text / total, weights.embedding / total] : [0.5, 0.5];
  const text = new Map(lexical.map((h) => [h.chunkId, h]));
  const embedding = new Map(vector.map((h) => [h.chunkId, h]));
  const fused = new Map<number, { score: number; rank: number }>();
  for (const id of new Set([...text.keys(), ...embedding.keys()])) {
    const [t, e] = [text.get(id), embedding.get(id)];
    fused.set(id, { score: wt * (t?.score ?? 0) + we * (e?.score ?? 0), rank: wt * (t?.rank ?? 0) + we * (e?.rank ?? 0) });
  }
  return fused;
}

/** Where a chunk sits: its file (`store/file`) and its place in it. */
export interface ChunkPlace {
  file: string;
  position: number;
}

/**
 * Orders hits by their full score (`rank`), never by the capped score alone:
 * many chunks reach a capped score of 1. Exact ties go to the higher
 * reported score, then to the earlier chunk of its document, then to the
 * file id (random, so not upload order), and only for copies of one chunk
 * in one file to the chunk id.
 */
export function byRank(placeOf: (chunkId: number) => ChunkPlace) {
  return (a: { chunkId: number; score: number; rank: number }, b: { chunkId: number; score: number; rank: number }): number => {
    const [pa, pb] = [placeOf(a.chunkId), placeOf(b.chunkId)];
    return b.rank - a.rank || b.score - a.score || pa.position - pb.position || (pa.file < pb.file ? -1 : pa.file > pb.file ? 1 : 0) || a.chunkId - b.chunkId;
  };
}

/**
 * The order results are given in: by full score (`byRank`), except that a
 * file's second and later chunks come after the first chunks of every other
 * file that matched (as a search engine limits results per site).
 * Overlapping chunks of one file mostly repeat each other; this keeps one
 * long file from filling the first results. Scores are left as they are.
 */
export function spreadOverFiles<T extends { chunkId: number; score: number; rank: number }>(hits: readonly T[], placeOf: (chunkId: number) => ChunkPlace): T[] {
  const order = byRank(placeOf);
  const sorted = [...hits].sort(order);
  const seen = new Map<string, number>();
  const round = new Map<number, number>();
  for (const h of sorted) {
    const f = placeOf(h.chunkId).file;
    const n = seen.get(f) ?? 0;
    seen.set(f, n + 1);
    round.set(h.chunkId, n);
  }
  return sorted.sort((a, b) => round.get(a.chunkId)! - round.get(b.chunkId)! || order(a, b));
}
