import { InvalidRequestError } from '#tool-sdk/errors.js';
import type { ModelItem, PublicItem } from '#tool-sdk/items.js';

/** The model protocol's own output item; tool modules add theirs (`ToolHandler.callOutputItemTypes`). */
const MODEL_CALL_OUTPUT = 'function_call_output';

/** The call id an item opens: any item with a `call_id` that is not itself an output (`*_output`). */
function callIdOf(item: { type: string; call_id?: unknown }): string | null {
  if (item.type.endsWith('_output')) return null;
  return typeof item.call_id === 'string' ? item.call_id : null;
}

/**
 * Refuses a tool output whose `call_id` answers no call before it: in the
 * prior state (a `previous_response_id` chain, a conversation, a socket's
 * cached response) or earlier in this request's own input. Sent on, such an
 * output reaches the model as a reply to nothing, which some chat templates
 * refuse and others render next to the wrong call; the client has made a
 * mistake worth naming (`input[i].call_id`).
 *
 * `priorModelItems` covers calls the public history does not show as calls
 * (gateway-owned ones, a compacted base), so an output is never refused for
 * a call the model really made.
 */
export function assertOutputsAnswerCalls(
  input: readonly PublicItem[],
  priorPublic: readonly PublicItem[],
  priorModelItems: readonly ModelItem[],
  /** Input item types that answer a call the model made, by `call_id`. */
  callOutputTypes: ReadonlySet<string> = new Set([MODEL_CALL_OUTPUT]),
): void {
  // Most requests answer no call: the prior items' call ids (all of a continued chain's) are not gathered for them.
  if (!input.some((item) => callOutputTypes.has(item.type))) return;
  const known = new Set<string>();
  for (const item of priorPublic) {
    const id = callIdOf(item);
    if (id !== null) known.add(id);
  }
  for (const item of priorModelItems) if (item.type === 'function_call') known.add(item.call_id);
  input.forEach((item, i) => {
    const it = item as { type: string; call_id?: unknown };
    if (callOutputTypes.has(it.type)) {
      const callId = String(it.call_id);
      if (!known.has(callId)) {
        throw new InvalidRequestError(
          `No tool call found for ${it.type} with call_id "${callId}": it must answer a call earlier in the input, or in the response or conversation this request continues.`,
          `input[${i}].call_id`,
          'tool_call_not_found',
        );
      }
      return;
    }
    const id = callIdOf(it);
    if (id !== null) known.add(id);
  });
}
