import { binBounds, countBelow, DEFAULT_BUCKETS, quantiles, SUPPORTED_QUANTILES, type Bins } from '../../shared/stats/histogram.js';
import type { MergedHistogram } from '../../shared/stats/merged.js';

/** What every renderer needs of a histogram: quantiles, buckets and bins for the interval and cumulative parts. */

export function histogramQuantiles(h: MergedHistogram): { interval: number[]; cumulative: number[] } {
  return { interval: quantiles(h.interval, SUPPORTED_QUANTILES), cumulative: quantiles(h.cumulative, SUPPORTED_QUANTILES) };
}

export interface Bucket {
  upperBound: number;
  interval: number;
  cumulative: number;
}

/** Counts per bucket bound: each bucket counts everything at or below its bound, or (disjoint) only what is above the previous bound. */
export function histogramBuckets(h: MergedHistogram, disjoint: boolean, bounds: readonly number[] = DEFAULT_BUCKETS): Bucket[] {
  const out: Bucket[] = [];
  let prevInterval = 0;
  let prevCumulative = 0;
  for (const upperBound of bounds) {
    const interval = countBelow(h.interval, upperBound);
    const cumulative = countBelow(h.cumulative, upperBound);
    out.push(disjoint ? { upperBound, interval: interval - prevInterval, cumulative: cumulative - prevCumulative } : { upperBound, interval, cumulative });
    prevInterval = interval;
    prevCumulative = cumulative;
  }
  return out;
}

/** The internal bins in value order: lower bound, width, count (histogram_buckets=detailed). */
export function binList(bins: Bins): { lower: number; width: number; count: number }[] {
  return [...bins]
    .filter(([, c]) => c > 0)
    .sort((a, b) => a[0] - b[0])
    .map(([key, count]) => ({ ...binBounds(key), count }));
}
