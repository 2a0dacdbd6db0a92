import { Observable, type ObservableInput, type OperatorFunction, type Subscriber } from 'rxjs';
import { isGatewayError } from '#tool-sdk/errors.js';
import { emptyUsage, type JsonObject, type PublicItem, type Usage } from '#tool-sdk/items.js';
import { buildResponseObject, type ResponseStatus } from './response-object.js';
import { UNSTAMPED, type EventInit, type ResponseStreamEvent } from './response-events.js';
import type { ResponseRequest } from './response-request.js';
import type { ResponseStateStore } from './response-state.interface.js';
import { StageRelay } from './run-operators.js';
import { startEvents, type RunFinished, type RunValue } from './run-values.js';

export interface ResponseEdgeOptions {
  readonly state: ResponseStateStore;
  /** Streaming runs: `response.created` goes out after this long even if nothing else has. */
  readonly keepAliveMs: number | null;
  /** Streaming runs end a failure that comes after the start with `response.failed`; blocking ones fail. */
  readonly stream: boolean;
}

/**
 * The run's edge: the one place its values become what a client sees.
 * Public events get their `sequence_number` and `output_index` here, the
 * `response.created` / `in_progress` pair goes out once (at the run's first
 * public step, or when the keep-alive timer fires first), and the terminal
 * event carries the snapshot of the output, sent after the state is saved
 * (or discarded, for `response.failed`).
 */
export function responseEvents(output: ResponseOutput, options: ResponseEdgeOptions): OperatorFunction<RunValue, ResponseStreamEvent> {
  return (values) => new Observable<ResponseStreamEvent>((destination) => new EdgeRelay(destination, output, options).begin(values));
}

/**
 * `responseEvents` as one relay (run-operators.ts says why): the run's
 * values stamped (`map` + `filter`), the terminal event once the run
 * completed (`concatWith`), `response.failed` for a stream that fails after
 * its start (`catchError`), and the keep-alive: a timer that sends the
 * start events if nothing started the response first, dropped as soon as
 * something has (a `connect`, `merge`, `timer` and `takeUntil` of the same
 * values kept about 5 KiB per open stream).
 */
class EdgeRelay extends StageRelay<RunValue, ResponseStreamEvent> {
  private finished: RunFinished | undefined;
  private keepAlive: ReturnType<typeof setTimeout> | undefined;
  private failing = false;

  constructor(
    destination: Subscriber<ResponseStreamEvent>,
    private readonly output: ResponseOutput,
    private readonly options: ResponseEdgeOptions,
  ) {
    super(destination);
    // The terminal event's stage fails into `response.failed` too.
    this.relaysNextStage = true;
  }

  begin(values: Observable<RunValue>): this {
    if (this.options.keepAliveMs !== null) this.keepAlive = setTimeout(sendStart, this.options.keepAliveMs, this);
    return this.follow(values);
  }

  /** The keep-alive fired before the run started: the start events go out as if the run had sent them. */
  start(): void {
    this.keepAlive = undefined;
    for (const value of startEvents()) this.next(value);
  }

  protected first(value: RunValue): void {
    // The turn's end, noted as it goes by: it is the run's last value, so its terminal event follows once the run completed.
    if (value.type === 'run.finished') this.finished = value as RunFinished;
    const event = this.output.stamp(value);
    if (event !== null) this.destination.next(event);
    if (this.keepAlive !== undefined && this.output.hasStarted) this.stopKeepAlive();
  }

  protected following(): ObservableInput<ResponseStreamEvent> | null {
    this.stopKeepAlive();
    return this.finished ? this.output.finish(this.options.state, this.finished) : null;
  }

  protected override failed(err: unknown): void {
    this.stopKeepAlive();
    if (this.failing || !this.options.stream || !this.output.hasStarted) return this.destination.error(err);
    // As `catchError`: the failed stage is let go of, then the failure is announced in its place.
    this.failing = true;
    this.later = true;
    this.dropStage();
    this.follow(this.output.fail(this.options.state, err));
  }

  override unsubscribe(): void {
    this.stopKeepAlive();
    super.unsubscribe();
  }

  private stopKeepAlive(): void {
    if (this.keepAlive === undefined) return;
    clearTimeout(this.keepAlive);
    this.keepAlive = undefined;
  }
}

function sendStart(edge: EdgeRelay): void {
  edge.start();
}

/**
 * The public side of one run as the edge builds it: the response's `output`
 * array (items by output index, in the order they opened), the sequence
 * counter, and what the response objects describe.
 */
export class ResponseOutput {
  readonly items: PublicItem[] = [];
  private readonly indexes = new Map<unknown, number>();
  private sequence = 0;
  private started: ReturnType<typeof buildResponseObject> | null = null;
  private progressSent = false;
  private tools: readonly JsonObject[] = [];
  private usage: Usage = emptyUsage();

  constructor(
    readonly id: string,
    readonly createdAt: number,
    private request: ResponseRequest,
  ) {}

  get hasStarted(): boolean {
    return this.started !== null;
  }

  /** A run value as the client sees it, numbered; null for what only the edge reads. */
  stamp(value: RunValue): ResponseStreamEvent | null {
    const event = value as EventInit;
    switch (value.type) {
      case 'run.described': {
        const described = value as Extract<RunValue, { type: 'run.described' }>;
        this.request = described.request;
        if (described.tools) this.tools = described.tools;
        return null;
      }
      case 'run.usage':
        this.usage = (value as Extract<RunValue, { type: 'run.usage' }>).usage;
        return null;
      case 'run.cut_short':
        this.markLastMessageIncomplete();
        return null;
      case 'run.finished':
        return null;
      case 'response.created':
        if (this.started) return null;
        this.started = this.snapshot('in_progress', null);
        event.response = this.started;
        break;
      case 'response.in_progress':
        if (this.progressSent) return null;
        this.progressSent = true;
        event.response = this.started;
        break;
      case 'response.output_item.added': {
        const item = event.item as PublicItem;
        const index = this.items.push(item) - 1;
        this.indexes.set(item.id, index);
        event.output_index = index;
        break;
      }
      case 'response.output_item.done': {
        const item = event.item as PublicItem;
        const index = this.indexes.get(item.id) ?? this.items.push(item) - 1;
        this.items[index] = item;
        event.output_index = index;
        break;
      }
      default:
        if (event.output_index === UNSTAMPED) event.output_index = this.indexes.get(event.item_id);
    }
    (event as ResponseStreamEvent).sequence_number = this.sequence++;
    return event as ResponseStreamEvent;
  }

  /** Saves the turn, then announces it: the terminal event never precedes the state it describes. */
  async finish(state: ResponseStateStore, finished: RunFinished): Promise<ResponseStreamEvent> {
    const response = this.snapshot(finished.status, finished.usage, { incompleteReason: finished.incompleteReason });
    await state.save({ request: this.request, response, ...finished.record });
    return this.stamp({ type: finished.status === 'completed' ? 'response.completed' : 'response.incomplete', response })!;
  }

  /** The run failed after its start: whatever it left is discarded, and the stream ends `failed`. */
  async fail(state: ResponseStateStore, err: unknown): Promise<ResponseStreamEvent> {
    // A domain error without a code of its own (none of the gateway's) reads as the generic failure code.
    const error = isGatewayError(err)
      ? { code: err.code ?? 'server_error', message: err.message }
      : { code: 'server_error', message: 'The gateway failed while producing this response.' };
    await state.discard?.(this.request, this.id).catch(() => undefined);
    return this.stamp({ type: 'response.failed', response: this.snapshot('failed', this.usage, { error }) })!;
  }

  private markLastMessageIncomplete(): void {
    for (let i = this.items.length - 1; i >= 0; i--) {
      const item = this.items[i];
      if (item.type === 'message') {
        this.items[i] = { ...item, status: 'incomplete' } as PublicItem;
        return;
      }
    }
  }

  private snapshot(status: ResponseStatus, usage: Usage | null, extra: { error?: { code: string; message: string }; incompleteReason?: string | null } = {}) {
    const terminal = status !== 'in_progress';
    return buildResponseObject(this.request, {
      id: this.id,
      createdAt: this.createdAt,
      status,
      output: terminal ? this.items : [],
      tools: this.tools as JsonObject[],
      usage: terminal ? usage : null,
      error: extra.error ?? null,
      incompleteReason: extra.incompleteReason ?? null,
      completedAt: status === 'completed' ? Math.floor(Date.now() / 1000) : null,
    });
  }
}
