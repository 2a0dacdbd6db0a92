import { InvalidRequestError } from '#tool-sdk/errors.js';
import type { UsageRow } from '#storage/usage-store.interface.js';

/** The windows the overview offers, each with the bucket width that gives it a readable number of bars. */
export const STATS_RANGES = {
  '1h': { spanMs: 3_600_000, bucketMs: 60_000 },
  '24h': { spanMs: 86_400_000, bucketMs: 3_600_000 },
  '7d': { spanMs: 7 * 86_400_000, bucketMs: 6 * 3_600_000 },
} as const;
export type StatsRange = keyof typeof STATS_RANGES;

/** Series drawn per model and per owner at most; the rest are summed as `other`. */
export const MAX_SERIES = 8;

export interface StatsSeries {
  key: string;
  requests: number[];
  tokens: number[];
}

export interface ConsoleStats {
  range: StatsRange;
  bucket_ms: number;
  /** Each bucket's start (ms since the epoch), oldest first. */
  buckets: number[];
  by_model: StatsSeries[];
  by_owner: StatsSeries[];
  /** Runs (with or without tokens), failed runs and mean latency per bucket; latency is null where nothing ran. */
  runs: number[];
  failed_runs: number[];
  mean_latency_ms: Array<number | null>;
  totals: { runs: number; failed_runs: number; requests: number; input_tokens: number; output_tokens: number };
}

export function parseStatsRange(raw: unknown): StatsRange {
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined) return '24h';
  if (typeof value === 'string' && value in STATS_RANGES) return value as StatsRange;
  throw new InvalidRequestError(`'range' must be one of ${Object.keys(STATS_RANGES).join(', ')}.`, 'range');
}

/** The window \`range\` ends at \`now\`, aligned to whole buckets. */
export function statsWindow(range: StatsRange, now: number): { from: number; to: number; bucketMs: number } {
  const { spanMs, bucketMs } = STATS_RANGES[range];
  const to = now - (now % bucketMs) + bucketMs;
  return { from: to - spanMs, to, bucketMs };
}

const ownerName = (owner: string | null): string => owner ?? 'no key';

/** Per-key series over the buckets; the biggest \`MAX_SERIES - 1\` by tokens keep their name, the rest are \`other\`. */
function seriesBy(rows: UsageRow[], key: (row: UsageRow) => string, index: Map<number, number>, width: number): StatsSeries[] {
  const totals = new Map<string, number>();
  for (const row of rows) totals.set(key(row), (totals.get(key(row)) ?? 0) + row.inputTokens + row.outputTokens + row.requests);
  // Biggest first; equal totals in name order, so the same data always draws the same way.
  const ranked = [...totals.keys()].sort((a, b) => totals.get(b)! - totals.get(a)! || (a < b ? -1 : a > b ? 1 : 0));
  const named = new Set(ranked.length > MAX_SERIES ? ranked.slice(0, MAX_SERIES - 1) : ranked);
  const series = new Map<string, StatsSeries>();
  for (const row of rows) {
    const name = named.has(key(row)) ? key(row) : 'other';
    let s = series.get(name);
    if (!s) series.set(name, (s = { key: name, requests: new Array<number>(width).fill(0), tokens: new Array<number>(width).fill(0) }));
    const at = index.get(row.bucketStart)!;
    s.requests[at] += row.requests;
    s.tokens[at] += row.inputTokens + row.outputTokens;
  }
  return [...series.values()].sort((a, b) => (a.key === 'other' ? 1 : b.key === 'other' ? -1 : ranked.indexOf(a.key) - ranked.indexOf(b.key)));
}

/** The overview's numbers from the usage store's rows for the window. */
export function consoleStats(range: StatsRange, window: { from: number; to: number; bucketMs: number }, rows: UsageRow[]): ConsoleStats {
  const buckets: number[] = [];
  for (let start = window.from; start < window.to; start += window.bucketMs) buckets.push(start);
  const index = new Map(buckets.map((start, i) => [start, i]));
  const inWindow = rows.filter((row) => index.has(row.bucketStart));
  const runs = new Array<number>(buckets.length).fill(0);
  const failed = new Array<number>(buckets.length).fill(0);
  const duration = new Array<number>(buckets.length).fill(0);
  const totals = { runs: 0, failed_runs: 0, requests: 0, input_tokens: 0, output_tokens: 0 };
  for (const row of inWindow) {
    const at = index.get(row.bucketStart)!;
    runs[at] += row.runs;
    failed[at] += row.failedRuns;
    duration[at] += row.durationMs;
    totals.runs += row.runs;
    totals.failed_runs += row.failedRuns;
    totals.requests += row.requests;
    totals.input_tokens += row.inputTokens;
    totals.output_tokens += row.outputTokens;
  }
  return {
    range,
    bucket_ms: window.bucketMs,
    buckets,
    by_model: seriesBy(inWindow, (row) => row.model, index, buckets.length),
    by_owner: seriesBy(inWindow, (row) => ownerName(row.owner), index, buckets.length),
    runs,
    failed_runs: failed,
    mean_latency_ms: runs.map((n, i) => (n === 0 ? null : Math.round(duration[i] / n))),
    totals,
  };
}
