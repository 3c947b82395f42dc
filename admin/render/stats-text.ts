import { SUPPORTED_QUANTILES } from '../../shared/stats/histogram.js';
import type { MergedStats } from '../../shared/stats/merged.js';
import type { HistogramMode, Selection } from '../stats-view.js';
import { binList, bucketsFor, histogramBuckets, histogramQuantiles } from './histogram-view.js';
import { formatDouble, formatG, percentLabel } from './numbers.js';

/** /stats in Envoy's text layout, as chunks of about 64 KiB. */

const CHUNK = 64 * 1024;

function summaryLine(merged: MergedStats, name: string): string {
  const { interval, cumulative } = histogramQuantiles(merged.histograms.get(name)!);
  return SUPPORTED_QUANTILES.map((q, i) => `${percentLabel(q)}(${formatDouble(interval[i]!)},${formatDouble(cumulative[i]!)})`).join(' ');
}

function histogramText(merged: MergedStats, name: string, mode: HistogramMode): string {
  const h = merged.histograms.get(name)!;
  if (!h.used) return `${name}: No recorded values\n`;
  switch (mode) {
    case 'summary':
      return `${name}: ${summaryLine(merged, name)}\n`;
    case 'cumulative':
    case 'disjoint':
      return `${name}: ${histogramBuckets(h, mode === 'disjoint', bucketsFor(name)).map((b) => `B${formatG(b.upperBound)}(${b.interval},${b.cumulative})`).join(' ')}\n`;
    case 'detailed': {
      const bins = (list: ReturnType<typeof binList>) => list.map((b) => `${b.lower},${b.width}:${b.count}`).join(', ');
      return `${name}:\n  totals=${bins(binList(h.cumulative))}\n  intervals=${bins(binList(h.interval))}\n  summary=${summaryLine(merged, name)}\n`;
    }
  }
}

export function* renderStatsText(merged: MergedStats, selection: Selection, mode: HistogramMode): Generator<string> {
  let out = '';
  for (const name of selection.textReadouts) {
    out += `${name}: "${merged.textReadouts.get(name)!.value}"\n`;
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
    out += `${scalar.name}: ${scalar.value}\n`;
    if (out.length > CHUNK) {
      yield out;
      out = '';
    }
  }
  for (const e of selection.endpoints ?? []) {
    out += `${e.name}: ${e.value}\n`;
  }
  for (const name of selection.histograms) {
    out += histogramText(merged, name, mode);
    if (out.length > CHUNK) {
      yield out;
      out = '';
    }
  }
  if (out) yield out;
}
