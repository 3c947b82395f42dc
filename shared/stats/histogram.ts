/**
 * A log-linear histogram with Envoy's (libcircllhist's) semantics: a positive value lands in a
 * bin of two significant decimal digits, [d·10^e, (d+1)·10^e) with 10 ≤ d ≤ 99; zero has a bin of
 * its own. Bins are a sparse map, so merging histograms from several processes is adding counts,
 * and "count below a bound" for any bucket bound falls out of the bins.
 *
 * Quantile q over N samples: the ⌈qN⌉-th sample (the first for q = 0); the k-th of the n samples
 * of bin [l, l+w) sits at l + k/(n+1)·w. Sum: Σ count·(l + w·l/(2l+w)). These reproduce Envoy's
 * figures exactly (a single 200 reports 205 at every quantile).
 */

/** Sparse bins: key → count. The key orders bins by value (see binKey). */
export type Bins = Map<number, number>;

const ZERO_KEY = 0;
const EXPONENT_BIAS = 128;

/** The bin of a value: a key that sorts like the value, with the bin's lower bound and width. */
export function binKey(value: number): number {
  if (!(value > 0)) return ZERO_KEY; // zero, and negatives clamp to zero (Envoy records unsigned values)
  let e = Math.floor(Math.log10(value)) - 1;
  let d = leadingDigits(value, e);
  // log10 rounding near powers of ten
  if (d >= 100) d = leadingDigits(value, ++e);
  else if (d < 10) d = leadingDigits(value, --e);
  return (e + EXPONENT_BIAS) * 100 + d;
}

/**
 * floor(value / 10^e), computed so that decimal values land where they read: 5.1 / 0.1 is
 * 50.99999999999999 in binary floating point, 5.1 * 10 is 51; the relative epsilon covers
 * products such as 0.29 * 100 = 28.999999999999996.
 */
function leadingDigits(value: number, e: number): number {
  const scaled = e >= 0 ? value / 10 ** e : value * 10 ** -e;
  return Math.floor(scaled * (1 + 1e-12));
}

export function binBounds(key: number): { lower: number; width: number } {
  if (key === ZERO_KEY) return { lower: 0, width: 0 };
  const e = Math.floor(key / 100) - EXPONENT_BIAS;
  const d = key % 100;
  // Division for negative exponents keeps 5.1 exact (51 / 10), where 51 * 0.1 would not be.
  return e >= 0 ? { lower: d * 10 ** e, width: 10 ** e } : { lower: d / 10 ** -e, width: 1 / 10 ** -e };
}

export function addBins(into: Bins, from: Bins | Iterable<[number, number]>): void {
  for (const [k, c] of from) into.set(k, (into.get(k) ?? 0) + c);
}

export function sampleCount(bins: Bins): number {
  let n = 0;
  for (const c of bins.values()) n += c;
  return n;
}

function sortedBins(bins: Bins): [number, number][] {
  return [...bins].filter(([, c]) => c > 0).sort((a, b) => a[0] - b[0]);
}

/** Quantiles (each in [0, 1]); NaN for every quantile of an empty histogram. */
export function quantiles(bins: Bins, qs: readonly number[]): number[] {
  const sorted = sortedBins(bins);
  const total = sorted.reduce((s, [, c]) => s + c, 0);
  if (total === 0) return qs.map(() => NaN);
  return qs.map((q) => {
    const rank = Math.max(1, Math.ceil(q * total)); // the rank-th sample, 1-based
    let before = 0;
    for (const [key, count] of sorted) {
      if (rank <= before + count) {
        const { lower, width } = binBounds(key);
        return lower + ((rank - before) / (count + 1)) * width;
      }
      before += count;
    }
    const { lower, width } = binBounds(sorted[sorted.length - 1]![0]);
    return lower + width;
  });
}

/** Samples in bins whose lower bound is at or below `bound` (Envoy's cumulative bucket count). */
export function countBelow(bins: Bins, bound: number): number {
  let n = 0;
  for (const [key, count] of bins) if (binBounds(key).lower <= bound) n += count;
  return n;
}

export function approximateSum(bins: Bins): number {
  let sum = 0;
  for (const [key, count] of sortedBins(bins)) {
    const { lower, width } = binBounds(key);
    if (width === 0) continue;
    sum += count * (lower + (width * lower) / (2 * lower + width));
  }
  return sum;
}

/** The quantiles Envoy prints, in order: P0 P25 P50 P75 P90 P95 P99 P99.5 P99.9 P100. */
export const SUPPORTED_QUANTILES = [0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 1] as const;

/** Envoy's default histogram bucket bounds (used unless stats_config.histogram_bucket_settings says otherwise). */
export const DEFAULT_BUCKETS = [0.5, 1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000, 600000, 1800000, 3600000] as const;
