import { stats } from '../../shared/stats/process.js';
import type { Gauge } from '../../shared/stats/store.js';
import { RESOURCES, retryBudgetLimit, retryBudgetOf, thresholdsEntry, thresholdsOf, type BreakerCounts, type BreakerPriority, type BreakerResource, type RetryBudget } from '../../shared/upstream/breaker-counts.js';
import type { Cluster as ClusterConfig } from '../../shared/config/envoy-types.js';

/**
 * Envoy's circuit-breaker gauges, read from the tree's counts (shared memory) before each stats
 * collection: `cluster.<name>.circuit_breakers.<default|high>.<resource>_open` is 1 while the tree
 * is at the threshold, and with `track_remaining: true` `remaining_<resource>` is what is left.
 * Under a retry_budget, `rq_retry_open` follows the budget and `remaining_retries` stays 0, as in Envoy.
 * `cx_pool_open` is there at 0, as Envoy always shows it: `max_connection_pools` is refused, so the
 * pools have no limit to be at; `remaining_cx_pools` (track_remaining) is left out, as it would count pools this proxy does not.
 */

const OPEN: Record<BreakerResource, string> = { cx: 'cx_open', pending: 'rq_pending_open', rq: 'rq_open', retry: 'rq_retry_open' };
const REMAINING: Record<BreakerResource, string> = { cx: 'remaining_cx', pending: 'remaining_pending', rq: 'remaining_rq', retry: 'remaining_retries' };

interface Watched {
  base: number;
  limit: number;
  /** For the retry resource under a retry budget: the budget, and where the requests it is a share of are counted. */
  budget?: { budget: RetryBudget; rq: number; pending: number };
  open: Gauge;
  remaining: Gauge | undefined;
}

export class BreakerGauges {
  /** Each cluster's gauges (by name: a change replaces them without a walk over every cluster). */
  private readonly watched = new Map<string, Watched[]>();

  constructor(
    clusters: ClusterConfig[],
    private readonly counts: BreakerCounts,
  ) {
    for (const cluster of clusters) this.watch(cluster);
  }

  /** A cluster's gauges, from now on (a changed cluster's replace its earlier version's). */
  watch(cluster: ClusterConfig): void {
    const name = String(cluster.name);
    const entries: Watched[] = [];
    this.watched.set(name, entries);
    for (const priority of [0, 1] as BreakerPriority[]) {
      const label = priority === 1 ? 'HIGH' : 'DEFAULT';
      const config = thresholdsEntry(cluster, priority);
      const limits = thresholdsOf(cluster, priority);
      const limitOf: Record<BreakerResource, number> = { cx: limits.max_connections, pending: limits.max_pending_requests, rq: limits.max_requests, retry: limits.max_retries };
      const prefix = `cluster.${name}.circuit_breakers.${label.toLowerCase()}.`;
      const budget = retryBudgetOf(cluster, priority);
      stats.gauge(`${prefix}cx_pool_open`, 'local');
      for (const resource of RESOURCES) {
        entries.push({
          base: this.counts.base(name, priority, resource),
          limit: limitOf[resource],
          ...(resource === 'retry' && budget ? { budget: { budget, rq: this.counts.base(name, priority, 'rq'), pending: this.counts.base(name, priority, 'pending') } } : {}),
          open: stats.gauge(prefix + OPEN[resource], 'local'),
          remaining: config?.track_remaining === true ? stats.gauge(prefix + REMAINING[resource], 'local') : undefined,
        });
      }
    }
  }

  unwatch(cluster: string): void {
    this.watched.delete(cluster);
  }

  refresh(): void {
    for (const entries of this.watched.values()) {
      for (const w of entries) {
        const used = this.counts.total(w.base);
        if (w.budget) {
          w.open.set(used >= retryBudgetLimit(w.budget.budget, this.counts.total(w.budget.rq), this.counts.total(w.budget.pending)) ? 1 : 0);
          w.remaining?.set(0);
          continue;
        }
        w.open.set(used >= w.limit ? 1 : 0);
        w.remaining?.set(Math.max(0, w.limit - used));
      }
    }
  }
}
