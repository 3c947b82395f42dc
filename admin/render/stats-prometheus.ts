import { approximateSum, DEFAULT_BUCKETS, SUPPORTED_QUANTILES, sampleCount, quantiles } from '../../shared/stats/histogram.js';
import type { MergedStats } from '../../shared/stats/merged.js';
import { isHiddenStat } from '../../shared/stats/scopes.js';
import { bucketsFor, histogramBuckets } from './histogram-view.js';
import { formatG32 } from './numbers.js';
import { finish, finishYielding, type Pausing } from '../pausing.js';
import { extractTags } from '../../shared/stats/tags.js';
import type { EndpointMetric } from '../endpoint-metrics.js';

/**
 * /stats/prometheus: text exposition 0.0.4 as Envoy writes it. Tags are extracted from the stat
 * names by Envoy's default extractors (for the names this proxy emits) and become labels; the
 * rest of the name, sanitised and prefixed `envoy_`, is the metric family. Families are grouped,
 * typed once, and sorted by the tag-extracted dotted name segment by segment (so dashboards and
 * `promtool check metrics` see what they would see from Envoy).
 */

const sanitize = (s: string) => s.replace(/[^a-zA-Z0-9_]/g, '_');
const familyName = (extracted: string) => `envoy_${sanitize(extracted)}`;

/** The Prometheus metric family a statistic is listed under: its tag-extracted name, sanitised, prefixed `envoy_`. */
export function prometheusName(name: string): string {
  return familyName(extractTags(name).extracted);
}
const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

function labels(tags: [string, string][], extra: [string, string][] = []): string {
  return [...tags.map(([k, v]) => [sanitize(k), v] as [string, string]), ...extra].map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',');
}

/** Dotted names compared segment by segment; a segment-prefix sorts first. */
export function segmentOrder(a: string, b: string): number {
  return compareSegments(a.split('.'), b.split('.'));
}

function compareSegments(as: string[], bs: string[]): number {
  for (let i = 0; i < Math.min(as.length, bs.length); i++) {
    if (as[i] !== bs[i]) return as[i]! < bs[i]! ? -1 : 1;
  }
  return as.length - bs.length;
}

interface Member {
  name: string;
  family: string;
  /** The label list without braces (tags only). */
  labels: string;
  tags: [string, string][];
}

interface Family {
  name: string;
  members: Member[];
}

interface FamilyIndex {
  generation: number;
  counters: Family[];
  gauges: Family[];
  textReadouts: Family[];
  histograms: Family[];
}

/**
 * Families grouped and sorted once per set of stat names (rebuilt only when a stat is added):
 * grouping 100k names by their tag-extracted name and sorting them segment-wise is the costly
 * part of a render, and the same for every request. A generator that pauses (yields) every
 * PAUSE_EVERY names, so that preparePrometheus can spread it over many turns of the event loop.
 */
function* groupFamilies(names: Iterable<string>): Pausing<Family[]> {
  const byFamily = new Map<string, { extracted: string[]; members: { member: Member; segments: string[] }[] }>();
  let seen = 0;
  for (const name of names) {
    if (++seen % PAUSE_EVERY === 0) yield;
    if (isHiddenStat(name)) continue; // per-host figures never reach Prometheus
    const { extracted, tags } = extractTags(name);
    const family = familyName(extracted);
    let f = byFamily.get(family);
    if (!f) byFamily.set(family, (f = { extracted: extracted.split('.'), members: [] }));
    f.members.push({ member: { name, family, labels: labels(tags), tags }, segments: name.split('.') });
  }
  const families = [...byFamily].sort((a, b) => compareSegments(a[1].extracted, b[1].extracted));
  const out: Family[] = [];
  for (const [name, f] of families) {
    out.push({ name, members: f.members.sort((x, y) => compareSegments(x.segments, y.segments)).map((m) => m.member) });
    if (f.members.length > 1000) yield;
  }
  return out;
}

/** Names grouped by tag-extracted family between two pauses (tag extraction is regex work). */
const PAUSE_EVERY = 4096;

function* buildIndex(merged: MergedStats): Pausing<FamilyIndex> {
  return {
    generation: merged.generation,
    counters: yield* groupFamilies(merged.counters.keys()),
    gauges: yield* groupFamilies(merged.gauges.keys()),
    textReadouts: yield* groupFamilies(merged.textReadouts.keys()),
    histograms: yield* groupFamilies(merged.histograms.keys()),
  };
}

const indexes = new WeakMap<MergedStats, FamilyIndex>();

function familyIndex(merged: MergedStats): FamilyIndex {
  let index = indexes.get(merged);
  if (!index || index.generation !== merged.generation) {
    index = finish(buildIndex(merged));
    indexes.set(merged, index);
  }
  return index;
}

/**
 * Builds the family index (once per set of stat names) a little at a time, letting the admin
 * answer other requests in between: at 500,000 stats it is seconds of work. A render after it
 * finds the index ready; one without it builds it at once.
 */
export async function preparePrometheus(merged: MergedStats): Promise<void> {
  const current = indexes.get(merged);
  if (current && current.generation === merged.generation) return;
  // Names added meanwhile make it stale at once; the render then rebuilds it.
  indexes.set(merged, await finishYielding(buildIndex(merged)));
}

export interface PrometheusOptions {
  summaries: boolean;
  textReadouts: boolean;
  usedOnly: boolean;
  filter?: (name: string) => boolean;
}

export function* renderPrometheus(merged: MergedStats, options: PrometheusOptions, endpoints: readonly EndpointMetric[] = []): Generator<string> {
  const index = familyIndex(merged);
  // The store's per-host figures stay out (they are for /clusters); per_endpoint_stats come last.
  const keep = (name: string, used: boolean) => (!options.usedOnly || used) && (!options.filter || options.filter(name));
  let out = '';
  function* section(families: Family[], type: string, used: (name: string) => boolean, line: (m: Member) => string): Generator<string> {
    for (const family of families) {
      let typed = false;
      for (const m of family.members) {
        if (!keep(m.name, used(m.name))) continue;
        if (!typed) {
          out += `# TYPE ${family.name} ${type}\n`;
          typed = true;
        }
        out += line(m);
        // Checked per series, not per family: one family can hold thousands of histograms.
        if (out.length > 64 * 1024) {
          yield out;
          out = '';
        }
      }
    }
  }
  yield* section(index.counters, 'counter', (n) => merged.counters.get(n)!.used, (m) => `${m.family}{${m.labels}} ${merged.counters.get(m.name)!.value}\n`);
  yield* section(index.gauges, 'gauge', (n) => merged.gauges.get(n)!.used, (m) => `${m.family}{${m.labels}} ${merged.gaugeDisplay(m.name)}\n`);
  if (options.textReadouts) {
    yield* section(index.textReadouts, 'gauge', (n) => merged.textReadouts.get(n)!.used, (m) => `${m.family}{${labels(m.tags, [['text_value', merged.textReadouts.get(m.name)!.value]])}} 0\n`);
  }
  yield* section(index.histograms, options.summaries ? 'summary' : 'histogram', (n) => merged.histograms.get(n)!.used, (m) => histogramLines(merged, m, options.summaries));
  out += endpointFamilies(endpoints);
  if (out) yield out;
}

/**
 * Per-endpoint stats after every other family, as Envoy adds them: counters, then gauges, each
 * family `envoy_cluster_endpoint_<stat>` in name order, its series sorted by their labels.
 */
function endpointFamilies(endpoints: readonly EndpointMetric[]): string {
  let out = '';
  for (const type of ['counter', 'gauge'] as const) {
    const families = new Map<string, string[]>();
    for (const m of endpoints) {
      if (m.type !== type) continue;
      const family = familyName(`cluster.endpoint.${m.stat}`);
      let series = families.get(family);
      if (!series) families.set(family, (series = []));
      series.push(`${family}{${labels(m.tags)}} ${m.value}\n`);
    }
    for (const family of [...families.keys()].sort()) out += `# TYPE ${family} ${type}\n${families.get(family)!.sort().join('')}`;
  }
  return out;
}

const DEFAULT_LE = DEFAULT_BUCKETS.map(formatG32);
const QUANTILE_LABELS = SUPPORTED_QUANTILES.map(String);

function histogramLines(merged: MergedStats, m: Member, summaries: boolean): string {
  const family = m.family;
  const h = merged.histograms.get(m.name)!;
  const prefix = m.labels ? `${m.labels},` : '';
  let out = '';
  if (summaries) {
    const qs = quantiles(h.interval, SUPPORTED_QUANTILES);
    for (let i = 0; i < qs.length; i++) out += `${family}{${prefix}quantile="${QUANTILE_LABELS[i]}"} ${formatG32(qs[i]!)}\n`;
    return `${out}${family}_sum{${m.labels}} ${formatG32(approximateSum(h.interval))}\n${family}_count{${m.labels}} ${sampleCount(h.interval)}\n`;
  }
  const bounds = bucketsFor(m.name);
  const le = bounds === DEFAULT_BUCKETS ? DEFAULT_LE : bounds.map(formatG32);
  const buckets = h.cumulative.size ? histogramBuckets(h, false, bounds) : undefined;
  for (let i = 0; i < le.length; i++) out += `${family}_bucket{${prefix}le="${le[i]}"} ${buckets ? buckets[i]!.cumulative : 0}\n`;
  const total = buckets ? sampleCount(h.cumulative) : 0;
  return `${out}${family}_bucket{${prefix}le="+Inf"} ${total}\n${family}_sum{${m.labels}} ${buckets ? formatG32(approximateSum(h.cumulative)) : '0'}\n${family}_count{${m.labels}} ${total}\n`;
}
