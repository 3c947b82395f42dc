import { stats } from './process.js';

/**
 * Envoy's statistics that exist from the moment their scope does (its stats macros instantiate
 * every member: ALL_CLUSTER_TRAFFIC_STATS, ALL_LISTENER_STATS, ALL_HTTP_CONN_MAN_STATS …) and that
 * this proxy never moves, because what they count cannot happen here: the feature is refused by
 * name (upstream_bind_config, lb_subset_config, zone-aware routing, the overload manager, path
 * normalization, internal redirects, OCSP, merge windows, endpoint_stale_after …) or cannot exist
 * on Node 20 (HTTP/3, 0-RTT). They are still shown at 0, as Envoy shows them: dashboards and
 * scripts (Envoy's sandboxes wait for some of them) expect the names. Each list is Envoy's macro
 * less the members this proxy counts where it counts the rest.
 */
const ZERO = {
  cluster: {
    counters: [
      'assignment_stale', 'assignment_timeout_received', 'assignment_use_cached',
      'lb_local_cluster_not_ok', 'lb_recalculate_zone_structures', 'lb_subsets_created', 'lb_subsets_fallback', 'lb_subsets_fallback_panic', 'lb_subsets_removed',
      'lb_subsets_selected', 'lb_zone_cluster_too_small', 'lb_zone_no_capacity_left', 'lb_zone_number_differs', 'lb_zone_routing_all_directly',
      'lb_zone_routing_cross_zone', 'lb_zone_routing_sampled',
      'bind_errors', 'original_dst_host_invalid', 'upstream_cx_connect_with_0_rtt', 'upstream_cx_http3_total', 'upstream_cx_pool_overflow',
      'upstream_internal_redirect_failed_total', 'upstream_internal_redirect_succeeded_total', 'upstream_rq_0rtt', 'upstream_http3_broken',
    ],
    gauges: ['lb_subsets_active'],
  },
  listener: {
    counters: ['downstream_cx_transport_socket_connect_timeout', 'downstream_cx_overload_reject', 'downstream_global_cx_overflow', 'extension_config_missing', 'network_extension_config_missing'],
    gauges: [],
  },
  /** ALL_HTTP_CONN_MAN_STATS and the router's ALL_ROUTER_STATS, both under `http.<stat_prefix>.`. */
  connectionManager: {
    counters: [
      'downstream_cx_delayed_close_timeout', 'downstream_cx_http3_total', 'downstream_cx_overload_disable_keepalive', 'downstream_rq_failed_path_normalization',
      'downstream_rq_http3_total', 'downstream_rq_overload_close', 'downstream_rq_redirected_with_normalized_path',
      'rs_too_large',
      'passthrough_internal_redirect_bad_location', 'passthrough_internal_redirect_no_route', 'passthrough_internal_redirect_predicate',
      'passthrough_internal_redirect_too_many_redirects', 'passthrough_internal_redirect_unsafe_scheme',
    ],
    gauges: ['downstream_cx_http3_active'],
  },
  tcpProxy: { counters: ['early_data_received_count_total', 'max_downstream_connection_duration'], gauges: [] },
  server: { counters: ['wip_protos', 'dropped_stat_flushes'], gauges: ['seconds_until_first_ocsp_response_expiring'] },
  runtime: { counters: ['override_dir_exists', 'override_dir_not_exists'], gauges: [] },
  clusterManager: { counters: ['cluster_updated_via_merge', 'update_merge_cancelled', 'update_out_of_merge_window'], gauges: [] },
  healthCheck: { counters: ['verify_cluster'], gauges: ['degraded'] },
  /** ALL_SSL_STATS under a listener's or cluster's `ssl.`: certificate hashes and OCSP are refused by name. */
  ssl: { counters: ['fail_verify_cert_hash', 'ocsp_staple_failed', 'ocsp_staple_omitted', 'ocsp_staple_responses', 'ocsp_staple_requests', 'was_key_usage_invalid'], gauges: [] },
  outlierDetection: {
    counters: [
      'ejections_detected_consecutive_local_origin_failure', 'ejections_enforced_consecutive_local_origin_failure', 'ejections_detected_local_origin_success_rate',
      'ejections_enforced_local_origin_success_rate', 'ejections_detected_local_origin_failure_percentage', 'ejections_enforced_local_origin_failure_percentage',
    ],
    gauges: [],
  },
} as const;

export type ZeroScope = keyof typeof ZERO;

/**
 * Creates a scope's never-moving stats under `prefix` (`cluster.<name>.`, …). Gauges are
 * process-local (every process that has the scope holds the same 0).
 */
export function presentAtZero(scope: ZeroScope, prefix: string): void {
  const group = ZERO[scope];
  for (const name of group.counters) stats.counter(`${prefix}${name}`);
  for (const name of group.gauges) stats.gauge(`${prefix}${name}`, 'local');
}

/** Every name presentAtZero makes for a scope (for tests). */
export function zeroNames(scope: ZeroScope): readonly string[] {
  return [...ZERO[scope].counters, ...ZERO[scope].gauges];
}
