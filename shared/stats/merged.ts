import { addBins, type Bins } from './histogram.js';
import type { StatsDelta } from './store.js';

/**
 * The statistics of the whole tree, as the admin process holds them: every process's deltas
 * merged. Counters add (so they survive a worker's replacement); gauges keep each process's
 * latest value and report their sum; histograms merge bins into a cumulative part (since start)
 * and an interval part (the samples between the last two flushes).
 */

/** Envoy keeps the 100 most recent lookups. */
export const RECENT_LOOKUPS = 100;

export interface MergedHistogram {
  cumulative: Bins;
  /** Samples of the last completed flush interval. */
  interval: Bins;
  /** Samples since the last flush, not shown until the next flush completes. */
  current: Bins;
  used: boolean;
}

/** A merged counter; made once per name and changed in place, never replaced. */
export interface MergedCounter {
  value: number;
  used: boolean;
}

/** A merged gauge, as a counter made once; `total` is the sum over `bySource`, kept as sources report. */
export interface MergedGauge {
  bySource: Map<string, number>;
  total: number;
  used: boolean;
  /** Process-local: the largest report, not the sum. */
  local: boolean;
  /** The last report's exact 64-bit value, when it had one (a local gauge: an xDS version hash). */
  exact?: bigint;
}

/** What the renderers print: the exact 64-bit value where there is one, else mergedGaugeValue. */
export function gaugeDisplayValue(g: MergedGauge): number | bigint {
  return g.exact ?? mergedGaugeValue(g);
}

/** The sum over processes; for a process-local gauge, the largest report (they agree when healthy). */
export function mergedGaugeValue(g: MergedGauge): number {
  if (!g.local) return g.total;
  let out = -Infinity;
  for (const v of g.bySource.values()) out = Math.max(out, v);
  return out === -Infinity ? 0 : out;
}

export class MergedStats {
  readonly counters = new Map<string, MergedCounter>();
  readonly gauges = new Map<string, MergedGauge>();
  readonly histograms = new Map<string, MergedHistogram>();
  readonly textReadouts = new Map<string, { value: string; used: boolean }>();
  /** Bumped when a stat is added, so sorted name lists can be cached until then. */
  generation = 0;
  /** String-based stat-name lookups since start or the last clear, in every process. */
  lookupTotal = 0;
  lookupTracking = false;
  /** The most recent names looked up (at most RECENT_LOOKUPS, least recently seen dropped first). */
  readonly recentLookups = new Map<string, number>();

  /**
   * stats_config.stats_matcher: whether a name is kept (Envoy does not instantiate the others, so
   * they appear nowhere: /stats, Prometheus, sinks). Decided once per name.
   */
  private matcher: ((name: string) => boolean) | undefined;
  private readonly kept = new Map<string, boolean>();

  setMatcher(keep: ((name: string) => boolean) | undefined): void {
    this.matcher = keep;
    this.kept.clear();
  }

  private rejects(name: string): boolean {
    if (!this.matcher) return false;
    let keep = this.kept.get(name);
    if (keep === undefined) this.kept.set(name, (keep = this.matcher(name)));
    return !keep;
  }

  apply(source: string, delta: StatsDelta): void {
    this.lookupTotal += delta.lookups;
    if (this.lookupTracking) {
      for (const [name, count] of delta.recentLookups) {
        const previous = this.recentLookups.get(name) ?? 0;
        this.recentLookups.delete(name); // re-inserted last: Map order is the recency order
        this.recentLookups.set(name, previous + count);
      }
      while (this.recentLookups.size > RECENT_LOOKUPS) this.recentLookups.delete(this.recentLookups.keys().next().value!);
    }
    for (const [name, d] of delta.counters) {
      if (this.rejects(name)) continue;
      let c = this.counters.get(name);
      if (!c) {
        this.counters.set(name, (c = { value: 0, used: false }));
        this.generation++;
      }
      c.value += d;
      if (d > 0) c.used = true;
    }
    for (const [name, value, used, mode, exact] of delta.gauges) {
      if (this.rejects(name)) continue;
      let g = this.gauges.get(name);
      if (!g) {
        this.gauges.set(name, (g = { bySource: new Map(), total: 0, used: false, local: mode === 'local' }));
        this.generation++;
      }
      g.total += value - (g.bySource.get(source) ?? 0);
      g.bySource.set(source, value);
      if (exact !== undefined) g.exact = exact;
      else if (g.exact !== undefined) delete g.exact;
      if (used) g.used = true;
    }
    for (const [name, bins] of delta.histograms) {
      if (this.rejects(name)) continue;
      let h = this.histograms.get(name);
      if (!h) {
        this.histograms.set(name, (h = { cumulative: new Map(), interval: new Map(), current: new Map(), used: false }));
        this.generation++;
      }
      if (bins.length) {
        addBins(h.cumulative, bins);
        addBins(h.current, bins);
        h.used = true;
      }
    }
    for (const [name, value, used] of delta.textReadouts) {
      if (this.rejects(name)) continue;
      let t = this.textReadouts.get(name);
      if (!t) {
        this.textReadouts.set(name, (t = { value: '', used: false }));
        this.generation++;
      }
      t.value = value;
      if (used) t.used = true;
    }
  }

  /** gaugeDisplayValue of the gauge named; 0 for none. */
  gaugeDisplay(name: string): number | bigint {
    const g = this.gauges.get(name);
    return g ? gaugeDisplayValue(g) : 0;
  }

  /** mergedGaugeValue of the gauge named; 0 for none. */
  gaugeValue(name: string): number {
    const g = this.gauges.get(name);
    return g ? mergedGaugeValue(g) : 0;
  }

  /** A flush completed: the samples gathered since the previous one become the interval. */
  completeInterval(): void {
    for (const h of this.histograms.values()) {
      h.interval = h.current;
      h.current = new Map();
    }
  }

  /** POST /reset_counters: every counter to zero; "used" stays, as in Envoy. Recent lookups are cleared too. */
  resetCounters(): void {
    for (const c of this.counters.values()) c.value = 0;
    this.clearLookups();
  }

  clearLookups(): void {
    this.lookupTotal = 0;
    this.recentLookups.clear();
  }

  /**
   * Everything held, as deltas that rebuild it in an empty MergedStats: gauges per source,
   * counters and cumulative histograms under `as` (a restored admin process starts from them).
   * Histograms' interval windows start afresh.
   */
  toDeltas(as: string): [string, StatsDelta][] {
    const empty = (): StatsDelta => ({ lookups: 0, recentLookups: [], counters: [], gauges: [], histograms: [], textReadouts: [] });
    const bySource = new Map<string, StatsDelta>([[as, empty()]]);
    const all = bySource.get(as)!;
    all.lookups = this.lookupTotal;
    for (const [name, c] of this.counters) all.counters.push([name, c.value]);
    for (const [name, g] of this.gauges) {
      const mode = g.local ? 'local' : 'accumulate';
      if (g.bySource.size === 0) all.gauges.push([name, 0, g.used, mode]);
      for (const [source, value] of g.bySource) {
        let d = bySource.get(source);
        if (!d) bySource.set(source, (d = empty()));
        d.gauges.push(g.exact === undefined ? [name, value, g.used, mode] : [name, value, g.used, mode, g.exact]);
      }
    }
    for (const [name, h] of this.histograms) all.histograms.push([name, [...h.cumulative]]);
    for (const [name, t] of this.textReadouts) all.textReadouts.push([name, t.value, t.used]);
    return [...bySource];
  }

  /** A process is gone for good (not replaced): its gauge contributions go with it. */
  forgetSource(source: string): void {
    for (const g of this.gauges.values()) {
      g.total -= g.bySource.get(source) ?? 0;
      g.bySource.delete(source);
    }
  }
}
