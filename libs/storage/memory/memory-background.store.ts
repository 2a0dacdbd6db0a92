import { EventEmitter } from 'node:events';
import type { JsonObject } from '#tool-sdk/items.js';
import {
  LIVE_STATUSES,
  type AdmitRefusal,
  type BackgroundAppend,
  type BackgroundEvent,
  type BackgroundLimits,
  type BackgroundRun,
  type BackgroundStore,
} from '../background-store.interface.js';
import { BACKGROUND_CHANNEL, expiryEvent } from '../shared/background-run.util.js';
import type { BackgroundCatalog, CatalogPage, CatalogQuery } from '../catalog.interface.js';
import { catalogOfEntries } from '../shared/list-window.util.js';

interface Entry {
  run: BackgroundRun;
  events: BackgroundEvent[];
}

const clone = <T>(value: T): T => structuredClone(value);

/** Background runs of one process, for tests and single-node set-ups that keep nothing. */
export class MemoryBackgroundStore implements BackgroundStore, BackgroundCatalog {
  private readonly runs = new Map<string, Entry>();
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  async init(): Promise<void> {}

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }

  async admit(run: BackgroundRun, limits: BackgroundLimits): Promise<AdmitRefusal | null> {
    let total = 0;
    let owned = 0;
    for (const { run: other } of this.runs.values()) {
      if (!LIVE_STATUSES.has(other.status)) continue;
      total++;
      if (other.owner === run.owner) owned++;
    }
    if (total >= limits.maxRuns) return 'total';
    if (owned >= limits.maxRunsPerOwner) return 'owner';
    this.runs.set(run.id, { run: clone(run), events: [] });
    return null;
  }

  /** Every run, whoever owns it, newest first (the console's listing). */
  async catalog(query: CatalogQuery): Promise<CatalogPage> {
    const entries = [...this.runs.values()].map(({ run }) => ({ id: run.id, owner: run.owner, createdAt: Number(run.response.created_at ?? 0) }));
    return catalogOfEntries(entries, query);
  }

  async get(id: string, owner: string | null): Promise<BackgroundRun | null> {
    const entry = this.runs.get(id);
    return entry && entry.run.owner === owner ? clone(entry.run) : null;
  }

  async append(id: string, append: BackgroundAppend): Promise<boolean> {
    const entry = this.runs.get(id);
    if (!entry || !LIVE_STATUSES.has(entry.run.status)) return false;
    entry.events.push(...clone(append.events));
    entry.run.response = clone(append.response);
    entry.run.status = append.status;
    if (append.events.length > 0) entry.run.lastSequence = append.events[append.events.length - 1].sequence;
    this.notify(id, !LIVE_STATUSES.has(append.status));
    return true;
  }

  async events(id: string, after: number, limit: number): Promise<BackgroundEvent[]> {
    const events = this.runs.get(id)?.events ?? [];
    // Sequence numbers are dense from 0, so the position is the number.
    return clone(events.slice(Math.max(0, after + 1), Math.max(0, after + 1) + limit));
  }

  async cancel(id: string, owner: string | null, response: (current: JsonObject) => JsonObject): Promise<BackgroundRun | null> {
    const entry = this.runs.get(id);
    if (!entry || entry.run.owner !== owner) return null;
    if (LIVE_STATUSES.has(entry.run.status)) {
      entry.run.status = 'cancelled';
      entry.run.response = response(entry.run.response);
      this.notify(id, true);
    }
    return clone(entry.run);
  }

  async remove(id: string, owner: string | null): Promise<boolean> {
    if (this.runs.get(id)?.run.owner !== owner || !this.runs.has(id)) return false;
    return this.runs.delete(id);
  }

  async renew(nodeId: string, ids: readonly string[], until: number): Promise<string[]> {
    const ended: string[] = [];
    for (const id of ids) {
      const run = this.runs.get(id)?.run;
      if (!run || !LIVE_STATUSES.has(run.status)) ended.push(id);
      else if (run.nodeId === nodeId) run.leaseExpiresAt = until;
    }
    return ended;
  }

  async expire(now: number, fail: (run: BackgroundRun) => { response: JsonObject; event: JsonObject }): Promise<string[]> {
    const expired: string[] = [];
    for (const entry of this.runs.values()) {
      const { run } = entry;
      if (!LIVE_STATUSES.has(run.status) || run.leaseExpiresAt >= now) continue;
      const { response, event } = expiryEvent(run, fail);
      entry.events.push(event);
      run.status = 'failed';
      run.response = response;
      run.lastSequence = event.sequence;
      expired.push(run.id);
      this.notify(run.id, true);
    }
    return expired;
  }

  watch(listener: (id: string, ended: boolean) => void): () => void {
    this.emitter.on(BACKGROUND_CHANNEL, listener);
    return () => this.emitter.off(BACKGROUND_CHANNEL, listener);
  }

  private notify(id: string, ended: boolean): void {
    this.emitter.emit(BACKGROUND_CHANNEL, id, ended);
  }
}
