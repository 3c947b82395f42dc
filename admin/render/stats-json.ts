import { SUPPORTED_QUANTILES } from '../../shared/stats/histogram.js';
import type { MergedStats } from '../../shared/stats/merged.js';
import type { HistogramMode, Selection } from '../stats-view.js';
import { binList, bucketsFor, histogramBuckets, histogramQuantiles } from './histogram-view.js';

/** /stats?format=json: Envoy's compact layout, `{"stats":[…]}`, NaN as null, as chunks of about 64 KiB. */

const CHUNK = 64 * 1024;
const num = (v: number) => (Number.isFinite(v) ? v : null);

/**
 * The `histograms` element as JSON text, one histogram at a time (tens of thousands at scale: one
 * JSON.stringify of them all held the admin's event loop for 180 ms). Keys in the order
 * JSON.stringify of Envoy's element would give.
 */
function* histogramsJson(merged: MergedStats, names: string[], mode: HistogramMode): Generator<string> {
  const list = function* (each: (name: string) => unknown): Generator<string> {
    let first = true;
    for (const name of names) {
      yield (first ? '' : ',') + JSON.stringify(each(name));
      first = false;
    }
  };
  const percents = JSON.stringify(SUPPORTED_QUANTILES.map((q) => q * 100));
  switch (mode) {
    case 'summary':
      yield `{"supported_quantiles":${percents},"computed_quantiles":[`;
      yield* list((name) => {
        const { interval, cumulative } = histogramQuantiles(merged.histograms.get(name)!);
        return { name, values: SUPPORTED_QUANTILES.map((_, i) => ({ cumulative: num(cumulative[i]!), interval: num(interval[i]!) })) };
      });
      yield ']}';
      return;
    case 'cumulative':
    case 'disjoint':
      yield '[';
      yield* list((name) => ({
        name,
        buckets: histogramBuckets(merged.histograms.get(name)!, mode === 'disjoint', bucketsFor(name)).map((b) => ({ upper_bound: b.upperBound, interval: b.interval, cumulative: b.cumulative })),
      }));
      yield ']';
      return;
    case 'detailed':
      yield `{"supported_percentiles":${percents},"details":[`;
      yield* list((name) => {
        const h = merged.histograms.get(name)!;
        const { interval, cumulative } = histogramQuantiles(h);
        const bins = (l: ReturnType<typeof binList>) => l.map((b) => ({ lower_bound: b.lower, width: b.width, count: b.count }));
        return {
          name,
          totals: bins(binList(h.cumulative)),
          intervals: bins(binList(h.interval)),
          percentiles: SUPPORTED_QUANTILES.map((_, i) => ({ cumulative: num(cumulative[i]!), interval: num(interval[i]!) })),
        };
      });
      yield ']}';
      return;
  }
}

export function* renderStatsJson(merged: MergedStats, selection: Selection, mode: HistogramMode): Generator<string> {
  let out = '{"stats":[';
  let first = true;
  for (const name of selection.textReadouts) {
    out += `${first ? '' : ','}{"name":${JSON.stringify(name)},"value":${JSON.stringify(merged.textReadouts.get(name)!.value)}}`;
    first = false;
    if (out.length > CHUNK) {
      yield out;
      out = '';
    }
  }
  for (const scalar of selection.scalars) {
    if (scalar === null) {
      // A pause: many names looked at; the admin answers other requests before going on.
      yield out;
      out = '';
      continue;
    }
    // Built by hand: JSON.stringify of 100k small objects is most of the render time.
    out += `${first ? '' : ','}{"name":${JSON.stringify(scalar.name)},"value":${scalar.value}}`;
    first = false;
    if (out.length > CHUNK) {
      yield out;
      out = '';
    }
  }
  for (const e of selection.endpoints ?? []) {
    out += `${first ? '' : ','}{"name":${JSON.stringify(e.name)},"value":${e.value}}`;
    first = false;
  }
  if (selection.histograms.length) {
    out += `${first ? '' : ','}{"histograms":`;
    for (const piece of histogramsJson(merged, selection.histograms, mode)) {
      out += piece;
      if (out.length > CHUNK) {
        yield out;
        out = '';
      }
    }
    out += '}';
  }
  yield out + ']}';
}
