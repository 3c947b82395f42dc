import type { JsonObject } from '../../shared/config/proto-json.js';
import { stats } from '../../shared/stats/process.js';
import type { Counter } from '../../shared/stats/store.js';
import type { BreakerCounts, BreakerPriority, BreakerResource } from '../../shared/upstream/breaker-counts.js';
import { thresholdsOf } from '../../shared/upstream/breaker-counts.js';

/**
 * One cluster's circuit breaker at one priority, as one worker applies it: a request, a pending
 * request (dispatched, waiting for its connection) or a retry is admitted only while the tree's
 * count (every worker's slot, shared memory) is under the threshold. Envoy's defaults: 1024
 * requests, 1024 pending, 3 retries.
 */

export interface BreakerOverflowStats {
  pending: Counter;
  retry: Counter;
}

export function overflowStats(cluster: string): BreakerOverflowStats {
  return { pending: stats.counter(`cluster.${cluster}.upstream_rq_pending_overflow`), retry: stats.counter(`cluster.${cluster}.upstream_rq_retry_overflow`) };
}

export class CircuitBreaker {
  private readonly base: Record<Exclude<BreakerResource, 'cx'>, number>;
  private readonly limit: Record<Exclude<BreakerResource, 'cx'>, number>;

  constructor(
    private readonly counts: BreakerCounts,
    private readonly worker: number,
    cluster: string,
    config: JsonObject,
    priority: BreakerPriority,
    readonly overflow: BreakerOverflowStats,
  ) {
    const t = thresholdsOf(config, priority);
    this.base = { pending: counts.base(cluster, priority, 'pending'), rq: counts.base(cluster, priority, 'rq'), retry: counts.base(cluster, priority, 'retry') };
    this.limit = { pending: t.max_pending_requests, rq: t.max_requests, retry: t.max_retries };
  }

  /** Takes one unit of `resource` if the tree is under its limit. */
  tryAcquire(resource: Exclude<BreakerResource, 'cx'>): boolean {
    const base = this.base[resource];
    if (this.counts.total(base) >= this.limit[resource]) return false;
    this.counts.add(base, this.worker, 1);
    return true;
  }

  release(resource: Exclude<BreakerResource, 'cx'>): void {
    this.counts.add(this.base[resource], this.worker, -1);
  }
}
