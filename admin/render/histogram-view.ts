import { binBounds, countBelow, DEFAULT_BUCKETS, quantiles, SUPPORTED_QUANTILES, type Bins } from '../../shared/stats/histogram.js';
import type { MergedHistogram } from '../../shared/stats/merged.js';
import { list, obj } from '../../shared/config/access.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import { compileStringMatcher } from '../../shared/matchers.js';

/** What every renderer needs of a histogram: quantiles, buckets and bins for the interval and cumulative parts. */

export function histogramQuantiles(h: MergedHistogram): { interval: number[]; cumulative: number[] } {
  return { interval: quantiles(h.interval, SUPPORTED_QUANTILES), cumulative: quantiles(h.cumulative, SUPPORTED_QUANTILES) };
}

export interface Bucket {
  upperBound: number;
  interval: number;
  cumulative: number;
}

/**
 * stats_config.histogram_bucket_settings: the bucket bounds of the histograms each setting's
 * matcher matches (the first that matches), else Envoy's default ones.
 */
let bucketSettings: { match: (name: string) => boolean; buckets: number[] }[] = [];

export function configureHistogramBuckets(statsConfig: JsonObject | undefined): void {
  bucketSettings = list(statsConfig?.histogram_bucket_settings).map((b) => ({
    match: compileStringMatcher(obj(b.match)),
    buckets: [...new Set((b.buckets as number[] | undefined) ?? [])].sort((x, y) => x - y),
  }));
}

/** The bucket bounds of the histogram `name`. */
export function bucketsFor(name: string): readonly number[] {
  for (const b of bucketSettings) if (b.match(name)) return b.buckets;
  return DEFAULT_BUCKETS;
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
