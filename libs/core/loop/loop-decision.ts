/**
 * What happens after a round. Unit variants: the accumulated output lives
 * on the run, not on the decision.
 */
export enum LoopDecision {
  /** Gateway calls were resolved; infer again with their outputs. */
  Continue = 'continue',
  /** No gateway work remains; the turn is final. */
  Done = 'done',
  /** The client must act: client-owned calls or approval requests are pending. */
  RequiresClientAction = 'requires_client_action',
  /** The round cap was hit while the model still wanted tools. */
  Incomplete = 'incomplete',
}

export interface RoundOutcome {
  /** Client-owned calls or approval requests were produced this round. */
  hasClientAction: boolean;
  /** Gateway calls executed this round (including failed ones). */
  gatewayResults: number;
  round: number;
  maxRounds: number;
}

/**
 * Precedence: the client acting comes first, so a mixed turn runs its gateway
 * calls, records their outputs and hands the client calls back in the same
 * round (no extra iteration). Only then does gateway work continue the loop,
 * unless the round budget is spent.
 */
export function classifyRound({ hasClientAction, gatewayResults, round, maxRounds }: RoundOutcome): LoopDecision {
  if (hasClientAction) return LoopDecision.RequiresClientAction;
  if (gatewayResults === 0) return LoopDecision.Done;
  if (round >= maxRounds) return LoopDecision.Incomplete;
  return LoopDecision.Continue;
}
