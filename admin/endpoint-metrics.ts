import { coarseHealth } from '../shared/upstream/health.js';
import { clusterHosts, HOST_COUNTERS, HOST_GAUGES } from './cluster-hosts.js';
import type { StatsCollector } from './stats-collector.js';
import type { AdminState } from './state.js';

/**
 * Per-endpoint stats (Cluster.track_cluster_stats.per_endpoint_stats), as Envoy's
 * HostUtility::forEachHostMetric makes them at each render: for every host of such a cluster,
 * its counters and gauges (what /clusters prints) and a synthetic `healthy` gauge, named
 * `cluster.<cluster>.endpoint.<address, ':' as '_'>.<stat>`, tagged with the cluster's name, the
 * endpoint's address and its hostname (when it has one) for Prometheus
 * (`envoy_cluster_endpoint_<stat>`). They are not in the stats store: /stats lists them after
 * the counters and gauges, Prometheus after every other family.
 */

export interface EndpointMetric {
  name: string;
  /** The stat alone (`cx_total`): its Prometheus family is `envoy_cluster_endpoint_<stat>`. */
  stat: string;
  type: 'counter' | 'gauge';
  tags: [string, string][];
  value: number;
}

/** Envoy's sanitizeStatsName for an address: a stat name holds no ':'. */
const sanitize = (s: string) => s.replace(/:/g, '_');

export function endpointMetrics(state: AdminState, collector: StatsCollector): EndpointMetric[] {
  const out: EndpointMetric[] = [];
  const hosts = clusterHosts(collector);
  for (const { name: cluster, config } of state.server.clusters) {
    if (config.track_cluster_stats?.per_endpoint_stats !== true) continue;
    for (const h of hosts.hostsOf(cluster)) {
      const prefix = `cluster.${sanitize(cluster)}.endpoint.${sanitize(h.address)}.`;
      const tags: [string, string][] = [['envoy.cluster_name', cluster], ['envoy.endpoint_address', h.address]];
      if (h.displayHostname) tags.push(['envoy.endpoint_hostname', h.displayHostname]);
      const metric = (stat: string, type: EndpointMetric['type'], value: number) => out.push({ name: `${prefix}${stat}`, stat, type, tags, value });
      for (const stat of HOST_COUNTERS) metric(stat, 'counter', hosts.figure(cluster, h.address, stat));
      for (const stat of HOST_GAUGES) metric(stat, 'gauge', hosts.figure(cluster, h.address, stat));
      metric('healthy', 'gauge', coarseHealth(h.healthFlags) === 'healthy' ? 1 : 0);
    }
  }
  return out;
}
