import { Counter, Histogram, type LabelValues, type Registry } from 'prom-client';
import type { TokenCounts, TokenKind } from '../run/token-usage.js';
import { CounterSeries, HistogramSeries } from './bound-series.js';
import { SeriesCache } from './series-cache.js';

/** Tokens per request: from a one-line answer to a long tool loop. */
const TOKEN_BUCKETS = [16, 64, 256, 1_024, 4_096, 16_384, 65_536, 262_144, 1_048_576];

export const OTHER_MODEL = '(other)';

export interface TokenMetricsOptions {
  /** Adds the `owner` label to the counter (`observability.metricsOwnerLabel`). */
  ownerLabel: boolean;
  /** Distinct model label values this process admits (`observability.metricsMaxModels`). */
  maxModels: number;
  /** Owners whose counter series are kept ready, with the owner label on (default 256). */
  maxKeptOwners?: number;
}

/**
 * The counter's series for the four kinds under one model, surface and owner,
 * added in `TOKEN_KINDS` order: the exposition lists series in the order they
 * first counted.
 */
class KindSeries {
  private readonly input: CounterSeries;
  private readonly cachedInput: CounterSeries;
  private readonly output: CounterSeries;
  private readonly reasoning: CounterSeries;

  constructor(total: Counter<string>, labels: (kind: TokenKind) => LabelValues<string>) {
    this.input = new CounterSeries(total, labels('input'));
    this.cachedInput = new CounterSeries(total, labels('cached_input'));
    this.output = new CounterSeries(total, labels('output'));
    this.reasoning = new CounterSeries(total, labels('reasoning'));
  }

  count(tokens: TokenCounts): void {
    // Zero counts are added too, so each kind's series exists once a model has been used.
    this.input.inc(tokens.input);
    this.cachedInput.inc(tokens.cachedInput);
    this.output.inc(tokens.output);
    this.reasoning.inc(tokens.reasoning);
  }
}

/** The per-request histogram's two kinds, for one model label. */
interface PerRequestSeries {
  input: HistogramSeries;
  output: HistogramSeries;
}

/** Surfaces are the code's own names (`surfaceOf`, the pass-through routes'): this only caps a surprise. */
const KEPT_SURFACES = 64;

/**
 * Token series. The model is whatever a client sent, so its label admits a
 * bounded number of distinct values per process and counts the rest as
 * `(other)`; a run only reaches here with tokens the upstream reported, so
 * names the upstream refused never take a place. The series each label
 * combination counts into are kept ready; with the owner label on, those of
 * the first `maxKeptOwners` owners only (later owners' runs count through
 * series made for the run).
 */
export class TokenMetrics {
  private readonly total: Counter<string>;
  private readonly perRequest: Histogram<string>;
  private readonly models = new Set<string>();
  /** Counter series by owner (one '' without the owner label), model label and surface. */
  private readonly counters: SeriesCache<string, SeriesCache<string, SeriesCache<string, KindSeries>>>;
  private readonly perRequestSeries: SeriesCache<string, PerRequestSeries>;

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
    // The admitted models and `(other)`.
    const modelLabels = options.maxModels + 1;
    this.counters = new SeriesCache(
      options.ownerLabel ? (options.maxKeptOwners ?? 256) : 1,
      (owner: string) =>
        new SeriesCache(
          modelLabels,
          (model: string) =>
            new SeriesCache(
              KEPT_SURFACES,
              (surface: string) => new KindSeries(this.total, (kind) => (options.ownerLabel ? { model, kind, surface, owner } : { model, kind, surface })),
            ),
        ),
    );
    this.perRequestSeries = new SeriesCache(modelLabels, (model: string) => ({
      input: new HistogramSeries(this.perRequest, { model, kind: 'input' }),
      output: new HistogramSeries(this.perRequest, { model, kind: 'output' }),
    }));
  }

  /** One run's tokens. `owner` is the log's shortened hash, or `anonymous`. */
  count(model: string, surface: string, owner: string, tokens: TokenCounts): void {
    const label = this.modelLabel(model);
    this.counters
      .of(this.options.ownerLabel ? owner : '')
      .of(label)
      .of(surface)
      .count(tokens);
    const perRequest = this.perRequestSeries.of(label);
    perRequest.input.observe(tokens.input);
    perRequest.output.observe(tokens.output);
  }

  private modelLabel(model: string): string {
    if (this.models.has(model)) return model;
    if (this.models.size >= this.options.maxModels) return OTHER_MODEL;
    this.models.add(model);
    return model;
  }
}
