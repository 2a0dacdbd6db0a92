import { isGatewayError } from '#tool-sdk/errors.js';
import type { JsonObject, PublicItem, Usage } from '#tool-sdk/items.js';
import { buildResponseObject, type ResponseStatus } from './response-object.js';
import { OutputLedger, ResponseEventSink, emitWholeItem, type EventInit, type ResponseStreamEvent } from './response-events.js';
import type { ResponseRequest } from './response-request.js';
import type { CompletedRun, ResponseStateStore } from './response-state.interface.js';

/**
 * The public side of one run, and the only way its events leave: sequence
 * numbers are stamped and output indexes assigned here (`ledger`), so every
 * step that shows something shows it through this one object.
 *
 * `response.created` / `in_progress` go out once, whenever the first public
 * thing happens (or the keep-alive timer fires), and exactly one terminal
 * event (`completed`, `incomplete` or `failed`) after the state is saved or discarded.
 */
export class RunOutput {
  readonly ledger = new OutputLedger();
  private readonly sink: ResponseEventSink;
  private started = false;
  private request: ResponseRequest;
  private tools: readonly JsonObject[] = [];

  constructor(
    readonly id: string,
    readonly createdAt: number,
    request: ResponseRequest,
    out: (event: ResponseStreamEvent) => void,
  ) {
    this.request = request;
    this.sink = new ResponseEventSink(out);
  }

  /** What the response objects describe: the effective request once known, then the prepared tools. */
  describe(request: ResponseRequest, tools?: readonly JsonObject[]): void {
    this.request = request;
    if (tools) this.tools = tools;
  }

  get hasStarted(): boolean {
    return this.started;
  }

  emit(event: EventInit): void {
    this.sink.emit(event);
  }

  ensureStarted(): void {
    if (this.started) return;
    this.started = true;
    const snapshot = this.snapshot('in_progress', null);
    this.sink.emit({ type: 'response.created', response: snapshot });
    this.sink.emit({ type: 'response.in_progress', response: snapshot });
  }

  /** A discovery listing (emitted whole before the first round), with its own in_progress / completed pair. */
  emitDiscoveryItem(item: PublicItem): void {
    const failed = Boolean((item as { error?: unknown }).error);
    emitWholeItem(this.sink, this.ledger, item, (outputIndex) => {
      this.sink.emit({ type: `response.${item.type}.in_progress`, item_id: item.id, output_index: outputIndex });
      this.sink.emit({ type: `response.${item.type}.${failed ? 'failed' : 'completed'}`, item_id: item.id, output_index: outputIndex });
    });
  }

  emitWhole(item: PublicItem): void {
    emitWholeItem(this.sink, this.ledger, item);
  }

  /** Opens a public item at the next output index. */
  open(item: PublicItem): number {
    return this.ledger.open(item);
  }

  set(outputIndex: number, item: PublicItem): void {
    this.ledger.set(outputIndex, item);
  }

  markLastMessageIncomplete(): void {
    for (let i = this.ledger.items.length - 1; i >= 0; i--) {
      const item = this.ledger.items[i];
      if (item.type === 'message') {
        this.ledger.set(i, { ...item, status: 'incomplete' } as PublicItem);
        return;
      }
    }
  }

  /** Saves the turn, then announces it: the terminal event never precedes the state it describes. */
  async finish(
    state: ResponseStateStore,
    status: 'completed' | 'incomplete',
    incompleteReason: string | null,
    usage: Usage,
    record: Omit<CompletedRun, 'request' | 'response'>,
  ): Promise<void> {
    this.ensureStarted();
    const response = this.snapshot(status, usage, { incompleteReason });
    await state.save({ request: this.request, response, ...record });
    this.sink.emit({ type: status === 'completed' ? 'response.completed' : 'response.incomplete', response });
  }

  async fail(state: ResponseStateStore, err: unknown, usage: Usage): Promise<void> {
    // A domain error without a code of its own (none of the gateway's) reads as the generic failure code.
    const error = isGatewayError(err)
      ? { code: err.code ?? 'server_error', message: err.message }
      : { code: 'server_error', message: 'The gateway failed while producing this response.' };
    await state.discard?.(this.request, this.id).catch(() => undefined);
    this.sink.emit({ type: 'response.failed', response: this.snapshot('failed', usage, { error }) });
  }

  private snapshot(status: ResponseStatus, usage: Usage | null, extra: { error?: { code: string; message: string }; incompleteReason?: string | null } = {}) {
    const terminal = status !== 'in_progress';
    return buildResponseObject(this.request, {
      id: this.id,
      createdAt: this.createdAt,
      status,
      output: terminal ? this.ledger.items : [],
      tools: this.tools as JsonObject[],
      usage: terminal ? usage : null,
      error: extra.error ?? null,
      incompleteReason: extra.incompleteReason ?? null,
      completedAt: status === 'completed' ? Math.floor(Date.now() / 1000) : null,
    });
  }
}
