import { approximateSum, SUPPORTED_QUANTILES, sampleCount, quantiles } from '../../shared/stats/histogram.js';
import type { MergedStats } from '../../shared/stats/merged.js';
import type { Selection } from '../stats-view.js';
import { histogramBuckets } from './histogram-view.js';
import { formatG32 } from './numbers.js';

/**
 * /stats/prometheus: text exposition 0.0.4 as Envoy writes it. Tags are extracted from the stat
 * names by Envoy's default extractors (for the names this proxy emits) and become labels; the
 * rest of the name, sanitised and prefixed `envoy_`, is the metric family. Families are grouped,
 * typed once, and sorted by the tag-extracted dotted name segment by segment (so dashboards and
 * `promtool check metrics` see what they would see from Envoy).
 */

interface Extractor {
  tag: string;
  /** Group 1 is removed from the name; group 2 is the tag's value. */
  regex: RegExp;
}

// Envoy's default tag extractors (source/common/config/well_known_names.cc) for the stat names
// this proxy emits, in Envoy's order.
const EXTRACTORS: Extractor[] = [
  { tag: 'envoy.response_code', regex: /_rq(_(\d{3}))$/ },
  { tag: 'envoy.response_code_class', regex: /_rq_((\d))xx$/ },
  { tag: 'envoy.http_conn_manager_prefix', regex: /^(?:listener\.(?:[^.]*\.)*?)?http\.(([^.]*)\.)/ },
  { tag: 'envoy.listener_address', regex: /^listener\.(((?:[_.\d]*|[_[\]a-fA-F\d]*))\.)/ },
  { tag: 'envoy.cluster_name', regex: /^cluster\.(([^.]*)\.)/ },
  { tag: 'envoy.tcp_prefix', regex: /^tcp\.(([^.]*)\.)/ },
];

interface Tagged {
  /** The name with every extracted tag value removed. */
  extracted: string;
  tags: [string, string][];
}

const taggedCache = new Map<string, Tagged>();

export function extractTags(name: string): Tagged {
  let cached = taggedCache.get(name);
  if (cached) return cached;
  let extracted = name;
  const tags: [string, string][] = [];
  for (const { tag, regex } of EXTRACTORS) {
    const m = regex.exec(extracted);
    if (!m || m[1] === undefined || m[2] === undefined) continue;
    if (tag === 'envoy.listener_address' && m[2] === 'admin') continue;
    tags.push([tag, m[2]]);
    const start = m.index + m[0].lastIndexOf(m[1]);
    extracted = extracted.slice(0, start) + extracted.slice(start + m[1].length);
  }
  cached = { extracted, tags };
  taggedCache.set(name, cached);
  return cached;
}

const sanitize = (s: string) => s.replace(/[^a-zA-Z0-9_]/g, '_');
const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

function labels(tags: [string, string][], extra: [string, string][] = []): string {
  return [...tags.map(([k, v]) => [sanitize(k), v] as [string, string]), ...extra].map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',');
}

/** Dotted names compared segment by segment; a segment-prefix sorts first. */
export function segmentOrder(a: string, b: string): number {
  const as = a.split('.');
  const bs = b.split('.');
  for (let i = 0; i < Math.min(as.length, bs.length); i++) {
    if (as[i] !== bs[i]) return as[i]! < bs[i]! ? -1 : 1;
  }
  return as.length - bs.length;
}

function families(names: string[]): [string, string[]][] {
  const byFamily = new Map<string, string[]>();
  const extractedOf = new Map<string, string>();
  for (const name of names) {
    const { extracted } = extractTags(name);
    const family = `envoy_${sanitize(extracted)}`;
    extractedOf.set(family, extracted);
    const list = byFamily.get(family);
    if (list) list.push(name);
    else byFamily.set(family, [name]);
  }
  return [...byFamily]
    .sort((a, b) => segmentOrder(extractedOf.get(a[0])!, extractedOf.get(b[0])!))
    .map(([family, members]) => [family, members.sort(segmentOrder)]);
}

export function* renderPrometheus(merged: MergedStats, selection: Selection, options: { summaries: boolean; textReadouts: boolean }): Generator<string> {
  let out = '';
  const flush = function* () {
    if (out.length > 64 * 1024) {
      yield out;
      out = '';
    }
  };
  const counters = selection.scalars.filter((s) => s.counter).map((s) => s.name);
  const gauges = selection.scalars.filter((s) => !s.counter).map((s) => s.name);
  for (const [family, members] of families(counters)) {
    out += `# TYPE ${family} counter\n`;
    for (const name of members) out += `${family}{${labels(extractTags(name).tags)}} ${merged.counters.get(name)!.value}\n`;
    yield* flush();
  }
  for (const [family, members] of families(gauges)) {
    out += `# TYPE ${family} gauge\n`;
    for (const name of members) out += `${family}{${labels(extractTags(name).tags)}} ${merged.gaugeValue(name)}\n`;
    yield* flush();
  }
  if (options.textReadouts) {
    for (const [family, members] of families(selection.textReadouts)) {
      out += `# TYPE ${family} gauge\n`;
      for (const name of members) out += `${family}{${labels(extractTags(name).tags, [['text_value', merged.textReadouts.get(name)!.value]])}} 0\n`;
      yield* flush();
    }
  }
  for (const [family, members] of families(selection.histograms)) {
    out += `# TYPE ${family} ${options.summaries ? 'summary' : 'histogram'}\n`;
    for (const name of members) {
      const h = merged.histograms.get(name)!;
      const tags = extractTags(name).tags;
      const plain = labels(tags);
      const withExtra = (k: string, v: string) => labels(tags, [[k, v]]);
      if (options.summaries) {
        const qs = quantiles(h.interval, SUPPORTED_QUANTILES);
        SUPPORTED_QUANTILES.forEach((q, i) => (out += `${family}{${withExtra('quantile', String(q))}} ${formatG32(qs[i]!)}\n`));
        out += `${family}_sum{${plain}} ${formatG32(approximateSum(h.interval))}\n${family}_count{${plain}} ${sampleCount(h.interval)}\n`;
      } else {
        for (const b of histogramBuckets(h, false)) out += `${family}_bucket{${withExtra('le', formatG32(b.upperBound))}} ${b.cumulative}\n`;
        const total = sampleCount(h.cumulative);
        out += `${family}_bucket{${withExtra('le', '+Inf')}} ${total}\n${family}_sum{${plain}} ${formatG32(approximateSum(h.cumulative))}\n${family}_count{${plain}} ${total}\n`;
      }
      yield* flush();
    }
  }
  if (out) yield out;
}
