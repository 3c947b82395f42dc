import { binKey } from './histogram.js';

/**
 * One process's statistics. The data plane only touches its own memory: a counter increment is
 * a number addition, a gauge update an assignment, a histogram sample one map update, plus — the
 * first time a stat changes after a delta was taken — one push onto the list of changed stats.
 * `takeDelta()` (on each flush, and when the admin process needs fresh figures) returns what
 * changed since the last delta; nothing is sent per request.
 */

export type StatKind = 'counter' | 'gauge' | 'histogram' | 'text_readout';

abstract class Stat {
  /** Queued on the store's changed list since the last delta. */
  queued = false;
  /** Not yet announced to the admin process (it lists stats that were never used, too). */
  announced = false;
  abstract readonly kind: StatKind;

  constructor(
    readonly name: string,
    protected readonly store: StatsStore,
  ) {
    store.changed.push(this);
    this.queued = true;
  }

  /** Queues this stat for the next delta. */
  touch(): void {
    if (!this.queued) {
      this.queued = true;
      this.store.changed.push(this);
    }
  }
}

export class Counter extends Stat {
  readonly kind = 'counter';
  /** Since the last delta. */
  pending = 0;
  /** Since the process started (for process-local reads). */
  value = 0;

  inc(n = 1): void {
    this.pending += n;
    this.value += n;
    if (!this.queued) this.touch();
  }
}

/**
 * `accumulate`: the admin process adds the values of every process (Envoy's import mode for most
 * gauges). `local`: each reporting process holds the whole value (server.uptime, or a cluster's
 * membership that every worker knows alike), so the admin process does not add them up.
 */
export type GaugeMode = 'accumulate' | 'local';

export class Gauge extends Stat {
  readonly kind = 'gauge';
  value = 0;
  used = false;
  /** A 64-bit value a double cannot hold exactly (an xDS `version` hash): shown as these digits. */
  exact: bigint | undefined = undefined;

  constructor(name: string, store: StatsStore, readonly mode: GaugeMode) {
    super(name, store);
  }

  /**
   * An unchanged value is not sent again: the admin process keeps each process's last report,
   * and re-sending every sampled gauge (circuit breakers, host figures) on each collection made
   * a 6,000-cluster tree ship 72,000 unchanged gauges every time, and the admin merge them.
   */
  set(v: number): void {
    if (v === this.value && this.used && this.exact === undefined) return;
    this.exact = undefined;
    this.value = v;
    this.used = true;
    if (!this.queued) this.touch();
  }

  /** A 64-bit unsigned value, kept exact through the deltas, the merge and every renderer. */
  setExact(v: bigint): void {
    if (v === this.exact && this.used) return;
    this.exact = v;
    this.value = Number(v);
    this.used = true;
    if (!this.queued) this.touch();
  }

  inc(n = 1): void {
    this.set(this.value + n);
  }

  dec(n = 1): void {
    this.set(this.value - n);
  }
}

export class Histogram extends Stat {
  readonly kind = 'histogram';
  /** Samples since the last delta, by bin. */
  pending = new Map<number, number>();

  record(value: number): void {
    const key = binKey(value);
    this.pending.set(key, (this.pending.get(key) ?? 0) + 1);
    if (!this.queued) this.touch();
    // statsd and DogStatsD sinks get each sample as it is recorded (shared/stats/statsd.ts).
    const sink = this.store.sampleSink;
    if (sink !== undefined) sink(this, value);
  }
}

export class TextReadout extends Stat {
  readonly kind = 'text_readout';
  value = '';
  used = false;

  set(v: string): void {
    this.value = v;
    this.used = true;
    if (!this.queued) this.touch();
  }
}

/** What changed in one process since its last delta. Names are full Envoy stat names. */
export interface StatsDelta {
  /** String-based stat-name lookups since the last delta (server.stats_recent_lookups). */
  lookups: number;
  /** While tracking is on: the names looked up since the last delta, with their counts. */
  recentLookups: [name: string, count: number][];
  counters: [name: string, delta: number][];
  /** `exact`: the gauge's 64-bit value when a double would round it (see Gauge.setExact). */
  gauges: [name: string, value: number, used: boolean, mode: GaugeMode, exact?: bigint][];
  histograms: [name: string, bins: [key: number, count: number][]][];
  textReadouts: [name: string, value: string, used: boolean][];
}

export class StatsStore {
  readonly changed: Stat[] = [];
  /** Told of every histogram sample when it is recorded (the statsd sinks, when the bootstrap has any). */
  sampleSink: ((histogram: Histogram, value: number) => void) | undefined = undefined;
  private readonly stats = new Map<string, Stat>();
  private lookups = 0;
  private tracking = false;
  private recent = new Map<string, number>();

  /** POST /stats/recentlookups/enable and /disable reach every process through this. */
  trackLookups(on: boolean): void {
    this.tracking = on;
    if (!on) this.recent.clear();
  }

  private get<T extends Stat>(name: string, kind: StatKind, make: () => T): T {
    this.lookups++;
    if (this.tracking) this.recent.set(name, (this.recent.get(name) ?? 0) + 1);
    const existing = this.stats.get(name);
    if (existing) {
      if (existing.kind !== kind) throw new Error(`stat '${name}' is a ${existing.kind}, not a ${kind}`);
      return existing as T;
    }
    const stat = make();
    this.stats.set(name, stat);
    return stat;
  }

  counter(name: string): Counter {
    return this.get(name, 'counter', () => new Counter(name, this));
  }

  gauge(name: string, mode: GaugeMode = 'accumulate'): Gauge {
    return this.get(name, 'gauge', () => new Gauge(name, this, mode));
  }

  histogram(name: string): Histogram {
    return this.get(name, 'histogram', () => new Histogram(name, this));
  }

  textReadout(name: string): TextReadout {
    return this.get(name, 'text_readout', () => new TextReadout(name, this));
  }

  get size(): number {
    return this.stats.size;
  }

  /** Everything that changed (and every stat created) since the last call. */
  /** Puts every gauge in the next delta, changed or not (a hot-restart parent reports all of them each time). */
  touchAllGauges(): void {
    for (const stat of this.stats.values()) if (stat instanceof Gauge) stat.touch();
  }

  private readonly samplers = new Set<() => void>();

  /**
   * `sample` runs before each delta is taken: for gauges of a state that is read rather than
   * followed (bytes buffered in sockets now), so that each collection reports them current.
   */
  sampleBeforeDelta(sample: () => void): void {
    this.samplers.add(sample);
  }

  takeDelta(): StatsDelta {
    for (const sample of this.samplers) sample();
    const delta: StatsDelta = { lookups: this.lookups, recentLookups: [...this.recent], counters: [], gauges: [], histograms: [], textReadouts: [] };
    this.lookups = 0;
    this.recent = new Map();
    for (const stat of this.changed) {
      stat.queued = false;
      stat.announced = true;
      if (stat instanceof Counter) {
        delta.counters.push([stat.name, stat.pending]);
        stat.pending = 0;
      } else if (stat instanceof Gauge) {
        delta.gauges.push(stat.exact === undefined ? [stat.name, stat.value, stat.used, stat.mode] : [stat.name, stat.value, stat.used, stat.mode, stat.exact]);
      } else if (stat instanceof Histogram) {
        delta.histograms.push([stat.name, [...stat.pending]]);
        stat.pending = new Map();
      } else if (stat instanceof TextReadout) {
        delta.textReadouts.push([stat.name, stat.value, stat.used]);
      }
    }
    this.changed.length = 0;
    return delta;
  }
}
