import type { GatewayCall, GatewayCallResult } from '#tool-sdk/contract/index.js';
import type { Usage } from '#tool-sdk/items.js';
import type { ResponseStreamEvent } from './response-events.js';
import type { ResponseRequest } from './response-request.js';

/**
 * What the loop tells an observer (logs, metrics, traces) about a run. Core
 * declares the port; a host module provides it under `RUN_OBSERVER`, and
 * without one the loop runs unobserved. Observers see names, types, counts
 * and outcomes; they are never handed tool arguments or outputs to keep.
 */
export const RUN_OBSERVER = Symbol('RUN_OBSERVER');

export interface RunObserver {
  /**
   * Called once per run, synchronously in the caller's context (the HTTP
   * request's, if any). `responseId` is the id the run's response will carry,
   * known before any event, so a run cancelled before its first event is still named.
   */
  begin(request: ResponseRequest, responseId?: string): RunTrace;
}

export interface RunTrace {
  /** Every public event, in order (first-event latency, the terminal response's id and status). */
  event(event: ResponseStreamEvent): void;
  round(round: number): RoundTrace;
  /** A gateway call starting to execute; `round` is absent for approved calls run before the first round. */
  toolCall(call: GatewayCall, toolType: string, round?: RoundTrace): ToolCallTrace;
  /** A declaration's tool discovery starting (a server's tool listing), before the first round; `declaration` names it (`tools[2]`). */
  discovery?(toolType: string, declaration: string): { end(outcome: { error?: unknown }): void };
  /** The run settled: finished, failed (`error`), or cancelled because the client left. */
  end(outcome: { error?: unknown; cancelled?: boolean }): void;
}

export interface RoundTrace {
  /** One upstream inference call; `headers` go out with it (W3C trace context). */
  upstream(): UpstreamTrace;
  /** The round's token usage as the upstream reported it, once the round's answer is complete. */
  usage?(usage: Usage | null): void;
  end(): void;
}

export interface UpstreamTrace {
  readonly headers: Record<string, string>;
  /** `error` is the GatewayError the call failed with; `cancelled` when the run was abandoned. */
  end(outcome: { error?: unknown; cancelled?: boolean }): void;
}

export interface ToolCallTrace {
  end(result: GatewayCallResult | null): void;
}
