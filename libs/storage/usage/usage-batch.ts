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
];

/**
 * Group commit for usage: every run that ends adds one entry, and writing
 * each in a transaction of its own was a database round (an SQLite commit,
 * a PostgreSQL query) per request, on the SQLite file's one write lock that
 * every worker shares. Entries that arrive within one tick are summed per
 * row key and written together; entries that arrive while a write is under
 * way join the next one. Each caller's promise settles when the write that
 * carries its entry has, so `UsageRecorder.settled()` (awaited at shutdown)
 * still means "on disk".
 */
export class UsageBatch {
  private sums = new Map<string, UsageSum>();
  private waiters: Waiter[] = [];
  private scheduled = false;
  private writing: Promise<void> | undefined;

  constructor(private readonly write: (sums: UsageSum[]) => Promise<void>) {}

  add(e: UsageEntry): Promise<void> {
    const minute = usageMinute(e.at);
    const owner = storedOwner(e.owner);
    const key = `${minute}\u0000${owner}\u0000${e.model}\u0000${e.surface}`;
    let sum = this.sums.get(key);
    if (!sum) {
      sum = { minute, owner, model: e.model, surface: e.surface, requests: 0, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 };
      this.sums.set(key, sum);
    }
    sum.requests += 1;
    sum.inputTokens += e.inputTokens;
    sum.cachedInputTokens += e.cachedInputTokens;
    sum.outputTokens += e.outputTokens;
    sum.reasoningTokens += e.reasoningTokens;
    const settled = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    this.schedule();
    return settled;
  }

  /** Resolves once everything added so far has been written (or failed). */
  async drained(): Promise<void> {
    while (this.scheduled || this.writing) await (this.writing ?? new Promise<void>((r) => setImmediate(r)));
  }

  private schedule(): void {
    if (this.scheduled || this.writing) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
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
      if (this.sums.size > 0) this.schedule();
    });
  }
}
