import { InvalidRequestError } from '#tool-sdk/errors.js';
import { applyContextEdits, CLEARED_TOOL_RESULT, estimateTokens, parseContextManagement } from './context-edits.js';

/** A session of `n` tool round trips; use `i` is a Read when `i % 4 === 3`, a Bash otherwise. */
function session(n: number): any[] {
  const messages: any[] = [{ role: 'user', content: 'start' }];
  for (let i = 0; i < n; i++) {
    messages.push({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: `thought ${i}`, signature: '' },
        { type: 'text', text: `running ${i}` },
        { type: 'tool_use', id: `t${i}`, name: i % 4 === 3 ? 'Read' : 'Bash', input: { command: `cmd ${i}` } },
      ],
    });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: `result ${i} `.repeat(40) }] });
  }
  return messages;
}

function paramOf(run: () => unknown): string | null {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidRequestError);
    return (err as InvalidRequestError).param;
  }
  throw new Error('expected a refusal');
}

const resultsOf = (messages: any) =>
  (messages as any[])
    .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
    .filter((b: any) => b.type === 'tool_result')
    .map((b: any) => b.content);
const thinkingTurns = (messages: any) => (messages as any[]).filter((m) => m.role === 'assistant' && m.content.some((b: any) => b.type === 'thinking')).length;

describe('parseContextManagement', () => {
  it("fills in Anthropic's defaults", () => {
    expect(parseContextManagement({ edits: [{ type: 'clear_thinking_20251015' }, { type: 'clear_tool_uses_20250919' }] })).toEqual([
      { type: 'clear_thinking_20251015', keepTurns: 1 },
      {
        type: 'clear_tool_uses_20250919',
        trigger: { type: 'input_tokens', value: 100_000 },
        keep: 3,
        clearAtLeast: 0,
        excludeTools: new Set(),
        clearToolInputs: false,
      },
    ]);
    expect(parseContextManagement({ edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] })).toEqual([{ type: 'clear_thinking_20251015', keepTurns: 'all' }]);
    expect(parseContextManagement({ edits: [{ type: 'clear_thinking_20251015', keep: { type: 'all' } }] })).toEqual([{ type: 'clear_thinking_20251015', keepTurns: 'all' }]);
    expect(parseContextManagement(undefined)).toEqual([]);
    expect(parseContextManagement({})).toEqual([]);
  });

  it.each([
    [{ edits: 'x' }, 'context_management.edits'],
    [{ strategy: 'auto' }, 'context_management.strategy'],
    [{ edits: [{ type: 'compact_20260112' }] }, 'context_management.edits.0.type'],
    [{ edits: [{ type: 'clear_everything' }] }, 'context_management.edits.0.type'],
    [{ edits: [{ type: 'clear_thinking_20251015', keep: { type: 'thinking_turns', value: 0 } }] }, 'context_management.edits.0.keep.value'],
    [{ edits: [{ type: 'clear_thinking_20251015', keep: { type: 'turns', value: 2 } }] }, 'context_management.edits.0.keep.type'],
    [{ edits: [{ type: 'clear_thinking_20251015', keep: 'none' }] }, 'context_management.edits.0.keep'],
    [{ edits: [{ type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: 0 } }] }, 'context_management.edits.0.trigger.value'],
    [{ edits: [{ type: 'clear_tool_uses_20250919', keep: { type: 'input_tokens', value: 3 } }] }, 'context_management.edits.0.keep.type'],
    [{ edits: [{ type: 'clear_tool_uses_20250919', clear_at_least: { type: 'tool_uses', value: 3 } }] }, 'context_management.edits.0.clear_at_least.type'],
    [{ edits: [{ type: 'clear_tool_uses_20250919', exclude_tools: [3] }] }, 'context_management.edits.0.exclude_tools.0'],
    [{ edits: [{ type: 'clear_tool_uses_20250919', clear_tool_inputs: 'yes' }] }, 'context_management.edits.0.clear_tool_inputs'],
    [{ edits: [{ type: 'clear_tool_uses_20250919', frobnicate: 1 }] }, 'context_management.edits.0.frobnicate'],
  ])('refuses %j naming %s', (config, param) => {
    expect(paramOf(() => parseContextManagement(config))).toBe(param);
  });
});

describe('applyContextEdits', () => {
  it('clear_thinking keeps the newest N thinking turns, drops the rest, and leaves the input untouched', () => {
    const messages = session(5);
    const snapshot = JSON.stringify(messages);
    const { messages: edited, appliedEdits } = applyContextEdits(
      messages,
      parseContextManagement({ edits: [{ type: 'clear_thinking_20251015', keep: { type: 'thinking_turns', value: 2 } }] }),
    );
    expect(thinkingTurns(edited)).toBe(2);
    expect(JSON.stringify(edited)).not.toContain('thought 2');
    expect(JSON.stringify(edited)).toContain('thought 3');
    expect(JSON.stringify(edited)).toContain('running 0');
    expect(appliedEdits).toEqual([{ type: 'clear_thinking_20251015', cleared_thinking_turns: 3, cleared_input_tokens: expect.any(Number) }]);
    expect(appliedEdits[0].cleared_input_tokens).toBeGreaterThan(0);
    expect(JSON.stringify(messages)).toBe(snapshot);
  });

  it('clear_thinking with keep "all" applies nothing', () => {
    expect(applyContextEdits(session(3), parseContextManagement({ edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] })).appliedEdits).toEqual([]);
  });

  it('clear_tool_uses waits for its trigger', () => {
    const edits = (value: number) =>
      parseContextManagement({ edits: [{ type: 'clear_tool_uses_20250919', trigger: { type: 'tool_uses', value }, keep: { type: 'tool_uses', value: 1 } }] });
    expect(applyContextEdits(session(4), edits(5)).appliedEdits).toEqual([]);
    expect(applyContextEdits(session(5), edits(5)).appliedEdits).toHaveLength(1);
    const tokens = estimateTokens(session(4));
    const byTokens = (value: number) => parseContextManagement({ edits: [{ type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value } }] });
    expect(applyContextEdits(session(4), byTokens(tokens + 1)).appliedEdits).toEqual([]);
    expect(applyContextEdits(session(4), byTokens(tokens)).appliedEdits).toEqual([
      { type: 'clear_tool_uses_20250919', cleared_tool_uses: 1, cleared_input_tokens: expect.any(Number) },
    ]);
  });

  it('clears the oldest results, keeps the newest and excluded tools, and clears inputs only where asked', () => {
    const config = (clearToolInputs: unknown) =>
      parseContextManagement({
        edits: [
          {
            type: 'clear_tool_uses_20250919',
            trigger: { type: 'tool_uses', value: 1 },
            keep: { type: 'tool_uses', value: 2 },
            exclude_tools: ['Read'],
            clear_tool_inputs: clearToolInputs,
          },
        ],
      });
    const { messages, appliedEdits } = applyContextEdits(session(8), config(['Bash']));
    // Uses 0..5 are candidates; 3 is a Read: 0, 1, 2, 4, 5 cleared.
    expect(
      resultsOf(messages)
        .map((c: string, i: number) => (c === CLEARED_TOOL_RESULT ? i : null))
        .filter((i) => i !== null),
    ).toEqual([0, 1, 2, 4, 5]);
    expect(appliedEdits).toEqual([{ type: 'clear_tool_uses_20250919', cleared_tool_uses: 5, cleared_input_tokens: expect.any(Number) }]);
    const inputs = (messages as any[]).flatMap((m: any) => (m.role === 'assistant' ? m.content.filter((b: any) => b.type === 'tool_use').map((b: any) => b.input) : []));
    expect(inputs.map((input: any) => Object.keys(input).length)).toEqual([0, 0, 0, 1, 0, 0, 1, 1]);
    // Without clear_tool_inputs every input stays.
    const kept = applyContextEdits(session(8), config(undefined)).messages;
    expect(JSON.stringify(kept)).toContain('cmd 0');
  });

  it('applies nothing when it cannot clear clear_at_least tokens, and clears again only what is left', () => {
    const edit = (atLeast: number) =>
      parseContextManagement({
        edits: [
          {
            type: 'clear_tool_uses_20250919',
            trigger: { type: 'tool_uses', value: 1 },
            keep: { type: 'tool_uses', value: 3 },
            clear_at_least: { type: 'input_tokens', value: atLeast },
          },
        ],
      });
    const once = applyContextEdits(session(4), edit(0));
    expect(once.appliedEdits).toHaveLength(1);
    const freed = once.appliedEdits[0].cleared_input_tokens;
    expect(applyContextEdits(session(4), edit(freed + 1)).appliedEdits).toEqual([]);
    // History the client already cleared has nothing more to give.
    expect(applyContextEdits(once.messages, edit(0)).appliedEdits).toEqual([]);
  });

  it('runs both edits in order and reports each', () => {
    const { appliedEdits } = applyContextEdits(
      session(4),
      parseContextManagement({
        edits: [{ type: 'clear_thinking_20251015' }, { type: 'clear_tool_uses_20250919', trigger: { type: 'tool_uses', value: 1 }, keep: { type: 'tool_uses', value: 1 } }],
      }),
    );
    expect(appliedEdits.map((e) => e.type)).toEqual(['clear_thinking_20251015', 'clear_tool_uses_20250919']);
  });

  it('edits 10x and 100x the tool uses, every one accounted for', () => {
    const edits = parseContextManagement({
      edits: [
        { type: 'clear_thinking_20251015' },
        { type: 'clear_tool_uses_20250919', trigger: { type: 'tool_uses', value: 1 }, keep: { type: 'tool_uses', value: 3 }, exclude_tools: ['Read'] },
      ],
    });
    for (const n of [20, 200, 2000]) {
      const { messages, appliedEdits } = applyContextEdits(session(n), edits);
      const candidates = n - 3;
      const reads = Array.from({ length: candidates }, (_, i) => i).filter((i) => i % 4 === 3).length;
      expect(appliedEdits).toEqual([
        { type: 'clear_thinking_20251015', cleared_thinking_turns: n - 1, cleared_input_tokens: expect.any(Number) },
        { type: 'clear_tool_uses_20250919', cleared_tool_uses: candidates - reads, cleared_input_tokens: expect.any(Number) },
      ]);
      expect(thinkingTurns(messages)).toBe(1);
      expect(resultsOf(messages).filter((c: string) => c === CLEARED_TOOL_RESULT)).toHaveLength(candidates - reads);
    }
  });
});
