import { isGatewayError } from '#tool-sdk/errors.js';
import type { ResponseStreamEvent } from '#core/loop/response-events.js';
import type { JsonObject, PublicItem } from '#tool-sdk/items.js';
import { LIVE_STATUSES, type BackgroundEvent, type BackgroundStatus, type BackgroundStore } from '#storage/index.js';

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/** The response of a run that ends on an error, as `response.failed` carries it. */
export function failedResponse(current: JsonObject, error: { code: string; message: string }): JsonObject {
  return { ...current, status: 'failed', error, usage: current.usage ?? null };
}

export function errorOf(err: unknown): { code: string; message: string } {
  return isGatewayError(err) ? { code: err.code ?? 'server_error', message: err.message } : { code: 'server_error', message: 'The gateway failed while producing this response.' };
}

/**
 * One background run's events on their way into the store. Numbers them
 * (the stream a follower reads is this numbering, whatever replica serves
 * it), keeps the response object current (status, output items as they
 * complete), and writes what accumulated in a tick as one batch, one batch
 * at a time, so the store sees events in order and a long answer costs a
 * write per tick, not per token.
 */
export class RunEventLog {
  private next = 0;
  private response: JsonObject;
  private status: BackgroundStatus = 'queued';
  private pending: BackgroundEvent[] = [];
  private flushing: Promise<void> | null = null;
  private scheduled = false;
  private stopped = false;
  private resolveDone!: () => void;
  /** Settles once the last batch is written, or the store said the run had ended elsewhere. */
  readonly done = new Promise<void>((resolve) => (this.resolveDone = resolve));

  constructor(
    private readonly id: string,
    queued: JsonObject,
    private readonly store: BackgroundStore,
    /** The store refused a write because the run ended elsewhere (cancelled): stop the run. */
    private readonly onEndedElsewhere: () => void,
    private readonly onWriteError: (err: unknown) => void,
  ) {
    this.response = queued;
    // The stream opens with the queued response, so a follower has the id before the model says anything.
    this.push({ type: 'response.created', sequence_number: 0, response: queued });
  }

  get ended(): boolean {
    return !LIVE_STATUSES.has(this.status) || this.stopped;
  }

  /** Records one event from the loop (whose own numbering is replaced). */
  push(event: ResponseStreamEvent): void {
    if (this.ended) return;
    // The loop announces the response once it starts; the log already did, as queued.
    if (event.type === 'response.created' && this.next > 0) return;
    this.track(event);
    const sequence = this.next++;
    this.pending.push({ sequence, event: { ...event, sequence_number: sequence } });
    this.schedule();
  }

  /** The run failed before it could emit `response.failed` itself (e.g. during preparation). */
  fail(err: unknown): void {
    if (this.ended) return;
    const response = failedResponse(this.response, errorOf(err));
    this.push({ type: 'response.failed', sequence_number: 0, response });
  }

  /** The run finished without a terminal event (it was cancelled): write what is left and stop. */
  close(): void {
    this.stopped = true;
    this.schedule();
  }

  private track(event: ResponseStreamEvent): void {
    if (event.type === 'response.in_progress' && event.response) {
      this.response = { ...(event.response as JsonObject), output: this.response.output ?? [] };
      this.status = 'in_progress';
    } else if (event.type === 'response.output_item.done' && typeof event.output_index === 'number') {
      const output = [...((this.response.output as PublicItem[] | undefined) ?? [])];
      output[event.output_index] = event.item as PublicItem;
      this.response = { ...this.response, output };
    } else if (TERMINAL.has(event.type) && event.response) {
      this.response = event.response as JsonObject;
      this.status = (this.response.status as BackgroundStatus | undefined) ?? 'failed';
    }
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    if (this.flushing) return;
    const events = this.pending;
    this.pending = [];
    if (events.length === 0) {
      if (this.ended) this.resolveDone();
      return;
    }
    this.flushing = this.store.append(this.id, { events, response: this.response, status: this.status }).then(
      (written) => {
        this.flushing = null;
        if (!written) {
          this.stopped = true;
          this.pending = [];
          this.onEndedElsewhere();
          this.resolveDone();
          return;
        }
        if (this.pending.length > 0 || this.ended) this.flush();
      },
      (err: unknown) => {
        this.flushing = null;
        this.stopped = true;
        this.pending = [];
        this.onWriteError(err);
        this.resolveDone();
      },
    );
  }
}
