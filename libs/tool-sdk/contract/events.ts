import type { PublicItem } from '../items.js';
import type { GatewayCallResult } from './execution.js';

/** An event the executor asks to emit; the gateway adds item_id, output_index and sequence_number. */
export interface PlannedEvent {
  type: string;
  [field: string]: unknown;
}

/** The public lifecycle of one gateway call, as the executor shapes it. */
export interface GatewayEventPlan {
  /** Item as sent in `response.output_item.added` (status `in_progress`). */
  startedItem: PublicItem;
  /** Events between `output_item.added` and execution. */
  beforeExecute: PlannedEvent[];
  /** Events between execution and `output_item.done`. */
  afterExecute(result: GatewayCallResult): PlannedEvent[];
}
