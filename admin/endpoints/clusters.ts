import { addressJson } from '../../shared/address.js';
import type { Cluster } from '../../shared/config/envoy-types.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import { healthFlagsText, healthStatusJson } from '../../shared/upstream/health.js';
import { thresholdsOf } from '../../shared/upstream/breaker-counts.js';
import { OUTLIER_READOUT_PREFIX, type OutlierReport } from '../../shared/upstream/outcomes.js';
import { JSON_TYPE, protoJsonChunks, type AdminEndpoint } from '../endpoint.js';
import type { StatsCollector } from '../stats-collector.js';
import { clusterHosts, HOST_COUNTERS, HOST_GAUGES } from '../cluster-hosts.js';
import type { AdminState } from '../state.js';

/**
 * /clusters: every cluster with its circuit-breaker thresholds and every host with its figures
 * (merged over the workers), in Envoy's text layout or, with format=json, as
 * envoy.admin.v3.Clusters (defaults omitted, counter values as strings). Hosts come from the
 * workers' host lists, so DNS-resolved hosts appear as the workers see them.
 */

export const thresholds = (cluster: Cluster, priority: 'DEFAULT' | 'HIGH') => thresholdsOf(cluster, priority === 'HIGH' ? 1 : 0);

export function clusterEndpoints(state: AdminState, collector: StatsCollector): AdminEndpoint[] {
  const clusters = () => state.server.clusters;
  const { hostsOf, figure } = clusterHosts(collector);
  /** The cluster's outlier detector figures (undefined without outlier_detection). */
  const outlierOf = (name: string): OutlierReport | undefined => {
    const readout = collector.merged.textReadouts.get(`${OUTLIER_READOUT_PREFIX}${name}`);
    return readout?.value ? (JSON.parse(readout.value) as OutlierReport) : undefined;
  };
  /** Envoy's text layout, as chunks of about 64 KiB (6,000 clusters make megabytes). */
  function* text(): Generator<string> {
    let out = '';
    for (const { name, config: c, addedViaApi } of clusters()) {
      if (out.length > 64 * 1024) {
        yield out;
        out = '';
      }
      out += `${name}::observability_name::${name}\n`;
      const outlier = outlierOf(name);
      if (outlier) {
        out += `${name}::outlier::success_rate_average::${outlier.average}\n${name}::outlier::success_rate_ejection_threshold::${outlier.threshold}\n`;
        out += `${name}::outlier::local_origin_success_rate_average::${outlier.localAverage}\n${name}::outlier::local_origin_success_rate_ejection_threshold::${outlier.localThreshold}\n`;
      }
      for (const [label, priority] of [['default_priority', 'DEFAULT'], ['high_priority', 'HIGH']] as const) {
        for (const [k, v] of Object.entries(thresholds(c, priority))) out += `${name}::${label}::${k}::${v}\n`;
      }
      out += `${name}::added_via_api::${addedViaApi}\n`;
      for (const h of hostsOf(name)) {
        const p = `${name}::${h.address}::`;
        for (const stat of [...HOST_COUNTERS, ...HOST_GAUGES].sort()) out += `${p}${stat}::${figure(name, h.address, stat)}\n`;
        out += `${p}hostname::${h.displayHostname}\n${p}health_flags::${healthFlagsText(h.healthFlags)}\n${p}weight::${h.weight}\n${p}region::${h.region}\n${p}zone::${h.zone}\n${p}sub_zone::${h.subZone}\n`;
        out += `${p}canary::${h.canary}\n${p}priority::${h.priority}\n${p}success_rate::${outlier?.hosts[h.address] ?? -1}\n${p}local_origin_success_rate::${outlier?.localHosts[h.address] ?? -1}\n`;
      }
    }
    yield out;
  }

  const json = (): unknown => {
    const statuses = clusters().map(({ name, config: c, addedViaApi }) => {
      const high = thresholds(c, 'HIGH');
      const outlier = outlierOf(name);
      return {
        name,
        ...(addedViaApi ? { added_via_api: true } : {}),
        observability_name: name,
        ...(outlier && outlier.threshold > 0 ? { success_rate_ejection_threshold: { value: outlier.threshold } } : {}),
        ...(outlier && outlier.localThreshold > 0 ? { local_origin_success_rate_ejection_threshold: { value: outlier.localThreshold } } : {}),
        circuit_breakers: { thresholds: [thresholds(c, 'DEFAULT'), { priority: 'HIGH', ...high }] },
        host_statuses: hostsOf(name).map((h) => {
          const counters = HOST_COUNTERS.map((stat) => {
            const v = figure(name, h.address, stat);
            return v ? { name: stat, value: String(v) } : { name: stat };
          });
          const gauges = HOST_GAUGES.map((stat) => {
            const v = figure(name, h.address, stat);
            return v ? { type: 'GAUGE', name: stat, value: String(v) } : { type: 'GAUGE', name: stat };
          });
          const locality: JsonObject = {};
          if (h.region) locality.region = h.region;
          if (h.zone) locality.zone = h.zone;
          if (h.subZone) locality.sub_zone = h.subZone;
          return {
            address: addressJson(h.address),
            stats: [...counters, ...gauges],
            health_status: healthStatusJson(h.healthFlags),
            ...((outlier?.hosts[h.address] ?? -1) >= 0 ? { success_rate: { value: outlier!.hosts[h.address] } } : {}),
            ...((outlier?.localHosts[h.address] ?? -1) >= 0 ? { local_origin_success_rate: { value: outlier!.localHosts[h.address] } } : {}),
            weight: h.weight,
            ...(h.displayHostname ? { hostname: h.displayHostname } : {}),
            ...(h.priority ? { priority: h.priority } : {}),
            locality,
          };
        }),
      };
    });
    return statuses.length ? { cluster_statuses: statuses } : {};
  };

  return [
    {
      path: '/clusters',
      help: 'upstream cluster status',
      mutates: false,
      handle: async (rq) => {
        await collector.refresh();
        if (rq.query.get('format') === 'json') return { status: 200, contentType: JSON_TYPE, body: protoJsonChunks(json()) };
        return { status: 200, body: text() };
      },
    },
  ];
}
