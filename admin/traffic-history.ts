import { addBins, quantiles, sampleCount, type Bins } from '../shared/stats/histogram.js';
import type { MergedStats } from '../shared/stats/merged.js';

/**
 * The proxy's traffic over the last minutes, for the home page's plots (and /traffic_history):
 * at every stats flush, the request rate, the 5xx rate, the flush interval's p50 and p99 request
 * time, and the open connections, summed over every connection manager and listener but the
 * admin's own. It reads the tree's merged statistics, so it costs the workers nothing; the names
 * it sums are found again only when a statistic was added (MergedStats.generation).
 */

export interface TrafficPoint {
  /** ms since the epoch, at the flush. */
  at: number;
  /** Requests and 5xx answers per second since the previous point (null for the first). */
  rps: number | null;
  errors5xxPerSecond: number | null;
  /** The flush interval's request time quantiles, ms (null without requests in the interval). */
  p50Ms: number | null;
  p99Ms: number | null;
  connections: number;
}

const REQUESTS = /^http\.(?!admin\.)[^.]+\.downstream_rq_total$/;
const ERRORS_5XX = /^http\.(?!admin\.)[^.]+\.downstream_rq_5xx$/;
const REQUEST_TIME = /^http\.(?!admin\.)[^.]+\.downstream_rq_time$/;
// A listener's own gauge, not its per-worker copies (listener.<address>.worker_<i>.…).
const CONNECTIONS = /^listener\.(?!admin\.)(?!.*\.worker_\d+\.).+\.downstream_cx_active$/;

/** Ten minutes of points, and never more than this many. */
const WINDOW_MS = 10 * 60_000;
const MAX_POINTS = 600;

export class TrafficHistory {
  private readonly points: TrafficPoint[] = [];
  private readonly capacity: number;
  private names = { generation: -1, requests: [] as string[], errors: [] as string[], times: [] as string[], connections: [] as string[] };
  private previous: { at: number; requests: number; errors: number } | undefined;

  constructor(
    private readonly merged: MergedStats,
    readonly flushIntervalMs: number,
  ) {
    this.capacity = Math.max(2, Math.min(MAX_POINTS, Math.ceil(WINDOW_MS / Math.max(1, flushIntervalMs))));
  }

  private findNames(): void {
    const m = this.merged;
    if (this.names.generation === m.generation) return;
    const pick = (keys: Iterable<string>, re: RegExp) => [...keys].filter((k) => re.test(k));
    this.names = {
      generation: m.generation,
      requests: pick(m.counters.keys(), REQUESTS),
      errors: pick(m.counters.keys(), ERRORS_5XX),
      times: pick(m.histograms.keys(), REQUEST_TIME),
      connections: pick(m.gauges.keys(), CONNECTIONS),
    };
  }

  /** Called after each flush: the interval's histograms are complete. */
  sample(at = Date.now()): void {
    this.findNames();
    const m = this.merged;
    const counter = (names: string[]) => names.reduce((t, n) => t + (m.counters.get(n)?.value ?? 0), 0);
    const requests = counter(this.names.requests);
    const errors = counter(this.names.errors);
    let connections = 0;
    for (const n of this.names.connections) for (const v of m.gauges.get(n)?.bySource.values() ?? []) connections += v;
    const interval: Bins = new Map();
    for (const n of this.names.times) {
      const h = m.histograms.get(n);
      if (h) addBins(interval, h.interval);
    }
    const [p50, p99] = sampleCount(interval) > 0 ? quantiles(interval, [0.5, 0.99]) : [null, null];
    const prev = this.previous;
    // /reset_counters can take a counter below its last value: what it counts since is the increase.
    const rate = (now: number, before: number) => (prev ? ((now >= before ? now - before : now) * 1000) / Math.max(1, at - prev.at) : null);
    this.points.push({
      at,
      rps: rate(requests, prev?.requests ?? 0),
      errors5xxPerSecond: rate(errors, prev?.errors ?? 0),
      p50Ms: p50 ?? null,
      p99Ms: p99 ?? null,
      connections,
    });
    // With stats_flush_on_admin, flushes follow the reads, not a timer: the window is also by time.
    let old = Math.max(0, this.points.length - this.capacity);
    while (old < this.points.length - 1 && this.points[old]!.at < at - WINDOW_MS) old++;
    if (old > 0) this.points.splice(0, old);
    this.previous = { at, requests, errors };
  }

  /** The points, oldest first. */
  series(): readonly TrafficPoint[] {
    return this.points;
  }
}
