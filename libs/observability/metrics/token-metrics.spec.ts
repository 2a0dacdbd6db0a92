import { Counter, Histogram, Registry } from 'prom-client';
import type { TokenCounts } from '../run/token-usage.js';
import { draws } from '../testing/draws.js';
import { OTHER_MODEL, TokenMetrics, type TokenMetricsOptions } from './token-metrics.js';

/**
 * The counting as it was before the series were kept, on a second registry
 * with the same two metrics: a labels object per kind and per observation,
 * the model admitted the same way.
 */
function labelledCounting(options: TokenMetricsOptions) {
  const registry = new Registry();
  new TokenMetrics(registry, options);
  const total = registry.getSingleMetric('switchyard_tokens_total') as Counter<string>;
  const perRequest = registry.getSingleMetric('switchyard_tokens_per_request') as Histogram<string>;
  const models = new Set<string>();
  const modelLabel = (model: string) => {
    if (models.has(model)) return model;
    if (models.size >= options.maxModels) return OTHER_MODEL;
    models.add(model);
    return model;
  };
  const count = (model: string, surface: string, owner: string, t: TokenCounts) => {
    const label = modelLabel(model);
    for (const [kind, value] of Object.entries({ input: t.input, cached_input: t.cachedInput, output: t.output, reasoning: t.reasoning })) {
      const labels: Record<string, string> = { model: label, kind, surface };
      if (options.ownerLabel) labels.owner = owner;
      total.inc(labels, value);
    }
    perRequest.observe({ model: label, kind: 'input' }, t.input);
    perRequest.observe({ model: label, kind: 'output' }, t.output);
  };
  return { registry, count };
}

function runs(count: number, seed: number) {
  const draw = draws(seed);
  const pick = <T>(values: readonly T[]): T => values[draw(values.length)];
  // Zero counts, bucket bounds exactly, and past the last bound.
  const amounts = [0, 1, 16, 17, 300, 4_096, 70_000, 2_000_000];
  return Array.from({ length: count }, () => ({
    model: pick(['llama', 'qwen', 'mistral', 'gemma', OTHER_MODEL, 'phi']),
    surface: pick(['responses', 'messages', 'chat_completions', 'broker']),
    owner: pick(['anonymous', 'sha256:0123456789abcdef', 'sha256:fedcba9876543210', 'sha256:00000000aaaaaaaa', 'sha256:1111111122222222']),
    tokens: { input: pick(amounts), cachedInput: pick(amounts), output: pick(amounts), reasoning: pick(amounts) },
  }));
}

describe('TokenMetrics', () => {
  const cases: Array<[string, TokenMetricsOptions]> = [
    ['without the owner label, past the model bound', { ownerLabel: false, maxModels: 3 }],
    ['with the owner label, past the model bound and the kept owners', { ownerLabel: true, maxModels: 3, maxKeptOwners: 2 }],
    ['with the owner label, every owner kept', { ownerLabel: true, maxModels: 32 }],
  ];

  it.each(cases)('exposes what the labelled counting exposes, %s, before and after a reset', async (_name, options) => {
    const registry = new Registry();
    const tokens = new TokenMetrics(registry, options);
    const labelled = labelledCounting(options);
    for (const run of runs(500, 3)) {
      tokens.count(run.model, run.surface, run.owner, run.tokens);
      labelled.count(run.model, run.surface, run.owner, run.tokens);
    }
    const before = await labelled.registry.metrics();
    expect(await registry.metrics()).toBe(before);
    if (options.maxModels === 3) expect(before).toContain('model="(other)"');
    if (options.ownerLabel) expect(before).toContain('owner="sha256:1111111122222222"');
    else expect(before).not.toContain('owner=');

    registry.resetMetrics();
    labelled.registry.resetMetrics();
    for (const run of runs(120, 4)) {
      tokens.count(run.model, run.surface, run.owner, run.tokens);
      labelled.count(run.model, run.surface, run.owner, run.tokens);
    }
    expect(await registry.metrics()).toBe(await labelled.registry.metrics());
  });
});
