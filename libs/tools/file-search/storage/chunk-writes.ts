import { threadScriptUrl } from '../ingestion/extraction-pool.js';
import type { ChunkTerms } from './file-search-rows.js';
import type { Row, SqlValue } from '#tool-sdk/index.js';

/** A chunk as `completeWithChunks` writes it. */
export interface ChunkRow {
  position: number;
  text: string;
  embedding: Buffer | null;
  terms: ChunkTerms;
}

/** What `completeWithChunks` needs of a transaction: the `SqlDatabase` methods. */
export interface ChunkWriteTx {
  run(sql: string, params: readonly SqlValue[]): Promise<number>;
  all(sql: string, params: readonly SqlValue[]): Promise<Row[]>;
}

/** The shared completion (`ingestion/thread/chunk-writes.mjs`), as the main thread sees it. */
export interface ChunkWrites {
  /** The statement that removes a file's earlier index entries in a store (`file_id`, `store_id`). */
  FILE_POSTINGS_DELETE: string;
  completeWithChunks(
    t: ChunkWriteTx,
    job: { storeId: string; fileId: string; worker: string; usageBytes: number },
    chunks: readonly ChunkRow[],
    pause?: () => Promise<void>,
  ): Promise<boolean>;
}

/**
 * The statements that complete a job are plain JavaScript beside the
 * ingestion thread, which runs them through its own SQLite connection; the
 * main thread runs the same ones (PostgreSQL, SQLite `:memory:`, chunks with
 * embeddings). Loaded once: a module, not state.
 */
let loading: Promise<ChunkWrites> | undefined;
export function chunkWrites(): Promise<ChunkWrites> {
  return (loading ??= import(threadScriptUrl('chunk-writes.mjs').href) as Promise<ChunkWrites>);
}
