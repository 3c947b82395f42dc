import { HOSTS_READOUT_PREFIX, HOST_STAT_PREFIX } from '../shared/stats/scopes.js';
import type { UpstreamHost } from '../shared/upstream/hosts.js';
import type { StatsCollector } from './stats-collector.js';

/**
 * Each cluster's hosts as the workers list them, and each host's figures merged over the workers
 * (Envoy's HostStats): for /clusters and for per-endpoint stats (track_cluster_stats.per_endpoint_stats).
 */

export const HOST_COUNTERS = ['cx_connect_fail', 'cx_total', 'rq_error', 'rq_success', 'rq_timeout', 'rq_total'] as const;
export const HOST_GAUGES = ['cx_active', 'rq_active'] as const;

export interface ClusterHosts {
  hostsOf(cluster: string): UpstreamHost[];
  figure(cluster: string, address: string, stat: string): number;
}

export function clusterHosts(collector: StatsCollector): ClusterHosts {
  return {
    hostsOf(cluster) {
      const readout = collector.merged.textReadouts.get(`${HOSTS_READOUT_PREFIX}${cluster}`);
      return readout?.value ? (JSON.parse(readout.value) as UpstreamHost[]) : [];
    },
    figure(cluster, address, stat) {
      const name = `${HOST_STAT_PREFIX}${cluster}.${address}.${stat}`;
      return (HOST_GAUGES as readonly string[]).includes(stat) ? collector.merged.gaugeValue(name) : (collector.merged.counters.get(name)?.value ?? 0);
    },
  };
}
