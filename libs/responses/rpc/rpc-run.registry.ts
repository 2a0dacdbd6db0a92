import { Injectable } from '@nestjs/common';
import { EMPTY, type Observable, Subject, defer, finalize, takeUntil } from 'rxjs';

// A cancel can overtake its request on the broker (they travel on different
// subjects/channels); remember that many recent ones so the run is stopped on arrival.
const EARLY_CANCELS_KEPT = 1024;

/**
 * Runs started over a broker, by their caller's `runId`. Brokers have no
 * connection to drop when a caller gives up, so the caller says so with a
 * `responses.cancel` event; the run's Observable then completes, which
 * unsubscribes the loop and aborts the upstream request and tool calls,
 * just as a closed HTTP socket does.
 */
@Injectable()
export class RpcRunRegistry {
  private readonly running = new Map<string, Subject<void>>();
  private readonly earlyCancels = new Set<string>();

  /** The run, stopped by `cancel(runId)`; without a runId it cannot be cancelled. */
  track<T>(runId: string | null, run: Observable<T>): Observable<T> {
    if (runId === null) return run;
    return defer(() => {
      if (this.earlyCancels.delete(runId)) return EMPTY;
      const stop = new Subject<void>();
      this.running.set(runId, stop);
      return run.pipe(
        takeUntil(stop),
        finalize(() => {
          if (this.running.get(runId) === stop) this.running.delete(runId);
        }),
      );
    });
  }

  cancel(runId: string): void {
    const stop = this.running.get(runId);
    if (stop) {
      stop.next();
      return;
    }
    this.earlyCancels.add(runId);
    if (this.earlyCancels.size > EARLY_CANCELS_KEPT) this.earlyCancels.delete(this.earlyCancels.values().next().value as string);
  }

  get size(): number {
    return this.running.size;
  }
}
