import type { GatewayCallResult, GatewayExecutor } from '#tool-sdk/contract/index.js';
import { addUsage, emptyUsage, type ModelItem, type Usage } from '#tool-sdk/items.js';
import type { ApprovalSlot } from './history-to-model.js';
import { LoopDecision, classifyRound } from './loop-decision.js';

/** The gateway calls a response has made so far: what the per-response limit and the citations read. */
export interface CallCount {
  readonly made: number;
  /** The limit was reached: later rounds offer the model no tools. */
  readonly limitReached: boolean;
  /** Completed calls per executor that annotates answers, for the messages that follow them. */
  readonly completed: ReadonlyMap<GatewayExecutor, readonly GatewayCallResult[]>;
}

/**
 * Where a run stands between steps. Each step takes one and gives back the
 * next; nothing holds on to an old one, and no step changes one in place.
 */
export interface RunState {
  /** What the model sees next round: prior items, this turn's input, then each round's items and outputs. */
  readonly transcript: readonly ModelItem[];
  readonly usage: Usage;
  readonly calls: CallCount;
  /** Rounds finished so far. */
  readonly rounds: number;
  /**
   * The estimate of the first round's prompt, once that round ran: with the
   * model server's own count of that prompt (`ResponseRequest.promptTokens`),
   * later rounds are sized as that count plus what the estimate says they added.
   */
  readonly firstPromptEstimate: number | null;
}

/** What one round leaves behind: the model's items and the call outputs, in model order. */
export interface RoundResult {
  readonly modelItems: readonly ModelItem[];
  readonly outputs: readonly ModelItem[];
  readonly usage: Usage | null;
  readonly calls: CallCount;
  /** Client-owned calls or approval requests were produced. */
  readonly clientAction: boolean;
  /** Gateway calls that ended this round (run, failed or refused by the limit). */
  readonly gatewayResults: number;
  /** The upstream stopped short (`max_output_tokens`, ...): the turn ends incomplete with this reason. */
  readonly incompleteReason: string | null;
  /** The estimate of this round's prompt; null when the run has no output budget to fit (it is only used for that). */
  readonly promptEstimate: number | null;
}

/** What the driver decides after a round, with the state it goes on from. */
export interface RunStep {
  readonly state: RunState;
  readonly decision: LoopDecision;
  readonly incompleteReason: string | null;
}

export function initialState(transcript: readonly ModelItem[]): RunState {
  return { transcript, usage: emptyUsage(), calls: { made: 0, limitReached: false, completed: new Map() }, rounds: 0, firstPromptEstimate: null };
}

/** The next state after a round: its items and outputs appended, its usage and calls counted. */
export function afterRound(state: RunState, round: RoundResult): RunState {
  return {
    transcript: [...state.transcript, ...round.modelItems, ...round.outputs],
    // A fresh sum: the state before this round keeps its own usage (structuredClone cost more than the round's own bookkeeping).
    usage: round.usage ? addUsage(addUsage(emptyUsage(), state.usage), round.usage) : state.usage,
    calls: round.calls,
    rounds: state.rounds + 1,
    firstPromptEstimate: state.firstPromptEstimate ?? round.promptEstimate,
  };
}

/** One round, decided: an upstream that stopped short ends the turn before any classification. */
export function decide(state: RunState, round: RoundResult, maxRounds: number): RunStep {
  const next = afterRound(state, round);
  if (round.incompleteReason) return { state: next, decision: LoopDecision.Incomplete, incompleteReason: round.incompleteReason };
  const decision = classifyRound({ hasClientAction: round.clientAction, gatewayResults: round.gatewayResults, round: next.rounds, maxRounds });
  return { state: next, decision, incompleteReason: decision === LoopDecision.Incomplete ? 'max_rounds' : null };
}

/**
 * Approval answers resolved before the first round: each call's output lands
 * where its answer stood in the input.
 */
export function withApprovalOutputs(state: RunState, answered: ReadonlyArray<{ approval: ApprovalSlot; output: string }>, calls: CallCount): RunState {
  const transcript = [...state.transcript];
  // Positions index the transcript itself; insert from the back so earlier ones stay valid,
  // and reverse before the (stable) sort so answers sharing a position keep their given order.
  for (const { approval, output } of [...answered].reverse().sort((a, b) => b.approval.position - a.approval.position)) {
    transcript.splice(approval.position, 0, { type: 'function_call_output', call_id: approval.answer.requestId, output });
  }
  return { ...state, transcript, calls };
}
