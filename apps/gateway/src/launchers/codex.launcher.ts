import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetchGatewayModels, gatewayTarget, GATEWAY_KEY_ENV, runInheriting, type GatewayModel, type GatewayTarget } from './gateway-models.js';

export { LauncherError } from './gateway-models.js';

/**
 * `switchyard codex [args…]`: the installed Codex CLI pointed at a running
 * gateway, with the gateway's model catalog as Codex's own. Without a catalog
 * entry Codex falls back to generic model metadata (a warning, no context
 * window, no apply_patch tool); with one it sizes its context by the window
 * and offers apply_patch as it does for OpenAI's models.
 */

// Codex requires base instructions for a catalog model; these are short on purpose: the model's own chat template does the rest.
const BASE_INSTRUCTIONS = [
  'You are a coding agent running in the user’s terminal, working in their current directory.',
  'Use the shell tool to inspect files and run commands, and the apply_patch tool to edit files.',
  'Keep going until the task is done, then answer briefly with what you changed and why.',
].join('\n');

// The efforts Codex's catalog accepts; a gateway model's others are left out rather than failing Codex's parse.
const CODEX_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'];

function reasoningLevels(reasoning: GatewayModel['reasoning']): Array<{ effort: string; description: string }> {
  const efforts = Array.isArray(reasoning) ? reasoning.filter((e) => CODEX_EFFORTS.includes(e)) : reasoning ? ['low', 'medium', 'high'] : [];
  return efforts.map((effort) => ({ effort, description: `${effort} reasoning effort` }));
}

/** One entry of Codex's `model_catalog_json` (the shape Codex 0.171 parses; fields it requires are all set). */
export function codexCatalogEntry(model: GatewayModel, priority: number): Record<string, unknown> {
  const modalities = (model.input_modalities ?? ['text']).filter((m) => m === 'text' || m === 'image');
  const levels = reasoningLevels(model.reasoning);
  const window = typeof model.context_window === 'number' && model.context_window > 0 ? model.context_window : undefined;
  return {
    slug: model.id,
    display_name: model.id,
    description: `${model.id} through Switchyard`,
    ...(window !== undefined ? { context_window: window } : {}),
    input_modalities: modalities.includes('text') ? modalities : ['text', ...modalities],
    apply_patch_tool_type: 'freeform',
    shell_type: 'shell_command',
    supported_reasoning_levels: levels,
    ...(levels.length > 0 ? { default_reasoning_level: levels.some((l) => l.effort === 'medium') ? 'medium' : levels[0].effort, supports_reasoning_summaries: true } : {}),
    visibility: 'list',
    supported_in_api: true,
    priority,
    support_verbosity: false,
    truncation_policy: { mode: 'tokens', limit: 10_000 },
    experimental_supported_tools: [],
    base_instructions: BASE_INSTRUCTIONS,
  };
}

const tomlString = (value: string): string => JSON.stringify(value);

export function codexConfigToml(target: GatewayTarget, model: string, catalogPath: string): string {
  return [
    'model_provider = "switchyard"',
    `model = ${tomlString(model)}`,
    `model_catalog_json = ${tomlString(catalogPath)}`,
    // The isolated home has nothing to update and no account to report to.
    'check_for_update_on_startup = false',
    '[model_providers.switchyard]',
    'name = "Switchyard"',
    `base_url = ${tomlString(target.url)}`,
    'wire_api = "responses"',
    ...(target.key ? [`env_key = ${tomlString(GATEWAY_KEY_ENV)}`] : []),
    '[analytics]',
    'enabled = false',
    '[feedback]',
    'enabled = false',
    '',
  ].join('\n');
}

/** A throwaway `CODEX_HOME` holding the config and the catalog. */
export function writeCodexHome(target: GatewayTarget, models: readonly GatewayModel[]): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-codex-home-'));
  const catalogPath = join(dir, 'switchyard-models.json');
  writeFileSync(catalogPath, JSON.stringify({ models: models.map((m, i) => codexCatalogEntry(m, i + 1)) }, null, 2));
  writeFileSync(join(dir, 'config.toml'), codexConfigToml(target, models[0].id, catalogPath));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The installed `@openai/codex` package's launcher, run with this Node; else `codex` from the PATH. */
function codexCommand(): { command: string; args: string[] } {
  try {
    return { command: process.execPath, args: [createRequire(import.meta.url).resolve('@openai/codex/bin/codex.js')] };
  } catch {
    return { command: 'codex', args: [] };
  }
}

/** Runs Codex with the user's arguments and stdio; resolves to its exit code. */
export async function launchCodex(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const target = gatewayTarget(env);
  const models = await fetchGatewayModels(target);
  const home = writeCodexHome(target, models);
  const { command, args } = codexCommand();
  try {
    return await runInheriting(command, [...args, ...argv], { ...env, CODEX_HOME: home.dir }, 'Codex');
  } finally {
    home.remove();
  }
}
