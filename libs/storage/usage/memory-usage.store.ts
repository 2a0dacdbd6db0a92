import {
  ownerOf,
  RUN_TIMELINE_RETENTION_MS,
  storedOwner,
  usageMinute,
  type RunTimeline,
  type RunTimelineStore,
  type UsageEntry,
  type UsageQuery,
  type UsageRow,
  type UsageStore,
} from '../usage-store.interface.js';
import { addEntry, addSums, emptySums } from './usage-batch.js';

/** Timelines the memory driver keeps at most: one process's recent runs, not a history. */
const MEMORY_TIMELINES = 1_000;

/**
 * The memory driver's usage: one process, lost at restart, as everything
 * else on that driver is (worker mode refuses the memory driver). Records
 * add to the rows at once, with no batch: there is no write to save, and a
 * read sees every record made before it.
 */
export class MemoryUsageStore implements UsageStore, RunTimelineStore {
  private readonly minutes = new Map<string, UsageRow>();
  /** Insertion order is age order: the oldest go first once there are too many. */
  private readonly timelines = new Map<string, RunTimeline>();

  async init(): Promise<void> {}
  async close(): Promise<void> {}

  async record(entry: UsageEntry): Promise<void> {
    const minute = usageMinute(entry.at);
    const key = JSON.stringify([minute, storedOwner(entry.owner), entry.model, entry.surface]);
    const row = this.minutes.get(key) ?? zero(minute, entry);
    addEntry(row, entry);
    this.minutes.set(key, row);
  }

  async query(q: UsageQuery): Promise<UsageRow[]> {
    const buckets = new Map<string, UsageRow>();
    for (const row of this.minutes.values()) {
      if (row.bucketStart < q.from || row.bucketStart >= q.to) continue;
      if (q.owner !== undefined && row.owner !== q.owner) continue;
      const bucketStart = row.bucketStart - (row.bucketStart % q.bucketMs);
      const key = JSON.stringify([bucketStart, storedOwner(row.owner), row.model, row.surface]);
      const sum = buckets.get(key) ?? { ...row, bucketStart, ...emptySums() };
      addSums(sum, row);
      buckets.set(key, sum);
    }
    return [...buckets.values()]
      .sort((a, b) => a.bucketStart - b.bucketStart || cmp(storedOwner(a.owner), storedOwner(b.owner)) || cmp(a.model, b.model) || cmp(a.surface, b.surface))
      .slice(0, q.limit);
  }

  async recordTimeline(timeline: RunTimeline): Promise<void> {
    this.timelines.delete(timeline.responseId);
    this.timelines.set(timeline.responseId, timeline);
    const expired = Date.now() - RUN_TIMELINE_RETENTION_MS;
    for (const [id, kept] of this.timelines) if (kept.startedAt < expired) this.timelines.delete(id);
    for (const id of this.timelines.keys()) {
      if (this.timelines.size <= MEMORY_TIMELINES) break;
      this.timelines.delete(id);
    }
  }

  async timeline(responseId: string): Promise<RunTimeline | null> {
    return this.timelines.get(responseId) ?? null;
  }
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function zero(minute: number, entry: UsageEntry): UsageRow {
  return { bucketStart: minute, owner: ownerOf(storedOwner(entry.owner)), model: entry.model, surface: entry.surface, ...emptySums() };
}
