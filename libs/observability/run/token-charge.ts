import type { GatewayMetrics } from '../metrics/gateway-metrics.service.js';
import type { UsageEntry } from '#storage/usage-store.interface.js';
import type { UsageRecorder } from '../usage/usage-recorder.service.js';
import { anyTokens, type TokenCounts } from './token-usage.js';

/** One finished call's or run's tokens, for whom and where they count. */
export interface TokenCharge {
  owner: string | null;
  model: string;
  surface: string;
  tokens: TokenCounts;
  /** A run that failed; counted in the usage store's failed runs. */
  failed?: boolean;
  /** The run's or call's wall time. */
  durationMs?: number;
}

/**
 * Counts tokens into the token metrics and the usage store: the one place
 * the loop's runs and the pass-through calls both go through, so every
 * surface is counted the same way.
 */
export function countTokens(metrics: GatewayMetrics, usage: UsageRecorder | undefined, { owner, model, surface, tokens, failed, durationMs }: TokenCharge): void {
  if (anyTokens(tokens)) metrics.tokens.count(model, surface, owner ? `owner:${owner.slice(0, 16)}` : 'anonymous', tokens);
  // Every run counts in the usage store (its duration and whether it failed); only runs with tokens count as model requests.
  if (!usage) return;
  // Optional members assigned rather than spread in: the spreads made two objects per run.
  const entry: UsageEntry = {
    owner,
    model,
    surface,
    at: Date.now(),
    inputTokens: tokens.input,
    cachedInputTokens: tokens.cachedInput,
    outputTokens: tokens.output,
    reasoningTokens: tokens.reasoning,
  };
  if (failed) entry.failed = failed;
  if (durationMs !== undefined) entry.durationMs = durationMs;
  usage.record(entry);
}
