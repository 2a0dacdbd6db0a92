import { InvalidRequestError } from '#tool-sdk/errors.js';
import type { UsageRow } from '#storage/usage-store.interface.js';

const WIDTHS: Record<string, number> = { '1m': 60_000, '1h': 3_600_000, '1d': 86_400_000 };
/** Buckets per answer at most: a day of minutes, a month of hours or days. */
const MAX_BUCKETS: Record<string, number> = { '1m': 1_440, '1h': 744, '1d': 31 };
const GROUPS = ['model', 'owner', 'surface'] as const;
type Group = (typeof GROUPS)[number];

export interface UsageReportQuery {
  from: number;
  to: number;
  width: string;
  bucketMs: number;
  groupBy: Group[];
  owner?: string | null;
}

function first(value: unknown): unknown {
  return Array.isArray(value) ? value[0] : value;
}

function seconds(raw: unknown, param: string): number | undefined {
  const value = first(raw);
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^\d{1,12}$/.test(value)) throw new InvalidRequestError(`'${param}' must be a Unix time in seconds.`, param);
  return Number(value) * 1000;
}

/**
 * The query string of `GET /v1/usage`, in the words of OpenAI's usage API:
 * `start_time`, `end_time` (Unix seconds; default the last day),
 * `bucket_width` (`1m`, `1h`, `1d`), `group_by` (`model`, `owner`, `surface`).
 */
export function parseUsageQuery(query: Record<string, unknown>, now: number): Omit<UsageReportQuery, 'owner'> & { owner?: string } {
  const width = (first(query.bucket_width) as string | undefined) ?? '1d';
  const bucketMs = WIDTHS[width];
  if (bucketMs === undefined) throw new InvalidRequestError(`'bucket_width' must be one of 1m, 1h, 1d.`, 'bucket_width');
  const to = seconds(query.end_time, 'end_time') ?? now;
  const from = seconds(query.start_time, 'start_time') ?? to - 86_400_000;
  if (from >= to) throw new InvalidRequestError(`'start_time' must be before 'end_time'.`, 'start_time');
  // Bucket edges are multiples of the width: the first bucket is the one start_time falls in.
  const start = from - (from % bucketMs);
  if (Math.ceil((to - start) / bucketMs) > MAX_BUCKETS[width]) {
    throw new InvalidRequestError(`At most ${MAX_BUCKETS[width]} buckets of ${width} per request: narrow 'start_time'..'end_time' or widen 'bucket_width'.`, 'start_time');
  }
  const rawGroups = first(query.group_by);
  const groupBy = (typeof rawGroups === 'string' && rawGroups !== '' ? rawGroups.split(',') : ['model']).map((g) => g.trim());
  for (const g of groupBy) if (!(GROUPS as readonly string[]).includes(g)) throw new InvalidRequestError(`'group_by' takes model, owner and surface (got '${g}').`, 'group_by');
  const owner = first(query.owner);
  if (owner !== undefined && typeof owner !== 'string') throw new InvalidRequestError(`'owner' must be an owner id.`, 'owner');
  return { from: start, to, width, bucketMs, groupBy: groupBy as Group[], ...(owner === undefined ? {} : { owner }) };
}

export interface UsageResult {
  object: 'usage_result';
  num_model_requests: number;
  input_tokens: number;
  input_cached_tokens: number;
  output_tokens: number;
  output_reasoning_tokens: number;
  model?: string;
  owner?: string | null;
  surface?: string;
}

export interface UsageBucket {
  object: 'bucket';
  start_time: number;
  end_time: number;
  results: UsageResult[];
}

/** Every bucket of the window (empty ones too, as OpenAI's usage API answers), rows merged by the grouping asked for. */
export function usageBuckets(rows: UsageRow[], q: UsageReportQuery): UsageBucket[] {
  const buckets = new Map<number, Map<string, UsageResult>>();
  for (let start = q.from; start < q.to; start += q.bucketMs) buckets.set(start, new Map());
  for (const row of rows) {
    const results = buckets.get(row.bucketStart);
    // Runs that used no tokens (failed before the model answered) are the console's error rates, not usage.
    if (!results || row.requests === 0) continue;
    const key = JSON.stringify(q.groupBy.map((g) => row[g]));
    let result = results.get(key);
    if (!result) {
      result = { object: 'usage_result', num_model_requests: 0, input_tokens: 0, input_cached_tokens: 0, output_tokens: 0, output_reasoning_tokens: 0 };
      for (const g of q.groupBy) (result as unknown as Record<string, unknown>)[g] = row[g];
      results.set(key, result);
    }
    result.num_model_requests += row.requests;
    result.input_tokens += row.inputTokens;
    result.input_cached_tokens += row.cachedInputTokens;
    result.output_tokens += row.outputTokens;
    result.output_reasoning_tokens += row.reasoningTokens;
  }
  return [...buckets].map(([start, results]) => ({
    object: 'bucket',
    start_time: Math.floor(start / 1000),
    end_time: Math.floor(Math.min(start + q.bucketMs, q.to) / 1000),
    results: [...results.values()],
  }));
}
