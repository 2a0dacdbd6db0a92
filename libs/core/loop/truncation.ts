import type { ModelItem } from '#tool-sdk/items.js';

/**
 * `truncation: "auto"`: the items the model is shown when the conversation
 * no longer fits its context. As OpenAI does, the oldest items are dropped
 * first, until what is left fits `budget` (in the unit `sizeOf` measures).
 * A call's output is never kept without its call (chat templates and model
 * servers refuse an answer to a call they cannot see), so the cut moves past
 * the outputs of the calls it dropped. The newest user message is never
 * dropped: without it there is nothing to answer, and a prompt that still
 * does not fit is the model server's to refuse (`context_length_exceeded`).
 *
 * Linear in the items. The transcript itself is not changed: what is stored
 * stays the whole conversation, and each round cuts its own view.
 */
export function truncateOldest(items: readonly ModelItem[], sizeOf: (item: ModelItem) => number, budget: number): readonly ModelItem[] {
  let total = 0;
  for (const item of items) total += sizeOf(item);
  if (total <= budget) return items;
  const limit = lastUserIndex(items);
  const outputAt = new Map<string, number>();
  items.forEach((item, i) => {
    if (item.type === 'function_call_output') outputAt.set(item.call_id, i);
  });
  // The suffix must start past every output of a call it dropped.
  let mustPass = -1;
  for (let start = 1; start <= limit; start++) {
    const dropped = items[start - 1];
    total -= sizeOf(dropped);
    if (dropped.type === 'function_call') mustPass = Math.max(mustPass, outputAt.get(dropped.call_id) ?? -1);
    if (start <= mustPass || items[start].type === 'function_call_output') continue;
    if (total <= budget) return items.slice(start);
  }
  return limit > 0 ? items.slice(limit) : items;
}

function lastUserIndex(items: readonly ModelItem[]): number {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (item.type === 'message' && item.role === 'user') return i;
  }
  return items.length - 1;
}
