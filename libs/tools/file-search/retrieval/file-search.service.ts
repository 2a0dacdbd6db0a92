import { Inject, Injectable } from '@nestjs/common';
import { FILE_SEARCH_EMBEDDINGS } from '../ingestion/ingestion.worker.js';
import type { EmbeddingsClient } from '../ingestion/embeddings.client.js';
import type { Attributes } from '../storage/file-search-rows.js';
import { FileSearchStore, type SearchScope } from '../storage/file-search.store.js';
import { matchesFilter, type AttributeFilter } from './attribute-filter.js';
import { queryTerms } from './query-terms.js';
import { fuseRankings, type WeightedRanking } from './rank-fusion.js';

export interface SearchRequest {
  storeIds: readonly string[];
  queries: readonly string[];
  filter?: AttributeFilter;
  maxNumResults: number;
  scoreThreshold: number;
  /** Relative weights of the two rankings in hybrid mode. */
  weights?: { text: number; embedding: number };
  signal?: AbortSignal;
}

export interface SearchResult {
  storeId: string;
  fileId: string;
  filename: string;
  score: number;
  text: string;
  attributes: Attributes;
  chunkId: number;
}

/** Candidates each ranking contributes before fusion: deep enough that fusion can reorder the head. */
const CANDIDATES_PER_RANKING = 50;

/**
 * Retrieval over vector stores: attribute filters pick the candidate files
 * first, then each query is ranked lexically (BM25) and, when embeddings are
 * configured, by vector similarity; the rankings are fused by weighted RRF
 * and a chunk keeps its best score over the queries.
 */
@Injectable()
export class FileSearchService {
  constructor(
    private readonly store: FileSearchStore,
    @Inject(FILE_SEARCH_EMBEDDINGS) private readonly embeddings: EmbeddingsClient | null,
  ) {}

  get mode(): 'hybrid' | 'lexical' {
    return this.embeddings ? 'hybrid' : 'lexical';
  }

  async search(req: SearchRequest): Promise<SearchResult[]> {
    if (req.queries.length === 0 || req.storeIds.length === 0) return [];
    // Filters run before ranking: the rankings only ever see the files that pass.
    const scope: SearchScope = { storeIds: req.storeIds };
    if (req.filter) {
      scope.fileKeys = (await this.store.searchableFiles(req.storeIds)).filter((f) => matchesFilter(req.filter!, f.attributes));
      if (scope.fileKeys.length === 0) return [];
    }
    const depth = Math.max(CANDIDATES_PER_RANKING, req.maxNumResults * 2);
    const vectors = this.embeddings ? await this.embeddings.embed(req.queries, req.signal) : [];
    const weights = req.weights ?? { text: 1, embedding: 1 };

    const best = new Map<number, number>();
    for (const [i, query] of req.queries.entries()) {
      const lists: WeightedRanking[] = [{ weight: this.embeddings ? weights.text : 1, ranking: await this.store.lexical(scope, queryTerms(query), depth) }];
      if (this.embeddings) lists.push({ weight: weights.embedding, ranking: await this.store.vector(scope, vectors[i], depth) });
      for (const [chunkId, score] of fuseRankings(lists)) best.set(chunkId, Math.max(best.get(chunkId) ?? 0, score));
    }
    const top = [...best.entries()]
      .filter(([, score]) => score >= req.scoreThreshold)
      .sort((a, b) => b[1] - a[1] || a[0] - b[0])
      .slice(0, req.maxNumResults);
    const hits = new Map((await this.store.chunks(top.map(([id]) => id))).map((h) => [h.chunkId, h]));
    return top
      .filter(([id]) => hits.has(id))
      .map(([id, score]) => {
        const h = hits.get(id)!;
        return { storeId: h.storeId, fileId: h.fileId, filename: h.filename, score, text: h.text, attributes: h.attributes, chunkId: id };
      });
  }
}
