import type { ToAdmin } from '../../shared/ipc.js';
import { PendingReplies } from '../../shared/replies.js';
import { MergedStats, mergedGaugeValue } from '../../shared/stats/merged.js';
import type { StatsDelta } from '../../shared/stats/store.js';

/**
 * Hot restart, parent side: once the next epoch has taken the admin interface, this tree keeps
 * its own figures, starting from the counter totals its admin process handed back, and answers
 * each of the child's stats requests with the counter deltas since the last one and the gauges,
 * so counters continue across the restart. Should the child fail, the figures seed a new admin
 * process here.
 */

const COLLECT_TIMEOUT_MS = 1500;

export interface ExportedStats {
  counters: Record<string, number>;
  gauges: Record<string, number>;
  connections: number;
  memory: number;
}

export class RetainedFigures {
  private readonly merged = new MergedStats();
  private readonly exported = new Map<string, number>();
  /** Our own collections, numbered apart from the admin process's (it may still have some in flight). */
  private readonly collections = new PendingReplies<true>(-1_000_000, -1);

  /** `collect(id)` gathers every process's delta into one `stats` message with that id. */
  constructor(private readonly collect: (id: number) => void) {}

  /** The totals the admin process counted before it stopped. */
  seed(counters: [string, number][]): void {
    this.merged.apply('handed_back', { lookups: 0, recentLookups: [], counters, gauges: [], histograms: [], textReadouts: [] });
  }

  /** A `stats` message that would have gone to the admin process. */
  onStats(m: Extract<ToAdmin, { type: 'stats' }>): void {
    for (const [source, delta] of m.sources) this.merged.apply(source, delta);
    this.collections.answer(m.id, true);
  }

  /** The figures for the child's `stats` request: counter deltas since the last one, gauges as they are. */
  async export(): Promise<ExportedStats> {
    await this.collections.ask((id) => this.collect(id), COLLECT_TIMEOUT_MS);
    const counters: Record<string, number> = {};
    for (const [name, c] of this.merged.counters) {
      const delta = c.value - (this.exported.get(name) ?? 0);
      if (delta > 0) counters[name] = delta;
      this.exported.set(name, c.value);
    }
    const gauges: Record<string, number> = {};
    for (const [name, g] of this.merged.gauges) if (g.used && !g.local) gauges[name] = Math.max(0, mergedGaugeValue(g));
    const connections = [...this.merged.gauges.keys()].filter((n) => /^listener\.[^.]+\.downstream_cx_active$/.test(n)).reduce((sum, n) => sum + this.merged.gaugeValue(n), 0);
    return { counters, gauges, connections, memory: this.merged.gaugeValue('server.memory_allocated') };
  }

  /** Everything kept, as the first figures of a new admin process; pending collections end. */
  handOverToAdmin(source: string): [string, StatsDelta][] {
    this.collections.abandonAll();
    return this.merged.toDeltas(source);
  }
}
