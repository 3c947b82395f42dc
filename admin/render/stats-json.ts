import { SUPPORTED_QUANTILES } from '../../shared/stats/histogram.js';
import type { MergedStats } from '../../shared/stats/merged.js';
import type { HistogramMode, Selection } from '../stats-view.js';
import { binList, bucketsFor, histogramBuckets, histogramQuantiles } from './histogram-view.js';

/** /stats?format=json: Envoy's compact layout, `{"stats":[…]}`, NaN as null, as chunks of about 64 KiB. */

const CHUNK = 64 * 1024;
const num = (v: number) => (Number.isFinite(v) ? v : null);

function histogramsElement(merged: MergedStats, names: string[], mode: HistogramMode): unknown {
  switch (mode) {
    case 'summary':
      return {
        supported_quantiles: SUPPORTED_QUANTILES.map((q) => q * 100),
        computed_quantiles: names.map((name) => {
          const { interval, cumulative } = histogramQuantiles(merged.histograms.get(name)!);
          return { name, values: SUPPORTED_QUANTILES.map((_, i) => ({ cumulative: num(cumulative[i]!), interval: num(interval[i]!) })) };
        }),
      };
    case 'cumulative':
    case 'disjoint':
      return names.map((name) => ({
        name,
        buckets: histogramBuckets(merged.histograms.get(name)!, mode === 'disjoint', bucketsFor(name)).map((b) => ({ upper_bound: b.upperBound, interval: b.interval, cumulative: b.cumulative })),
      }));
    case 'detailed':
      return {
        supported_percentiles: SUPPORTED_QUANTILES.map((q) => q * 100),
        details: names.map((name) => {
          const h = merged.histograms.get(name)!;
          const { interval, cumulative } = histogramQuantiles(h);
          const bins = (list: ReturnType<typeof binList>) => list.map((b) => ({ lower_bound: b.lower, width: b.width, count: b.count }));
          return {
            name,
            totals: bins(binList(h.cumulative)),
            intervals: bins(binList(h.interval)),
            percentiles: SUPPORTED_QUANTILES.map((_, i) => ({ cumulative: num(cumulative[i]!), interval: num(interval[i]!) })),
          };
        }),
      };
  }
}

export function* renderStatsJson(merged: MergedStats, selection: Selection, mode: HistogramMode): Generator<string> {
  let out = '{"stats":[';
  let first = true;
  const add = (element: unknown) => {
    out += (first ? '' : ',') + JSON.stringify(element);
    first = false;
  };
  for (const name of selection.textReadouts) {
    out += `${first ? '' : ','}{"name":${JSON.stringify(name)},"value":${JSON.stringify(merged.textReadouts.get(name)!.value)}}`;
    first = false;
    if (out.length > CHUNK) {
      yield out;
      out = '';
    }
  }
  for (const { name, counter } of selection.scalars) {
    // Built by hand: JSON.stringify of 100k small objects is most of the render time.
    out += `${first ? '' : ','}{"name":${JSON.stringify(name)},"value":${counter ? merged.counters.get(name)!.value : merged.gaugeValue(name)}}`;
    first = false;
    if (out.length > CHUNK) {
      yield out;
      out = '';
    }
  }
  if (selection.histograms.length) add({ histograms: histogramsElement(merged, selection.histograms, mode) });
  yield out + ']}';
}
