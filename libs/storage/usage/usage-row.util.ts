import { ownerOf, type UsageRow } from '../usage-store.interface.js';
import type { UsageSqlRow } from './usage.migrations.js';

/** A SQL result row (PostgreSQL returns BIGINT sums as strings) as a `UsageRow`. */
export function toUsageRow(row: UsageSqlRow): UsageRow {
  return {
    bucketStart: Number(row.bucket),
    owner: ownerOf(row.owner),
    model: row.model,
    surface: row.surface,
    requests: Number(row.requests),
    inputTokens: Number(row.input_tokens),
    cachedInputTokens: Number(row.cached_input_tokens),
    outputTokens: Number(row.output_tokens),
    reasoningTokens: Number(row.reasoning_tokens),
    runs: Number(row.runs),
    failedRuns: Number(row.failed_runs),
    durationMs: Number(row.duration_ms),
  };
}
