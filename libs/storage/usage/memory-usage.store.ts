import { ownerOf, storedOwner, usageMinute, type UsageEntry, type UsageQuery, type UsageRow, type UsageStore } from '../usage-store.interface.js';

/**
 * The memory driver's usage: one process, lost at restart, as everything
 * else on that driver is (worker mode refuses the memory driver). Records
 * add to the rows at once, with no batch: there is no write to save, and a
 * read sees every record made before it.
 */
export class MemoryUsageStore implements UsageStore {
  private readonly minutes = new Map<string, UsageRow>();

  async init(): Promise<void> {}
  async close(): Promise<void> {}

  async record(entry: UsageEntry): Promise<void> {
    const minute = usageMinute(entry.at);
    const key = JSON.stringify([minute, storedOwner(entry.owner), entry.model, entry.surface]);
    const row = this.minutes.get(key) ?? { ...zero(minute, entry) };
    row.requests += 1;
    row.inputTokens += entry.inputTokens;
    row.cachedInputTokens += entry.cachedInputTokens;
    row.outputTokens += entry.outputTokens;
    row.reasoningTokens += entry.reasoningTokens;
    this.minutes.set(key, row);
  }

  async query(q: UsageQuery): Promise<UsageRow[]> {
    const buckets = new Map<string, UsageRow>();
    for (const row of this.minutes.values()) {
      if (row.bucketStart < q.from || row.bucketStart >= q.to) continue;
      if (q.owner !== undefined && row.owner !== q.owner) continue;
      const bucketStart = row.bucketStart - (row.bucketStart % q.bucketMs);
      const key = JSON.stringify([bucketStart, storedOwner(row.owner), row.model, row.surface]);
      const sum = buckets.get(key) ?? { ...row, bucketStart, requests: 0, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 };
      sum.requests += row.requests;
      sum.inputTokens += row.inputTokens;
      sum.cachedInputTokens += row.cachedInputTokens;
      sum.outputTokens += row.outputTokens;
      sum.reasoningTokens += row.reasoningTokens;
      buckets.set(key, sum);
    }
    return [...buckets.values()]
      .sort((a, b) => a.bucketStart - b.bucketStart || cmp(storedOwner(a.owner), storedOwner(b.owner)) || cmp(a.model, b.model) || cmp(a.surface, b.surface))
      .slice(0, q.limit);
  }
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function zero(minute: number, entry: UsageEntry): UsageRow {
  return {
    bucketStart: minute,
    owner: ownerOf(storedOwner(entry.owner)),
    model: entry.model,
    surface: entry.surface,
    requests: 0,
    inputTokens: 0,
    cachedInputTokens: 0,
    outputTokens: 0,
    reasoningTokens: 0,
  };
}
