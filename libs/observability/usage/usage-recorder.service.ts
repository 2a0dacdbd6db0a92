import { Inject, Injectable, Optional } from '@nestjs/common';
import { hasTimelines, USAGE_STORE, type RunTimeline, type UsageEntry, type UsageStore } from '#storage/usage-store.interface.js';
import { errorCodeOf } from '../run/upstream-status.util.js';
import { LogWriter } from '../logging/log-writer.service.js';

/**
 * Writes each run's usage to the store off the request's path: a store that
 * fails costs a warning line, never the answer. At shutdown the store's
 * close writes what is still pending, which settles every write begun here;
 * `settled()` is awaited after it (see `UsageModule`).
 */
@Injectable()
export class UsageRecorder {
  private readonly pending = new Set<Promise<void>>();
  /** Run timelines are kept only for a reader: the console turns this on (\`keepTimelines\`). */
  private timelines = false;

  constructor(
    private readonly log: LogWriter,
    @Optional() @Inject(USAGE_STORE) private readonly store?: UsageStore | null,
  ) {}

  record(entry: UsageEntry): void {
    if (!this.store) return;
    this.track(this.store.record(entry), 'usage not recorded', entry);
  }

  /** From now on, each run's timeline is written too (the console's run view reads them). */
  keepTimelines(): void {
    this.timelines = hasTimelines(this.store);
  }

  get keepsTimelines(): boolean {
    return this.timelines;
  }

  recordTimeline(timeline: RunTimeline): void {
    if (!this.timelines || !hasTimelines(this.store)) return;
    this.track(this.store.recordTimeline(timeline), 'run timeline not recorded', timeline);
  }

  /** Keeps `write` until it settles; a failure is a warning line naming the run's model and surface. */
  private track(write: Promise<void>, warning: string, run: { model: string; surface: string }): void {
    // One reaction per write (not a catch and then a finally): this runs for every request.
    const tracked: Promise<void> = write.then(
      () => {
        this.pending.delete(tracked);
      },
      (err: unknown) => {
        try {
          this.log.write('warn', warning, { model: run.model, surface: run.surface, error_code: errorCodeOf(err) });
        } finally {
          this.pending.delete(tracked);
        }
      },
    );
    this.pending.add(tracked);
  }

  /** Resolves once every write begun so far has settled. */
  async settled(): Promise<void> {
    await Promise.all([...this.pending]);
  }
}
