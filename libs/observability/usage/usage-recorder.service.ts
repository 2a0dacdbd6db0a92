import { Inject, Injectable, Optional } from '@nestjs/common';
import { USAGE_STORE, type UsageEntry, type UsageStore } from '#storage/usage-store.interface.js';
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

  constructor(
    private readonly log: LogWriter,
    @Optional() @Inject(USAGE_STORE) private readonly store?: UsageStore | null,
  ) {}

  record(entry: UsageEntry): void {
    if (!this.store) return;
    const write = this.store
      .record(entry)
      .catch((err: unknown) => this.log.write('warn', 'usage not recorded', { model: entry.model, surface: entry.surface, error_code: errorCodeOf(err) }))
      .finally(() => this.pending.delete(write));
    this.pending.add(write);
  }

  /** Resolves once every write begun so far has settled. */
  async settled(): Promise<void> {
    await Promise.all([...this.pending]);
  }
}
