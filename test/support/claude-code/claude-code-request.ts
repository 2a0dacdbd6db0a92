import { readFileSync } from 'node:fs';

/**
 * Claude Code's own requests, recorded from a real run of Claude Code
 * 2.1.100 (`claude -p`, effort level medium, default settings otherwise)
 * through a local proxy in front of this gateway: `claude-code-2.1.100.json`.
 * Long prompt texts and tool descriptions are cut short there and ids
 * anonymised; every field, block type, `cache_control` placement and header
 * is as Claude Code sent it. Tests change only the last user text (to carry
 * simulator directives) and never anything else.
 */
interface Recording {
  source: string;
  headers: Record<string, string>;
  /** The first turn: system blocks, 22 tools, adaptive thinking, effort, context_management, stream. */
  firstRequest: Record<string, any>;
  /** The turn after a `Read` call: thinking (signed by the recording gateway), tool_use, tool_result. */
  secondRequest: Record<string, any>;
}

const recording = JSON.parse(readFileSync(new URL('./claude-code-2.1.100.json', import.meta.url), 'utf8')) as Recording;

export const CLAUDE_CODE_HEADERS: Readonly<Record<string, string>> = recording.headers;

/** What the SDK's `betas` option turns into the `anthropic-beta` header. */
export const CLAUDE_CODE_BETAS: string[] = recording.headers['anthropic-beta'].split(',');

const copy = <T>(value: T): T => structuredClone(value);

/** Claude Code's first request, with `prompt` as the user's text (the CLI's reminders before it stay). */
export function claudeCodeFirstRequest(prompt: string): Record<string, any> {
  const body = copy(recording.firstRequest);
  const blocks = body.messages[0].content as Array<{ type: string; text: string }>;
  blocks[blocks.length - 1].text = prompt;
  body.model = 'switchyard-sim';
  return body;
}

/** Claude Code's second request as recorded: the assistant's thinking and tool_use, then the tool_result. */
export function claudeCodeSecondRequest(): Record<string, any> {
  const body = copy(recording.secondRequest);
  body.model = 'switchyard-sim';
  return body;
}

export function claudeCodeTools(): Array<Record<string, any>> {
  return copy(recording.firstRequest.tools);
}
