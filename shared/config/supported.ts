import protobuf from 'protobufjs';
import { IMPLEMENTED_WHOLE } from './implemented-whole.js';
import { childPath, fullName, lookupTypeOrNull, type JsonObject } from './proto-json.js';
import { typeNameOfUrl } from './wkt.js';
import { extensionFields, extensionReasons } from './extension-messages.js';
import { configError, type ConfigError } from './config-error.js';

/**
 * The fields of Envoy's API that this proxy implements, message by message. A bootstrap that
 * sets any other field of these messages is refused, naming the field: a field accepted and
 * then ignored would be a silent lie to the operator. Messages not listed here are either
 * wholly implemented (matchers, data sources, localities, metadata, the node) or only reachable
 * through fields refused above them. Each issue that implements a field adds it here.
 */
const HEADER_MUTATIONS = ['request_headers_to_add', 'request_headers_to_remove', 'response_headers_to_add', 'response_headers_to_remove'];

const CORE: Readonly<Record<string, readonly string[]>> = {
  'envoy.config.bootstrap.v3.Bootstrap': [
    'node', 'static_resources', 'dynamic_resources', 'admin', 'stats_flush_interval', 'stats_flush_on_admin', 'layered_runtime', 'stats_sinks', 'cluster_manager',
    'flags_path', 'watchdog', 'watchdogs', 'tracing', 'stats_config', 'overload_manager',
  ],
  'envoy.config.overload.v3.OverloadManager': ['refresh_interval', 'resource_monitors', 'actions', 'buffer_factory_config'],
  'envoy.config.overload.v3.BufferFactoryConfig': ['minimum_account_to_track_power_of_two'],
  'envoy.config.overload.v3.ResourceMonitor': ['name', 'typed_config'],
  'envoy.config.overload.v3.OverloadAction': ['name', 'triggers', 'typed_config'],
  'envoy.config.overload.v3.Trigger': ['name', 'threshold', 'scaled'],
  'envoy.config.overload.v3.ThresholdTrigger': ['value'],
  'envoy.config.overload.v3.ScaledTrigger': ['scaling_threshold', 'saturation_threshold'],
  'envoy.config.metrics.v3.StatsConfig': ['stats_tags', 'use_all_default_tags', 'stats_matcher', 'histogram_bucket_settings'],
  'envoy.config.metrics.v3.HistogramBucketSettings': ['match', 'buckets'],
  'envoy.config.metrics.v3.StatsMatcher': ['reject_all', 'exclusion_list', 'inclusion_list'],
  'envoy.type.matcher.v3.ListStringMatcher': ['patterns'],
  'envoy.config.metrics.v3.TagSpecifier': ['tag_name', 'regex', 'fixed_value'],
  'envoy.config.trace.v3.Tracing': ['http'],
  'envoy.config.trace.v3.Tracing.Http': ['name', 'typed_config'],
  'envoy.config.core.v3.HttpService': ['http_uri', 'request_headers_to_add'],
  'envoy.type.tracing.v3.CustomTag': ['tag', 'literal', 'environment', 'request_header', 'metadata'],
  'envoy.type.tracing.v3.CustomTag.Literal': ['value'],
  'envoy.type.tracing.v3.CustomTag.Environment': ['name', 'default_value'],
  'envoy.type.tracing.v3.CustomTag.Header': ['name', 'default_value'],
  'envoy.type.tracing.v3.CustomTag.Metadata': ['kind', 'metadata_key', 'default_value'],
  'envoy.type.metadata.v3.MetadataKind': ['route', 'cluster'],
  'envoy.config.route.v3.Decorator': ['operation', 'propagate'],
  'envoy.config.route.v3.Tracing': ['client_sampling', 'random_sampling', 'overall_sampling', 'custom_tags'],
  'envoy.config.bootstrap.v3.Watchdogs': ['main_thread_watchdog', 'worker_watchdog'],
  'envoy.config.bootstrap.v3.Watchdog': ['miss_timeout', 'megamiss_timeout', 'kill_timeout', 'multikill_timeout', 'multikill_threshold'],
  // The cluster manager is configured through its clusters; none of its own fields is implemented.
  'envoy.config.bootstrap.v3.ClusterManager': [],
  'envoy.config.bootstrap.v3.Bootstrap.DynamicResources': ['cds_config', 'ads_config', 'lds_config'],
  'envoy.config.core.v3.ConfigSource': ['path', 'path_config_source', 'resource_api_version', 'api_config_source', 'ads', 'initial_fetch_timeout'],
  'envoy.config.core.v3.ApiConfigSource': ['api_type', 'transport_api_version', 'grpc_services', 'set_node_on_first_message_only', 'rate_limit_settings'],
  'envoy.config.core.v3.RateLimitSettings': ['max_tokens', 'fill_rate'],
  'envoy.config.core.v3.GrpcService': ['envoy_grpc', 'timeout'],
  'envoy.config.core.v3.GrpcService.EnvoyGrpc': ['cluster_name'],
  'envoy.config.core.v3.PathConfigSource': ['path', 'watched_directory'],
  'envoy.config.core.v3.WatchedDirectory': ['path'],
  'envoy.config.metrics.v3.StatsSink': ['name', 'typed_config'],
  'envoy.config.bootstrap.v3.LayeredRuntime': ['layers'],
  'envoy.config.bootstrap.v3.RuntimeLayer': ['name', 'static_layer', 'disk_layer', 'admin_layer'],
  'envoy.config.bootstrap.v3.RuntimeLayer.DiskLayer': ['symlink_root', 'subdirectory', 'append_service_cluster'],
  'envoy.config.bootstrap.v3.Bootstrap.StaticResources': ['listeners', 'clusters', 'secrets'],
  'envoy.config.bootstrap.v3.Admin': ['address', 'access_log_path', 'access_log', 'profile_path', 'allow_paths'],
  'envoy.config.listener.v3.Listener': [
    'name', 'address', 'stat_prefix', 'filter_chains', 'default_filter_chain', 'metadata', 'traffic_direction', 'tcp_backlog_size',
    'listener_filters', 'udp_listener_config', 'listener_filters_timeout', 'access_log', 'freebind', 'socket_options', 'enable_reuse_port', 'reuse_port',
    'per_connection_buffer_limit_bytes', 'max_connections_to_accept_per_socket_event', 'additional_addresses', 'ignore_global_conn_limit', 'bypass_overload_manager',
  ],
  'envoy.config.listener.v3.AdditionalAddress': ['address'],
  'envoy.config.core.v3.SocketOption': ['description', 'level', 'name', 'int_value', 'buf_value', 'state'],
  'envoy.config.listener.v3.FilterChain': ['filters', 'name', 'metadata', 'transport_socket', 'filter_chain_match'],
  'envoy.config.listener.v3.FilterChainMatch': ['server_names', 'transport_protocol', 'application_protocols', 'destination_port', 'prefix_ranges', 'direct_source_prefix_ranges', 'source_type', 'source_prefix_ranges', 'source_ports'],
  'envoy.config.listener.v3.Filter': ['name', 'typed_config'],
  'envoy.config.listener.v3.ListenerFilter': ['name', 'typed_config'],
  'envoy.config.listener.v3.UdpListenerConfig': [],
  'xds.type.matcher.v3.Matcher': ['on_no_match'],
  'xds.type.matcher.v3.Matcher.OnMatch': ['action'],
  'envoy.config.core.v3.TransportSocket': ['name', 'typed_config'],
  'envoy.config.core.v3.Address': ['socket_address', 'pipe'],
  'envoy.config.core.v3.SocketAddress': ['protocol', 'address', 'port_value'],
  'envoy.config.core.v3.Pipe': ['path', 'mode'],
  'envoy.config.route.v3.RouteAction.UpgradeConfig': ['upgrade_type', 'enabled', 'connect_config'],
  'envoy.config.route.v3.RouteAction.UpgradeConfig.ConnectConfig': ['allow_post'],
  'envoy.config.core.v3.SchemeHeaderTransformation': ['scheme_to_overwrite', 'match_upstream'],
  'envoy.config.core.v3.HeaderValueOption': ['header', 'append', 'append_action', 'keep_empty_value'],
  'envoy.config.core.v3.HeaderValue': ['key', 'value', 'raw_value'],
  'envoy.config.core.v3.HttpProtocolOptions': [
    'idle_timeout', 'max_headers_count', 'max_connection_duration', 'max_requests_per_connection', 'max_stream_duration', 'headers_with_underscores_action',
  ],
  'envoy.config.route.v3.RouteConfiguration': ['name', 'virtual_hosts', 'validate_clusters', 'ignore_port_in_host_matching', ...HEADER_MUTATIONS, 'most_specific_header_mutations_wins'],
  'envoy.config.route.v3.VirtualHost': ['name', 'domains', 'routes', 'retry_policy', 'metadata', ...HEADER_MUTATIONS, 'typed_per_filter_config', 'cors', 'rate_limits', 'require_tls'],
  'envoy.config.route.v3.RateLimit': ['stage', 'disable_key', 'actions'],
  'envoy.config.route.v3.RateLimit.Action': [
    'source_cluster', 'destination_cluster', 'request_headers', 'remote_address', 'generic_key', 'header_value_match', 'masked_remote_address', 'query_parameter_value_match',
  ],
  'envoy.config.route.v3.Route': ['name', 'match', 'route', 'redirect', 'direct_response', 'metadata', ...HEADER_MUTATIONS, 'typed_per_filter_config', 'decorator', 'tracing'],
  'envoy.config.route.v3.FilterConfig': ['config', 'disabled', 'is_optional'],
  'envoy.config.rbac.v3.RBAC': ['action', 'policies'],
  'envoy.config.rbac.v3.Policy': ['permissions', 'principals'],
  'envoy.config.rbac.v3.Permission': [
    'and_rules', 'or_rules', 'any', 'header', 'url_path', 'destination_ip', 'destination_port', 'destination_port_range', 'not_rule', 'requested_server_name',
  ],
  'envoy.config.rbac.v3.Principal': ['and_ids', 'or_ids', 'any', 'authenticated', 'source_ip', 'direct_remote_ip', 'remote_ip', 'header', 'url_path', 'not_id'],
  'envoy.config.route.v3.RouteMatch': ['prefix', 'path', 'safe_regex', 'path_separated_prefix', 'connect_matcher', 'case_sensitive', 'headers', 'query_parameters', 'grpc', 'runtime_fraction'],
  'envoy.config.route.v3.RouteMatch.ConnectMatcher': [],
  'envoy.config.route.v3.RouteAction': [
    'cluster', 'cluster_header', 'weighted_clusters', 'cluster_not_found_response_code', 'prefix_rewrite', 'regex_rewrite', 'host_rewrite_literal', 'timeout', 'retry_policy', 'priority', 'cors',
    'rate_limits', 'include_vh_rate_limits', 'hash_policy', 'request_mirror_policies', 'upgrade_configs', 'idle_timeout', 'max_stream_duration',
  ],
  'envoy.config.route.v3.RouteAction.MaxStreamDuration': ['max_stream_duration', 'grpc_timeout_header_max', 'grpc_timeout_header_offset'],
  'envoy.config.route.v3.RouteAction.RequestMirrorPolicy': ['cluster', 'cluster_header', 'runtime_fraction', 'disable_shadow_host_suffix_append'],
  'envoy.config.route.v3.RetryPolicy': [
    'retry_on', 'num_retries', 'per_try_timeout', 'per_try_idle_timeout', 'retriable_status_codes', 'retriable_headers', 'retriable_request_headers',
    'retry_host_predicate', 'retry_priority', 'host_selection_retry_max_attempts', 'retry_back_off', 'rate_limited_retry_back_off',
  ],
  'envoy.config.route.v3.RetryPolicy.RetryHostPredicate': ['name', 'typed_config'],
  'envoy.config.route.v3.RetryPolicy.RetryPriority': ['name', 'typed_config'],
  'envoy.config.route.v3.RetryPolicy.RetryBackOff': ['base_interval', 'max_interval'],
  'envoy.config.route.v3.RetryPolicy.RateLimitedRetryBackOff': ['reset_headers', 'max_interval'],
  'envoy.config.route.v3.RetryPolicy.ResetHeader': ['name', 'format'],
  'envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate': [],
  'envoy.extensions.retry.host.omit_canary_hosts.v3.OmitCanaryHostsPredicate': [],
  'envoy.extensions.retry.priority.previous_priorities.v3.PreviousPrioritiesConfig': ['update_frequency'],
  'envoy.config.route.v3.WeightedCluster': ['clusters', 'total_weight', 'runtime_key_prefix'],
  'envoy.config.route.v3.WeightedCluster.ClusterWeight': ['name', 'weight'],
  'envoy.config.route.v3.RedirectAction': ['https_redirect', 'scheme_redirect', 'host_redirect', 'port_redirect', 'path_redirect', 'prefix_rewrite', 'response_code', 'strip_query'],
  'envoy.config.route.v3.DirectResponseAction': ['status', 'body'],
  'envoy.config.cluster.v3.Cluster': [
    'name', 'type', 'connect_timeout', 'lb_policy', 'load_assignment', 'dns_refresh_rate', 'dns_lookup_family', 'circuit_breakers',
    'least_request_lb_config', 'metadata', 'http2_protocol_options', 'typed_extension_protocol_options', 'common_lb_config',
    'health_checks', 'outlier_detection', 'transport_socket', 'eds_cluster_config', 'ring_hash_lb_config', 'maglev_lb_config', 'load_balancing_policy', 'ignore_health_on_host_removal', 'respect_dns_ttl', 'typed_dns_resolver_config',
    'per_connection_buffer_limit_bytes', 'common_http_protocol_options', 'max_requests_per_connection', 'track_cluster_stats', 'track_timeout_budgets',
    'transport_socket_matches', 'upstream_connection_options', 'upstream_http_protocol_options',
  ],
  'envoy.config.core.v3.UpstreamHttpProtocolOptions': ['auto_sni', 'auto_san_validation', 'override_auto_sni_header'],
  'envoy.config.cluster.v3.UpstreamConnectionOptions': ['tcp_keepalive'],
  'envoy.config.core.v3.TcpKeepalive': ['keepalive_probes', 'keepalive_time', 'keepalive_interval'],
  'envoy.config.cluster.v3.Cluster.TransportSocketMatch': ['name', 'match', 'transport_socket'],
  'envoy.config.cluster.v3.TrackClusterStats': ['timeout_budgets', 'request_response_sizes', 'per_endpoint_stats'],
  'envoy.config.cluster.v3.Cluster.RingHashLbConfig': ['minimum_ring_size', 'maximum_ring_size', 'hash_function'],
  'envoy.config.cluster.v3.Cluster.MaglevLbConfig': ['table_size'],
  'envoy.config.cluster.v3.LoadBalancingPolicy': ['policies'],
  'envoy.config.cluster.v3.LoadBalancingPolicy.Policy': ['typed_extension_config'],
  'envoy.config.route.v3.RouteAction.HashPolicy': ['header', 'cookie', 'connection_properties', 'query_parameter', 'terminal'],
  'envoy.config.cluster.v3.Cluster.EdsClusterConfig': ['eds_config', 'service_name'],
  'envoy.config.cluster.v3.OutlierDetection': [
    'consecutive_5xx', 'interval', 'base_ejection_time', 'max_ejection_percent', 'enforcing_consecutive_5xx', 'enforcing_success_rate',
    'success_rate_minimum_hosts', 'success_rate_request_volume', 'success_rate_stdev_factor', 'consecutive_gateway_failure',
    'enforcing_consecutive_gateway_failure', 'failure_percentage_threshold', 'enforcing_failure_percentage', 'failure_percentage_minimum_hosts',
    'failure_percentage_request_volume', 'max_ejection_time', 'max_ejection_time_jitter', 'successful_active_health_check_uneject_host',
    'always_eject_one_host', 'split_external_local_origin_errors', 'consecutive_local_origin_failure', 'enforcing_consecutive_local_origin_failure',
    'enforcing_local_origin_success_rate', 'enforcing_failure_percentage_local_origin',
  ],
  'envoy.config.core.v3.HealthCheck': [
    'timeout', 'interval', 'initial_jitter', 'interval_jitter', 'interval_jitter_percent', 'unhealthy_threshold', 'healthy_threshold',
    'reuse_connection', 'http_health_check', 'tcp_health_check', 'no_traffic_interval', 'no_traffic_healthy_interval', 'unhealthy_interval',
    'unhealthy_edge_interval', 'healthy_edge_interval',
  ],
  'envoy.config.core.v3.HealthCheck.HttpHealthCheck': ['host', 'path', 'expected_statuses'],
  'envoy.config.core.v3.HealthCheck.TcpHealthCheck': ['send', 'receive'],
  'envoy.config.core.v3.HealthCheck.Payload': ['text', 'binary'],
  'envoy.config.cluster.v3.Cluster.CommonLbConfig': ['healthy_panic_threshold', 'locality_weighted_lb_config'],
  'envoy.config.cluster.v3.Cluster.CommonLbConfig.LocalityWeightedLbConfig': [],
  'envoy.config.core.v3.Http1ProtocolOptions': ['accept_http_10', 'default_host_for_http_10', 'enable_trailers'],
  'envoy.config.core.v3.Http2ProtocolOptions': [
    'hpack_table_size', 'max_concurrent_streams', 'initial_stream_window_size', 'initial_connection_window_size', 'allow_connect', 'connection_keepalive',
    'custom_settings_parameters',
  ],
  'envoy.config.core.v3.KeepaliveSettings': ['interval', 'timeout', 'interval_jitter'],
  'envoy.config.core.v3.Http2ProtocolOptions.SettingsParameter': ['identifier', 'value'],
  'envoy.config.cluster.v3.Cluster.LeastRequestLbConfig': ['choice_count'],
  'envoy.config.cluster.v3.CircuitBreakers': ['thresholds'],
  'envoy.config.cluster.v3.CircuitBreakers.Thresholds': ['priority', 'max_connections', 'max_pending_requests', 'max_requests', 'max_retries', 'track_remaining', 'retry_budget'],
  'envoy.config.cluster.v3.CircuitBreakers.Thresholds.RetryBudget': ['budget_percent', 'min_retry_concurrency'],
  'envoy.config.endpoint.v3.ClusterLoadAssignment': ['cluster_name', 'endpoints', 'policy'],
  'envoy.config.endpoint.v3.ClusterLoadAssignment.Policy': ['overprovisioning_factor'],
  'envoy.config.endpoint.v3.LocalityLbEndpoints': ['locality', 'lb_endpoints', 'metadata', 'priority', 'load_balancing_weight'],
  'envoy.config.endpoint.v3.LbEndpoint': ['endpoint', 'metadata', 'load_balancing_weight', 'health_status'],
  'envoy.config.endpoint.v3.Endpoint': ['address', 'hostname', 'health_check_config'],
  'envoy.config.endpoint.v3.Endpoint.HealthCheckConfig': ['port_value', 'address'],
  // POST /tap bodies (envoy.admin.v3.TapRequest) are checked against these too.
  'envoy.config.tap.v3.TapConfig': ['match_config', 'match', 'output_config'],
  'envoy.config.tap.v3.OutputConfig': ['sinks', 'max_buffered_rx_bytes', 'max_buffered_tx_bytes'],
  'envoy.config.tap.v3.OutputSink': ['format', 'streaming_admin', 'buffered_admin'],
  'envoy.config.tap.v3.MatchPredicate': ['or_match', 'and_match', 'not_match', 'any_match', 'http_request_headers_match', 'http_response_headers_match'],
  'envoy.config.common.matcher.v3.MatchPredicate': ['or_match', 'and_match', 'not_match', 'any_match', 'http_request_headers_match', 'http_response_headers_match'],
  'envoy.config.accesslog.v3.AccessLog': ['name', 'filter', 'typed_config'],
  'envoy.config.accesslog.v3.AccessLogFilter': [
    'status_code_filter', 'duration_filter', 'not_health_check_filter', 'runtime_filter', 'and_filter', 'or_filter', 'header_filter', 'response_flag_filter',
  ],
  // content_type shapes local-reply bodies (an access log has none); formatters are extensions none of which is implemented.
  'envoy.config.core.v3.SubstitutionFormatString': ['text_format', 'json_format', 'text_format_source', 'omit_empty_values', 'json_format_options', 'content_type'],
  // Messages implemented whole before the API was brought to Envoy 1.37, without the fields 1.37
  // added to them: those are refused until they are built (an accepted field that does nothing
  // would be a silent outage).
  'envoy.config.route.v3.RateLimit.Action.GenericKey': ['descriptor_value', 'descriptor_key'],
  'envoy.config.route.v3.RateLimit.Action.HeaderValueMatch': ['descriptor_value', 'descriptor_key', 'expect_match', 'headers'],
  'envoy.config.route.v3.RateLimit.Action.QueryParameterValueMatch': ['descriptor_value', 'descriptor_key', 'expect_match', 'query_parameters'],
  'envoy.extensions.common.ratelimit.v3.LocalRateLimitDescriptor': ['entries', 'token_bucket'],
};

/** The core's messages; each extension's (its descriptor's `fields`) are in extension-messages.ts. */
const SUPPORTED: Readonly<Record<string, readonly string[]>> = CORE;

const supportedSets = new Map([...Object.entries(SUPPORTED), ...Object.entries(IMPLEMENTED_WHOLE)].map(([k, v]) => [k, new Set(v)]));

/**
 * The fields of a message this proxy implements: its entry here (implemented in part) or in
 * IMPLEMENTED_WHOLE; undefined for a message in neither (one the configuration cannot reach
 * but through an Any, whose type the extension check decides).
 */
export function supportedFields(typeName: string): ReadonlySet<string> | undefined {
  return supportedSets.get(typeName) ?? extensionFields.get(typeName);
}

/** Whether a message is implemented in part (an entry of this file's table), not whole. */
export function implementedInPart(typeName: string): boolean {
  return Object.hasOwn(SUPPORTED, typeName) || extensionFields.has(typeName);
}

/** What to use instead, for refused fields that operators often reach for. */
const NGHTTP2_FLOOD = "Node's HTTP/2 (nghttp2) bounds a session by its memory (maxSessionMemory), not by Envoy's frame counters";

const CORE_HINTS: Readonly<Record<string, string>> = {
  'envoy.type.metadata.v3.MetadataKind.request': 'custom tags read route and cluster metadata',
  'envoy.type.metadata.v3.MetadataKind.host': 'custom tags read route and cluster metadata',
  'envoy.config.route.v3.RouteAction.UpgradeConfig.ConnectConfig.proxy_protocol_config': 'PROXY protocol headers are not sent upstream by this proxy',
  'envoy.config.core.v3.Http2ProtocolOptions.max_outbound_frames': NGHTTP2_FLOOD,
  'envoy.config.core.v3.Http2ProtocolOptions.max_outbound_control_frames': NGHTTP2_FLOOD,
  'envoy.config.core.v3.Http2ProtocolOptions.max_consecutive_inbound_frames_with_empty_payload': NGHTTP2_FLOOD,
  'envoy.config.core.v3.Http2ProtocolOptions.max_inbound_priority_frames_per_stream': NGHTTP2_FLOOD,
  'envoy.config.core.v3.Http2ProtocolOptions.max_inbound_window_update_frames_per_data_frame_sent': NGHTTP2_FLOOD,
  'envoy.config.core.v3.Http2ProtocolOptions.use_oghttp2_codec': "the HTTP/2 codec is Node's (nghttp2)",
  'envoy.config.core.v3.Http2ProtocolOptions.allow_metadata': 'METADATA frames are not supported',
  'envoy.config.core.v3.Http2ProtocolOptions.stream_error_on_invalid_http_messaging': "Node's HTTP/2 answers an invalid message on a stream with a reset of that stream",
  'envoy.config.core.v3.Http2ProtocolOptions.override_stream_error_on_invalid_http_message': "Node's HTTP/2 answers an invalid message on a stream with a reset of that stream",
  'envoy.config.core.v3.Http1ProtocolOptions.header_key_format': 'header names go as received (HTTP/2 ones in lower case)',
  'envoy.config.core.v3.Http1ProtocolOptions.allow_absolute_url': 'absolute-form targets are always accepted',
  'envoy.config.core.v3.Http1ProtocolOptions.allow_chunked_length': "Node's parser refuses Transfer-Encoding with Content-Length (request smuggling)",
  'envoy.config.core.v3.Http1ProtocolOptions.send_fully_qualified_url': 'requests go upstream in origin form',
  'envoy.config.endpoint.v3.Endpoint.HealthCheckConfig.hostname': "the health check's Host is http_health_check.host, else the cluster's name",
  'envoy.config.endpoint.v3.Endpoint.HealthCheckConfig.disable_active_health_check': "every host of a cluster with health_checks is checked",
  'envoy.config.endpoint.v3.ClusterLoadAssignment.Policy.drop_overloads': 'load shedding by drop_overloads is not supported',
  'envoy.config.endpoint.v3.ClusterLoadAssignment.Policy.weighted_priority_health': "a priority's health counts hosts, not their weights",
  'envoy.config.bootstrap.v3.Watchdog.actions': 'watchdog action extensions (profiling, abort with a stack) are not supported; kill_timeout replaces a stuck worker',
  'envoy.config.bootstrap.v3.ClusterManager.local_cluster_name': 'zone-aware routing is not supported',
  'envoy.config.bootstrap.v3.ClusterManager.outlier_detection': 'outlier ejections are logged, not written to an event log',
  'envoy.config.bootstrap.v3.ClusterManager.upstream_bind_config': 'upstream connections bind where the kernel chooses',
  'envoy.config.bootstrap.v3.ClusterManager.load_stats_config': 'load reporting (LRS) is not supported',
  'envoy.extensions.upstreams.http.v3.HttpProtocolOptions.AutoHttpConfig.http3_protocol_options': 'HTTP/3 (QUIC) is not available on Node 20',
  'envoy.extensions.upstreams.http.v3.HttpProtocolOptions.AutoHttpConfig.alternate_protocols_cache_options': 'it discovers HTTP/3 (QUIC), which is not available on Node 20',
  'envoy.config.core.v3.KeepaliveSettings.connection_idle_interval': 'pings are sent at interval; none is sent before a request on an idle connection',
  'envoy.config.route.v3.RouteAction.RequestMirrorPolicy.trace_sampled': 'this proxy does not trace yet',
  'envoy.config.route.v3.RouteAction.HashPolicy.filter_state': 'no filter of this proxy sets filter state; hash by header, cookie, source IP or query parameter',
  'envoy.config.route.v3.RateLimit.limit': 'limit overrides read from dynamic metadata are not implemented',
  'envoy.config.route.v3.RateLimit.Action.metadata': 'descriptors from metadata are not supported; use request_headers, generic_key or header_value_match',
  'envoy.config.route.v3.RateLimit.Action.dynamic_metadata': 'descriptors from metadata are not supported; use request_headers, generic_key or header_value_match',
  'envoy.config.route.v3.RateLimit.Action.extension': 'rate limit descriptor extensions are not supported',
  'envoy.config.core.v3.ApiConfigSource.cluster_names': 'REST xDS is not supported; use api_type GRPC',
  'envoy.config.core.v3.ApiConfigSource.refresh_delay': 'REST xDS is not supported; use api_type GRPC',
  'envoy.config.core.v3.ApiConfigSource.request_timeout': 'REST xDS is not supported; use api_type GRPC',
  'envoy.config.core.v3.GrpcService.google_grpc': 'the Google gRPC client is not available; use envoy_grpc with a static cluster',
  'envoy.config.core.v3.SocketAddress.named_port': 'use port_value',
  'envoy.config.core.v3.HealthCheck.grpc_health_check': 'HTTP and TCP health checks are supported',
  'envoy.config.core.v3.HealthCheck.custom_health_check': 'HTTP and TCP health checks are supported',
  'envoy.config.listener.v3.UdpListenerConfig.quic_options': 'HTTP/3 (QUIC) is not available in Node 20',
  'envoy.config.listener.v3.UdpListenerConfig.downstream_socket_config': 'Node reads every datagram whole (up to 64 KiB); there is no receive size or GRO to set',
  'xds.type.matcher.v3.Matcher.matcher_list': "the UDP proxy's matcher may only have on_no_match (one route for every session); give the cluster there",
  'xds.type.matcher.v3.Matcher.matcher_tree': "the UDP proxy's matcher may only have on_no_match (one route for every session); give the cluster there",
  'envoy.config.accesslog.v3.AccessLogFilter.traceable_filter': 'tracing is not supported',
  'envoy.config.accesslog.v3.AccessLogFilter.grpc_status_filter': 'gRPC status is not decoded; use a header_filter on grpc-status or a status_code_filter',
  'envoy.config.accesslog.v3.AccessLogFilter.metadata_filter': 'access logs are not filtered on dynamic metadata (%DYNAMIC_METADATA(…)% prints it)',
  'envoy.config.accesslog.v3.AccessLogFilter.log_type_filter': 'every entry is logged at the end of its request or connection; periodic and upstream log types are not produced',
  'envoy.config.accesslog.v3.AccessLogFilter.extension_filter': 'no access log filter extension is implemented',
  'envoy.config.core.v3.SubstitutionFormatString.formatters': 'no formatter extension is implemented',
  'envoy.config.tap.v3.TapConfig.tap_enabled': 'a tap session taps every matching request',
  'envoy.config.rbac.v3.Policy.condition': 'CEL conditions are not supported; use permissions and principals',
  'envoy.config.rbac.v3.Policy.checked_condition': 'CEL conditions are not supported; use permissions and principals',
  'envoy.config.rbac.v3.Permission.metadata': 'RBAC does not match on dynamic metadata; match on headers',
  'envoy.config.rbac.v3.Permission.matcher': 'extension matchers are not supported',
  'envoy.config.rbac.v3.Permission.uri_template': 'URI templates are not supported; use url_path',
  'envoy.config.rbac.v3.Principal.metadata': 'RBAC does not match on dynamic metadata; match on headers',
  'envoy.config.rbac.v3.Principal.filter_state': 'no filter of this proxy sets filter state',
  'envoy.config.tap.v3.OutputConfig.streaming': 'traces are buffered per request (up to max_buffered_rx_bytes / max_buffered_tx_bytes of body)',
  'envoy.config.tap.v3.OutputSink.file_per_tap': 'the admin sinks (streaming_admin, buffered_admin) are supported',
  'envoy.config.tap.v3.OutputSink.streaming_grpc': 'the admin sinks (streaming_admin, buffered_admin) are supported',
  'envoy.config.tap.v3.OutputSink.custom_sink': 'the admin sinks (streaming_admin, buffered_admin) are supported',
  'envoy.config.tap.v3.MatchPredicate.http_request_trailers_match': 'trailers are not forwarded by this proxy',
  'envoy.config.tap.v3.MatchPredicate.http_response_trailers_match': 'trailers are not forwarded by this proxy',
  'envoy.config.tap.v3.MatchPredicate.http_request_generic_body_match': 'match on headers; body matching is not implemented',
  'envoy.config.tap.v3.MatchPredicate.http_response_generic_body_match': 'match on headers; body matching is not implemented',
  'envoy.config.common.matcher.v3.MatchPredicate.http_request_trailers_match': 'trailers are not forwarded by this proxy',
  'envoy.config.common.matcher.v3.MatchPredicate.http_response_trailers_match': 'trailers are not forwarded by this proxy',
  'envoy.config.common.matcher.v3.MatchPredicate.http_request_generic_body_match': 'match on headers; body matching is not implemented',
  'envoy.config.common.matcher.v3.MatchPredicate.http_response_generic_body_match': 'match on headers; body matching is not implemented',
  'envoy.config.bootstrap.v3.RuntimeLayer.rtds_layer': 'RTDS is not supported; use static, disk or admin layers',
  'envoy.config.listener.v3.FilterChainMatch.address_suffix': 'Envoy does not implement it either (not-implemented-hide)',
  'envoy.config.listener.v3.FilterChainMatch.suffix_len': 'Envoy does not implement it either (not-implemented-hide)',
};

/** The core's reasons; each extension's (its descriptor's `refusalReasons`) are in extension-messages.ts. */
const HINTS: Readonly<Record<string, string>> = CORE_HINTS;


export function checkSupportedFields(type: protobuf.Type, message: JsonObject, path: string, errors: ConfigError[]): void {
  const name = fullName(type);
  if (name.startsWith('google.protobuf.')) return;
  const supported = supportedSets.get(name) ?? extensionFields.get(name);
  for (const [key, value] of Object.entries(message)) {
    const fieldPath = childPath(path, key);
    if (supported && !supported.has(key)) {
      const hint = HINTS[`${name}.${key}`] ?? extensionReasons.get(`${name}.${key}`);
      errors.push(configError('unsupported_field', fieldPath, `field '${key}' of ${name} is not supported by this proxy${hint ? ` (${hint})` : ''}`));
      continue;
    }
    const field = type.fields[key];
    if (!field || !(field.resolvedType instanceof protobuf.Type)) continue;
    const inner = field.resolvedType;
    const visit = (v: unknown, p: string) => {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) return;
      if (fullName(inner) === 'google.protobuf.Any') {
        const { '@type': typeUrl, ...fields } = v as JsonObject;
        const anyType = lookupTypeOrNull(inner.root as protobuf.Root, typeNameOfUrl(String(typeUrl)));
        if (anyType) checkSupportedFields(anyType, fields, p, errors);
      } else {
        checkSupportedFields(inner, v as JsonObject, p, errors);
      }
    };
    if (field.map) for (const [k, v] of Object.entries(value as JsonObject)) visit(v, `${fieldPath}[${JSON.stringify(k)}]`);
    else if (field.repeated) (value as unknown[]).forEach((v, i) => visit(v, `${fieldPath}[${i}]`));
    else visit(value, fieldPath);
  }
}

/** A field of a partly implemented message that a bootstrap may not set, and why, when the reason is written down. */
export interface Refusal {
  message: string;
  field: string;
  deprecated: boolean;
  reason?: string;
}

/**
 * Every field this proxy refuses in the messages it implements in part, message by message (in
 * SUPPORTED's order): what `scripts/refused-fields.ts` prints for operators and issue notes.
 */
export function refusedFields(root: protobuf.Root): Refusal[] {
  const out: Refusal[] = [];
  for (const [message, fields] of [...supportedSets, ...extensionFields]) {
    const type = lookupTypeOrNull(root, message);
    if (!type) continue;
    for (const field of type.fieldsArray) {
      if (fields.has(field.name)) continue;
      const reason = HINTS[`${message}.${field.name}`] ?? extensionReasons.get(`${message}.${field.name}`);
      out.push({ message, field: field.name, deprecated: field.options?.deprecated === true, ...(reason ? { reason } : {}) });
    }
  }
  return out;
}
