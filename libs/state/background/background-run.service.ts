import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { Observable, type Subscription } from 'rxjs';
import { respond } from '#edge/responder/edge-responder.js';
import { RunLogSink, runLogSurface } from './run-log.surface.js';
import { InvalidRequestError, NotFoundError, RateLimitError, UnavailableError } from '#tool-sdk/errors.js';
import { newId } from '#tool-sdk/ids.js';
import type { BackgroundRunner } from '#core/loop/background-runner.interface.js';
import { LoopService, TERMINAL_EVENTS } from '#core/loop/loop.service.js';
import { buildResponseObject } from '#core/loop/response-object.js';
import type { ResponseStreamEvent } from '#core/loop/response-events.js';
import type { ResponseRequest } from '#core/loop/response-request.js';
import type { JsonObject } from '#tool-sdk/items.js';
import { BACKGROUND_STORE, LIVE_STATUSES, STATE_STORE, type BackgroundRun, type BackgroundStore, type StateStore } from '#storage/index.js';
import { STATE_SETTINGS, type StateSettings } from '../config/state-settings.js';
import { storableTools } from '../persistence/tool-declarations.util.js';
import { StoredResponseState } from '../persistence/stored-response.state.js';
import { failedResponse, RunEventLog } from './run-event.log.js';

/** Events a follower reads per store round trip. */
const PAGE = 500;

interface ActiveRun {
  owner: string | null;
  subscription: Subscription;
  log: RunEventLog;
}

export function backgroundResponseNotFound(id: string): NotFoundError {
  return new NotFoundError(`Response with id '${id}' not found.`, 'response_not_found', 'response_id');
}

/**
 * Background responses: each run is admitted into the background store
 * (limits are counted there, across replicas), runs in this process detached
 * from any connection, and writes every event it emits to the store, where
 * any replica can poll it, follow its stream from a sequence number, or
 * cancel it.
 *
 * This process holds a lease on each run it executes and renews it; a run
 * whose lease lapses (its gateway crashed) is ended `failed` by the next
 * sweep on any replica, so no response stays `in_progress` forever.
 */
@Injectable()
export class BackgroundRunService implements BackgroundRunner, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('BackgroundRuns');
  /** Identifies this process's leases. */
  readonly nodeId = randomUUID();
  private readonly active = new Map<string, ActiveRun>();
  private sweeper?: NodeJS.Timeout;
  private unwatch?: () => void;

  constructor(
    @Inject(BACKGROUND_STORE) private readonly store: BackgroundStore,
    @Inject(STATE_STORE) private readonly stateStore: StateStore,
    @Inject(STATE_SETTINGS) private readonly settings: StateSettings,
    private readonly state: StoredResponseState,
    private readonly loop: LoopService,
  ) {}

  onApplicationBootstrap(): void {
    const { leaseMs } = this.settings.background;
    // A cancel written by another replica ends the run here at once where the store can say so.
    this.unwatch = this.store.watch((id, ended) => {
      if (ended && this.active.has(id)) void this.stopIfEnded(id);
    });
    void this.sweep();
    this.sweeper = setInterval(() => void this.sweep(), Math.max(100, Math.floor(leaseMs / 3)));
    this.sweeper.unref();
  }

  /** Runs still going when the gateway stops end `failed` now rather than when their lease lapses. */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.sweeper);
    this.unwatch?.();
    const runs = [...this.active.entries()];
    this.active.clear();
    for (const [, run] of runs) {
      run.subscription.unsubscribe();
      run.log.fail(new ShutdownError());
    }
    await Promise.all(runs.map(([, run]) => run.log.done));
  }

  async start(request: ResponseRequest): Promise<JsonObject> {
    // Continuing from something that does not exist is the caller's mistake: say so now, not in a failed run.
    await this.state.rehydrate(request);
    const id = newId('resp');
    const createdAt = Math.floor(Date.now() / 1000);
    const run: ResponseRequest = { ...request, responseId: id, createdAt, background: true, stream: true };
    const queued = buildResponseObject(run, {
      id,
      createdAt,
      status: 'queued',
      output: [],
      tools: storableTools(request.tools),
      usage: null,
      error: null,
      incompleteReason: null,
      completedAt: null,
    });
    const { maxRuns, maxRunsPerOwner, leaseMs } = this.settings.background;
    const refusal = await this.store.admit(
      { id, owner: request.owner, status: 'queued', response: queued, nodeId: this.nodeId, leaseExpiresAt: Date.now() + leaseMs, lastSequence: -1 },
      { maxRuns, maxRunsPerOwner },
    );
    if (refusal === 'owner') {
      throw new RateLimitError(`This key already has ${maxRunsPerOwner} background responses running; wait for one to finish.`, 'too_many_background_responses', 5, 'background');
    }
    if (refusal === 'total') {
      throw new RateLimitError(`The gateway is running its limit of ${maxRuns} background responses; try again shortly.`, 'too_many_background_responses', 5, 'background');
    }
    this.launch(run, queued);
    return queued;
  }

  private launch(request: ResponseRequest, queued: JsonObject): void {
    const id = request.responseId as string;
    const log = new RunEventLog(
      id,
      queued,
      this.store,
      () => this.active.get(id)?.subscription.unsubscribe(),
      (err) => {
        this.logger.error(`Background response ${id} could not be stored and was stopped: ${(err as Error).message}`);
        this.active.get(id)?.subscription.unsubscribe();
      },
    );
    // A cold Observable: subscribing starts the run; unsubscribing aborts its upstream request and tool calls.
    const subscription = respond(this.loop.run(request), runLogSurface, new RunLogSink(log), { mode: 'stream' }).subscribe();
    if (log.ended && subscription.closed) return;
    this.active.set(id, { owner: request.owner, subscription, log });
    void log.done.then(() => this.active.delete(id));
  }

  /** The run as it stands (status, output so far), or null when it is not a background response of `owner`. */
  get(id: string, owner: string | null): Promise<BackgroundRun | null> {
    return this.store.get(id, owner);
  }

  async cancel(id: string, owner: string | null): Promise<JsonObject> {
    const run = await this.store.cancel(id, owner, (current) => ({ ...current, status: 'cancelled' }));
    if (!run) {
      if (await this.stateStore.getResponse(id, owner)) {
        throw new InvalidRequestError('Only background responses can be cancelled.', 'response_id', 'response_not_cancellable');
      }
      throw backgroundResponseNotFound(id);
    }
    if (run.status !== 'cancelled') {
      throw new InvalidRequestError(`Cannot cancel a response whose status is '${run.status}'.`, 'response_id', 'response_not_cancellable');
    }
    this.stop(id);
    return run.response;
  }

  /** Deletes a background response (cancelling it first if it runs here or elsewhere); false when it is not one of `owner`'s. */
  async remove(id: string, owner: string | null): Promise<boolean> {
    const run = await this.store.cancel(id, owner, (current) => ({ ...current, status: 'cancelled' }));
    if (!run) return false;
    this.stop(id);
    return this.store.remove(id, owner);
  }

  /**
   * The run's events after `startingAfter`, then live ones as they are
   * stored, until its terminal event (or, for a cancelled run, which has
   * none, until the store says it ended). Notifications say when to read;
   * a slow poll covers stores that cannot notify across processes.
   */
  follow(id: string, owner: string | null, startingAfter: number): Observable<ResponseStreamEvent> {
    return new Observable<ResponseStreamEvent>((subscriber) => {
      let after = startingAfter;
      let reading = false;
      let again = false;
      let checkEnd = false;
      let closed = false;
      const read = async (): Promise<void> => {
        if (reading) {
          again = true;
          return;
        }
        reading = true;
        try {
          do {
            again = false;
            const page = await this.store.events(id, after, PAGE);
            for (const { sequence, event } of page) {
              if (closed) return;
              after = sequence;
              subscriber.next(event as ResponseStreamEvent);
              if (TERMINAL_EVENTS.has(event.type as string)) return subscriber.complete();
            }
            if (page.length === PAGE) again = true;
            else if (checkEnd) {
              checkEnd = false;
              const run = await this.store.get(id, owner);
              // Ended without a terminal event still to read: cancelled.
              if (!run || (!LIVE_STATUSES.has(run.status) && run.lastSequence <= after)) return subscriber.complete();
            }
          } while (again && !closed);
        } catch (err) {
          subscriber.error(err);
        } finally {
          reading = false;
        }
      };
      const unwatch = this.store.watch((seen, ended) => {
        if (seen !== id) return;
        if (ended) checkEnd = true;
        void read();
      });
      const poll = setInterval(() => {
        checkEnd = true;
        void read();
      }, this.settings.background.pollMs);
      poll.unref();
      checkEnd = true;
      void read();
      return () => {
        closed = true;
        unwatch();
        clearInterval(poll);
      };
    });
  }

  private async stopIfEnded(id: string): Promise<void> {
    const active = this.active.get(id);
    if (!active) return;
    const run = await this.store.get(id, active.owner).catch(() => null);
    if (run && !LIVE_STATUSES.has(run.status)) this.stop(id);
  }

  /** Ends a local run now: aborts its upstream request and tool calls; its log writes nothing more. */
  private stop(id: string): void {
    const active = this.active.get(id);
    if (!active) return;
    this.active.delete(id);
    active.log.close();
    active.subscription.unsubscribe();
  }

  private async sweep(): Promise<void> {
    const { leaseMs } = this.settings.background;
    try {
      const ended = await this.store.renew(this.nodeId, [...this.active.keys()], Date.now() + leaseMs);
      for (const id of ended) this.stop(id);
      const expired = await this.store.expire(Date.now(), (run) => {
        const response = failedResponse(run.response, {
          code: 'server_error',
          message: 'The gateway running this response stopped before it finished; create it again.',
        });
        return { response, event: { type: 'response.failed', response } };
      });
      if (expired.length > 0) this.logger.warn(`Ended ${expired.length} background response(s) whose gateway stopped: ${expired.join(', ')}`);
    } catch (err) {
      // The store is unreachable; the next sweep tries again.
      this.logger.warn(`Background lease sweep failed: ${(err as Error).message}`);
    }
  }
}

class ShutdownError extends UnavailableError {
  constructor() {
    super('The gateway shut down before this response finished; create it again.', 'server_shutdown');
  }
}
