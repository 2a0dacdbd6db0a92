import { Counter, Histogram, type Registry } from 'prom-client';
import { byKind, TOKEN_KINDS, type TokenCounts } from '../run/token-usage.js';

/** Tokens per request: from a one-line answer to a long tool loop. */
const TOKEN_BUCKETS = [16, 64, 256, 1_024, 4_096, 16_384, 65_536, 262_144, 1_048_576];

export const OTHER_MODEL = '(other)';

export interface TokenMetricsOptions {
  /** Adds the `owner` label to the counter (`observability.metricsOwnerLabel`). */
  ownerLabel: boolean;
  /** Distinct model label values this process admits (`observability.metricsMaxModels`). */
  maxModels: number;
}

/**
 * Token series. The model is whatever a client sent, so its label admits a
 * bounded number of distinct values per process and counts the rest as
 * `(other)`; a run only reaches here with tokens the upstream reported, so
 * names the upstream refused never take a place.
 */
export class TokenMetrics {
  private readonly total: Counter<string>;
  private readonly perRequest: Histogram<string>;
  private readonly models = new Set<string>();

  constructor(
    registry: Registry,
    private readonly options: TokenMetricsOptions,
  ) {
    this.total = new Counter({
      name: 'switchyard_tokens_total',
      help: 'Tokens the upstream reported, summed over every round, by model, kind (input, cached_input, output, reasoning) and surface.',
      labelNames: options.ownerLabel ? ['model', 'kind', 'surface', 'owner'] : ['model', 'kind', 'surface'],
      registers: [registry],
    });
    this.perRequest = new Histogram({
      name: 'switchyard_tokens_per_request',
      help: 'Tokens per request (all rounds of a response), by model and kind (input, output).',
      labelNames: ['model', 'kind'],
      buckets: TOKEN_BUCKETS,
      registers: [registry],
    });
  }

  /** One run's tokens. `owner` is the log's shortened hash, or `anonymous`. */
  count(model: string, surface: string, owner: string, tokens: TokenCounts): void {
    const label = this.modelLabel(model);
    for (const [kind, value] of Object.entries(byKind(tokens)) as Array<[(typeof TOKEN_KINDS)[number], number]>) {
      const labels: Record<string, string> = { model: label, kind, surface };
      if (this.options.ownerLabel) labels.owner = owner;
      // Zero counts are added too, so each kind's series exists once a model has been used.
      this.total.inc(labels, value);
    }
    this.perRequest.observe({ model: label, kind: 'input' }, tokens.input);
    this.perRequest.observe({ model: label, kind: 'output' }, tokens.output);
  }

  private modelLabel(model: string): string {
    if (this.models.has(model)) return model;
    if (this.models.size >= this.options.maxModels) return OTHER_MODEL;
    this.models.add(model);
    return model;
  }
}
