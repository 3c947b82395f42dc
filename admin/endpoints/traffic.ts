import { JSON_TYPE, protoJson, type AdminEndpoint } from '../endpoint.js';
import type { StatsCollector } from '../stats-collector.js';
import type { TrafficHistory } from '../traffic-history.js';

/**
 * /traffic_history (this proxy's, not Envoy's): the series the home page plots, one point per
 * stats flush over the last ten minutes: time, request rate, 5xx rate, the interval's p50/p99
 * request time in ms, open connections. The admin's own traffic is left out.
 */
export function trafficEndpoints(history: TrafficHistory, collector: StatsCollector): AdminEndpoint[] {
  return [
    {
      path: '/traffic_history',
      help: "print the home page's plots as JSON: request rate, 5xx rate, p50/p99 request time and open connections at each stats flush of the last 10 minutes",
      mutates: false,
      handle: async () => {
        // With stats_flush_on_admin there is no flush timer: this read is a flush, and a point.
        if (collector.flushOnAdmin) await collector.refresh();
        const points = history.series().map((p) => ({
          time: new Date(p.at).toISOString(),
          rps: p.rps,
          errors_5xx_per_second: p.errors5xxPerSecond,
          p50_ms: p.p50Ms,
          p99_ms: p.p99Ms,
          connections: p.connections,
        }));
        return { status: 200, contentType: JSON_TYPE, body: protoJson({ flush_interval_ms: history.flushIntervalMs, points }) };
      },
    },
  ];
}
