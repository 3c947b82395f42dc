import type { FromAdmin, ToAdmin } from '../shared/ipc.js';
import { MergedStats } from '../shared/stats/merged.js';
import { stats } from '../shared/stats/process.js';
import { reportProcessMemory } from '../shared/stats/scopes.js';

/**
 * The admin process's view of the tree's statistics. It collects deltas every flush interval
 * (`stats_flush_interval`, default 5 s) — or, with `stats_flush_on_admin`, on each stats read
 * instead of on a timer — and merges them. A read between flushes collects too, so counters
 * and gauges are fresh, but only a flush moves the histograms' interval window, as in Envoy.
 */

const ANSWER_TIMEOUT_MS = 3000;

export class StatsCollector {
  readonly merged = new MergedStats();
  private readonly recentLookupsGauge = stats.gauge('server.stats_recent_lookups', 'local');
  private nextId = 1;
  private readonly waiting = new Map<number, () => void>();
  private timer: NodeJS.Timeout | undefined;
  private readonly flushListeners: (() => void)[] = [];

  constructor(
    private readonly send: (m: FromAdmin) => void,
    readonly flushIntervalMs: number,
    readonly flushOnAdmin: boolean,
  ) {}

  start(): void {
    if (this.flushOnAdmin) return;
    this.timer = setInterval(() => void this.collect(true), this.flushIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Gathers every process's changes; with `flush`, closes the histograms' interval afterwards. */
  collect(flush: boolean): Promise<void> {
    const id = this.nextId++;
    reportProcessMemory();
    this.recentLookupsGauge.set(this.merged.lookupTotal);
    this.merged.apply('admin', stats.takeDelta());
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => done(), ANSWER_TIMEOUT_MS);
      const done = () => {
        clearTimeout(timer);
        this.waiting.delete(id);
        if (flush) {
          this.merged.completeInterval();
          for (const listener of this.flushListeners) listener();
        }
        resolve();
      };
      this.waiting.set(id, done);
      this.send({ type: 'stats_collect', id });
    });
  }

  /** For a stats read: fresh figures, and a flush too when `stats_flush_on_admin` is set. */
  refresh(): Promise<void> {
    return this.collect(this.flushOnAdmin);
  }

  /** Calls `listener` after every stats flush (the dashboard event stream pushes then). */
  onFlush(listener: () => void): void {
    this.flushListeners.push(listener);
  }

  /** Turns recording of stat-name lookups on or off in every process of the tree. */
  trackLookups(on: boolean): void {
    this.merged.lookupTracking = on;
    if (!on) this.merged.recentLookups.clear();
    stats.trackLookups(on);
    this.send({ type: 'stats_lookups', tracking: on });
  }

  /** Every used counter's total, the admin process's own included: the tree's history, for a hot-restart child. */
  counterTotals(): [string, number][] {
    this.merged.apply('admin', stats.takeDelta());
    return [...this.merged.counters].filter(([, c]) => c.used && c.value > 0).map(([name, c]) => [name, c.value]);
  }

  onStats(m: Extract<ToAdmin, { type: 'stats' }>): void {
    for (const [source, delta] of m.sources) this.merged.apply(source, delta);
    this.waiting.get(m.id)?.();
  }
}
