import { randomBytes, randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Observable } from 'rxjs';
import { BATCH_FILES, type BatchFiles } from '#tool-sdk/ports/batch-files.interface.js';
import { INTERACTIVE_LOAD, type InteractiveLoad } from '#tool-sdk/ports/interactive-load.js';
import type { RelayPath } from '#core/upstream/upstream-relay.interface.js';
import { toErrorEnvelope } from '#edge/errors/error-envelope.js';
import { ResponsesService } from '#responses/service/responses.service.js';
import { parseRelayRequest } from '../relay/relay-request.js';
import { RelayService } from '../relay/relay.service.js';
import type { BatchRow, ClaimedRequest } from './batch-rows.js';
import { shareSlots } from './batch-share.js';
import { BatchStore } from './batch.store.js';
import { BATCHES_SETTINGS, type BatchesConfig } from './batches.config-section.js';

interface Running {
  request: ClaimedRequest;
  abort: AbortController;
  startedAt: number;
}

/** A client that sends requests one after another is still there in the gaps between them: load lasts this long after the last one. */
const QUIET_MS = 200;

const keyOf = (r: { batchId: string; line: number }): string => `${r.batchId}:${r.line}`;

/** One line of an output or error file, as OpenAI writes them. */
function resultLine(customId: string, statusCode: number, body: unknown): string {
  return JSON.stringify({
    id: `batch_req_${randomBytes(12).toString('hex')}`,
    custom_id: customId,
    response: { status_code: statusCode, request_id: `req_${randomBytes(12).toString('hex')}`, body },
    error: null,
  });
}

function errorLine(customId: string, code: string, message: string): string {
  return JSON.stringify({ id: `batch_req_${randomBytes(12).toString('hex')}`, custom_id: customId, response: null, error: { code, message } });
}

/** The Observable's last value; aborting unsubscribes, which cancels the run (its upstream call and tool calls). */
function lastValue<T>(source: Observable<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let value: T | undefined;
    const subscription = source.subscribe({ next: (v) => (value = v), error: reject, complete: () => resolve(value as T) });
    signal.addEventListener(
      'abort',
      () => {
        subscription.unsubscribe();
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

/**
 * Runs batch requests on this process: claims pending requests from the
 * store up to `batches.maxConcurrentRequests`, runs each through the same
 * service as its HTTP route (so limits, routing and telemetry apply), records
 * its result line, and finalizes batches with nothing left to run, writing
 * their output and error files in input order. Every process sharing the
 * store runs one; nothing here outlives the process but what is stored.
 *
 * Batch lines are background work: while this process serves interactive
 * model requests (`InteractiveLoad`), lines run one at a time and take
 * `batches.shareUnderLoad` of the time at most, and the slots there are go
 * to the owners with batches running in turn (`shareSlots`), so one owner's
 * long batch neither slows another tenant's requests nor queues another
 * owner's batch behind it.
 */
@Injectable()
export class BatchRunner implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Batches');
  readonly nodeId = randomUUID();
  private readonly running = new Map<string, Running>();
  private timers: NodeJS.Timeout[] = [];
  private ticking = false;
  private again = false;
  private stopping = false;
  /** The last store failure logged, so an outage is logged once, not at every poll. */
  private lastFailure: string | undefined;
  /** Which owner goes first when slots do not divide evenly; moves on at every fill. */
  private turn = 0;
  private load: InteractiveLoad | undefined;
  private unsubscribeLoad: (() => void) | undefined;
  /** Under load, no line starts before this (`shareUnderLoad`'s pause after the last line). */
  private pausedUntil = 0;
  private paceTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: BatchStore,
    private readonly relay: RelayService,
    private readonly responses: ResponsesService,
    private readonly moduleRef: ModuleRef,
    @Inject(BATCHES_SETTINGS) private readonly settings: BatchesConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.store.ready) return;
    const poll = setInterval(() => this.wake(), this.settings.pollMs);
    const renew = setInterval(() => void this.renew(), Math.max(100, Math.floor(this.settings.leaseMs / 3)));
    poll.unref();
    renew.unref();
    this.timers = [poll, renew];
    try {
      this.load = this.moduleRef.get<InteractiveLoad>(INTERACTIVE_LOAD, { strict: false });
    } catch {
      this.load = undefined;
    }
    // Lines held back for a client's request start as soon as the last one is answered.
    this.unsubscribeLoad = this.load?.onInteractiveIdle(() => this.wake());
    this.wake();
  }

  /** Requests still running here are stopped and their claims given back, so the next process takes them up at once. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    for (const timer of this.timers) clearInterval(timer);
    clearTimeout(this.paceTimer);
    this.unsubscribeLoad?.();
    if (!this.store.ready) return;
    const running = [...this.running.values()];
    this.running.clear();
    for (const r of running) r.abort.abort(new Error('gateway stopping'));
    await this.store.release(
      this.nodeId,
      running.map((r) => r.request),
    );
  }

  /** Looks for work now (a batch was created, a request finished). */
  wake(): void {
    if (this.stopping) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = true;
    void (async () => {
      try {
        do {
          this.again = false;
          await this.fill();
          await this.finalizeDue();
        } while (this.again && !this.stopping);
        this.lastFailure = undefined;
      } catch (err) {
        const message = (err as Error).message;
        if (!this.stopping && message !== this.lastFailure) this.logger.warn(`Batch work could not be claimed: ${message}`);
        this.lastFailure = message;
      } finally {
        this.ticking = false;
      }
    })();
  }

  /** A batch cancelled through this process: its requests running here stop now (elsewhere, at their next renewal). */
  cancelled(batchId: string): void {
    for (const [key, r] of this.running) {
      if (r.request.batchId !== batchId) continue;
      this.running.delete(key);
      r.abort.abort(new Error('batch cancelled'));
    }
    this.wake();
  }

  /**
   * Lines this process may start now. With no client here, up to
   * `maxConcurrentRequests`; while clients are served (and `QUIET_MS` after
   * the last), one at a time, each after the pause `shareUnderLoad` asks for.
   * Held back with nothing running, it sets a wake-up for when a line may
   * start (a client's request ending wakes it too).
   */
  private startable(now: number): number {
    const { maxConcurrentRequests, shareUnderLoad } = this.settings;
    const load = this.load;
    const quietAt = load ? load.lastInteractiveEndedAt + QUIET_MS : 0;
    if (!load || (load.interactiveInFlight === 0 && now >= quietAt)) return maxConcurrentRequests - this.running.size;
    if (this.running.size > 0) return 0;
    if (shareUnderLoad > 0 && now >= this.pausedUntil) return 1;
    const times = [load.interactiveInFlight === 0 ? quietAt : Infinity, shareUnderLoad > 0 ? this.pausedUntil : Infinity];
    const when = Math.min(...times);
    if (when !== Infinity) this.wakeAt(when);
    return 0;
  }

  private wakeAt(when: number): void {
    clearTimeout(this.paceTimer);
    this.paceTimer = setTimeout(() => this.wake(), Math.max(1, when - Date.now()));
    this.paceTimer.unref();
  }

  private async fill(): Promise<void> {
    if (this.stopping) return;
    const free = this.startable(Date.now());
    if (free <= 0) return;
    const batches = await this.store.runningBatches();
    if (batches.length === 0) return;
    const owners = [...new Set(batches.map((b) => b.owner))].sort();
    const running = new Map<string, number>();
    for (const r of this.running.values()) running.set(r.request.owner, (running.get(r.request.owner) ?? 0) + 1);
    const shares = shareSlots(free, owners, running, this.turn++);
    const now = Date.now();
    let left = free;
    // Each owner's share from its batches, oldest first; a share an owner cannot use (its lines are all claimed) goes to the rest after.
    for (const [owner, share] of shares) {
      let want = share;
      for (const batch of batches) {
        if (want <= 0 || this.stopping) break;
        if (batch.owner !== owner) continue;
        const claimed = await this.store.claim(this.nodeId, now, this.settings.leaseMs, want, batch.id);
        for (const request of claimed) this.start(request);
        want -= claimed.length;
        left -= claimed.length;
      }
    }
    if (left > 0 && !this.stopping) for (const request of await this.store.claim(this.nodeId, now, this.settings.leaseMs, left)) this.start(request);
  }

  private start(request: ClaimedRequest): void {
    const key = keyOf(request);
    if (request.attempts > this.settings.maxAttempts) {
      const line = errorLine(request.customId, 'batch_request_abandoned', `The request was started ${this.settings.maxAttempts} times and never finished.`);
      void this.store.complete(this.nodeId, request, false, line).then(() => this.wake());
      return;
    }
    const abort = new AbortController();
    const startedAt = Date.now();
    this.running.set(key, { request, abort, startedAt });
    this.execute(request, abort.signal).then(
      async ({ ok, line }) => {
        if (this.running.get(key)?.abort !== abort) return;
        this.running.delete(key);
        const share = this.settings.shareUnderLoad;
        if (share > 0) this.pausedUntil = Date.now() + (Date.now() - startedAt) * (1 / share - 1);
        await this.store.complete(this.nodeId, request, ok, line).catch((err: unknown) => this.logger.warn(`Batch result not stored: ${(err as Error).message}`));
        this.wake();
      },
      () => {
        if (this.running.get(key)?.abort === abort) this.running.delete(key);
      },
    );
  }

  /** One request through its route's service; an error answer is a result too (the error file's line), an abort is not. */
  private async execute(request: ClaimedRequest, signal: AbortSignal): Promise<{ ok: boolean; line: string }> {
    const owner = request.owner === '' ? null : request.owner;
    try {
      const body = JSON.parse(request.body) as unknown;
      const answer =
        request.endpoint === '/v1/responses'
          ? await lastValue(this.responses.create(body, { owner, edge: { method: 'BATCH', path: '/v1/responses' } }), signal)
          : await this.relay.call(parseRelayRequest(request.endpoint.slice(3) as RelayPath, body, this.relay.defaultModel), { owner, surface: 'batch' }, signal);
      return { ok: true, line: resultLine(request.customId, 200, answer) };
    } catch (err) {
      if (signal.aborted) throw err;
      const { status, body } = toErrorEnvelope(err);
      return { ok: false, line: resultLine(request.customId, status, body) };
    }
  }

  private async renew(): Promise<void> {
    if (this.stopping || this.running.size === 0) return;
    try {
      const lost = await this.store.renew(
        this.nodeId,
        [...this.running.values()].map((r) => r.request),
        Date.now() + this.settings.leaseMs,
      );
      for (const request of lost) {
        const r = this.running.get(keyOf(request));
        this.running.delete(keyOf(request));
        r?.abort.abort(new Error('batch request no longer pending'));
      }
    } catch (err) {
      this.logger.warn(`Batch claims could not be renewed: ${(err as Error).message}`);
    }
  }

  private async finalizeDue(): Promise<void> {
    for (const id of await this.store.dueForFinalizing(Date.now())) {
      if (this.stopping) return;
      const batch = await this.store.claimFinalizing(id, this.nodeId, Date.now(), this.settings.leaseMs);
      if (batch) await this.finalize(batch);
    }
  }

  /** Writes the output and error files (input order) and the final status; a process that stops midway leaves it to the next claim. */
  private async finalize(batch: BatchRow): Promise<void> {
    const results = await this.store.results(batch.id);
    const output: string[] = [];
    const errors: string[] = [];
    // Every line of the input is in exactly one of the two files: a line that never ran has its error line.
    for (const r of results) {
      if (r.status === 'expired') errors.push(errorLine(r.customId, 'batch_expired', 'This request could not be executed before the completion window expired.'));
      else if (r.status === 'cancelled') errors.push(errorLine(r.customId, 'batch_cancelled', 'The batch was cancelled before this request finished.'));
      else (r.ok ? output : errors).push(r.result);
    }
    const owner = batch.owner === '' ? null : batch.owner;
    const files = this.files();
    const write = (lines: string[], kind: string) =>
      files.create(owner, { filename: `${batch.id}_${kind}.jsonl`, purpose: 'batch_output', data: Buffer.from(lines.map((l) => `${l}\n`).join(''), 'utf8') });
    if (output.length > 0) batch.doc.output_file_id = await write(output, 'output');
    if (errors.length > 0) batch.doc.error_file_id = await write(errors, 'error');
    const now = Math.floor(Date.now() / 1000);
    if (batch.status === 'cancelling') {
      batch.status = 'cancelled';
      batch.doc.cancelled_at = now;
    } else if (batch.doc.expired_at !== undefined) {
      batch.status = 'expired';
    } else {
      batch.status = 'completed';
      batch.doc.completed_at = now;
    }
    await this.store.finish(batch, this.nodeId);
  }

  private files(): BatchFiles {
    return this.moduleRef.get<BatchFiles>(BATCH_FILES, { strict: false });
  }
}
