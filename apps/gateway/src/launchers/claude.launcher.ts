import { createRequire } from 'node:module';
import { fetchGatewayModels, gatewayTarget, runInheriting, type GatewayModel, type GatewayTarget } from './gateway-models.js';

/**
 * `switchyard claude [args…]`: the installed Claude Code pointed at a running
 * gateway's Messages API, on a model the gateway lists, with that model's
 * window as Claude Code's context window (it otherwise assumes a hosted
 * Claude model's 200k, and compacts too late) and its output bound as Claude Code's.
 */

/** The environment Claude Code reads; a variable the user set already wins. */
export function claudeEnv(target: GatewayTarget, models: readonly GatewayModel[], env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const name = env.ANTHROPIC_MODEL?.trim() || models[0].id;
  const model = models.find((m) => m.id === name);
  const set: Record<string, string> = {
    // Claude Code appends /v1/messages itself.
    ANTHROPIC_BASE_URL: target.url.replace(/\/v1$/, ''),
    ANTHROPIC_MODEL: name,
    ANTHROPIC_SMALL_FAST_MODEL: name,
    // Claude Code asks for a login without a key; a gateway without API keys takes any.
    ANTHROPIC_API_KEY: target.key ?? 'switchyard',
  };
  if (typeof model?.context_window === 'number' && model.context_window > 0) {
    // The model's window for a name that is not `claude-…`: what Claude Code sizes its context and compaction by (else 200k).
    set.CLAUDE_CODE_MAX_CONTEXT_TOKENS = String(model.context_window);
    // The compaction window, capped by the one above and floored at 100k by Claude Code; set, it keeps auto-compaction on for a model it does not know.
    set.CLAUDE_CODE_AUTO_COMPACT_WINDOW = String(model.context_window);
  }
  if (typeof model?.max_output_tokens === 'number' && model.max_output_tokens > 0) set.CLAUDE_CODE_MAX_OUTPUT_TOKENS = String(model.max_output_tokens);
  const out: NodeJS.ProcessEnv = { ...env };
  for (const [key, value] of Object.entries(set)) if (!env[key]?.trim()) out[key] = value;
  return out;
}

/** The installed `@anthropic-ai/claude-code` package's launcher, run with this Node; else `claude` from the PATH. */
function claudeCommand(): { command: string; args: string[] } {
  try {
    return { command: process.execPath, args: [createRequire(import.meta.url).resolve('@anthropic-ai/claude-code/cli-wrapper.cjs')] };
  } catch {
    return { command: 'claude', args: [] };
  }
}

/** Runs Claude Code with the user's arguments and stdio; resolves to its exit code. */
export async function launchClaude(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const target = gatewayTarget(env);
  const models = await fetchGatewayModels(target);
  const { command, args } = claudeCommand();
  return runInheriting(command, [...args, ...argv], claudeEnv(target, models, env), 'Claude Code');
}
