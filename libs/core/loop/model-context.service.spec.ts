import { clampOutputBudget, estimatePromptTokens } from './model-context.service.js';

describe('fitting max_output_tokens to the context', () => {
  it('clamps a budget larger than what the prompt leaves, keeps one that fits, and never clamps below a useful floor', () => {
    expect(clampOutputBudget(32_000, 4_096, 1_000)).toBe(3_096);
    expect(clampOutputBudget(500, 4_096, 1_000)).toBe(500);
    // Claude Code's 32000 near the limit: what is left (1 token, then 200) is no budget; the model server decides.
    expect(clampOutputBudget(32_000, 32_768, 32_767)).toBe(32_000);
    expect(clampOutputBudget(32_000, 32_768, 32_568)).toBe(32_000);
    expect(clampOutputBudget(32_000, 32_768, 31_744)).toBe(1_024);
    expect(clampOutputBudget(32_000, 4_096, 5_000)).toBe(32_000);
    // Small contexts get a floor of an eighth of them.
    expect(clampOutputBudget(32_000, 600, 500)).toBe(100);
  });

  it('leaves the budget alone when the context is unknown or no budget was asked for', () => {
    expect(clampOutputBudget(32_000, null, 1_000)).toBe(32_000);
    expect(clampOutputBudget(null, 4_096, 1_000)).toBeNull();
  });

  it('estimates high: at least one token per whitespace-separated word, one per non-ASCII character', () => {
    const words = Array.from({ length: 1_000 }, (_, i) => `w${i}`).join(' ');
    const english = estimatePromptTokens({ instructions: null, input: [{ type: 'message', role: 'user', content: words }], tools: [] });
    expect(english).toBeGreaterThanOrEqual(1_000);
    const cjk = estimatePromptTokens({ instructions: '漢字'.repeat(500), input: [], tools: [] });
    expect(cjk).toBeGreaterThanOrEqual(1_000);
  });

  it('grows linearly with the input (10x and 100x)', () => {
    const sized = (n: number) =>
      estimatePromptTokens({
        instructions: null,
        input: Array.from({ length: n }, () => ({ type: 'message' as const, role: 'user' as const, content: 'twelve chars' })),
        tools: [],
      });
    const one = sized(10);
    expect(sized(100) / one).toBeGreaterThan(9);
    expect(sized(100) / one).toBeLessThan(11);
    expect(sized(1_000) / one).toBeGreaterThan(90);
    expect(sized(1_000) / one).toBeLessThan(110);
  });
});
