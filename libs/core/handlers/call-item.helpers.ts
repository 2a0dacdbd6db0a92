import type { GatewayCall, GatewayCallResult, GatewayEventPlan } from '../handlers/tool-handler.interface.js';
import type { JsonObject, ModelItem, PublicItem } from '../protocol/items.js';

/**
 * The public side of a simple gateway tool type (the test types `nap`,
 * `sleep`, `flaky`, `probe` use it, and so can a host's own): one item shape,
 * `<type>_call {id, status, name, arguments, output, error}`, and, when asked,
 * `response.<type>_call.in_progress | completed | failed` events around it.
 */
export function simpleCallPlan(itemType: string, call: GatewayCall, options: { events?: boolean; extra?: JsonObject } = {}): GatewayEventPlan {
  const events = options.events ?? true;
  return {
    startedItem: { type: itemType, id: call.itemId, status: 'in_progress', ...options.extra, name: call.toolName, arguments: call.arguments, output: null },
    beforeExecute: events ? [{ type: `response.${itemType}.in_progress` }] : [],
    afterExecute: (result: GatewayCallResult) => (events ? [{ type: `response.${itemType}.${result.status === 'completed' ? 'completed' : 'failed'}` }] : []),
  };
}

export function simpleCallOutput(itemType: string, result: GatewayCallResult, extra: JsonObject = {}): PublicItem {
  const ok = result.status === 'completed';
  return {
    type: itemType,
    id: result.call.itemId,
    status: ok ? 'completed' : 'failed',
    ...extra,
    name: result.call.toolName,
    arguments: result.call.arguments,
    output: ok ? result.output.text : null,
    error: ok ? null : (result.error?.message ?? result.output.text),
    ...('error' in extra ? { error: extra.error } : {}),
  };
}

/** The call and its output as the model saw them, from a simple call item in history. */
export function simpleCallToModelItems(item: PublicItem, modelName?: string): ModelItem[] {
  const it = item as JsonObject;
  return [
    { type: 'function_call', call_id: String(it.id), name: modelName ?? String(it.name), arguments: String(it.arguments) },
    { type: 'function_call_output', call_id: String(it.id), output: String(it.output ?? it.error ?? '') },
  ];
}
