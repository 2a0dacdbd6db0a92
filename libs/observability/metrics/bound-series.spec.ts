import { jest } from '@jest/globals';
import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { draws } from '../testing/draws.js';
import { CounterSeries, HistogramSeries, TimedSeries } from './bound-series.js';

/** The same three metrics on a registry of their own: bounds with and without a fraction, labelled and not. */
function metrics() {
  const registry = new Registry();
  const requests = new Counter({ name: 't_requests_total', help: 'Requests.', labelNames: ['method', 'status'], registers: [registry] });
  const duration = new Histogram({ name: 't_duration_seconds', help: 'Duration.', labelNames: ['status', 'method'], buckets: [0.005, 0.5, 1, 2.5, 10], registers: [registry] });
  const sizes = new Histogram({ name: 't_sizes', help: 'Sizes.', buckets: [1, 16, 256], registers: [registry] });
  return { registry, requests, duration, sizes };
}

const METHODS = ['GET', 'POST', 'DELETE'];
const STATUSES = ['200', '404', '500', 'timeout'];
// Bounds themselves (a value on a bound counts in it), zero, fractions, past every bound.
const VALUES = [0, 0.005, 0.0051, 0.3, 1, 2.5, 7, 10, 11, 300, 1e-9];

describe('bound series', () => {
  it('expose what the labelled calls expose, across label combinations, resets, a reset metric and a removed series', async () => {
    const bound = metrics();
    const plain = metrics();
    // One bound series per combination, made once and kept through everything below, as the gateway keeps them.
    const series = new Map<string, { requests: CounterSeries; duration: HistogramSeries; timed: TimedSeries }>();
    for (const method of METHODS)
      for (const status of STATUSES) {
        const labels = { method, status };
        series.set(`${method} ${status}`, {
          requests: new CounterSeries(bound.requests, labels),
          duration: new HistogramSeries(bound.duration, labels),
          timed: new TimedSeries(bound.requests, bound.duration, labels),
        });
      }
    const sizes = new HistogramSeries(bound.sizes, {});
    const draw = draws(7);
    const checkpoints: string[] = [];
    for (let step = 1; step <= 3_000; step++) {
      const method = METHODS[draw(METHODS.length)];
      const status = STATUSES[draw(STATUSES.length)];
      const value = VALUES[draw(VALUES.length)];
      const kept = series.get(`${method} ${status}`)!;
      switch (draw(4)) {
        case 0:
          kept.requests.inc(value);
          plain.requests.inc({ method, status }, value);
          break;
        case 1:
          kept.duration.observe(value);
          plain.duration.observe({ method, status }, value);
          break;
        case 2:
          kept.timed.record(value);
          plain.requests.inc({ method, status });
          plain.duration.observe({ method, status }, value);
          break;
        default:
          sizes.observe(value * 40);
          plain.sizes.observe(value * 40);
      }
      if (step === 1_000) {
        for (const m of [bound, plain]) m.registry.resetMetrics();
      } else if (step === 1_500) {
        for (const m of [bound, plain]) m.duration.reset();
      } else if (step === 2_000) {
        for (const m of [bound, plain]) m.requests.remove({ method: 'POST', status: '200' });
      }
      if (step % 250 === 0) {
        const text = await plain.registry.metrics();
        expect(await bound.registry.metrics()).toBe(text);
        checkpoints.push(text);
      }
    }
    // The sequence did reach every series, with counts and sums worth comparing.
    const last = checkpoints.at(-1)!;
    for (const method of METHODS) for (const status of STATUSES) expect(last).toContain(`t_requests_total{method="${method}",status="${status}"}`);
    expect(last).toMatch(/t_duration_seconds_bucket\{le="\+Inf",method="GET",status="404"\} [1-9]\d+/);
    expect(last).toMatch(/t_sizes_sum [1-9]/);
  });

  it('merge across workers as the labelled calls do (the primary aggregates each worker’s JSON)', async () => {
    const workers = [metrics(), metrics()];
    const plainWorkers = [metrics(), metrics()];
    const draw = draws(11);
    const kept = workers.map((w) => ({
      requests: new CounterSeries(w.requests, { method: 'GET', status: '200' }),
      duration: new HistogramSeries(w.duration, { method: 'GET', status: '200' }),
    }));
    for (let i = 0; i < 200; i++) {
      const w = draw(2);
      const value = VALUES[draw(VALUES.length)];
      kept[w].requests.inc();
      kept[w].duration.observe(value);
      plainWorkers[w].requests.inc({ method: 'GET', status: '200' });
      plainWorkers[w].duration.observe({ method: 'GET', status: '200' }, value);
    }
    const merged = async (ws: ReturnType<typeof metrics>[]) => AggregatorRegistry.aggregate((await Promise.all(ws.map((w) => w.registry.getMetricsAsJSON()))) as never).metrics();
    const text = await merged(plainWorkers);
    expect(text).toContain('t_requests_total{method="GET",status="200"} 200');
    expect(await merged(workers)).toBe(text);
  });

  it('call prom-client only to make a series: once at first, once again after a reset', () => {
    const { registry, requests, duration } = metrics();
    const inc = jest.spyOn(requests, 'inc');
    const observe = jest.spyOn(duration, 'observe');
    const count = new CounterSeries(requests, { method: 'GET', status: '200' });
    const time = new HistogramSeries(duration, { method: 'GET', status: '200' });
    for (let i = 0; i < 10; i++) {
      count.inc();
      time.observe(0.1);
    }
    expect(inc).toHaveBeenCalledTimes(1);
    expect(observe).toHaveBeenCalledTimes(1);
    registry.resetMetrics();
    for (let i = 0; i < 10; i++) {
      count.inc();
      time.observe(0.1);
    }
    expect(inc).toHaveBeenCalledTimes(2);
    expect(observe).toHaveBeenCalledTimes(2);
  });

  it('refuse what prom-client refuses, also once the series exists', () => {
    const { requests, duration } = metrics();
    const count = new CounterSeries(requests, { method: 'GET', status: '200' });
    const time = new HistogramSeries(duration, { method: 'GET', status: '200' });
    count.inc();
    time.observe(1);
    expect(() => count.inc(-1)).toThrow('It is not possible to decrease a counter');
    expect(() => count.inc(Infinity)).toThrow('Value is not a valid number');
    expect(() => time.observe(NaN)).toThrow('Value is not a valid number');
    expect(() => new CounterSeries(requests, { method: 'GET', code: '200' } as never).inc()).toThrow('Added label "code" is not included');
    // With exemplars on, prom-client's calls take one options object: refused at once rather than counted wrong.
    const withExemplars = new Counter({ name: 't_exemplars_total', help: 'With exemplars.', labelNames: ['method'], enableExemplars: true, registers: [] });
    expect(() => new CounterSeries(withExemplars, { method: 'GET' })).toThrow('exemplars');
  });
});
