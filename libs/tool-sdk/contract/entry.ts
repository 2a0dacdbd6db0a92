import type { ClientCallShape } from './declaration.js';
import type { AnyGatewayExecutor } from './execution.js';
import type { AnyToolHandler } from './handler.js';

/** A gateway entry's executable binding: the executor paired with its checked parameters. */
export interface GatewayBinding {
  executor: AnyGatewayExecutor;
  params: unknown;
  /** False: calls to this model-visible name run one at a time. */
  parallelSafe: boolean;
  /** Per-call deadline for this entry. */
  timeoutMs: number;
}

export type ToolOwnership =
  | { kind: 'client'; shape: ClientCallShape }
  /** `binding` is absent for gateway-owned types that have no executor in this gateway. */
  | { kind: 'gateway'; binding?: GatewayBinding };

/** One model-visible function of a request, as the registry routes it (what `tool_choice` and approvals are resolved against). */
export interface ToolEntry {
  modelName: string;
  toolType: string;
  toolName: string;
  /** What qualifies the tool's own name (a server label, a group name), as the handler's `NormalizedTool` gives it. */
  scope?: string;
  ownership: ToolOwnership;
  handler: AnyToolHandler;
  /** Index of the declaration in the request's `tools[]`. */
  declarationIndex: number;
  /** False when the entry routes calls but is not offered to the model. */
  offered: boolean;
}
