import type { JsonObject } from '#tool-sdk/items.js';
import { arrayAt, booleanAt, invalid, isObject, numberAt, objectAt, present, stringAt, unsupported } from './request-fields.js';

/**
 * Anthropic's `context_management.edits`, run by the gateway as history
 * transformations before the model is called: the self-hosted model only
 * ever sees the edited conversation, exactly as Anthropic's own models do.
 *
 * Token figures (the `input_tokens` trigger, `clear_at_least`, the
 * `cleared_input_tokens` reported back) are estimates at four characters a
 * token: the edit must be decided before the model call, and a tokenizer
 * round trip per request would cost more than the precision is worth here.
 */

export type ContextEdit =
  | { type: 'clear_thinking_20251015'; keepTurns: number | 'all' }
  | {
      type: 'clear_tool_uses_20250919';
      trigger: { type: 'input_tokens' | 'tool_uses'; value: number };
      keep: number;
      clearAtLeast: number;
      excludeTools: ReadonlySet<string>;
      /** `true`: every cleared use loses its input too; a list: only those tools'. */
      clearToolInputs: boolean | ReadonlySet<string>;
    };

export type AppliedEdit =
  | { type: 'clear_thinking_20251015'; cleared_thinking_turns: number; cleared_input_tokens: number }
  | { type: 'clear_tool_uses_20250919'; cleared_tool_uses: number; cleared_input_tokens: number };

export interface EditedHistory {
  /** The edited list; anything that is not a list is handed back as it came, for the mapper to refuse. */
  messages: unknown;
  appliedEdits: AppliedEdit[];
}

/** Anthropic's documented defaults for `clear_tool_uses_20250919`. */
const DEFAULT_TRIGGER_TOKENS = 100_000;
const DEFAULT_KEEP_TOOL_USES = 3;
/** Anthropic's default for `clear_thinking_20251015`: the last assistant turn keeps its thinking. */
const DEFAULT_KEEP_THINKING_TURNS = 1;
const CHARS_PER_TOKEN = 4;

/** What a cleared tool result says in its place, so the model knows something was there. */
export const CLEARED_TOOL_RESULT = '[This tool result was cleared to save context. Call the tool again if you need it.]';

export function estimateTokens(value: unknown): number {
  const text = typeof value === 'string' ? value : JSON.stringify(value ?? '');
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

/** Validates `context_management`; every refusal names its field. */
export function parseContextManagement(value: unknown): ContextEdit[] {
  if (!present(value)) return [];
  const config = objectAt(value, 'context_management');
  for (const key of Object.keys(config)) if (key !== 'edits') invalid(`context_management.${key}`, 'Extra inputs are not permitted.');
  if (!present(config.edits)) return [];
  return arrayAt(config.edits, 'context_management.edits').map((raw, i) => parseEdit(raw, `context_management.edits.${i}`));
}

function parseEdit(raw: unknown, path: string): ContextEdit {
  const edit = objectAt(raw, path);
  const type = stringAt(edit.type, `${path}.type`);
  switch (type) {
    case 'clear_thinking_20251015':
      allowOnly(edit, path, ['type', 'keep']);
      return { type, keepTurns: thinkingKeep(edit.keep, `${path}.keep`) };
    case 'clear_tool_uses_20250919':
      allowOnly(edit, path, ['type', 'trigger', 'keep', 'clear_at_least', 'exclude_tools', 'clear_tool_inputs']);
      return {
        type,
        trigger: trigger(edit.trigger, `${path}.trigger`),
        keep: present(edit.keep) ? counted(edit.keep, `${path}.keep`, ['tool_uses'], 0).value : DEFAULT_KEEP_TOOL_USES,
        clearAtLeast: present(edit.clear_at_least) ? counted(edit.clear_at_least, `${path}.clear_at_least`, ['input_tokens'], 0).value : 0,
        excludeTools: new Set(present(edit.exclude_tools) ? names(edit.exclude_tools, `${path}.exclude_tools`) : []),
        clearToolInputs: clearInputs(edit.clear_tool_inputs, `${path}.clear_tool_inputs`),
      };
    case 'compact_20260112':
      // Compaction asks the model for a summary mid-request; this edit set is
      // pure history transformations, so it is refused rather than skipped.
      unsupported(
        `${path}.type`,
        'server-side compaction is not run for the Messages API; send the edits clear_thinking_20251015 and clear_tool_uses_20250919, or compact on the client.',
      );
    // falls through (unsupported throws)
    default:
      invalid(`${path}.type`, 'must be "clear_thinking_20251015" or "clear_tool_uses_20250919".');
  }
}

function allowOnly(edit: JsonObject, path: string, keys: string[]): void {
  for (const key of Object.keys(edit)) if (!keys.includes(key)) invalid(`${path}.${key}`, 'Extra inputs are not permitted.');
}

function thinkingKeep(value: unknown, path: string): number | 'all' {
  if (!present(value)) return DEFAULT_KEEP_THINKING_TURNS;
  if (value === 'all') return 'all';
  const keep = objectAt(value, path);
  if (keep.type === 'all') return 'all';
  return counted(keep, path, ['thinking_turns'], 1).value;
}

function trigger(value: unknown, path: string): { type: 'input_tokens' | 'tool_uses'; value: number } {
  if (!present(value)) return { type: 'input_tokens', value: DEFAULT_TRIGGER_TOKENS };
  return counted(value, path, ['input_tokens', 'tool_uses'], 1) as { type: 'input_tokens' | 'tool_uses'; value: number };
}

function counted(value: unknown, path: string, types: string[], min: number): { type: string; value: number } {
  const o = objectAt(value, path);
  if (typeof o.type !== 'string' || !types.includes(o.type)) invalid(`${path}.type`, `must be ${types.map((t) => `"${t}"`).join(' or ')}.`);
  return { type: o.type, value: numberAt(o.value, `${path}.value`, min, Number.MAX_SAFE_INTEGER, { integer: true }) };
}

function names(value: unknown, path: string): string[] {
  return arrayAt(value, path).map((name, i) => stringAt(name, `${path}.${i}`));
}

function clearInputs(value: unknown, path: string): boolean | ReadonlySet<string> {
  if (!present(value)) return false;
  if (Array.isArray(value)) return new Set(names(value, path));
  return booleanAt(value, path);
}

/**
 * Runs the edits in the order the client listed them (Anthropic's order:
 * thinking first when both are present). The messages are copied where
 * touched; the client's body is never mutated. Blocks are only read as far
 * as the edits need: full validation happens when the history is mapped.
 */
export function applyContextEdits(messages: unknown, edits: readonly ContextEdit[]): EditedHistory {
  // Most requests carry no edits: they must not pay for a walk of their history.
  if (!Array.isArray(messages) || edits.length === 0) return { messages, appliedEdits: [] };
  let current: unknown[] = messages;
  const appliedEdits: AppliedEdit[] = [];
  for (const edit of edits) {
    const result = edit.type === 'clear_thinking_20251015' ? clearThinking(current, edit.keepTurns) : clearToolUses(current, edit);
    if (!result) continue;
    current = result.messages;
    appliedEdits.push(result.applied);
  }
  return { messages: current, appliedEdits };
}

type EditResult = { messages: unknown[]; applied: AppliedEdit } | null;

function blocksOf(message: unknown): unknown[] | null {
  return isObject(message) && Array.isArray(message.content) ? message.content : null;
}

function isThinking(block: unknown): boolean {
  return isObject(block) && (block.type === 'thinking' || block.type === 'redacted_thinking');
}

function clearThinking(messages: unknown[], keepTurns: number | 'all'): EditResult {
  if (keepTurns === 'all') return null;
  const turns: number[] = [];
  messages.forEach((m, i) => {
    if (isObject(m) && m.role === 'assistant' && blocksOf(m)?.some(isThinking)) turns.push(i);
  });
  const cleared = new Set(turns.slice(0, Math.max(0, turns.length - keepTurns)));
  if (cleared.size === 0) return null;
  let tokens = 0;
  const edited = messages.map((m, i) => {
    if (!cleared.has(i)) return m;
    const message = m as JsonObject;
    const blocks = message.content as unknown[];
    tokens += estimateTokens(blocks.filter(isThinking));
    return { ...message, content: blocks.filter((b) => !isThinking(b)) };
  });
  return { messages: edited, applied: { type: 'clear_thinking_20251015', cleared_thinking_turns: cleared.size, cleared_input_tokens: tokens } };
}

interface ToolUseSite {
  id: string;
  name: string;
  message: number;
  block: number;
}

function clearToolUses(messages: unknown[], edit: Extract<ContextEdit, { type: 'clear_tool_uses_20250919' }>): EditResult {
  const uses: ToolUseSite[] = [];
  const results = new Map<string, { message: number; block: number }>();
  messages.forEach((m, i) => {
    const blocks = blocksOf(m);
    if (!blocks || !isObject(m)) return;
    blocks.forEach((b, j) => {
      if (!isObject(b)) return;
      if (m.role === 'assistant' && b.type === 'tool_use' && typeof b.id === 'string') uses.push({ id: b.id, name: String(b.name), message: i, block: j });
      if (m.role === 'user' && b.type === 'tool_result' && typeof b.tool_use_id === 'string') results.set(b.tool_use_id, { message: i, block: j });
    });
  });
  const triggered = edit.trigger.type === 'tool_uses' ? uses.length >= edit.trigger.value : estimateTokens(messages) >= edit.trigger.value;
  if (!triggered) return null;
  // The newest `keep` uses stay whole; excluded tools are never candidates.
  const candidates = uses.slice(0, Math.max(0, uses.length - edit.keep)).filter((u) => !edit.excludeTools.has(u.name));
  const clearInput = (name: string): boolean => (edit.clearToolInputs instanceof Set ? edit.clearToolInputs.has(name) : edit.clearToolInputs === true);

  /** Replacement blocks by message index, then block index. */
  const replaced = new Map<number, Map<number, unknown>>();
  const replace = (message: number, block: number, value: unknown): void => {
    let blocks = replaced.get(message);
    if (!blocks) replaced.set(message, (blocks = new Map()));
    blocks.set(block, value);
  };
  let tokens = 0;
  let cleared = 0;
  for (const use of candidates) {
    const site = results.get(use.id);
    const result = site ? (blocksOf(messages[site.message])![site.block] as JsonObject) : undefined;
    const resultCleared = result !== undefined && result.content !== CLEARED_TOOL_RESULT;
    const useBlock = blocksOf(messages[use.message])![use.block] as JsonObject;
    const inputCleared = clearInput(use.name) && isObject(useBlock.input) && Object.keys(useBlock.input).length > 0;
    if (!resultCleared && !inputCleared) continue;
    cleared++;
    if (resultCleared && site) {
      tokens += Math.max(0, estimateTokens(result!.content) - estimateTokens(CLEARED_TOOL_RESULT));
      replace(site.message, site.block, { ...result, content: CLEARED_TOOL_RESULT });
    }
    if (inputCleared) {
      tokens += estimateTokens(useBlock.input);
      replace(use.message, use.block, { ...useBlock, input: {} });
    }
  }
  // Anthropic applies nothing when the edit cannot free its minimum: a
  // cleared prefix invalidates the upstream's prefix cache for little gain.
  if (cleared === 0 || tokens < edit.clearAtLeast) return null;
  const edited = messages.map((m, i) => {
    const swaps = replaced.get(i);
    if (!swaps) return m;
    return { ...(m as JsonObject), content: blocksOf(m)!.map((b, j) => (swaps.has(j) ? swaps.get(j) : b)) };
  });
  return { messages: edited, applied: { type: 'clear_tool_uses_20250919', cleared_tool_uses: cleared, cleared_input_tokens: tokens } };
}
