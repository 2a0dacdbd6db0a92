import { LoopDecision, classifyRound } from './loop-decision.js';

describe('classifyRound', () => {
  const round = (hasClientAction: boolean, gatewayResults: number, n: number, maxRounds = 3) => classifyRound({ hasClientAction, gatewayResults, round: n, maxRounds });

  it('is Done when the model made no tool calls', () => {
    expect(round(false, 0, 1)).toBe(LoopDecision.Done);
  });

  it('continues after gateway calls were resolved and rounds remain', () => {
    expect(round(false, 1, 1)).toBe(LoopDecision.Continue);
    expect(round(false, 4, 2)).toBe(LoopDecision.Continue);
  });

  it('hands the turn back when only client-owned calls were made', () => {
    expect(round(true, 0, 1)).toBe(LoopDecision.RequiresClientAction);
  });

  it('gives the client precedence over gateway results in a mixed turn (no extra round)', () => {
    expect(round(true, 2, 1)).toBe(LoopDecision.RequiresClientAction);
  });

  it('gives the client precedence even on the last round', () => {
    expect(round(true, 2, 3)).toBe(LoopDecision.RequiresClientAction);
    expect(round(true, 0, 3)).toBe(LoopDecision.RequiresClientAction);
  });

  it('is Incomplete when gateway work remains at the round cap', () => {
    expect(round(false, 1, 3)).toBe(LoopDecision.Incomplete);
    // Past the cap (a misconfigured caller) still stops rather than loops.
    expect(round(false, 1, 4)).toBe(LoopDecision.Incomplete);
  });

  it('applies the round cap only when gateway work remains', () => {
    expect(round(false, 0, 3)).toBe(LoopDecision.Done);
    expect(round(false, 0, 1, 1)).toBe(LoopDecision.Done);
  });

  it('with a cap of one round, gateway results end the turn incomplete', () => {
    expect(round(false, 1, 1, 1)).toBe(LoopDecision.Incomplete);
  });

  it('continues on the round just before the cap', () => {
    expect(round(false, 1, 2)).toBe(LoopDecision.Continue);
  });
});
