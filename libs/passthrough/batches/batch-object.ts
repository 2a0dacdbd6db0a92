import type { BatchRow } from './batch-rows.js';

/** The public Batch object, as openai-node types it (`src/resources/batches.ts`). */
export function batchObject(b: BatchRow): Record<string, unknown> {
  const d = b.doc;
  return {
    id: b.id,
    object: 'batch',
    endpoint: b.endpoint,
    model: d.model ?? null,
    errors: d.errors && d.errors.length > 0 ? { object: 'list', data: d.errors } : null,
    input_file_id: d.input_file_id,
    completion_window: d.completion_window,
    status: b.status,
    output_file_id: d.output_file_id ?? null,
    error_file_id: d.error_file_id ?? null,
    created_at: d.created_at,
    in_progress_at: d.in_progress_at ?? null,
    expires_at: Math.floor(b.expiresAt / 1000),
    finalizing_at: d.finalizing_at ?? null,
    completed_at: d.completed_at ?? null,
    failed_at: d.failed_at ?? null,
    expired_at: d.expired_at ?? null,
    cancelling_at: d.cancelling_at ?? null,
    cancelled_at: d.cancelled_at ?? null,
    request_counts: { total: b.total, completed: b.completed, failed: b.failed },
    usage: d.usage ? { ...d.usage, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } } : null,
    metadata: d.metadata,
  };
}
