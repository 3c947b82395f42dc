import type { RE2JS } from 're2js';
import { re2 } from '../shared/re2.js';
import { gaugeDisplayValue, type MergedCounter, type MergedGauge, type MergedStats } from '../shared/stats/merged.js';
import { runtimeFeature } from '../shared/runtime.js';
import { isHiddenStat } from '../shared/stats/scopes.js';
import { finish, finishYielding, type Pausing } from './pausing.js';

/**
 * Which stats a /stats request shows, and in what order: text readouts, then counters and
 * gauges interleaved, then histograms, each sorted by name byte-lexicographically (Envoy's three
 * phases). Parameters are validated in Envoy's order; the first invalid one answers 400.
 */

export type HistogramMode = 'summary' | 'cumulative' | 'disjoint' | 'detailed';
export type StatsFormat = 'text' | 'json' | 'prometheus' | 'html';
export type StatType = 'All' | 'Counters' | 'Gauges' | 'Histograms' | 'TextReadouts';

export interface StatsParams {
  filter?: (name: string) => boolean;
  histogramMode: HistogramMode;
  type: StatType;
  hidden: 'include' | 'only' | 'exclude';
  format: StatsFormat;
  usedOnly: boolean;
  textReadouts: boolean;
  /** `histogram_buckets` as given (Prometheus accepts only some). */
  histogramBuckets: string | undefined;
}

export class StatsParamError extends Error {}

/** Empty values count as absent: the admin home page submits empty form fields. */
function param(query: Map<string, string>, name: string): string | undefined {
  const v = query.get(name);
  return v === undefined || v === '' ? undefined : v;
}

export function parseStatsParams(query: Map<string, string>, defaultFormat: StatsFormat = 'text'): StatsParams {
  let filter: StatsParams['filter'];
  const filterText = param(query, 'filter');
  if (filterText !== undefined) {
    // RE2 syntax in linear time by default; the runtime key switches to ECMAScript RegExp, as
    // Envoy's switches to std::regex (ECMAScript) — with its backtracking cost.
    if (runtimeFeature('proxy.reloadable_features.admin_stats_filter_use_re2', true)) {
      let re: RE2JS;
      try {
        re = re2().compile(filterText);
      } catch (err) {
        throw new StatsParamError(`Invalid re2 regex: ${(err as Error).message.replace(/^error parsing regexp: /, '')}`);
      }
      filter = (name) => re.test(name);
    } else {
      let re: RegExp;
      try {
        re = new RegExp(filterText);
      } catch (err) {
        throw new StatsParamError(`Invalid regex: "${(err as Error).message}"\n`);
      }
      filter = (name) => re.test(name);
    }
  }
  const buckets = param(query, 'histogram_buckets');
  let histogramMode: HistogramMode = 'summary';
  if (buckets !== undefined) {
    if (buckets === 'cumulative' || buckets === 'disjoint' || buckets === 'detailed' || buckets === 'summary') histogramMode = buckets;
    else if (buckets === 'none') histogramMode = 'summary';
    else throw new StatsParamError('usage: /stats?histogram_buckets=(cumulative|disjoint|detailed|summary)\n');
  }
  const type = (param(query, 'type') ?? 'All') as StatType;
  if (!['All', 'Counters', 'Gauges', 'Histograms', 'TextReadouts'].includes(type)) throw new StatsParamError('invalid &type= param');
  const hidden = (param(query, 'hidden') ?? 'exclude') as StatsParams['hidden'];
  if (!['include', 'only', 'exclude'].includes(hidden)) throw new StatsParamError('usage: /stats?hidden=(include|only|exclude)\n\n');
  const formatText = param(query, 'format') ?? defaultFormat;
  let format: StatsFormat;
  if (formatText === 'active-html' || formatText === 'html') format = 'html';
  else if (formatText === 'text' || formatText === 'json' || formatText === 'prometheus') format = formatText;
  else throw new StatsParamError('usage: /stats?format=(html|active-html|json|prometheus|text)\n\n');
  return { filter, histogramMode, type, hidden, format, usedOnly: query.has('usedonly'), textReadouts: query.has('text_readouts'), histogramBuckets: buckets };
}

export interface Selection {
  textReadouts: string[];
  /**
   * Counters and gauges interleaved, sorted, each with its value. Chosen as they are rendered
   * (hundreds of thousands at scale: a pass over them all before the first byte held the admin's
   * event loop for hundreds of milliseconds), with a `null` after every PAUSE_EVERY names looked
   * at: the renderer hands over what it has, so that the admin answers other requests meanwhile
   * even when a filter keeps nothing. The object is the same at every step: read it, do not keep it.
   */
  scalars: Iterable<{ readonly name: string; readonly value: number | bigint } | null>;
  histograms: string[];
  /** Per-endpoint stats (not in the store, see ../endpoint-metrics.ts): after the counters and gauges, in their own order, as Envoy lists them. */
  endpoints?: readonly { readonly name: string; readonly value: number }[];
}

/** How many names select() looks at between two pauses (see Selection.scalars). */
const PAUSE_EVERY = 8192;

function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

interface NameLists {
  textReadouts: string[];
  counters: string[];
  gauges: string[];
  histograms: string[];
  /** The counters' and gauges' records, in their names' order: rendering reads them without a lookup. */
  counterStats: MergedCounter[];
  gaugeStats: MergedGauge[];
}

const noNames = (): NameLists => ({ textReadouts: [], counters: [], gauges: [], histograms: [], counterStats: [], gaugeStats: [] });

/**
 * Sorted name lists, cached until a stat is added, with the hidden ones (per-host figures,
 * host lists) apart: most requests never show them, so they are not walked at all.
 */
export class SortedNames {
  private generation = -1;
  private visible = noNames();
  private hidden = noNames();
  private all = noNames();

  constructor(private readonly merged: MergedStats) {}

  get(which: 'include' | 'only' | 'exclude' = 'exclude'): NameLists {
    if (this.generation !== this.merged.generation) {
      finish(this.build());
    }
    return which === 'exclude' ? this.visible : which === 'only' ? this.hidden : this.all;
  }

  /**
   * Sorts again if a stat was added, a little at a time, letting the admin answer other requests
   * in between (500,000 names take half a second to sort); get() then finds the lists ready.
   */
  async prepare(): Promise<void> {
    if (this.generation === this.merged.generation) return;
    await finishYielding(this.build());
  }

  private *build(): Pausing<void> {
    const generation = this.merged.generation;
    const split = function* (names: Iterable<string>): Pausing<readonly [string[], string[], string[]]> {
      const sorted = yield* sortPausing([...names]);
      return [sorted.filter((n) => !isHiddenStat(n)), sorted.filter(isHiddenStat), sorted] as const;
    };
    /** Each name's record (a stat is never removed: each name has one). */
    const recordsOf = function* <T>(names: string[], map: Map<string, T>): Pausing<T[]> {
      const out = new Array<T>(names.length);
      for (let i = 0; i < names.length; i++) {
        out[i] = map.get(names[i]!)!;
        if (i % PAUSE_EVERY === PAUSE_EVERY - 1) yield;
      }
      return out;
    };
    const t = yield* split(this.merged.textReadouts.keys());
    const c = yield* split(this.merged.counters.keys());
    const g = yield* split(this.merged.gauges.keys());
    const h = yield* split(this.merged.histograms.keys());
    const lists: NameLists[] = [];
    for (const k of [0, 1, 2] as const) {
      const counterStats = yield* recordsOf(c[k], this.merged.counters);
      const gaugeStats = yield* recordsOf(g[k], this.merged.gauges);
      lists.push({ textReadouts: t[k], counters: c[k], gauges: g[k], histograms: h[k], counterStats, gaugeStats });
    }
    [this.visible, this.hidden, this.all] = lists as [NameLists, NameLists, NameLists];
    // Names added meanwhile leave it stale: the next get() sorts again.
    this.generation = generation;
  }
}

/** Names sorted (byte order) in runs of PAUSE_EVERY, then merged, pausing (yielding) between steps. */
function* sortPausing(names: string[]): Pausing<string[]> {
  let runs: string[][] = [];
  for (let i = 0; i < names.length; i += PAUSE_EVERY) {
    runs.push(names.slice(i, i + PAUSE_EVERY).sort(byteOrder));
    yield;
  }
  while (runs.length > 1) {
    const next: string[][] = [];
    for (let r = 0; r < runs.length; r += 2) {
      const a = runs[r]!;
      const b = runs[r + 1];
      if (!b) {
        next.push(a);
        continue;
      }
      const merged: string[] = new Array(a.length + b.length);
      let i = 0;
      let j = 0;
      for (let k = 0; k < merged.length; k++) {
        merged[k] = j >= b.length || (i < a.length && a[i]! <= b[j]!) ? a[i++]! : b[j++]!;
        if (k % (PAUSE_EVERY * 4) === 0) yield;
      }
      next.push(merged);
    }
    runs = next;
  }
  return runs[0] ?? [];
}

export function select(merged: MergedStats, names: SortedNames, p: StatsParams): Selection {
  const all = names.get(p.hidden);
  // usedonly before the regex, which is the costly part.
  const keep = (name: string, used: boolean) => (!p.usedOnly || used) && (!p.filter || p.filter(name));
  const textReadouts = p.type === 'All' || p.type === 'TextReadouts' ? all.textReadouts.filter((n) => keep(n, merged.textReadouts.get(n)!.used)) : [];
  const histograms = p.type === 'All' || p.type === 'Histograms' ? all.histograms.filter((n) => keep(n, merged.histograms.get(n)!.used)) : [];
  const counters = p.type === 'All' || p.type === 'Counters' ? all.counters : [];
  const gauges = p.type === 'All' || p.type === 'Gauges' ? all.gauges : [];
  const counterStats = all.counterStats;
  const gaugeStats = all.gaugeStats;
  const keepCounter = (i: number) => keep(counters[i]!, counterStats[i]!.used);
  const keepGauge = (j: number) => keep(gauges[j]!, gaugeStats[j]!.used);
  function* scalars(): Generator<{ name: string; value: number | bigint } | null> {
    // The two sorted lists merged, each filtered on the way. One object is handed out, changed
    // at each step (a new one per name was a tenth of /stats at 100,000 stats); values are read
    // from the records the name lists hold (a lookup by name per stat was most of the rest).
    const step: { name: string; value: number | bigint } = { name: '', value: 0 };
    let i = 0;
    let j = 0;
    let looked = 0;
    let counterKept = false;
    let gaugeKept = false;
    while (i < counters.length || j < gauges.length) {
      if (++looked % PAUSE_EVERY === 0) yield null;
      // Each list's next kept name, one name looked at per turn.
      if (!counterKept && i < counters.length) {
        if (keepCounter(i)) counterKept = true;
        else i++;
        continue;
      }
      if (!gaugeKept && j < gauges.length) {
        if (keepGauge(j)) gaugeKept = true;
        else j++;
        continue;
      }
      if (!counterKept && !gaugeKept) break;
      if (counterKept && (!gaugeKept || byteOrder(counters[i]!, gauges[j]!) <= 0)) {
        step.name = counters[i]!;
        step.value = counterStats[i++]!.value;
        counterKept = false;
      } else {
        step.name = gauges[j]!;
        step.value = gaugeDisplayValue(gaugeStats[j++]!);
        gaugeKept = false;
      }
      yield step;
    }
  }
  return { textReadouts, scalars: { [Symbol.iterator]: scalars }, histograms };
}
