import { claudeEnv } from './claude.launcher.js';

const target = { url: 'http://127.0.0.1:8080/v1', key: 'sk-gw' };
const models = [
  { id: 'coder', context_window: 32768, max_output_tokens: 4096 },
  { id: 'bare', context_window: null },
];

describe('claudeEnv', () => {
  it("gives Claude Code the catalog model's window as its context window and its compaction window, and its output bound", () => {
    expect(claudeEnv(target, models, {})).toMatchObject({
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:8080',
      ANTHROPIC_MODEL: 'coder',
      ANTHROPIC_API_KEY: 'sk-gw',
      CLAUDE_CODE_MAX_CONTEXT_TOKENS: '32768',
      CLAUDE_CODE_AUTO_COMPACT_WINDOW: '32768',
      CLAUDE_CODE_MAX_OUTPUT_TOKENS: '4096',
    });
  });

  it('sets no window for a model without one, and a variable the user set wins', () => {
    const bare = claudeEnv(target, models, { ANTHROPIC_MODEL: 'bare' });
    expect(bare).not.toHaveProperty('CLAUDE_CODE_MAX_CONTEXT_TOKENS');
    expect(bare).not.toHaveProperty('CLAUDE_CODE_AUTO_COMPACT_WINDOW');
    expect(claudeEnv(target, models, { CLAUDE_CODE_MAX_CONTEXT_TOKENS: '16000' }).CLAUDE_CODE_MAX_CONTEXT_TOKENS).toBe('16000');
  });
});
