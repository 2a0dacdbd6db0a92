/** Small statistics helpers: nearest-rank percentiles and least-squares slopes. */

export interface Distribution {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

export function describe(values: readonly number[]): Distribution {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((s, v) => s + v, 0);
  return {
    count: sorted.length,
    mean: sorted.length ? sum / sorted.length : NaN,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1] : NaN,
  };
}

export function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

export interface LinearFit {
  /** Units of y per unit of x. */
  slope: number;
  intercept: number;
  /** Standard deviation of the residuals: the noise the slope has to rise above. */
  residualStd: number;
  /** Standard error of the slope. */
  slopeStdErr: number;
}

export function linearFit(xs: readonly number[], ys: readonly number[]): LinearFit {
  const n = xs.length;
  if (n < 2) return { slope: 0, intercept: ys[0] ?? 0, residualStd: 0, slopeStdErr: Infinity };
  const mx = xs.reduce((s, v) => s + v, 0) / n;
  const my = ys.reduce((s, v) => s + v, 0) / n;
  let sxx = 0;
  let sxy = 0;
  for (let i = 0; i < n; i++) {
    sxx += (xs[i] - mx) ** 2;
    sxy += (xs[i] - mx) * (ys[i] - my);
  }
  const slope = sxx === 0 ? 0 : sxy / sxx;
  const intercept = my - slope * mx;
  let sse = 0;
  for (let i = 0; i < n; i++) sse += (ys[i] - (intercept + slope * xs[i])) ** 2;
  const residualStd = n > 2 ? Math.sqrt(sse / (n - 2)) : 0;
  const slopeStdErr = n > 2 && sxx > 0 ? residualStd / Math.sqrt(sxx) : Infinity;
  return { slope, intercept, residualStd, slopeStdErr };
}

export const round = (value: number, digits = 2): number => (Number.isFinite(value) ? Number(value.toFixed(digits)) : value);

/**
 * The median over rounds of each round's own ratio, `numerators[i] / denominators[i]`: the two
 * sides of one round were measured next to each other, so what drifts between rounds (other
 * load on the host, the JIT's and the GC's state, the clock) divides out, where the ratio of
 * the two sides' medians carries each side's spread. Index `i` is round `i` on both sides; a
 * round whose either side is not a positive finite number is left out (NaN when none is left).
 */
export function pairedRatio(numerators: readonly number[], denominators: readonly number[]): number {
  if (numerators.length !== denominators.length) {
    throw new Error(`paired ratio: ${numerators.length} rounds against ${denominators.length}; each round must measure both sides`);
  }
  const ratios: number[] = [];
  for (let i = 0; i < numerators.length; i++) {
    const n = numerators[i];
    const d = denominators[i];
    if (Number.isFinite(n) && Number.isFinite(d) && n > 0 && d > 0) ratios.push(n / d);
  }
  return median(ratios);
}
