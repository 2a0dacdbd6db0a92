import { isGatewayError } from '../errors/gateway-error.js';
import { emptyUsage, type ModelItem, type PublicItem } from '../protocol/items.js';
import type { ToolRegistry } from '../registry/tool-registry.js';
import { buildResponseObject, type ResponseStatus } from './response-object.js';
import { OutputLedger, ResponseEventSink, emitWholeItem, type ResponseStreamEvent } from './response-events.js';
import type { PriorState, ResponseRequest } from './response-request.js';
import type { ResponseStateStore } from './response-state.interface.js';

/** What a finished turn saves: the transcript split where this turn began. */
export interface TurnRecord {
  transcript: readonly ModelItem[];
  turnStart: number;
  prior: PriorState;
}

/**
 * The public life of one response: `response.created` / `in_progress` once,
 * the output ledger and usage, and exactly one terminal event
 * (`completed`, `incomplete` or `failed`) after the state is saved or discarded.
 */
export class ResponseLifecycle {
  readonly sink: ResponseEventSink;
  readonly ledger = new OutputLedger();
  readonly usage = emptyUsage();
  private started = false;
  /** Replaced once the request is final (a continuation inherits tools), and once tools are prepared. */
  request: ResponseRequest;
  registry?: ToolRegistry;

  constructor(
    readonly id: string,
    readonly createdAt: number,
    request: ResponseRequest,
    private readonly state: ResponseStateStore,
    out: (event: ResponseStreamEvent) => void,
  ) {
    this.request = request;
    this.sink = new ResponseEventSink(out);
  }

  get hasStarted(): boolean {
    return this.started;
  }

  ensureStarted(): void {
    if (this.started) return;
    this.started = true;
    const snapshot = this.snapshot('in_progress');
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

  markLastMessageIncomplete(): void {
    for (let i = this.ledger.items.length - 1; i >= 0; i--) {
      const item = this.ledger.items[i];
      if (item.type === 'message') {
        this.ledger.set(i, { ...item, status: 'incomplete' } as PublicItem);
        return;
      }
    }
  }

  async finish(status: 'completed' | 'incomplete', incompleteReason: string | null, turn: TurnRecord): Promise<void> {
    this.ensureStarted();
    const response = this.snapshot(status, { incompleteReason });
    await this.state.save({
      request: this.request,
      response,
      modelItems: turn.transcript.slice(turn.turnStart),
      tools: this.registry!.continuationTools,
      prior: { ...turn.prior, modelItems: turn.transcript.slice(0, turn.turnStart), untranslated: undefined },
    });
    this.sink.emit({ type: status === 'completed' ? 'response.completed' : 'response.incomplete', response });
  }

  async fail(err: unknown): Promise<void> {
    const error = isGatewayError(err)
      ? { code: err.code ?? err.type, message: err.message }
      : { code: 'server_error', message: 'The gateway failed while producing this response.' };
    await this.state.discard?.(this.request, this.id).catch(() => undefined);
    this.sink.emit({ type: 'response.failed', response: this.snapshot('failed', { error }) });
  }

  private snapshot(status: ResponseStatus, extra: { error?: { code: string; message: string }; incompleteReason?: string | null } = {}) {
    const terminal = status !== 'in_progress';
    return buildResponseObject(this.request, {
      id: this.id,
      createdAt: this.createdAt,
      status,
      output: terminal ? this.ledger.items : [],
      tools: this.registry?.publicTools ?? [],
      usage: terminal ? this.usage : null,
      error: extra.error ?? null,
      incompleteReason: extra.incompleteReason ?? null,
      completedAt: status === 'completed' ? Math.floor(Date.now() / 1000) : null,
    });
  }
}
