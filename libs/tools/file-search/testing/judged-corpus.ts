import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { FileSearchSettings } from '../config/file-search-settings.js';
import type { EmbeddingsClient } from '../ingestion/embeddings.client.js';
import { IngestionWorker } from '../ingestion/ingestion.worker.js';
import { FileSearchService } from '../retrieval/file-search.service.js';
import { NO_OWNER, type ChunkingStrategy } from '../storage/file-search-rows.js';
import { FileSearchStore, nextSeq } from '../storage/file-search.store.js';
import type { SqlDatabase } from '#tool-sdk/index.js';

/** A test collection with graded-away (binary) judgments: each query lists the documents relevant to it. */
export interface JudgedCorpus {
  description: string;
  documents: Array<{ id: string; title?: string; text: string }>;
  /** `split` marks questions held out while ranking was tuned (`held-out`) and those used for it (`tuning`). */
  queries: Array<{ id: string; text: string; relevant: string[]; split?: 'tuning' | 'held-out' }>;
}

/** The Cranfield collection as shipped in bench/data (see bench/data/README.md). */
export const CRANFIELD_PATH = 'bench/data/cranfield.json';

/** Long documents: Debian man pages with questions written by reading them (see bench/data/README.md). */
export const DEBIAN_MAN_PATH = 'bench/data/debian-man.json.gz';

/** Documents with no text at all (Cranfield has two) are left out: no system could index them. */
export function loadJudgedCorpus(path = CRANFIELD_PATH): JudgedCorpus {
  const raw = readFileSync(resolve(process.cwd(), path));
  const corpus = JSON.parse((path.endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8')) as JudgedCorpus;
  return { ...corpus, documents: corpus.documents.filter((d) => documentText(d).trim() !== '') };
}

/** A document's text as indexed: Cranfield's text starts with its title; a document without text is its title. */
export const documentText = (d: JudgedCorpus['documents'][number]): string => d.text || d.title || '';

export interface RankingQuality {
  /** Share of queries whose first document returned is relevant. */
  recallAt1: number;
  /** Mean over queries of the share of a query's relevant documents among the first 5 distinct documents returned. */
  recallAt5: number;
  /** Mean reciprocal rank of the first relevant document within the first 10 (0 when none). */
  mrrAt10: number;
  /** Share of queries with at least one relevant document in the first 5. */
  successAt5: number;
}

/** Scores ranked document ids (first occurrence counts) against each query's judgments. */
export function rankingQuality(corpus: JudgedCorpus, rankedFor: ReadonlyMap<string, readonly string[]>): RankingQuality {
  let recall = 0;
  let rr = 0;
  let success = 0;
  let first1 = 0;
  for (const q of corpus.queries) {
    const relevant = new Set(q.relevant);
    const ranked = [...new Set(rankedFor.get(q.id) ?? [])];
    const top5 = ranked.slice(0, 5).filter((id) => relevant.has(id)).length;
    recall += top5 / relevant.size;
    if (top5 > 0) success++;
    if (ranked.length > 0 && relevant.has(ranked[0])) first1++;
    const first = ranked.slice(0, 10).findIndex((id) => relevant.has(id));
    if (first >= 0) rr += 1 / (first + 1);
  }
  const n = corpus.queries.length;
  return { recallAt1: first1 / n, recallAt5: recall / n, mrrAt10: rr / n, successAt5: success / n };
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/**
 * The corpus ingested through the real pipeline (ingestion worker and
 * threads, chunker, the store's index, embeddings when given) into one
 * store of `store`, with the given chunking.
 */
export async function ingestJudged(store: FileSearchStore, storeId: string, corpus: JudgedCorpus, chunking: ChunkingStrategy, embeddings: EmbeddingsClient | null): Promise<void> {
  await store.insertStore({
    id: storeId,
    owner: NO_OWNER,
    name: storeId,
    description: null,
    metadata: {},
    createdAt: nowSeconds(),
    seq: nextSeq(),
    lastActiveAt: nowSeconds(),
    expiresAfter: null,
  });
  const fileId = (d: { id: string }) => `${storeId}-doc-${d.id}`;
  for (const d of corpus.documents) {
    const text = documentText(d);
    await store.insertFile(
      { id: fileId(d), owner: NO_OWNER, filename: `${d.id}.txt`, purpose: 'assistants', bytes: Buffer.byteLength(text), createdAt: nowSeconds(), seq: nextSeq(), expiresAt: null },
      Buffer.from(text),
    );
  }
  await store.addStoreFiles(
    corpus.documents.map((d) => ({
      storeId,
      fileId: fileId(d),
      batchId: null,
      status: 'in_progress' as const,
      lastError: null,
      attributes: {},
      chunking,
      usageBytes: 0,
      createdAt: nowSeconds(),
      seq: nextSeq(),
      attempts: 0,
    })),
  );
  const settings = {
    ingestion: {
      enabled: true,
      concurrency: 2,
      pollMs: 10,
      leaseMs: 60_000,
      extractTimeoutMs: 60_000,
      maxAttempts: 3,
      threadMemoryMb: 1024,
      maxTokensPerFile: 5_000_000,
      maxHtmlDepth: 1024,
      niceness: 0,
    },
  } as FileSearchSettings;
  const worker = new IngestionWorker(store, settings, embeddings);
  worker.onApplicationBootstrap();
  try {
    for (;;) {
      const counts = (await store.storeStats([storeId])).get(storeId)!.counts;
      if (counts.in_progress === 0) {
        if (counts.completed !== corpus.documents.length) throw new Error(`only ${counts.completed} of ${corpus.documents.length} documents were ingested`);
        return;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    await worker.onApplicationShutdown();
  }
}

/** Every query through `FileSearchService` (10 results), the documents in result order. */
export async function rankWithFileSearch(db: SqlDatabase, corpus: JudgedCorpus, chunking: ChunkingStrategy, embeddings: EmbeddingsClient | null): Promise<Map<string, string[]>> {
  const store = new FileSearchStore(db);
  await store.init();
  try {
    const storeId = 'vs_judged';
    await ingestJudged(store, storeId, corpus, chunking, embeddings);
    const service = new FileSearchService(store, embeddings);
    const out = new Map<string, string[]>();
    for (const q of corpus.queries) {
      const results = await service.search({ storeIds: [storeId], queries: [q.text], maxNumResults: 10, scoreThreshold: 0 });
      out.set(
        q.id,
        results.map((r) => r.filename.replace(/\.txt$/, '')),
      );
    }
    return out;
  } finally {
    await store.close();
  }
}
