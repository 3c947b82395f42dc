import type { Cluster } from '../../shared/config/envoy-types.js';
import { stats } from '../../shared/stats/process.js';
import { runtimeFeature } from '../../shared/runtime.js';
import type { Counter } from '../../shared/stats/store.js';
import type { BreakerCounts, BreakerPriority, BreakerResource } from '../../shared/upstream/breaker-counts.js';
import { retryBudgetLimit, retryBudgetOf, thresholdsOf, type RetryBudget } from '../../shared/upstream/breaker-counts.js';

/**
 * One cluster's circuit breaker at one priority, as one worker applies it: a connection, a
 * request, a pending request (dispatched, waiting for its connection) or a retry is admitted only
 * while the tree's count (every worker's slot, shared memory) is under the threshold. Envoy's
 * defaults: 1024 connections, 1024 requests, 1024 pending, 3 retries.
 */

export interface BreakerOverflowStats {
  cx: Counter;
  pending: Counter;
  /** max_requests refused a request (upstream_rq_active_overflow, Envoy 1.38). */
  active: Counter;
  retry: Counter;
}

export function overflowStats(cluster: string): BreakerOverflowStats {
  const p = `cluster.${cluster}.`;
  return {
    cx: stats.counter(`${p}upstream_cx_overflow`),
    pending: stats.counter(`${p}upstream_rq_pending_overflow`),
    active: stats.counter(`${p}upstream_rq_active_overflow`),
    retry: stats.counter(`${p}upstream_rq_retry_overflow`),
  };
}

/**
 * A request refused by max_requests: `upstream_rq_active_overflow`, and, as Envoy before 1.38
 * counted it (the runtime flag envoy.reloadable_features.skip_pending_overflow_count_on_active_rq
 * set false), also `upstream_rq_pending_overflow`.
 */
export function countRequestOverflow(overflow: BreakerOverflowStats): void {
  overflow.active.inc();
  if (!runtimeFeature('envoy.reloadable_features.skip_pending_overflow_count_on_active_rq', true)) overflow.pending.inc();
}

export class CircuitBreaker {
  private readonly base: Record<BreakerResource, number>;
  private readonly limit: Record<BreakerResource, number>;
  private readonly budget: RetryBudget | undefined;

  constructor(
    private readonly counts: BreakerCounts,
    private readonly worker: number,
    cluster: string,
    config: Cluster,
    priority: BreakerPriority,
    readonly overflow: BreakerOverflowStats,
  ) {
    const t = thresholdsOf(config, priority);
    this.base = {
      cx: counts.base(cluster, priority, 'cx'),
      pending: counts.base(cluster, priority, 'pending'),
      rq: counts.base(cluster, priority, 'rq'),
      retry: counts.base(cluster, priority, 'retry'),
    };
    this.limit = { cx: t.max_connections, pending: t.max_pending_requests, rq: t.max_requests, retry: t.max_retries };
    this.budget = retryBudgetOf(config, priority);
  }

  /** Whether the tree is under its limit for `resource` (for retries under a retry_budget, the budget's share of the requests now). */
  hasRoom(resource: BreakerResource): boolean {
    const used = this.counts.total(this.base[resource]);
    if (resource === 'retry' && this.budget) return used < retryBudgetLimit(this.budget, this.counts.total(this.base.rq), this.counts.total(this.base.pending));
    return used < this.limit[resource];
  }

  /** Takes one unit of `resource` if the tree is under its limit. */
  tryAcquire(resource: BreakerResource): boolean {
    if (!this.hasRoom(resource)) return false;
    this.acquire(resource);
    return true;
  }

  /** Takes one unit whatever the count (a connection the pool opens anyway, see http1-pool.ts). */
  acquire(resource: BreakerResource): void {
    this.counts.add(this.base[resource], this.worker, 1);
  }

  release(resource: BreakerResource): void {
    this.counts.add(this.base[resource], this.worker, -1);
  }
}
