import type { JsonObject, JsonSchema } from '../items.js';
import type { NormalizedTool } from '../contract/declaration.js';
import type { ClientCallRestoration } from '../contract/client-calls.js';
import { modelVisibleName } from './model-names.js';

/**
 * The one model-visible function of a client-owned type whose calls are
 * handed back as an item of their own (`shell_call`, `apply_patch_call`...),
 * built from the model's whole arguments by the handler's `clientCalls`.
 */
export function restoredClientFunction(options: {
  itemType: string;
  functionName: string;
  idPrefix: string;
  description: string;
  parameters: JsonSchema;
  takenNames: ReadonlySet<string>;
  /** Fixed fields placed after the restored ones (the declared environment). */
  trailingFields?: JsonObject;
}): NormalizedTool[] {
  const { itemType, functionName, idPrefix, description, parameters, takenNames, trailingFields } = options;
  return [
    {
      fn: { type: 'function', name: modelVisibleName([functionName], takenNames), description, parameters },
      toolName: functionName,
      clientShape: { kind: itemType, name: functionName, relay: { kind: 'restored' }, idPrefix, omitName: true, ...(trailingFields ? { trailingFields } : {}) },
    },
  ];
}

/** A call the handler refuses: the model reads this error as the call's result and may try again. */
export function refusedCall(code: string, message: string): ClientCallRestoration {
  return { error: JSON.stringify({ error: { code, message } }) };
}
