import { InvalidRequestError } from '../errors.js';
import { newId } from '../ids.js';
import type { ApprovalAnswer, ApprovalContract, ApprovalVerdict, ClientCallShape, GatewayCall, GatewayCallResult, GatewayEventPlan, HistoryContext } from '../contract/index.js';
import { modelVisibleName } from './model-names.js';
import type { JsonObject, ModelItem, PublicItem } from '../items.js';

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
    // Present only on a call the client approved (see `simpleApprovals`).
    ...(result.call.approvalRequestId ? { approval_request_id: result.call.approvalRequestId } : {}),
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

/**
 * The approval flow of a simple gateway tool type, for modules that want
 * the one the built-in server tools have without writing their own:
 * `<type>_approval_request {id, scope?, name, arguments}` is what the
 * contract's `requestItem` emits (see `simpleApprovalRequestItem`) for the calls `requires` picks;
 * the client answers with `<type>_approval_response {approval_request_id,
 * approve, reason?}`; an approved call runs at the start of the answering
 * turn and its `<type>_call` item carries `approval_request_id`, which
 * settles the answer for later turns.
 */
export function simpleApprovals<E>(
  toolType: string,
  options: {
    requires(call: GatewayCall, params: E): boolean;
    /** The request items' id prefix, whole: `calcr` gives `calcr_…`. */
    idPrefix: string;
    callItemType?: string;
  },
): ApprovalContract<E> {
  const requestType = `${toolType}_approval_request`;
  const callItemType = options.callItemType ?? `${toolType}_call`;
  return {
    requires: (call, params) => options.requires(call, params),
    requestItem: (call) => simpleApprovalRequestItem(toolType, call, options.idPrefix),
    answerItemTypes: [`${toolType}_approval_response`],
    readAnswer(item: PublicItem): ApprovalAnswer {
      const it = item as JsonObject;
      return { requestId: String(it.approval_request_id), approve: it.approve === true, reason: typeof it.reason === 'string' ? it.reason : null };
    },
    resolve(answers, ctx): ApprovalVerdict[] {
      const settled = new Set<string>();
      const requests = new Map<string, JsonObject>();
      for (const item of ctx.conversation) {
        const it = item as JsonObject;
        if (item.type === callItemType && typeof it.approval_request_id === 'string') settled.add(it.approval_request_id);
        if (item.type === requestType && typeof it.id === 'string') requests.set(it.id, it);
      }
      return answers.map((answer): ApprovalVerdict => {
        if (settled.has(answer.requestId)) return { kind: 'settled' };
        const request = requests.get(answer.requestId);
        if (!request) {
          throw new InvalidRequestError(`${toolType}_approval_response refers to "${answer.requestId}", which is not in this conversation.`, 'input', 'approval_request_not_found');
        }
        if (!answer.approve) {
          const reason = answer.reason ? ` Reason: ${answer.reason}` : '';
          return { kind: 'denied', output: JSON.stringify({ error: { code: 'approval_denied', message: `The user denied this call.${reason}` } }) };
        }
        const scope = typeof request.scope === 'string' ? request.scope : undefined;
        const entry = ctx.entries.find((e) => e.toolType === toolType && e.toolName === request.name && e.scope === scope && e.ownership.kind === 'gateway');
        if (!entry) {
          throw new InvalidRequestError(`The approved call to "${String(request.name)}" has no matching tool declaration in this request.`, 'tools', 'approval_tool_not_declared');
        }
        return { kind: 'approved', entry, arguments: typeof request.arguments === 'string' ? request.arguments : JSON.stringify(request.arguments ?? {}) };
      });
    },
  };
}

/** The request item of `simpleApprovals`, with an id in the given prefix (`idPrefix` `calcr` gives `calcr_…`). */
export function simpleApprovalRequestItem(toolType: string, call: GatewayCall, idPrefix: string): PublicItem {
  return { id: newId(idPrefix), type: `${toolType}_approval_request`, ...(call.scope ? { scope: call.scope } : {}), name: call.toolName, arguments: call.arguments };
}

/**
 * History of `simpleApprovals` items: a request is the model's call, keyed
 * by the request id (its answer supplies the output); a call item that ran
 * because it was approved only completes that call. `modelName` is what
 * `HistoryContext.modelNameFor` gives: undefined when the request no longer
 * declares the tool, and the item's own name is used then, as
 * `simpleCallToModelItems` does.
 */
export function simpleApprovalToModelItems(item: PublicItem, modelName: string | undefined): ModelItem[] | null {
  const it = item as JsonObject;
  if (item.type.endsWith('_approval_request')) {
    return [{ type: 'function_call', call_id: String(it.id), name: modelName ?? String(it.name), arguments: String(it.arguments ?? '') }];
  }
  if (typeof it.approval_request_id === 'string' && it.approval_request_id.length > 0) {
    return [{ type: 'function_call_output', call_id: it.approval_request_id, output: String(it.output ?? it.error ?? '') }];
  }
  return null;
}

/**
 * The model-visible name of a client call found in history: the declared
 * tool's, else (a grouped member the request no longer declares) the same
 * stable joined name the group would have given it.
 */
export function clientCallModelName(kind: ClientCallShape['kind'], name: string, scope: string | undefined, ctx: HistoryContext): string {
  const declared = ctx.clientCallName(kind, name, scope);
  if (declared) return declared;
  return scope ? modelVisibleName([scope, name], new Set()) : name;
}
