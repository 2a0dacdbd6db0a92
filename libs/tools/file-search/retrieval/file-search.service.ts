import { Inject, Injectable } from '@nestjs/common';
import { FILE_SEARCH_EMBEDDINGS } from '../ingestion/ingestion.worker.js';
import type { EmbeddingsClient } from '../ingestion/embeddings.client.js';
import type { Attributes, RankedChunk } from '../storage/file-search-rows.js';
import { FileSearchStore, type SearchScope } from '../storage/file-search.store.js';
import { matchesFilter, type AttributeFilter } from './attribute-filter.js';
import { fuseScores, spreadOverFiles } from './rank-fusion.js';
import { textTerms } from './text-terms.js';

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

/** Candidates each ranking contributes: deep enough that fusion and the spread over files can reorder the head. */
const CANDIDATES_PER_RANKING = 50;

/**
 * Retrieval over vector stores: attribute filters pick the candidate files
 * first, then each query is ranked lexically (BM25 of the chunk and of its
 * file over the store-local index) and, when embeddings are configured, by
 * cosine similarity; the two scores are fused by their weighted mean, a
 * chunk keeps its best score over the queries, and results are spread over
 * files before they are cut to `maxNumResults`. Results are ordered by the
 * full score (`rank`); the score reported is a relevance in [0, 1] (README:
 * the scale), so `scoreThreshold` drops weak hits.
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
    const analyzer = await textTerms();
    const vectors = this.embeddings ? await this.embeddings.embed(req.queries, req.signal) : [];

    // Several queries: a chunk keeps its best full score, and that query's reported score.
    const best = new Map<number, RankedChunk>();
    for (const [i, query] of req.queries.entries()) {
      const terms = analyzer.queryTerms(query);
      const scores = this.embeddings ? await this.hybrid(scope, terms, vectors[i], depth, req.weights) : await this.store.lexical(scope, terms, depth);
      for (const hit of scores) {
        const seen = best.get(hit.chunkId);
        if (!seen || hit.rank > seen.rank || (hit.rank === seen.rank && hit.score > seen.score)) best.set(hit.chunkId, hit);
      }
    }
    const kept = [...best.values()].filter((h) => h.score > 0 && h.score >= req.scoreThreshold);
    const places = await this.store.chunkPlaces(kept.map((h) => h.chunkId));
    const top = spreadOverFiles(kept, (id) => places.get(id) ?? { file: String(id), position: 0 }).slice(0, req.maxNumResults);
    const hits = new Map((await this.store.chunks(top.map((h) => h.chunkId))).map((h) => [h.chunkId, h]));
    return top
      .filter(({ chunkId }) => hits.has(chunkId))
      .map(({ chunkId, score }) => {
        const h = hits.get(chunkId)!;
        return { storeId: h.storeId, fileId: h.fileId, filename: h.filename, score, text: h.text, attributes: h.attributes, chunkId };
      });
  }

  /**
   * Both rankings' candidates, each scored by both rankings (a candidate of
   * one list gets its exact score from the other), then fused.
   */
  private async hybrid(scope: SearchScope, terms: string[], vector: Float32Array, depth: number, weights = { text: 1, embedding: 1 }): Promise<RankedChunk[]> {
    const [lexical, semantic] = [await this.store.lexical(scope, terms, depth), await this.store.vector(scope, vector, depth)];
    const inLexical = new Set(lexical.map((h) => h.chunkId));
    const inSemantic = new Set(semantic.map((h) => h.chunkId));
    const lexicalFill = await this.store.lexical(
      scope,
      terms,
      depth,
      semantic.filter((h) => !inLexical.has(h.chunkId)).map((h) => h.chunkId),
    );
    const semanticFill = await this.store.vector(
      scope,
      vector,
      depth,
      lexical.filter((h) => !inSemantic.has(h.chunkId)).map((h) => h.chunkId),
    );
    return [...fuseScores([...lexical, ...lexicalFill], [...semantic, ...semanticFill], weights)].map(([chunkId, { score, rank }]) => ({ chunkId, score, rank }));
  }
}
