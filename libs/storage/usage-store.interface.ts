/**
 * Token usage per owner, kept where every replica reads and writes it (the
 * state's database), so the usage API answers the same on every replica and
 * after a restart. Runs are summed into one row per minute, owner, model and
 * surface: the table grows with the minutes in which an owner was active,
 * not with the number of requests.
 */
export const USAGE_STORE = Symbol('USAGE_STORE');

/** What one run used. */
export interface UsageEntry {
  /** The owner (API key hash, OIDC identity); null without authentication. */
  owner: string | null;
  model: string;
  /** Where the run came in: `responses`, `messages`, `websocket`, `background`, `broker`, `batch`, `chat_completions`, `completions`, `embeddings`. */
  surface: string;
  /** When the run ended (ms since the epoch); it counts in that minute. */
  at: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  /** The run failed (an error answer, a failed response); counted in `failedRuns`. */
  failed?: boolean;
  /** The run's wall time, from its first byte in to its last out; summed into `durationMs`. */
  durationMs?: number;
}

export interface UsageQuery {
  /** Window start, inclusive (ms since the epoch). */
  from: number;
  /** Window end, exclusive (ms). */
  to: number;
  /** One owner's usage; undefined for everyone's. */
  owner?: string | null;
  /** Bucket width in ms, a multiple of a minute; buckets start at multiples of it since the epoch (UTC days for a day). */
  bucketMs: number;
  /** At most this many rows; the caller learns of truncation by getting `limit` rows. */
  limit: number;
}

/** One bucket's sums for one owner, model and surface. */
export interface UsageRow {
  bucketStart: number;
  owner: string | null;
  model: string;
  surface: string;
  requests: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  /** Runs that ended, with or without tokens (\`requests\` counts those that used tokens). */
  runs: number;
  failedRuns: number;
  /** The runs' wall times summed: \`durationMs / runs\` is the mean latency. */
  durationMs: number;
}

/** One round of a run as the console's run view draws it; times in ms from the run's start. */
export interface TimelineRound {
  round: number;
  startMs: number;
  durationMs: number;
  /** The upstream inference call's part of the round. */
  upstreamMs?: number;
  error?: string;
}

/** One gateway tool call (or a declaration's discovery, \`kind: 'discovery'\`) on the run's timeline. */
export interface TimelineToolCall {
  kind: 'call' | 'discovery';
  toolType: string;
  name: string;
  serverLabel?: string;
  round?: number;
  startMs: number;
  durationMs: number;
  /** \`completed\`, \`failed\`, \`incomplete\`, \`cancelled\`. */
  outcome: string;
  error?: string;
}

/** What a run did, for the console: never arguments or outputs, only names, times and outcomes. */
export interface RunTimeline {
  responseId: string;
  owner: string | null;
  model: string;
  surface: string;
  /** When the run began (ms since the epoch). */
  startedAt: number;
  durationMs: number;
  status: string;
  error?: string;
  rounds: TimelineRound[];
  tools: TimelineToolCall[];
}

/**
 * Where run timelines are kept: the usage store's database, so every worker
 * and replica reads what any of them wrote. Rows older than
 * \`RUN_TIMELINE_RETENTION_MS\` are removed as new ones arrive.
 */
export interface RunTimelineStore {
  recordTimeline(timeline: RunTimeline): Promise<void>;
  timeline(responseId: string): Promise<RunTimeline | null>;
}

/** A week of run timelines, then they go (usage rows are kept; timelines are for looking at recent runs). */
export const RUN_TIMELINE_RETENTION_MS = 7 * 86_400_000;

export const hasTimelines = (store: unknown): store is RunTimelineStore =>
  typeof (store as Partial<RunTimelineStore> | null)?.recordTimeline === 'function' && typeof (store as Partial<RunTimelineStore>).timeline === 'function';

export interface UsageStore {
  init(): Promise<void>;
  close(): Promise<void>;
  record(entry: UsageEntry): Promise<void>;
  /**
   * Rows ordered by bucket, owner, model, surface. Everything this process
   * recorded before the call is in them: a store that batches its writes
   * writes what is pending first.
   */
  query(query: UsageQuery): Promise<UsageRow[]>;
}

export const USAGE_MINUTE_MS = 60_000;

/** The minute an entry counts in. */
export function usageMinute(at: number): number {
  return at - (at % USAGE_MINUTE_MS);
}

/** Owners are stored as text; the anonymous owner (auth off) as the empty string, so it can be part of the key. */
export const storedOwner = (owner: string | null): string => owner ?? '';
export const ownerOf = (stored: string): string | null => (stored === '' ? null : stored);
