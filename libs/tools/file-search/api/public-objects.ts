import type { BatchRow, ChunkingStrategy, FileCounts, FileRow, Page, StoreFileRow, VectorStoreRow } from '../storage/file-search-rows.js';

/** The public shapes of the Files and Vector Stores APIs, as the official SDK types them. */

const DAY = 86_400;

export function fileObject(f: FileRow): Record<string, unknown> {
  return {
    id: f.id,
    object: 'file',
    bytes: f.bytes,
    created_at: f.createdAt,
    filename: f.filename,
    purpose: f.purpose,
    status: 'processed',
    status_details: null,
    expires_at: f.expiresAt,
  };
}

export function storeExpiresAt(s: VectorStoreRow): number | null {
  return s.expiresAfter?.days ? s.lastActiveAt + s.expiresAfter.days * DAY : null;
}

export function storeObject(s: VectorStoreRow, stats: { counts: FileCounts; usageBytes: number }, now: number): Record<string, unknown> {
  const expiresAt = storeExpiresAt(s);
  const status = expiresAt !== null && now >= expiresAt ? 'expired' : stats.counts.in_progress > 0 ? 'in_progress' : 'completed';
  return {
    id: s.id,
    object: 'vector_store',
    created_at: s.createdAt,
    name: s.name,
    description: s.description,
    usage_bytes: stats.usageBytes,
    file_counts: stats.counts,
    status,
    expires_after: s.expiresAfter,
    expires_at: expiresAt,
    last_active_at: s.lastActiveAt,
    metadata: s.metadata,
  };
}

export function chunkingObject(c: ChunkingStrategy): Record<string, unknown> {
  return { type: 'static', static: { max_chunk_size_tokens: c.maxChunkSizeTokens, chunk_overlap_tokens: c.chunkOverlapTokens } };
}

export function storeFileObject(f: StoreFileRow): Record<string, unknown> {
  return {
    id: f.fileId,
    object: 'vector_store.file',
    created_at: f.createdAt,
    vector_store_id: f.storeId,
    status: f.status,
    last_error: f.lastError,
    usage_bytes: f.usageBytes,
    attributes: f.attributes,
    chunking_strategy: chunkingObject(f.chunking),
  };
}

export function batchObject(b: BatchRow, counts: FileCounts): Record<string, unknown> {
  const status = b.cancelled ? 'cancelled' : counts.in_progress > 0 ? 'in_progress' : counts.failed > 0 && counts.completed === 0 ? 'failed' : 'completed';
  return { id: b.id, object: 'vector_store.files_batch', created_at: b.createdAt, vector_store_id: b.storeId, status, file_counts: counts };
}

export function listObject<T>(page: Page<T>, shape: (row: T) => Record<string, unknown>): Record<string, unknown> {
  const data = page.rows.map(shape);
  return { object: 'list', data, first_id: (data[0]?.id as string) ?? null, last_id: (data.at(-1)?.id as string) ?? null, has_more: page.hasMore };
}
