import type { Cluster } from '../config/envoy-types.js';
import type { Histogram } from './store.js';
import { stats } from './process.js';

/**
 * A cluster's optional figures (Cluster.track_cluster_stats, and the deprecated
 * track_timeout_budgets), as Envoy's ClusterInfoImpl makes them: the timeout budget histograms
 * (what share of the route's timeout, and of the try's, a response took, in percent) and the
 * request and response size histograms (headers' bytes and count, bodies' bytes, per try).
 */

export interface TimeoutBudgetStats {
  /** upstream_rq_timeout_budget_percent_used: the route's timeout, from the end of the client's request to the end of the response. */
  global: Histogram;
  /** upstream_rq_timeout_budget_per_try_percent_used: each try's per-try timeout, from its start to its end. */
  perTry: Histogram;
}

export interface RequestResponseSizeStats {
  rqHeadersSize: Histogram;
  rqHeadersCount: Histogram;
  rqBodySize: Histogram;
  rsHeadersSize: Histogram;
  rsHeadersCount: Histogram;
  rsBodySize: Histogram;
}

export interface ClusterOptionalStats {
  budgets: TimeoutBudgetStats | undefined;
  sizes: RequestResponseSizeStats | undefined;
}

/** The cluster's optional figures, or undefined when it tracks none (the common case costs nothing). */
export function clusterOptionalStats(config: Cluster, prefix: string): ClusterOptionalStats | undefined {
  const track = config.track_cluster_stats;
  const budgets = track?.timeout_budgets === true || config.track_timeout_budgets === true;
  const sizes = track?.request_response_sizes === true;
  if (!budgets && !sizes) return undefined;
  const h = (name: string) => stats.histogram(`${prefix}${name}`);
  return {
    budgets: budgets ? { global: h('upstream_rq_timeout_budget_percent_used'), perTry: h('upstream_rq_timeout_budget_per_try_percent_used') } : undefined,
    sizes: sizes
      ? {
          rqHeadersSize: h('upstream_rq_headers_size'),
          rqHeadersCount: h('upstream_rq_headers_count'),
          rqBodySize: h('upstream_rq_body_size'),
          rsHeadersSize: h('upstream_rs_headers_size'),
          rsHeadersCount: h('upstream_rs_headers_count'),
          rsBodySize: h('upstream_rs_body_size'),
        }
      : undefined,
  };
}

/** Envoy's FilterUtility::percentageOfTimeout: whole percent of the timeout used; none of an infinite (0) one. */
export function percentageOfTimeout(elapsedMs: number, timeoutMs: number): number {
  if (timeoutMs <= 0) return 0;
  return Math.floor((Math.floor(elapsedMs) * 100) / timeoutMs);
}
