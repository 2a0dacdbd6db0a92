import { storedOwner, usageMinute, type UsageEntry, type UsageRow } from '../usage-store.interface.js';

/**
 * One minute's row as a batch adds it: the runs of one minute, owner, model
 * and surface that arrived together, summed; the owner as stored
 * (`storedOwner`: the anonymous owner is '').
 */
export type UsageSum = Omit<UsageRow, 'bucketStart' | 'owner'> & { minute: number; owner: string };

interface Waiter {
  resolve: () => void;
  reject: (e: unknown) => void;
}

/**
 * How long a batch's first entry waits for others before the batch is
 * written. Flushing every tick that had an entry was, at about 2 000
 * requests/s in one process, an SQLite commit (on the write lock every
 * worker shares) every few requests, for rows that mostly add to the same
 * row of the minute. 25 ms caps that at 40 writes a second per process,
 * whatever the load, and keeps what a process killed with SIGKILL can lose,
 * and how late another process's read can be, far below the usage API's
 * one-minute rows. Reads and shutdown in this process do not wait for it.
 */
export const USAGE_FLUSH_WINDOW_MS = 25;

/**
 * Distinct rows a batch sums before it is written without waiting out the
 * window: keeps the batch's memory and the transaction that holds the write
 * lock short when many owners, models or surfaces end runs at once. A plain
 * load adds to a handful of rows; this is a burst's bound, not a tuning knob.
 * While a write is under way the next batch can grow past it (only one
 * write runs at a time); it goes as soon as that write ends.
 */
export const USAGE_BATCH_MAX_ROWS = 256;

export interface UsageBatchOptions {
  /** `USAGE_FLUSH_WINDOW_MS` unless set (tests set a short or a very long one). */
  windowMs?: number;
  /** `USAGE_BATCH_MAX_ROWS` unless set. */
  maxRows?: number;
}

type Sums = Omit<UsageRow, 'bucketStart' | 'owner' | 'model' | 'surface'>;

export const emptySums = (): Sums => ({ requests: 0, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0, runs: 0, failedRuns: 0, durationMs: 0 });

/** One run into a row's sums: a run that used no tokens counts as a run, not as a (model) request. */
export function addEntry(sum: Sums, e: UsageEntry): void {
  const used = e.inputTokens + e.cachedInputTokens + e.outputTokens + e.reasoningTokens > 0;
  sum.requests += used ? 1 : 0;
  sum.inputTokens += e.inputTokens;
  sum.cachedInputTokens += e.cachedInputTokens;
  sum.outputTokens += e.outputTokens;
  sum.reasoningTokens += e.reasoningTokens;
  sum.runs += 1;
  sum.failedRuns += e.failed ? 1 : 0;
  sum.durationMs += Math.max(0, Math.round(e.durationMs ?? 0));
}

/** A row's sums added into another's (a query's bucket wider than a minute). */
export function addSums(sum: Sums, row: Sums): void {
  sum.requests += row.requests;
  sum.inputTokens += row.inputTokens;
  sum.cachedInputTokens += row.cachedInputTokens;
  sum.outputTokens += row.outputTokens;
  sum.reasoningTokens += row.reasoningTokens;
  sum.runs += row.runs;
  sum.failedRuns += row.failedRuns;
  sum.durationMs += row.durationMs;
}

/** The values of one sum in the order of `USAGE_UPSERT_COLUMNS`. */
export const usageSumValues = (s: UsageSum): unknown[] => [
  s.minute,
  s.owner,
  s.model,
  s.surface,
  s.requests,
  s.inputTokens,
  s.cachedInputTokens,
  s.outputTokens,
  s.reasoningTokens,
  s.runs,
  s.failedRuns,
  s.durationMs,
];

/**
 * Group commit for usage: every run that ends adds one entry, and writing
 * each in a transaction of its own was a database round (an SQLite commit,
 * a PostgreSQL query) per request, on the SQLite file's one write lock that
 * every worker shares. Entries are summed per row key and written together
 * once the batch's first entry has waited `windowMs`, or at once when the
 * batch reaches `maxRows` distinct rows; one write runs at a time, and
 * entries that arrive while it runs join the next one. Each caller's promise
 * settles when the write that carries its entry has, so
 * `UsageRecorder.settled()` still means "on disk". `flush()` (a read in
 * this process) and `drained()` (close) write what is pending without
 * waiting out the window.
 */
export class UsageBatch {
  private sums = new Map<string, UsageSum>();
  private waiters: Waiter[] = [];
  /** The window of the pending batch; only armed while something is pending and no write is due. */
  private timer: NodeJS.Timeout | undefined;
  /** The pending batch is to be written as soon as the running write (if any) ends. */
  private due = false;
  private writing: Promise<void> | undefined;
  private readonly windowMs: number;
  private readonly maxRows: number;

  constructor(
    private readonly write: (sums: UsageSum[]) => Promise<void>,
    options: UsageBatchOptions = {},
  ) {
    this.windowMs = options.windowMs ?? USAGE_FLUSH_WINDOW_MS;
    this.maxRows = options.maxRows ?? USAGE_BATCH_MAX_ROWS;
  }

  add(e: UsageEntry): Promise<void> {
    const minute = usageMinute(e.at);
    const owner = storedOwner(e.owner);
    const key = `${minute}\u0000${owner}\u0000${e.model}\u0000${e.surface}`;
    let sum = this.sums.get(key);
    if (!sum) {
      sum = { minute, owner, model: e.model, surface: e.surface, ...emptySums() };
      this.sums.set(key, sum);
    }
    addEntry(sum, e);
    const settled = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (this.sums.size >= this.maxRows) this.writeNow();
    else if (!this.timer && !this.due) this.arm();
    return settled;
  }

  /**
   * Writes what is pending now and resolves once every entry added before
   * the call is written (or its write failed: that rejects the entries'
   * own promises, not this one). Entries added later are not waited for, so
   * a read under steady load is not kept behind writes it did not ask for.
   */
  flush(): Promise<void> {
    if (this.sums.size === 0) return this.writing ?? Promise.resolve();
    const written = new Promise<void>((resolve) => this.waiters.push({ resolve, reject: () => resolve() }));
    this.writeNow();
    return written;
  }

  /** Writes everything, at once, until nothing is pending or being written: for close. */
  async drained(): Promise<void> {
    while (this.sums.size > 0 || this.writing) await this.flush();
  }

  private arm(): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.due = true;
      this.pump();
    }, this.windowMs);
    // A pending batch never keeps a process alive: shutdown writes it through close().
    this.timer.unref();
  }

  private writeNow(): void {
    this.due = true;
    this.pump();
  }

  /** Starts the pending batch's write when it is due and no other write runs. */
  private pump(): void {
    if (this.writing || !this.due) return;
    this.due = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.sums.size === 0) return;
    const sums = [...this.sums.values()];
    const waiters = this.waiters;
    this.sums = new Map();
    this.waiters = [];
    this.writing = this.write(sums).then(
      () => waiters.forEach((w) => w.resolve()),
      (e: unknown) => waiters.forEach((w) => w.reject(e)),
    );
    void this.writing.finally(() => {
      this.writing = undefined;
      this.pump();
    });
  }
}
