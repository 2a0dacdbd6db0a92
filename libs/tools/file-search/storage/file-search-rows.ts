/** Rows as the store hands them to services; JSON columns already parsed. */

/**
 * Who a file or vector store belongs to: the request's owner (API key hash
 * or OIDC subject), `''` for requests without authentication.
 */
export type Owner = string;

export const NO_OWNER: Owner = '';

/** The stored owner for a request's owner (null without authentication). */
export const ownerOf = (requestOwner: string | null | undefined): Owner => requestOwner ?? NO_OWNER;

export interface FileRow {
  id: string;
  owner: Owner;
  filename: string;
  purpose: string;
  bytes: number;
  createdAt: number;
  seq: number;
  expiresAt: number | null;
}

export interface ExpiresAfter {
  anchor: string;
  days?: number;
  seconds?: number;
}

export interface VectorStoreRow {
  id: string;
  owner: Owner;
  name: string | null;
  description: string | null;
  metadata: Record<string, string>;
  createdAt: number;
  seq: number;
  lastActiveAt: number;
  expiresAfter: ExpiresAfter | null;
}

export type StoreFileStatus = 'in_progress' | 'completed' | 'failed' | 'cancelled';

export interface ChunkingStrategy {
  maxChunkSizeTokens: number;
  chunkOverlapTokens: number;
  /** `auto` was asked for (the defaults); reported as the static values it resolved to. */
  auto: boolean;
}

export type Attributes = Record<string, string | number | boolean>;

export interface StoreFileRow {
  storeId: string;
  fileId: string;
  batchId: string | null;
  status: StoreFileStatus;
  lastError: { code: string; message: string } | null;
  attributes: Attributes;
  chunking: ChunkingStrategy;
  usageBytes: number;
  createdAt: number;
  seq: number;
  attempts: number;
}

export interface BatchRow {
  id: string;
  storeId: string;
  createdAt: number;
  cancelled: boolean;
}

export interface FileCounts {
  in_progress: number;
  completed: number;
  failed: number;
  cancelled: number;
  total: number;
}

/** A chunk's entry in the lexical index: its length in terms and its distinct terms with their counts. */
export interface ChunkTerms {
  length: number;
  counts: ReadonlyArray<readonly [string, number]>;
}

export interface NewChunk {
  position: number;
  text: string;
  embedding?: Float32Array;
  /** Cut by the ingestion thread with the shared analyzer (`ingestion/thread/text-terms.mjs`). */
  terms: ChunkTerms;
}

export interface ChunkHit {
  chunkId: number;
  storeId: string;
  fileId: string;
  filename: string;
  position: number;
  text: string;
  attributes: Attributes;
}

export interface RankedChunk {
  chunkId: number;
  /** Relevance in [0, 1] (see the README's scale): normalised BM25, or cosine similarity. Reported and thresholded. */
  score: number;
  /** The full score results are ordered by: `score` before it is capped (lexical scores reach past 1). */
  rank: number;
}

export interface PageQuery {
  limit: number;
  order: 'asc' | 'desc';
  after?: string;
  before?: string;
}

export interface Page<T> {
  rows: T[];
  hasMore: boolean;
}

/** A claimed ingestion job. */
export interface ClaimedJob {
  storeId: string;
  fileId: string;
  chunking: ChunkingStrategy;
  attempts: number;
  /** The vector store's owner: whose share of the extraction threads the job uses. */
  owner: string;
}
