import type { AnyGatewayExecutor, AnyToolHandler, GatewayExecutor, ToolHandler } from '#tool-sdk/contract/index.js';
import { simpleApprovalToModelItems, simpleCallOutput, simpleCallPlan, simpleCallToModelItems } from '#tool-sdk/helpers/call-items.js';
import type { JsonObject } from '#tool-sdk/items.js';

/**
 * The defaults of the tool contract, filled in once when a provider is
 * registered: a module writes the few members that make its type work,
 * and the loop still reads complete objects with no `?.` at every use.
 * Only absent members are set; what a module wrote is never replaced.
 */
export function completeExecutor(executor: GatewayExecutor<any>): AnyGatewayExecutor {
  const itemType = `${executor.type}_call`;
  fill(executor, 'planEvents', (call: Parameters<typeof simpleCallPlan>[1]) => simpleCallPlan(itemType, call));
  fill(executor, 'publicOutput', (result: Parameters<typeof simpleCallOutput>[1]) => simpleCallOutput(itemType, result));
  return executor as AnyGatewayExecutor;
}

/**
 * `gatewayOwned` follows from an executor under the type's key. A gateway
 * type whose executor keeps the default `<type>_call` item and that says
 * nothing of its history gets that item's history too: it is accepted as
 * input and shown to the model as the call and its output. With the
 * `simpleApprovals` flow, its `<type>_approval_request` items as well.
 */
export function completeHandler(handler: ToolHandler<any, any, any>, executor: GatewayExecutor<any> | undefined): AnyToolHandler {
  fill(handler, 'gatewayOwned', executor !== undefined);
  // Asked before the executor's own defaults are filled in.
  const defaultItem = executor !== undefined && typeof executor.publicOutput !== 'function';
  if (defaultItem && handler.historyItemTypes === undefined && handler.toModelItems === undefined) {
    const simpleApprovals = handler.approvals?.answerItemTypes.includes(`${handler.type}_approval_response`) === true;
    fill(handler, 'historyItemTypes', [`${handler.type}_call`, ...(simpleApprovals ? [`${handler.type}_approval_request`] : [])]);
    fill(handler, 'toModelItems', ((item, ctx) => {
      const it = item as JsonObject;
      const modelName = ctx.modelNameFor(String(it.name), typeof it.scope === 'string' ? it.scope : undefined);
      return (simpleApprovals ? simpleApprovalToModelItems(item, modelName) : null) ?? simpleCallToModelItems(item, modelName);
    }) satisfies ToolHandler['toModelItems']);
  }
  return handler as AnyToolHandler;
}

function fill<T extends object>(target: T, key: string, value: unknown): void {
  if ((target as Record<string, unknown>)[key] !== undefined) return;
  // Defined on the instance, not assigned: a class field declared `readonly` stays readonly to its own code.
  Object.defineProperty(target, key, { value, writable: false, enumerable: false, configurable: true });
}
