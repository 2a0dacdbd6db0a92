import { Injectable } from '@nestjs/common';
import { EMPTY, type Observable, Subject, concat, defer, finalize, takeUntil, throwError } from 'rxjs';
import { UnavailableError } from '#tool-sdk/errors.js';

// A cancel can overtake its request on the broker (they travel on different
// subjects/channels); remember that many recent ones so the run is stopped on arrival.
const EARLY_CANCELS_KEPT = 1024;

/** A new broker request while the gateway drains: the caller retries (on NATS another gateway of the queue group takes it). */
export class GatewayDrainingError extends UnavailableError {
  constructor() {
    super('The gateway is shutting down and takes no new requests; retry (another gateway will serve it).', 'gateway_draining');
  }
}

/** A run still going when the drain's grace period ran out. */
export class GatewayShutdownError extends UnavailableError {
  constructor(graceMs: number) {
    super(`The gateway shut down before this response finished (grace period ${graceMs} ms); retry the request.`, 'gateway_shutdown');
  }
}

interface Running {
  stop: Subject<void>;
  cut(err: GatewayShutdownError): void;
}

/**
 * Runs started over a broker, by their caller's `runId`. Brokers have no
 * connection to drop when a caller gives up, so the caller says so with a
 * `responses.cancel` event; the run's Observable then completes, which
 * unsubscribes the loop and aborts the upstream request and tool calls,
 * just as a closed HTTP socket does. On shutdown (`drain`) it refuses new
 * runs, waits for the running ones up to the grace period, and ends the rest
 * with their surface's terminal failure.
 */
@Injectable()
export class RpcRunRegistry {
  private readonly running = new Map<string, Running>();
  private readonly anonymous = new Set<Running>();
  private readonly earlyCancels = new Set<string>();
  private draining = false;
  private readonly idle = new Subject<void>();
  private readonly drainListeners: Array<() => Promise<void> | void> = [];

  /** Called when the drain begins, before the wait: how the transports stop taking requests. */
  onDrain(listener: () => Promise<void> | void): void {
    this.drainListeners.push(listener);
  }

  /**
   * The run, stopped by `cancel(runId)`; without a runId it cannot be cancelled.
   * `cut` is how the run ends when the drain's grace period runs out (a terminal
   * frame for a stream, an error for `create`); by default, the error.
   */
  track<T>(runId: string | null, run: Observable<T>, cut: (err: GatewayShutdownError) => Observable<T> = (err) => throwError(() => err)): Observable<T> {
    return defer(() => {
      if (this.draining) return throwError(() => new GatewayDrainingError());
      if (runId !== null && this.earlyCancels.delete(runId)) return EMPTY;
      let cutBy: GatewayShutdownError | undefined;
      const cutSignal = new Subject<void>();
      const entry: Running = { stop: new Subject<void>(), cut: (err) => ((cutBy = err), cutSignal.next()) };
      if (runId !== null) this.running.set(runId, entry);
      else this.anonymous.add(entry);
      // Cut: the run stops (aborting its upstream call) and its surface's terminal failure follows.
      return concat(
        run.pipe(takeUntil(cutSignal)),
        defer(() => (cutBy ? cut(cutBy) : EMPTY)),
      ).pipe(
        takeUntil(entry.stop),
        finalize(() => {
          if (runId !== null && this.running.get(runId) === entry) this.running.delete(runId);
          this.anonymous.delete(entry);
          if (this.size === 0) this.idle.next();
        }),
      );
    });
  }

  cancel(runId: string): void {
    const entry = this.running.get(runId);
    if (entry) {
      entry.stop.next();
      return;
    }
    this.earlyCancels.add(runId);
    if (this.earlyCancels.size > EARLY_CANCELS_KEPT) this.earlyCancels.delete(this.earlyCancels.values().next().value as string);
  }

  /**
   * Shutdown: no new runs from now on; the running ones get `graceMs` to end,
   * then each is ended by its `cut`. Resolves once none is left.
   */
  async drain(graceMs: number): Promise<void> {
    const first = !this.draining;
    this.draining = true;
    // A transport that fails to leave must not keep the runs it holds from their grace period.
    if (first) await Promise.allSettled(this.drainListeners.map(async (listener) => listener()));
    if (this.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        const sub = this.idle.subscribe(() => (sub.unsubscribe(), resolve()));
        timer = setTimeout(() => (sub.unsubscribe(), resolve()), graceMs);
      });
      clearTimeout(timer);
    }
    const err = new GatewayShutdownError(graceMs);
    for (const entry of [...this.running.values(), ...this.anonymous]) entry.cut(err);
  }

  get isDraining(): boolean {
    return this.draining;
  }

  get size(): number {
    return this.running.size + this.anonymous.size;
  }
}
