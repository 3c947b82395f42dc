// The statistics Envoy shows from the start, at 0, whatever happens later: every member of the
// stats macros of the scopes a bootstrap makes (a listener with the TLS inspector, its HTTP
// connection manager and router, a TCP proxy, a cluster with health checks and outlier detection,
// the server, runtime and managers). Names are Envoy's, from the macros' current sources; the
// test reads a fresh proxy's /stats before any traffic.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { httpRequest, startProxy, stopAllProxies, type RunningProxy } from './helpers/proxy.js';
import { HCM_TYPE, ROUTER_TYPE, TCP_PROXY_TYPE, staticCluster } from './helpers/bootstraps.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

const GROUPS: [group: string, prefix: (ports: { http: number }) => string, names: string[]][] = [
  // ALL_LISTENER_STATS and ALL_MISSING_LISTENER_CONFIG_STATS (source/server/listener_stats.h, listener_impl.h)
  ['listener', (p) => `listener.127.0.0.1_${p.http}.`, [
    'downstream_cx_destroy', 'downstream_cx_overflow', 'downstream_cx_total', 'downstream_cx_transport_socket_connect_timeout',
    'downstream_cx_overload_reject', 'downstream_global_cx_overflow', 'downstream_pre_cx_timeout', 'downstream_listener_filter_remote_close',
    'downstream_listener_filter_error', 'no_filter_chain_match', 'downstream_cx_active', 'downstream_pre_cx_active', 'extension_config_missing',
    'network_extension_config_missing',
  ]],
  // ALL_LISTENER_MANAGER_STATS (listener_manager_impl.h)
  ['listener_manager', (p) => `listener_manager.`, [
    'listener_added', 'listener_create_failure', 'listener_create_success', 'listener_in_place_updated', 'listener_modified', 'listener_removed',
    'listener_stopped', 'total_filter_chains_draining', 'total_listeners_active', 'total_listeners_draining', 'total_listeners_warming',
    'workers_started',
  ]],
  // ALL_HTTP_CONN_MAN_STATS (source/common/http/conn_manager_config.h)
  ['http', (p) => `http.web.`, [
    'downstream_cx_delayed_close_timeout', 'downstream_cx_destroy', 'downstream_cx_destroy_active_rq', 'downstream_cx_destroy_local',
    'downstream_cx_destroy_local_active_rq', 'downstream_cx_destroy_remote', 'downstream_cx_destroy_remote_active_rq', 'downstream_cx_drain_close',
    'downstream_cx_http1_total', 'downstream_cx_http2_total', 'downstream_cx_http3_total', 'downstream_cx_idle_timeout',
    'downstream_cx_max_duration_reached', 'downstream_cx_max_requests_reached', 'downstream_cx_overload_disable_keepalive',
    'downstream_cx_protocol_error', 'downstream_cx_rx_bytes_total', 'downstream_cx_ssl_total', 'downstream_cx_total', 'downstream_cx_tx_bytes_total',
    'downstream_cx_upgrades_total', 'downstream_flow_control_paused_reading_total', 'downstream_flow_control_resumed_reading_total',
    'downstream_rq_1xx', 'downstream_rq_2xx', 'downstream_rq_3xx', 'downstream_rq_4xx', 'downstream_rq_5xx', 'downstream_rq_completed',
    'downstream_rq_failed_path_normalization', 'downstream_rq_http1_total', 'downstream_rq_http2_total', 'downstream_rq_http3_total',
    'downstream_rq_idle_timeout', 'downstream_rq_non_relative_path', 'downstream_rq_overload_close', 'downstream_rq_redirected_with_normalized_path',
    'downstream_rq_rejected_via_ip_detection', 'downstream_rq_response_before_rq_complete', 'downstream_rq_rx_reset',
    'downstream_rq_too_many_premature_resets', 'downstream_rq_timeout', 'downstream_rq_header_timeout', 'downstream_rq_too_large',
    'downstream_rq_total', 'downstream_rq_tx_reset', 'downstream_rq_max_duration_reached', 'downstream_rq_ws_on_non_ws_route', 'rs_too_large',
    'downstream_cx_active', 'downstream_cx_http1_active', 'downstream_cx_http2_active', 'downstream_cx_http3_active',
    'downstream_cx_rx_bytes_buffered', 'downstream_cx_ssl_active', 'downstream_cx_tx_bytes_buffered', 'downstream_cx_upgrades_active',
    'downstream_rq_active',
  ]],
  // CONN_MAN_LISTENER_STATS (conn_manager_config.h)
  ['http_listener', (p) => `listener.127.0.0.1_${p.http}.http.web.`, [
    'downstream_rq_1xx', 'downstream_rq_2xx', 'downstream_rq_3xx', 'downstream_rq_4xx', 'downstream_rq_5xx', 'downstream_rq_completed',
  ]],
  // ALL_ROUTER_STATS (source/common/router/context_impl.h)
  ['router', (p) => `http.web.`, [
    'no_cluster', 'no_route', 'passthrough_internal_redirect_bad_location', 'passthrough_internal_redirect_no_route',
    'passthrough_internal_redirect_predicate', 'passthrough_internal_redirect_too_many_redirects', 'passthrough_internal_redirect_unsafe_scheme',
    'rq_direct_response', 'rq_redirect', 'rq_reset_after_downstream_response_started', 'rq_total',
  ]],
  // ALL_TCP_PROXY_STATS (source/common/tcp_proxy/tcp_proxy.h)
  ['tcp', (p) => `tcp.pass.`, [
    'downstream_cx_no_route', 'downstream_cx_rx_bytes_total', 'downstream_cx_total', 'downstream_cx_tx_bytes_total',
    'downstream_flow_control_paused_reading_total', 'downstream_flow_control_resumed_reading_total', 'early_data_received_count_total',
    'idle_timeout', 'max_downstream_connection_duration', 'upstream_flush_total', 'downstream_cx_rx_bytes_buffered',
    'downstream_cx_tx_bytes_buffered', 'upstream_flush_active',
  ]],
  // ALL_SERVER_STATS (source/server/server.h)
  ['server', (p) => `server.`, [
    'debug_assertion_failures', 'envoy_bug_failures', 'dynamic_unknown_fields', 'static_unknown_fields', 'wip_protos', 'dropped_stat_flushes',
    'concurrency', 'days_until_first_cert_expiring', 'seconds_until_first_ocsp_response_expiring', 'hot_restart_epoch', 'live', 'memory_allocated',
    'memory_heap_size', 'memory_physical_size', 'parent_connections', 'state', 'stats_recent_lookups', 'total_connections', 'uptime', 'version',
  ]],
  // The worker's count of streams reset_high_memory_stream reset (source/server/worker_impl.cc), there without the action too
  ['worker', (p) => `envoy.overload_actions.`, ['reset_high_memory_stream.count']],
  // ALL_RUNTIME_STATS (source/common/runtime/runtime_impl.h)
  ['runtime', (p) => `runtime.`, [
    'deprecated_feature_use', 'load_error', 'load_success', 'override_dir_exists', 'override_dir_not_exists', 'admin_overrides_active',
    'deprecated_feature_seen_since_process_start', 'num_keys', 'num_layers',
  ]],
  // ALL_CLUSTER_MANAGER_STATS (source/common/upstream/cluster_manager_impl.h)
  ['cluster_manager', (p) => `cluster_manager.`, [
    'cluster_added', 'cluster_modified', 'cluster_removed', 'cluster_updated', 'cluster_updated_via_merge', 'update_merge_cancelled',
    'update_out_of_merge_window', 'active_clusters', 'warming_clusters',
  ]],
  // ALL_HEALTH_CHECKER_STATS (source/common/upstream/health_checker_base_impl.h)
  ['hc', (p) => `cluster.backend.health_check.`, [
    'attempt', 'failure', 'network_failure', 'passive_failure', 'success', 'verify_cluster', 'degraded', 'healthy',
  ]],
  // ALL_OUTLIER_DETECTION_STATS (source/common/upstream/outlier_detection_impl.h)
  ['od', (p) => `cluster.backend.outlier_detection.`, [
    'ejections_consecutive_5xx', 'ejections_detected_consecutive_5xx', 'ejections_detected_consecutive_gateway_failure',
    'ejections_detected_success_rate', 'ejections_detected_failure_percentage', 'ejections_enforced_consecutive_5xx',
    'ejections_enforced_consecutive_gateway_failure', 'ejections_enforced_success_rate', 'ejections_enforced_failure_percentage',
    'ejections_detected_consecutive_local_origin_failure', 'ejections_enforced_consecutive_local_origin_failure',
    'ejections_detected_local_origin_success_rate', 'ejections_enforced_local_origin_success_rate',
    'ejections_detected_local_origin_failure_percentage', 'ejections_enforced_local_origin_failure_percentage', 'ejections_enforced_total',
    'ejections_overflow', 'ejections_success_rate', 'ejections_total', 'ejections_active',
  ]],
  // ALL_TLS_INSPECTOR_STATS (tls_inspector.h), rooted at the server scope
  ['tls_inspector', (p) => `tls_inspector.`, [
    'client_hello_too_large', 'tls_found', 'tls_not_found', 'alpn_found', 'alpn_not_found', 'sni_found', 'sni_not_found',
  ]],
  // ALL_CLUSTER_CONFIG_UPDATE/ENDPOINT/LB/TRAFFIC_STATS and the circuit breakers (envoy/upstream/upstream.h, cluster_factory)
  ['cluster', (p) => `cluster.backend.`, [
    'assignment_stale', 'assignment_timeout_received', 'assignment_use_cached', 'update_attempt', 'update_empty', 'update_failure',
    'update_no_rebuild', 'update_success', 'version', 'warming_state', 'max_host_weight', 'membership_change', 'membership_degraded',
    'membership_excluded', 'membership_healthy', 'membership_total', 'lb_healthy_panic', 'lb_local_cluster_not_ok', 'lb_recalculate_zone_structures',
    'lb_subsets_created', 'lb_subsets_fallback', 'lb_subsets_fallback_panic', 'lb_subsets_removed', 'lb_subsets_selected',
    'lb_zone_cluster_too_small', 'lb_zone_no_capacity_left', 'lb_zone_number_differs', 'lb_zone_routing_all_directly', 'lb_zone_routing_cross_zone',
    'lb_zone_routing_sampled', 'lb_subsets_active', 'bind_errors', 'original_dst_host_invalid', 'retry_or_shadow_abandoned',
    'upstream_cx_close_notify', 'upstream_cx_connect_attempts_exceeded', 'upstream_cx_connect_fail', 'upstream_cx_connect_timeout',
    'upstream_cx_connect_with_0_rtt', 'upstream_cx_destroy', 'upstream_cx_destroy_local', 'upstream_cx_destroy_local_with_active_rq',
    'upstream_cx_destroy_remote', 'upstream_cx_destroy_remote_with_active_rq', 'upstream_cx_destroy_with_active_rq', 'upstream_cx_http1_total',
    'upstream_cx_http2_total', 'upstream_cx_http3_total', 'upstream_cx_idle_timeout', 'upstream_cx_max_duration_reached', 'upstream_cx_max_requests',
    'upstream_cx_none_healthy', 'upstream_cx_overflow', 'upstream_cx_pool_overflow', 'upstream_cx_protocol_error', 'upstream_cx_rx_bytes_total',
    'upstream_cx_total', 'upstream_cx_tx_bytes_total', 'upstream_flow_control_backed_up_total', 'upstream_flow_control_drained_total',
    'upstream_flow_control_paused_reading_total', 'upstream_flow_control_resumed_reading_total', 'upstream_internal_redirect_failed_total',
    'upstream_internal_redirect_succeeded_total', 'upstream_rq_cancelled', 'upstream_rq_completed', 'upstream_rq_maintenance_mode',
    'upstream_rq_max_duration_reached', 'upstream_rq_pending_failure_eject', 'upstream_rq_pending_overflow', 'upstream_rq_pending_total',
    'upstream_rq_0rtt', 'upstream_rq_per_try_timeout', 'upstream_rq_per_try_idle_timeout', 'upstream_rq_retry',
    'upstream_rq_retry_backoff_exponential', 'upstream_rq_retry_backoff_ratelimited', 'upstream_rq_retry_limit_exceeded',
    'upstream_rq_retry_overflow', 'upstream_rq_retry_success', 'upstream_rq_rx_reset', 'upstream_rq_timeout', 'upstream_rq_total',
    'upstream_rq_tx_reset', 'upstream_http3_broken', 'upstream_cx_active', 'upstream_cx_rx_bytes_buffered', 'upstream_cx_tx_bytes_buffered',
    'upstream_rq_active', 'upstream_rq_pending_active', 'circuit_breakers.default.cx_open', 'circuit_breakers.default.cx_pool_open',
    'circuit_breakers.default.rq_open', 'circuit_breakers.default.rq_pending_open', 'circuit_breakers.default.rq_retry_open',
    'circuit_breakers.high.cx_open', 'circuit_breakers.high.cx_pool_open', 'circuit_breakers.high.rq_open', 'circuit_breakers.high.rq_pending_open',
    'circuit_breakers.high.rq_retry_open',
  ]],
];

describe("Envoy's always-present statistics", () => {
  let proxy: RunningProxy;
  let upstream: Upstream;
  before(async () => {
    upstream = await startUpstream('backend');
    proxy = await startProxy({
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [
          {
            name: 'http',
            address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
            listener_filters: [{ name: 'envoy.filters.listener.tls_inspector', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector' } }],
            filter_chains: [{ filters: [{ name: 'hcm', typed_config: { '@type': HCM_TYPE, stat_prefix: 'web', route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'backend' } }] }] }, http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } }] } }] }],
          },
          { name: 'tcp', address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [{ name: 'tcp', typed_config: { '@type': TCP_PROXY_TYPE, stat_prefix: 'pass', cluster: 'backend' } }] }] },
        ],
        clusters: [{
          ...staticCluster('backend', upstream.port),
          health_checks: [{ timeout: '1s', interval: '60s', unhealthy_threshold: 1, healthy_threshold: 1, tcp_health_check: {} }],
          outlier_detection: {},
        }],
      },
    }, ['--concurrency', '1']);
  });
  after(async () => {
    await stopAllProxies();
    await upstream.close();
  });

  it('shows every member of their scopes before any traffic', async () => {
    const shown = new Set((await httpRequest(`http://${proxy.admin}/stats`)).body.split('\n').map((l) => l.split(':')[0]!));
    const ports = { http: proxy.ports.get('http')! };
    const missing: string[] = [];
    for (const [group, prefix, names] of GROUPS) for (const name of names) if (!shown.has(prefix(ports) + name)) missing.push(`${group}: ${prefix(ports)}${name}`);
    assert.deepEqual(missing, []);
  });
});
