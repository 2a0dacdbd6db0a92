import type { JsonObject } from '#tool-sdk/items.js';

export const BACKGROUND_STORE = Symbol('BACKGROUND_STORE');

/** `queued` and `in_progress` are live; every other status is final and never changes again. */
export type BackgroundStatus = 'queued' | 'in_progress' | 'completed' | 'failed' | 'incomplete' | 'cancelled';

export const LIVE_STATUSES: ReadonlySet<BackgroundStatus> = new Set(['queued', 'in_progress']);

export interface BackgroundRun {
  /** The response id (`resp_...`). */
  id: string;
  owner: string | null;
  status: BackgroundStatus;
  /** The public response object as it stands: output items appear as they complete. */
  response: JsonObject;
  /** The gateway process running it; its lease says how long that claim holds without renewal. */
  nodeId: string;
  /** Epoch milliseconds. */
  leaseExpiresAt: number;
  /** Sequence number of the last event appended; -1 before the first. */
  lastSequence: number;
}

export interface BackgroundEvent {
  sequence: number;
  event: JsonObject;
}

/** What one flush of a run's event buffer writes, in one transaction. */
export interface BackgroundAppend {
  events: BackgroundEvent[];
  response: JsonObject;
  status: BackgroundStatus;
}

export interface BackgroundLimits {
  /** Live runs across every gateway sharing the store. */
  maxRuns: number;
  maxRunsPerOwner: number;
}

/** Which limit refused a new run. */
export type AdmitRefusal = 'total' | 'owner';

/**
 * Where background responses live while they run: their status, the
 * response as it grows, and every event they emitted, so that any gateway
 * sharing the store can poll, resume a stream or cancel.
 *
 * Ownership is an exact match, as in `StateStore`: another owner's run looks missing.
 *
 * A final status is never overwritten: `append` on a run that ended (say it
 * was cancelled from another replica) writes nothing and returns false, which
 * tells the runner to stop.
 */
export interface BackgroundStore {
  init(): Promise<void>;
  close(): Promise<void>;

  /** Inserts the run unless a limit is reached; the count and the insert are one atomic step. */
  admit(run: BackgroundRun, limits: BackgroundLimits): Promise<AdmitRefusal | null>;
  get(id: string, owner: string | null): Promise<BackgroundRun | null>;
  /** Appends events (with increasing sequence numbers) and updates the response; false when the run already ended. */
  append(id: string, append: BackgroundAppend): Promise<boolean>;
  /** Events with a sequence number above `after`, oldest first, at most `limit`. */
  events(id: string, after: number, limit: number): Promise<BackgroundEvent[]>;
  /**
   * Ends a live run as `cancelled` with the given response; returns the run as
   * it now stands (unchanged when it had already ended), null when missing.
   */
  cancel(id: string, owner: string | null, response: (current: JsonObject) => JsonObject): Promise<BackgroundRun | null>;
  /** Removes the run and its events; false when missing or foreign. */
  remove(id: string, owner: string | null): Promise<boolean>;
  /** Extends the leases of this node's live runs; returns the ids among them that are no longer live (cancelled elsewhere). */
  renew(nodeId: string, ids: readonly string[], until: number): Promise<string[]>;
  /**
   * Ends every live run whose lease expired before `now` as `failed`, with a
   * final `response.failed` event built by `fail`; returns their ids.
   */
  expire(now: number, fail: (run: BackgroundRun) => { response: JsonObject; event: JsonObject }): Promise<string[]>;
  /**
   * Calls `listener(id, ended)` when a run gains events (`ended` false) or
   * ends (`ended` true: its last events, a cancel, an expiry), here or, where
   * the backend can, in another process sharing the store.
   */
  watch(listener: (id: string, ended: boolean) => void): () => void;
}
