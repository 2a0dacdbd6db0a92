import type { Counter, Histogram, LabelValues } from 'prom-client';

/*
 * prom-client (15.1.3, pinned) builds a string key from the labels object and
 * checks every label name on each `inc(labels, v)` and `observe(labels, v)`;
 * the children `labels(...)` returns do the same on every call (a counter's
 * child is `inc` bound to the labels object), so binding a child saves only
 * the caller's labels object. The series here keep that key, made once, and
 * on each call look up the record prom-client keeps under it (`hashMap[key]`)
 * and add to it as prom-client's own `inc`/`observe` would. A record that is
 * not there (the first call, or after `reset()` / `registry.resetMetrics()`,
 * which replace the map, or `remove()`) is made by the public call, so a
 * series stays right whatever happened to the metric between two calls.
 *
 * The first public call checks the record has the shape read here, under the
 * key computed here; if it does not (another prom-client), that series keeps
 * using the public calls. `bound-series.spec.ts` compares the exposition with
 * the public calls' for every metric kind used here.
 */

/** What prom-client keeps for a metric; not in its typings (`lib/metric.js`). */
interface MetricInternals<R> {
  hashMap: Record<string, R | undefined>;
  sortedLabelNames: readonly string[];
  enableExemplars?: boolean;
}

interface CounterRecord {
  value: number;
}

interface HistogramRecord {
  sum: number;
  count: number;
  bucketValues: Record<string, number>;
}

/** prom-client's key for a labels object (`hashObject` in `lib/util.js`). */
function seriesKey(metric: MetricInternals<unknown>, labels: LabelValues<string>): string | undefined {
  // With exemplars on, `inc` and `observe` take one options object: the public calls below would be wrong.
  if (metric.enableExemplars) throw new Error('bound series do not support metrics with exemplars');
  if (!Array.isArray(metric.sortedLabelNames)) return undefined;
  let key = '';
  for (const name of metric.sortedLabelNames) {
    const value = labels[name];
    if (value !== undefined) key += `${name}:${value},`;
  }
  return key;
}

/** One counter series, its label values fixed. */
export class CounterSeries {
  private readonly metric: MetricInternals<CounterRecord>;
  /** Unset once the check on the first record failed: public calls only. */
  private key: string | undefined;
  private checked = false;

  constructor(
    private readonly counter: Counter<string>,
    private readonly labels: LabelValues<string>,
  ) {
    this.metric = counter as unknown as MetricInternals<CounterRecord>;
    this.key = seriesKey(this.metric, labels);
  }

  inc(value = 1): void {
    const record = this.key === undefined ? undefined : this.metric.hashMap[this.key];
    // prom-client refuses negative and infinite values; the public call says so.
    if (record !== undefined && value >= 0 && value < Infinity) {
      record.value += value;
      return;
    }
    this.counter.inc(this.labels, value);
    if (!this.checked) this.check();
  }

  private check(): void {
    this.checked = true;
    const record = this.key === undefined ? undefined : this.metric.hashMap[this.key];
    if (typeof record?.value !== 'number') this.key = undefined;
  }
}

/** One histogram series, its label values fixed. */
export class HistogramSeries {
  private readonly metric: MetricInternals<HistogramRecord>;
  private key: string | undefined;
  private checked = false;
  /** The bucket bounds as prom-client orders them, and the property names it counts them under. */
  private readonly bounds: readonly number[];
  private readonly bucketNames: readonly string[];

  constructor(
    private readonly histogram: Histogram<string>,
    private readonly labels: LabelValues<string>,
  ) {
    this.metric = histogram as unknown as MetricInternals<HistogramRecord>;
    const bounds = (histogram as unknown as { upperBounds?: unknown }).upperBounds;
    this.bounds = Array.isArray(bounds) && bounds.every((b) => typeof b === 'number') ? bounds : [];
    this.bucketNames = this.bounds.map(String);
    this.key = this.bounds.length > 0 ? seriesKey(this.metric, labels) : undefined;
  }

  observe(value: number): void {
    const record = this.key === undefined ? undefined : this.metric.hashMap[this.key];
    if (record === undefined || !Number.isFinite(value)) {
      this.histogram.observe(this.labels, value);
      if (!this.checked) this.check();
      return;
    }
    record.sum += value;
    record.count += 1;
    // The first bound the value is within; a value above every bound counts in +Inf (the count) only.
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]) {
        record.bucketValues[this.bucketNames[i]] += 1;
        return;
      }
    }
  }

  private check(): void {
    this.checked = true;
    const record = this.key === undefined ? undefined : this.metric.hashMap[this.key];
    const buckets = record?.bucketValues;
    const shaped = typeof record?.sum === 'number' && typeof record.count === 'number' && !!buckets && this.bucketNames.every((name) => typeof buckets[name] === 'number');
    if (!shaped) this.key = undefined;
  }
}

/** A request counter and its duration histogram under the same label values. */
export class TimedSeries {
  private readonly count: CounterSeries;
  private readonly duration: HistogramSeries;

  constructor(counter: Counter<string>, histogram: Histogram<string>, labels: LabelValues<string>) {
    this.count = new CounterSeries(counter, labels);
    this.duration = new HistogramSeries(histogram, labels);
  }

  record(seconds: number): void {
    this.count.inc();
    this.duration.observe(seconds);
  }
}
