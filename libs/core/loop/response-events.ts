import type { PublicItem } from '#tool-sdk/items.js';

/** One public SSE event (`type` plus its fields, `sequence_number` and `output_index` stamped at the run's edge). */
export interface ResponseStreamEvent {
  type: string;
  sequence_number: number;
  [field: string]: unknown;
}

/** A public event as a step of the run makes it: not numbered yet. */
export type EventInit = { type: string; [field: string]: unknown };

/**
 * The `output_index` a step writes where the field belongs: the edge
 * (`response-output.ts`) numbers items as they open and fills it in, so the
 * field keeps its place in the event as OpenAI orders it.
 */
export const UNSTAMPED = -1;

/** Which names reasoning text events carry: the OpenAI SDK's or the Open Responses spec's. */
export type ReasoningEventStyle = 'openai' | 'openresponses';

export function reasoningEventNames(style: ReasoningEventStyle): { delta: string; done: string } {
  return style === 'openai'
    ? { delta: 'response.reasoning_text.delta', done: 'response.reasoning_text.done' }
    : { delta: 'response.reasoning.delta', done: 'response.reasoning.done' };
}

/** The events that bracket a complete item produced all at once, with `between` its own events in the middle. */
export function wholeItemEvents(item: PublicItem, between: readonly EventInit[] = []): EventInit[] {
  return [
    { type: 'response.output_item.added', output_index: UNSTAMPED, item: { ...item, status: 'in_progress' } },
    ...between,
    { type: 'response.output_item.done', output_index: UNSTAMPED, item },
  ];
}
