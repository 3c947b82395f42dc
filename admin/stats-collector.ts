import type { FromAdmin, ToAdmin } from '../shared/ipc.js';
import { PendingReplies } from '../shared/replies.js';
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
  private readonly pending = new PendingReplies<true>();
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
  async collect(flush: boolean): Promise<void> {
    reportProcessMemory();
    this.recentLookupsGauge.set(this.merged.lookupTotal);
    this.merged.apply('admin', stats.takeDelta());
    await this.pending.ask((id) => this.send({ type: 'stats_collect', id }), ANSWER_TIMEOUT_MS);
    if (flush) {
      this.merged.completeInterval();
      for (const listener of this.flushListeners) listener();
    }
  }

  /** For a stats read: fresh figures, and a flush too when `stats_flush_on_admin` is set. */
  refresh(): Promise<void> {
    return this.collect(this.flushOnAdmin);
  }

  /** Calls `listener` after every stats flush (the dashboard event stream pushes then). */
  onFlush(listener: () => void): void {
    this.flushListeners.push(listener);
  }

  /**
   * Turns recording of stat-name lookups on or off in every process of the tree; resolves once
   * every process has (a collection sent after the order reaches each process after it).
   */
  async trackLookups(on: boolean): Promise<void> {
    this.merged.lookupTracking = on;
    if (!on) this.merged.recentLookups.clear();
    stats.trackLookups(on);
    this.send({ type: 'stats_lookups', tracking: on });
    await this.collect(false);
  }

  /** Every used counter's total, the admin process's own included: the tree's history, for a hot-restart child. */
  counterTotals(): [string, number][] {
    this.merged.apply('admin', stats.takeDelta());
    return [...this.merged.counters].filter(([, c]) => c.used && c.value > 0).map(([name, c]) => [name, c.value]);
  }

  onStats(m: Extract<ToAdmin, { type: 'stats' }>): void {
    for (const [source, delta] of m.sources) this.merged.apply(source, delta);
    this.pending.answer(m.id, true);
  }
}
