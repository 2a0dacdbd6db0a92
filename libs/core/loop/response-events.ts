import type { PublicItem } from '#tool-sdk/items.js';

/** One public SSE event (`type` plus its fields, `sequence_number` stamped by the sink). */
export interface ResponseStreamEvent {
  type: string;
  sequence_number: number;
  [field: string]: unknown;
}

export type EventInit = { type: string; [field: string]: unknown };

/** Where a step hands its public events. */
export interface EventSink {
  emit(event: EventInit): void;
}

/** Stamps monotonically increasing sequence numbers; the only way events leave a run. */
export class ResponseEventSink implements EventSink {
  private sequence = 0;

  constructor(private readonly out: (event: ResponseStreamEvent) => void) {}

  emit(event: EventInit): void {
    (event as ResponseStreamEvent).sequence_number = this.sequence++;
    this.out(event as ResponseStreamEvent);
  }
}

/** The response's `output` array, filled in model order as items start. */
export class OutputLedger {
  readonly items: PublicItem[] = [];

  open(item: PublicItem): number {
    this.items.push(item);
    return this.items.length - 1;
  }

  set(index: number, item: PublicItem): void {
    this.items[index] = item;
  }
}

/** Which names reasoning text events carry: the OpenAI SDK's or the Open Responses spec's. */
export type ReasoningEventStyle = 'openai' | 'openresponses';

export function reasoningEventNames(style: ReasoningEventStyle): { delta: string; done: string } {
  return style === 'openai'
    ? { delta: 'response.reasoning_text.delta', done: 'response.reasoning_text.done' }
    : { delta: 'response.reasoning.delta', done: 'response.reasoning.done' };
}

/** Emits the four events that bracket a complete item produced all at once. */
export function emitWholeItem(sink: ResponseEventSink, ledger: OutputLedger, item: PublicItem, between: (outputIndex: number) => void = () => undefined): number {
  const outputIndex = ledger.open(item);
  sink.emit({ type: 'response.output_item.added', output_index: outputIndex, item: { ...item, status: 'in_progress' } });
  between(outputIndex);
  sink.emit({ type: 'response.output_item.done', output_index: outputIndex, item });
  return outputIndex;
}
