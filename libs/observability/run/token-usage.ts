import type { Usage } from '#tool-sdk/items.js';

/** A run's tokens by kind, as the metrics, the log line, the spans and the usage store count them. */
export interface TokenCounts {
  input: number;
  cachedInput: number;
  output: number;
  reasoning: number;
}

export const TOKEN_KINDS = ['input', 'cached_input', 'output', 'reasoning'] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

export function emptyTokens(): TokenCounts {
  return { input: 0, cachedInput: 0, output: 0, reasoning: 0 };
}

/** The counts of an upstream `Usage` (missing or malformed fields count zero). */
export function tokensOf(usage: Usage | null | undefined): TokenCounts {
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);
  return {
    input: n(usage?.input_tokens),
    cachedInput: n(usage?.input_tokens_details?.cached_tokens),
    output: n(usage?.output_tokens),
    reasoning: n(usage?.output_tokens_details?.reasoning_tokens),
  };
}

export function addTokens(into: TokenCounts, more: TokenCounts): TokenCounts {
  into.input += more.input;
  into.cachedInput += more.cachedInput;
  into.output += more.output;
  into.reasoning += more.reasoning;
  return into;
}

export const anyTokens = (t: TokenCounts | undefined): t is TokenCounts => !!t && t.input + t.output > 0;

/**
 * OpenTelemetry GenAI semantic-convention attributes for token counts
 * (`gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`, and the
 * cache-read and reasoning details).
 */
export function genAiUsageAttributes(t: TokenCounts): Record<string, number> {
  return {
    'gen_ai.usage.input_tokens': t.input,
    'gen_ai.usage.output_tokens': t.output,
    'gen_ai.usage.cache_read.input_tokens': t.cachedInput,
    'gen_ai.usage.reasoning.output_tokens': t.reasoning,
  };
}

/** Where a run came in, from its record: a bounded label. */
export function surfaceOf(method: string, path: string): string {
  if (method === 'RPC') return 'broker';
  if (method === 'BACKGROUND') return 'background';
  if (method === 'WS') return 'websocket';
  if (method === 'BATCH') return 'batch';
  if (path.startsWith('/v1/messages')) return 'messages';
  return 'responses';
}
