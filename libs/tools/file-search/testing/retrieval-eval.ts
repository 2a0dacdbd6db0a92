import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { FileSearchSettings } from '../config/file-search-settings.js';
import type { EmbeddingsClient } from '../ingestion/embeddings.client.js';
import { IngestionWorker } from '../ingestion/ingestion.worker.js';
import { AUTO_CHUNKING } from '../ingestion/ingestion-contract.js';
import { FileSearchService } from '../retrieval/file-search.service.js';
import { NO_OWNER } from '../storage/file-search-rows.js';
import { FileSearchStore, nextSeq } from '../storage/file-search.store.js';
import type { SqlDatabase } from '#tool-sdk/index.js';

export interface LabelledCorpus {
  description: string;
  documents: Array<{ id: string; text: string }>;
  queries: Array<{ query: string; relevant: string }>;
}

/** Read from the source tree (the build does not copy JSON), so run from the repository root. */
export const CORPUS_PATH = 'libs/tools/file-search/testing/labelled-corpus.json';

export function loadLabelledCorpus(): LabelledCorpus {
  return JSON.parse(readFileSync(resolve(process.cwd(), CORPUS_PATH), 'utf8')) as LabelledCorpus;
}

export interface RetrievalQuality {
  queries: number;
  /** Share of queries whose relevant document is among the first k results. */
  recallAtK: number;
  /** Mean reciprocal rank of the relevant document (0 when absent from the first k). */
  mrr: number;
  misses: string[];
  ingestMs: number;
  searchMs: number;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/**
 * Ingests the corpus through the real pipeline (worker, chunker, embeddings
 * when given, the store's indexes) into a fresh database, then runs every
 * query through `FileSearchService` and scores the ranks.
 */
export async function evaluateRetrieval(corpus: LabelledCorpus, db: SqlDatabase, embeddings: EmbeddingsClient | null, k = 5): Promise<RetrievalQuality> {
  const store = new FileSearchStore(db);
  await store.init();
  const storeId = 'vs_eval';
  const t0 = performance.now();
  await store.insertStore({
    id: storeId,
    owner: NO_OWNER,
    name: 'eval',
    description: null,
    metadata: {},
    createdAt: nowSeconds(),
    seq: nextSeq(),
    lastActiveAt: nowSeconds(),
    expiresAfter: null,
  });
  for (const d of corpus.documents) {
    await store.insertFile(
      { id: d.id, owner: NO_OWNER, filename: `${d.id}.txt`, purpose: 'assistants', bytes: Buffer.byteLength(d.text), createdAt: nowSeconds(), seq: nextSeq(), expiresAt: null },
      Buffer.from(d.text),
    );
  }
  await store.addStoreFiles(
    corpus.documents.map((d) => ({
      storeId,
      fileId: d.id,
      batchId: null,
      status: 'in_progress',
      lastError: null,
      attributes: {},
      chunking: AUTO_CHUNKING,
      usageBytes: 0,
      createdAt: nowSeconds(),
      seq: nextSeq(),
      attempts: 0,
    })),
  );
  const settings = {
    ingestion: {
      enabled: true,
      concurrency: 4,
      pollMs: 10,
      leaseMs: 60_000,
      extractTimeoutMs: 60_000,
      maxAttempts: 3,
      threadMemoryMb: 1024,
      maxTokensPerFile: 5_000_000,
      maxHtmlDepth: 1024,
    },
  } as FileSearchSettings;
  const worker = new IngestionWorker(store, settings, embeddings);
  worker.onApplicationBootstrap();
  try {
    for (;;) {
      const counts = (await store.storeStats([storeId])).get(storeId)!.counts;
      if (counts.in_progress === 0) {
        if (counts.completed !== corpus.documents.length) throw new Error(`only ${counts.completed} of ${corpus.documents.length} documents were ingested`);
        break;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    await worker.onApplicationShutdown();
  }
  const ingestMs = performance.now() - t0;

  const service = new FileSearchService(store, embeddings);
  let hits = 0;
  let rr = 0;
  const misses: string[] = [];
  const t1 = performance.now();
  for (const q of corpus.queries) {
    const results = await service.search({ storeIds: [storeId], queries: [q.query], maxNumResults: k, scoreThreshold: 0 });
    const rank = results.findIndex((r) => r.fileId === q.relevant);
    if (rank >= 0) {
      hits++;
      rr += 1 / (rank + 1);
    } else misses.push(q.query);
  }
  const searchMs = performance.now() - t1;
  await store.close();
  return { queries: corpus.queries.length, recallAtK: hits / corpus.queries.length, mrr: rr / corpus.queries.length, misses, ingestMs, searchMs };
}
