// Generated from the vendored Envoy API (third_party/envoy-api) by
// scripts/generate-config-types.ts: do not edit; run `npm run generate` after the API changes.
//
// The configuration as the loader produces it (canonical proto3 JSON, the protos' field names):
// durations and timestamps are strings ("5s"), 64-bit integers numbers where safe and strings
// beyond, bytes base64, wrappers their value, an Any its message with an inline "@type". Every
// field may be absent. Enums are their value names.
/* eslint-disable */

/** A google.protobuf.Any: its message, with the type URL inline. */
export interface Any {
  '@type': string;
  [field: string]: unknown;
}

export declare namespace envoy {
  export namespace config {
    export namespace accesslog {
      export namespace v3 {
        export interface AccessLog {
          name?: string;
          filter?: envoy.config.accesslog.v3.AccessLogFilter;
          typed_config?: Any;
        }
        export interface AccessLogFilter {
          status_code_filter?: envoy.config.accesslog.v3.StatusCodeFilter;
          duration_filter?: envoy.config.accesslog.v3.DurationFilter;
          not_health_check_filter?: envoy.config.accesslog.v3.NotHealthCheckFilter;
          traceable_filter?: envoy.config.accesslog.v3.TraceableFilter;
          runtime_filter?: envoy.config.accesslog.v3.RuntimeFilter;
          and_filter?: envoy.config.accesslog.v3.AndFilter;
          or_filter?: envoy.config.accesslog.v3.OrFilter;
          header_filter?: envoy.config.accesslog.v3.HeaderFilter;
          response_flag_filter?: envoy.config.accesslog.v3.ResponseFlagFilter;
          grpc_status_filter?: envoy.config.accesslog.v3.GrpcStatusFilter;
          extension_filter?: envoy.config.accesslog.v3.ExtensionFilter;
          metadata_filter?: envoy.config.accesslog.v3.MetadataFilter;
          log_type_filter?: envoy.config.accesslog.v3.LogTypeFilter;
        }
        export interface AndFilter {
          filters?: envoy.config.accesslog.v3.AccessLogFilter[];
        }
        export interface ComparisonFilter {
          op?: envoy.config.accesslog.v3.ComparisonFilter.Op;
          value?: envoy.config.core.v3.RuntimeUInt32;
        }
        export interface DurationFilter {
          comparison?: envoy.config.accesslog.v3.ComparisonFilter;
        }
        export interface ExtensionFilter {
          name?: string;
          typed_config?: Any;
        }
        export interface GrpcStatusFilter {
          statuses?: envoy.config.accesslog.v3.GrpcStatusFilter.Status[];
          exclude?: boolean;
        }
        export interface HeaderFilter {
          header?: envoy.config.route.v3.HeaderMatcher;
        }
        export interface LogTypeFilter {
          types?: envoy.data.accesslog.v3.AccessLogType[];
          exclude?: boolean;
        }
        export interface MetadataFilter {
          matcher?: envoy.type.matcher.v3.MetadataMatcher;
          match_if_key_not_found?: boolean;
        }
        export interface NotHealthCheckFilter {
        }
        export interface OrFilter {
          filters?: envoy.config.accesslog.v3.AccessLogFilter[];
        }
        export interface ResponseFlagFilter {
          flags?: string[];
        }
        export interface RuntimeFilter {
          runtime_key?: string;
          percent_sampled?: envoy.type.v3.FractionalPercent;
          use_independent_randomness?: boolean;
        }
        export interface StatusCodeFilter {
          comparison?: envoy.config.accesslog.v3.ComparisonFilter;
        }
        export interface TraceableFilter {
        }
        export namespace ComparisonFilter {
          export type Op = 'EQ' | 'GE' | 'LE' | 'NE';
        }
        export namespace GrpcStatusFilter {
          export type Status = 'OK' | 'CANCELED' | 'UNKNOWN' | 'INVALID_ARGUMENT' | 'DEADLINE_EXCEEDED' | 'NOT_FOUND' | 'ALREADY_EXISTS' | 'PERMISSION_DENIED' | 'RESOURCE_EXHAUSTED' | 'FAILED_PRECONDITION' | 'ABORTED' | 'OUT_OF_RANGE' | 'UNIMPLEMENTED' | 'INTERNAL' | 'UNAVAILABLE' | 'DATA_LOSS' | 'UNAUTHENTICATED';
        }
      }
    }
    export namespace bootstrap {
      export namespace v3 {
        export interface Admin {
          access_log?: envoy.config.accesslog.v3.AccessLog[];
          /** @deprecated */
          access_log_path?: string;
          profile_path?: string;
          address?: envoy.config.core.v3.Address;
          socket_options?: envoy.config.core.v3.SocketOption[];
          ignore_global_conn_limit?: boolean;
          allow_paths?: envoy.type.matcher.v3.StringMatcher[];
        }
        export interface Bootstrap {
          node?: envoy.config.core.v3.Node;
          node_context_params?: string[];
          static_resources?: envoy.config.bootstrap.v3.Bootstrap.StaticResources;
          dynamic_resources?: envoy.config.bootstrap.v3.Bootstrap.DynamicResources;
          cluster_manager?: envoy.config.bootstrap.v3.ClusterManager;
          hds_config?: envoy.config.core.v3.ApiConfigSource;
          flags_path?: string;
          stats_sinks?: envoy.config.metrics.v3.StatsSink[];
          deferred_stat_options?: envoy.config.bootstrap.v3.Bootstrap.DeferredStatOptions;
          stats_config?: envoy.config.metrics.v3.StatsConfig;
          stats_flush_interval?: string;
          stats_flush_on_admin?: boolean;
          stats_eviction_interval?: string;
          /** @deprecated */
          watchdog?: envoy.config.bootstrap.v3.Watchdog;
          watchdogs?: envoy.config.bootstrap.v3.Watchdogs;
          /** @deprecated */
          tracing?: envoy.config.trace.v3.Tracing;
          layered_runtime?: envoy.config.bootstrap.v3.LayeredRuntime;
          admin?: envoy.config.bootstrap.v3.Admin;
          overload_manager?: envoy.config.overload.v3.OverloadManager;
          enable_dispatcher_stats?: boolean;
          header_prefix?: string;
          stats_server_version_override?: number | string;
          /** @deprecated */
          use_tcp_for_dns_lookups?: boolean;
          /** @deprecated */
          dns_resolution_config?: envoy.config.core.v3.DnsResolutionConfig;
          typed_dns_resolver_config?: envoy.config.core.v3.TypedExtensionConfig;
          bootstrap_extensions?: envoy.config.core.v3.TypedExtensionConfig[];
          fatal_actions?: envoy.config.bootstrap.v3.FatalAction[];
          config_sources?: envoy.config.core.v3.ConfigSource[];
          default_config_source?: envoy.config.core.v3.ConfigSource;
          default_socket_interface?: string;
          certificate_provider_instances?: { [key: string]: envoy.config.core.v3.TypedExtensionConfig };
          inline_headers?: envoy.config.bootstrap.v3.CustomInlineHeader[];
          perf_tracing_file_path?: string;
          default_regex_engine?: envoy.config.core.v3.TypedExtensionConfig;
          xds_delegate_extension?: envoy.config.core.v3.TypedExtensionConfig;
          xds_config_tracker_extension?: envoy.config.core.v3.TypedExtensionConfig;
          listener_manager?: envoy.config.core.v3.TypedExtensionConfig;
          application_log_config?: envoy.config.bootstrap.v3.Bootstrap.ApplicationLogConfig;
          grpc_async_client_manager_config?: envoy.config.bootstrap.v3.Bootstrap.GrpcAsyncClientManagerConfig;
          memory_allocator_manager?: envoy.config.bootstrap.v3.MemoryAllocatorManager;
        }
        export interface ClusterManager {
          local_cluster_name?: string;
          outlier_detection?: envoy.config.bootstrap.v3.ClusterManager.OutlierDetection;
          upstream_bind_config?: envoy.config.core.v3.BindConfig;
          load_stats_config?: envoy.config.core.v3.ApiConfigSource;
          enable_deferred_cluster_creation?: boolean;
        }
        export interface CustomInlineHeader {
          inline_header_name?: string;
          inline_header_type?: envoy.config.bootstrap.v3.CustomInlineHeader.InlineHeaderType;
        }
        export interface FatalAction {
          config?: envoy.config.core.v3.TypedExtensionConfig;
        }
        export interface LayeredRuntime {
          layers?: envoy.config.bootstrap.v3.RuntimeLayer[];
        }
        export interface MemoryAllocatorManager {
          bytes_to_release?: number | string;
          memory_release_interval?: string;
        }
        export interface RuntimeLayer {
          name?: string;
          static_layer?: { [key: string]: unknown };
          disk_layer?: envoy.config.bootstrap.v3.RuntimeLayer.DiskLayer;
          admin_layer?: envoy.config.bootstrap.v3.RuntimeLayer.AdminLayer;
          rtds_layer?: envoy.config.bootstrap.v3.RuntimeLayer.RtdsLayer;
        }
        export interface Watchdog {
          actions?: envoy.config.bootstrap.v3.Watchdog.WatchdogAction[];
          miss_timeout?: string;
          megamiss_timeout?: string;
          kill_timeout?: string;
          max_kill_timeout_jitter?: string;
          multikill_timeout?: string;
          multikill_threshold?: envoy.type.v3.Percent;
        }
        export interface Watchdogs {
          main_thread_watchdog?: envoy.config.bootstrap.v3.Watchdog;
          worker_watchdog?: envoy.config.bootstrap.v3.Watchdog;
        }
        export namespace Bootstrap {
          export interface ApplicationLogConfig {
            log_format?: envoy.config.bootstrap.v3.Bootstrap.ApplicationLogConfig.LogFormat;
          }
          export interface DeferredStatOptions {
            enable_deferred_creation_stats?: boolean;
          }
          export interface DynamicResources {
            lds_config?: envoy.config.core.v3.ConfigSource;
            lds_resources_locator?: string;
            cds_config?: envoy.config.core.v3.ConfigSource;
            cds_resources_locator?: string;
            ads_config?: envoy.config.core.v3.ApiConfigSource;
          }
          export interface GrpcAsyncClientManagerConfig {
            max_cached_entry_idle_duration?: string;
          }
          export interface StaticResources {
            listeners?: envoy.config.listener.v3.Listener[];
            clusters?: envoy.config.cluster.v3.Cluster[];
            secrets?: envoy.extensions.transport_sockets.tls.v3.Secret[];
          }
          export namespace ApplicationLogConfig {
            export interface LogFormat {
              json_format?: { [key: string]: unknown };
              text_format?: string;
            }
          }
        }
        export namespace ClusterManager {
          export interface OutlierDetection {
            event_log_path?: string;
            event_service?: envoy.config.core.v3.EventServiceConfig;
          }
        }
        export namespace CustomInlineHeader {
          export type InlineHeaderType = 'REQUEST_HEADER' | 'REQUEST_TRAILER' | 'RESPONSE_HEADER' | 'RESPONSE_TRAILER';
        }
        export namespace RuntimeLayer {
          export interface AdminLayer {
          }
          export interface DiskLayer {
            symlink_root?: string;
            subdirectory?: string;
            append_service_cluster?: boolean;
          }
          export interface RtdsLayer {
            name?: string;
            rtds_config?: envoy.config.core.v3.ConfigSource;
          }
        }
        export namespace Watchdog {
          export interface WatchdogAction {
            config?: envoy.config.core.v3.TypedExtensionConfig;
            event?: envoy.config.bootstrap.v3.Watchdog.WatchdogAction.WatchdogEvent;
          }
          export namespace WatchdogAction {
            export type WatchdogEvent = 'UNKNOWN' | 'KILL' | 'MULTIKILL' | 'MEGAMISS' | 'MISS';
          }
        }
      }
    }
    export namespace cluster {
      export namespace v3 {
        export interface CircuitBreakers {
          thresholds?: envoy.config.cluster.v3.CircuitBreakers.Thresholds[];
          per_host_thresholds?: envoy.config.cluster.v3.CircuitBreakers.Thresholds[];
        }
        export interface Cluster {
          transport_socket_matches?: envoy.config.cluster.v3.Cluster.TransportSocketMatch[];
          transport_socket_matcher?: xds.type.matcher.v3.Matcher;
          name?: string;
          alt_stat_name?: string;
          type?: envoy.config.cluster.v3.Cluster.DiscoveryType;
          cluster_type?: envoy.config.cluster.v3.Cluster.CustomClusterType;
          eds_cluster_config?: envoy.config.cluster.v3.Cluster.EdsClusterConfig;
          connect_timeout?: string;
          per_connection_buffer_limit_bytes?: number;
          lb_policy?: envoy.config.cluster.v3.Cluster.LbPolicy;
          load_assignment?: envoy.config.endpoint.v3.ClusterLoadAssignment;
          health_checks?: envoy.config.core.v3.HealthCheck[];
          /** @deprecated */
          max_requests_per_connection?: number;
          circuit_breakers?: envoy.config.cluster.v3.CircuitBreakers;
          /** @deprecated */
          upstream_http_protocol_options?: envoy.config.core.v3.UpstreamHttpProtocolOptions;
          /** @deprecated */
          common_http_protocol_options?: envoy.config.core.v3.HttpProtocolOptions;
          /** @deprecated */
          http_protocol_options?: envoy.config.core.v3.Http1ProtocolOptions;
          /** @deprecated */
          http2_protocol_options?: envoy.config.core.v3.Http2ProtocolOptions;
          typed_extension_protocol_options?: { [key: string]: Any };
          /** @deprecated */
          dns_refresh_rate?: string;
          /** @deprecated */
          dns_jitter?: string;
          /** @deprecated */
          dns_failure_refresh_rate?: envoy.config.cluster.v3.Cluster.RefreshRate;
          /** @deprecated */
          respect_dns_ttl?: boolean;
          dns_lookup_family?: envoy.config.cluster.v3.Cluster.DnsLookupFamily;
          /** @deprecated */
          dns_resolvers?: envoy.config.core.v3.Address[];
          /** @deprecated */
          use_tcp_for_dns_lookups?: boolean;
          /** @deprecated */
          dns_resolution_config?: envoy.config.core.v3.DnsResolutionConfig;
          typed_dns_resolver_config?: envoy.config.core.v3.TypedExtensionConfig;
          wait_for_warm_on_init?: boolean;
          outlier_detection?: envoy.config.cluster.v3.OutlierDetection;
          cleanup_interval?: string;
          upstream_bind_config?: envoy.config.core.v3.BindConfig;
          lb_subset_config?: envoy.config.cluster.v3.Cluster.LbSubsetConfig;
          ring_hash_lb_config?: envoy.config.cluster.v3.Cluster.RingHashLbConfig;
          maglev_lb_config?: envoy.config.cluster.v3.Cluster.MaglevLbConfig;
          original_dst_lb_config?: envoy.config.cluster.v3.Cluster.OriginalDstLbConfig;
          least_request_lb_config?: envoy.config.cluster.v3.Cluster.LeastRequestLbConfig;
          round_robin_lb_config?: envoy.config.cluster.v3.Cluster.RoundRobinLbConfig;
          common_lb_config?: envoy.config.cluster.v3.Cluster.CommonLbConfig;
          transport_socket?: envoy.config.core.v3.TransportSocket;
          metadata?: envoy.config.core.v3.Metadata;
          /** @deprecated */
          protocol_selection?: envoy.config.cluster.v3.Cluster.ClusterProtocolSelection;
          upstream_connection_options?: envoy.config.cluster.v3.UpstreamConnectionOptions;
          close_connections_on_host_health_failure?: boolean;
          ignore_health_on_host_removal?: boolean;
          filters?: envoy.config.cluster.v3.Filter[];
          load_balancing_policy?: envoy.config.cluster.v3.LoadBalancingPolicy;
          lrs_server?: envoy.config.core.v3.ConfigSource;
          lrs_report_endpoint_metrics?: string[];
          /** @deprecated */
          track_timeout_budgets?: boolean;
          upstream_config?: envoy.config.core.v3.TypedExtensionConfig;
          track_cluster_stats?: envoy.config.cluster.v3.TrackClusterStats;
          preconnect_policy?: envoy.config.cluster.v3.Cluster.PreconnectPolicy;
          connection_pool_per_downstream_connection?: boolean;
        }
        export interface Filter {
          name?: string;
          typed_config?: Any;
          config_discovery?: envoy.config.core.v3.ExtensionConfigSource;
        }
        export interface LoadBalancingPolicy {
          policies?: envoy.config.cluster.v3.LoadBalancingPolicy.Policy[];
        }
        export interface OutlierDetection {
          consecutive_5xx?: number;
          interval?: string;
          base_ejection_time?: string;
          max_ejection_percent?: number;
          enforcing_consecutive_5xx?: number;
          enforcing_success_rate?: number;
          success_rate_minimum_hosts?: number;
          success_rate_request_volume?: number;
          success_rate_stdev_factor?: number;
          consecutive_gateway_failure?: number;
          enforcing_consecutive_gateway_failure?: number;
          split_external_local_origin_errors?: boolean;
          consecutive_local_origin_failure?: number;
          enforcing_consecutive_local_origin_failure?: number;
          enforcing_local_origin_success_rate?: number;
          failure_percentage_threshold?: number;
          enforcing_failure_percentage?: number;
          enforcing_failure_percentage_local_origin?: number;
          failure_percentage_minimum_hosts?: number;
          failure_percentage_request_volume?: number;
          max_ejection_time?: string;
          max_ejection_time_jitter?: string;
          successful_active_health_check_uneject_host?: boolean;
          monitors?: envoy.config.core.v3.TypedExtensionConfig[];
          always_eject_one_host?: boolean;
        }
        export interface TrackClusterStats {
          timeout_budgets?: boolean;
          request_response_sizes?: boolean;
          per_endpoint_stats?: boolean;
        }
        export interface UpstreamConnectionOptions {
          tcp_keepalive?: envoy.config.core.v3.TcpKeepalive;
          set_local_interface_name_on_upstream_connections?: boolean;
          happy_eyeballs_config?: envoy.config.cluster.v3.UpstreamConnectionOptions.HappyEyeballsConfig;
        }
        export namespace CircuitBreakers {
          export interface Thresholds {
            priority?: envoy.config.core.v3.RoutingPriority;
            max_connections?: number;
            max_pending_requests?: number;
            max_requests?: number;
            max_retries?: number;
            retry_budget?: envoy.config.cluster.v3.CircuitBreakers.Thresholds.RetryBudget;
            track_remaining?: boolean;
            max_connection_pools?: number;
          }
          export namespace Thresholds {
            export interface RetryBudget {
              budget_percent?: envoy.type.v3.Percent;
              min_retry_concurrency?: number;
            }
          }
        }
        export namespace Cluster {
          export type ClusterProtocolSelection = 'USE_CONFIGURED_PROTOCOL' | 'USE_DOWNSTREAM_PROTOCOL';
          export interface CommonLbConfig {
            healthy_panic_threshold?: envoy.type.v3.Percent;
            zone_aware_lb_config?: envoy.config.cluster.v3.Cluster.CommonLbConfig.ZoneAwareLbConfig;
            locality_weighted_lb_config?: envoy.config.cluster.v3.Cluster.CommonLbConfig.LocalityWeightedLbConfig;
            update_merge_window?: string;
            ignore_new_hosts_until_first_hc?: boolean;
            close_connections_on_host_set_change?: boolean;
            consistent_hashing_lb_config?: envoy.config.cluster.v3.Cluster.CommonLbConfig.ConsistentHashingLbConfig;
            override_host_status?: envoy.config.core.v3.HealthStatusSet;
          }
          export interface CustomClusterType {
            name?: string;
            typed_config?: Any;
          }
          export type DiscoveryType = 'STATIC' | 'STRICT_DNS' | 'LOGICAL_DNS' | 'EDS' | 'ORIGINAL_DST';
          export type DnsLookupFamily = 'AUTO' | 'V4_ONLY' | 'V6_ONLY' | 'V4_PREFERRED' | 'ALL';
          export interface EdsClusterConfig {
            eds_config?: envoy.config.core.v3.ConfigSource;
            service_name?: string;
          }
          export type LbPolicy = 'ROUND_ROBIN' | 'LEAST_REQUEST' | 'RING_HASH' | 'RANDOM' | 'MAGLEV' | 'CLUSTER_PROVIDED' | 'LOAD_BALANCING_POLICY_CONFIG';
          export interface LbSubsetConfig {
            fallback_policy?: envoy.config.cluster.v3.Cluster.LbSubsetConfig.LbSubsetFallbackPolicy;
            default_subset?: { [key: string]: unknown };
            subset_selectors?: envoy.config.cluster.v3.Cluster.LbSubsetConfig.LbSubsetSelector[];
            locality_weight_aware?: boolean;
            scale_locality_weight?: boolean;
            panic_mode_any?: boolean;
            list_as_any?: boolean;
            metadata_fallback_policy?: envoy.config.cluster.v3.Cluster.LbSubsetConfig.LbSubsetMetadataFallbackPolicy;
          }
          export interface LeastRequestLbConfig {
            choice_count?: number;
            active_request_bias?: envoy.config.core.v3.RuntimeDouble;
            slow_start_config?: envoy.config.cluster.v3.Cluster.SlowStartConfig;
          }
          export interface MaglevLbConfig {
            table_size?: number | string;
          }
          export interface OriginalDstLbConfig {
            use_http_header?: boolean;
            http_header_name?: string;
            upstream_port_override?: number;
            metadata_key?: envoy.type.metadata.v3.MetadataKey;
          }
          export interface PreconnectPolicy {
            per_upstream_preconnect_ratio?: number;
            predictive_preconnect_ratio?: number;
          }
          export interface RefreshRate {
            base_interval?: string;
            max_interval?: string;
          }
          export interface RingHashLbConfig {
            minimum_ring_size?: number | string;
            hash_function?: envoy.config.cluster.v3.Cluster.RingHashLbConfig.HashFunction;
            maximum_ring_size?: number | string;
          }
          export interface RoundRobinLbConfig {
            slow_start_config?: envoy.config.cluster.v3.Cluster.SlowStartConfig;
          }
          export interface SlowStartConfig {
            slow_start_window?: string;
            aggression?: envoy.config.core.v3.RuntimeDouble;
            min_weight_percent?: envoy.type.v3.Percent;
          }
          export interface TransportSocketMatch {
            name?: string;
            match?: { [key: string]: unknown };
            transport_socket?: envoy.config.core.v3.TransportSocket;
          }
          export namespace CommonLbConfig {
            export interface ConsistentHashingLbConfig {
              use_hostname_for_hashing?: boolean;
              hash_balance_factor?: number;
            }
            export interface LocalityWeightedLbConfig {
            }
            export interface ZoneAwareLbConfig {
              routing_enabled?: envoy.type.v3.Percent;
              min_cluster_size?: number | string;
              fail_traffic_on_panic?: boolean;
            }
          }
          export namespace LbSubsetConfig {
            export type LbSubsetFallbackPolicy = 'NO_FALLBACK' | 'ANY_ENDPOINT' | 'DEFAULT_SUBSET';
            export type LbSubsetMetadataFallbackPolicy = 'METADATA_NO_FALLBACK' | 'FALLBACK_LIST';
            export interface LbSubsetSelector {
              keys?: string[];
              single_host_per_subset?: boolean;
              fallback_policy?: envoy.config.cluster.v3.Cluster.LbSubsetConfig.LbSubsetSelector.LbSubsetSelectorFallbackPolicy;
              fallback_keys_subset?: string[];
            }
            export namespace LbSubsetSelector {
              export type LbSubsetSelectorFallbackPolicy = 'NOT_DEFINED' | 'NO_FALLBACK' | 'ANY_ENDPOINT' | 'DEFAULT_SUBSET' | 'KEYS_SUBSET';
            }
          }
          export namespace RingHashLbConfig {
            export type HashFunction = 'XX_HASH' | 'MURMUR_HASH_2';
          }
        }
        export namespace LoadBalancingPolicy {
          export interface Policy {
            typed_extension_config?: envoy.config.core.v3.TypedExtensionConfig;
          }
        }
        export namespace UpstreamConnectionOptions {
          export type FirstAddressFamilyVersion = 'DEFAULT' | 'V4' | 'V6';
          export interface HappyEyeballsConfig {
            first_address_family_version?: envoy.config.cluster.v3.UpstreamConnectionOptions.FirstAddressFamilyVersion;
            first_address_family_count?: number;
          }
        }
      }
    }
    export namespace common {
      export namespace matcher {
        export namespace v3 {
          export interface HttpGenericBodyMatch {
            bytes_limit?: number;
            patterns?: envoy.config.common.matcher.v3.HttpGenericBodyMatch.GenericTextMatch[];
          }
          export interface HttpHeadersMatch {
            headers?: envoy.config.route.v3.HeaderMatcher[];
          }
          export interface MatchPredicate {
            or_match?: envoy.config.common.matcher.v3.MatchPredicate.MatchSet;
            and_match?: envoy.config.common.matcher.v3.MatchPredicate.MatchSet;
            not_match?: envoy.config.common.matcher.v3.MatchPredicate;
            any_match?: boolean;
            http_request_headers_match?: envoy.config.common.matcher.v3.HttpHeadersMatch;
            http_request_trailers_match?: envoy.config.common.matcher.v3.HttpHeadersMatch;
            http_response_headers_match?: envoy.config.common.matcher.v3.HttpHeadersMatch;
            http_response_trailers_match?: envoy.config.common.matcher.v3.HttpHeadersMatch;
            http_request_generic_body_match?: envoy.config.common.matcher.v3.HttpGenericBodyMatch;
            http_response_generic_body_match?: envoy.config.common.matcher.v3.HttpGenericBodyMatch;
          }
          export namespace HttpGenericBodyMatch {
            export interface GenericTextMatch {
              string_match?: string;
              binary_match?: string;
            }
          }
          export namespace MatchPredicate {
            export interface MatchSet {
              rules?: envoy.config.common.matcher.v3.MatchPredicate[];
            }
          }
        }
      }
      export namespace mutation_rules {
        export namespace v3 {
          export interface HeaderMutation {
            remove?: string;
            append?: envoy.config.core.v3.HeaderValueOption;
            remove_on_match?: envoy.config.common.mutation_rules.v3.HeaderMutation.RemoveOnMatch;
          }
          export interface HeaderMutationRules {
            allow_all_routing?: boolean;
            allow_envoy?: boolean;
            disallow_system?: boolean;
            disallow_all?: boolean;
            allow_expression?: envoy.type.matcher.v3.RegexMatcher;
            disallow_expression?: envoy.type.matcher.v3.RegexMatcher;
            disallow_is_error?: boolean;
          }
          export namespace HeaderMutation {
            export interface RemoveOnMatch {
              key_matcher?: envoy.type.matcher.v3.StringMatcher;
            }
          }
        }
      }
    }
    export namespace core {
      export namespace v3 {
        export interface Address {
          socket_address?: envoy.config.core.v3.SocketAddress;
          pipe?: envoy.config.core.v3.Pipe;
          envoy_internal_address?: envoy.config.core.v3.EnvoyInternalAddress;
        }
        export interface AggregatedConfigSource {
        }
        export interface AlternateProtocolsCacheOptions {
          name?: string;
          max_entries?: number;
          key_value_store_config?: envoy.config.core.v3.TypedExtensionConfig;
          prepopulated_entries?: envoy.config.core.v3.AlternateProtocolsCacheOptions.AlternateProtocolsCacheEntry[];
          canonical_suffixes?: string[];
        }
        export interface ApiConfigSource {
          api_type?: envoy.config.core.v3.ApiConfigSource.ApiType;
          transport_api_version?: envoy.config.core.v3.ApiVersion;
          cluster_names?: string[];
          grpc_services?: envoy.config.core.v3.GrpcService[];
          refresh_delay?: string;
          request_timeout?: string;
          rate_limit_settings?: envoy.config.core.v3.RateLimitSettings;
          set_node_on_first_message_only?: boolean;
          config_validators?: envoy.config.core.v3.TypedExtensionConfig[];
        }
        export type ApiVersion = 'AUTO' | 'V2' | 'V3';
        export interface BackoffStrategy {
          base_interval?: string;
          max_interval?: string;
        }
        export interface BindConfig {
          source_address?: envoy.config.core.v3.SocketAddress;
          freebind?: boolean;
          socket_options?: envoy.config.core.v3.SocketOption[];
          extra_source_addresses?: envoy.config.core.v3.ExtraSourceAddress[];
          /** @deprecated */
          additional_source_addresses?: envoy.config.core.v3.SocketAddress[];
          local_address_selector?: envoy.config.core.v3.TypedExtensionConfig;
        }
        export interface BuildVersion {
          version?: envoy.type.v3.SemanticVersion;
          metadata?: { [key: string]: unknown };
        }
        export interface CelExpressionConfig {
          enable_string_conversion?: boolean;
          enable_string_concat?: boolean;
          enable_string_functions?: boolean;
        }
        export interface CidrRange {
          address_prefix?: string;
          prefix_len?: number;
        }
        export interface ConfigSource {
          authorities?: xds.core.v3.Authority[];
          /** @deprecated */
          path?: string;
          path_config_source?: envoy.config.core.v3.PathConfigSource;
          api_config_source?: envoy.config.core.v3.ApiConfigSource;
          ads?: envoy.config.core.v3.AggregatedConfigSource;
          self?: envoy.config.core.v3.SelfConfigSource;
          initial_fetch_timeout?: string;
          resource_api_version?: envoy.config.core.v3.ApiVersion;
        }
        export interface DataSource {
          filename?: string;
          inline_bytes?: string;
          inline_string?: string;
          environment_variable?: string;
          watched_directory?: envoy.config.core.v3.WatchedDirectory;
        }
        export interface DnsResolutionConfig {
          resolvers?: envoy.config.core.v3.Address[];
          dns_resolver_options?: envoy.config.core.v3.DnsResolverOptions;
        }
        export interface DnsResolverOptions {
          use_tcp_for_dns_lookups?: boolean;
          no_default_search_domain?: boolean;
        }
        export interface EnvoyInternalAddress {
          server_listener_name?: string;
          endpoint_id?: string;
        }
        export interface EventServiceConfig {
          grpc_service?: envoy.config.core.v3.GrpcService;
        }
        export interface Extension {
          name?: string;
          category?: string;
          /** @deprecated */
          type_descriptor?: string;
          version?: envoy.config.core.v3.BuildVersion;
          disabled?: boolean;
          type_urls?: string[];
        }
        export interface ExtensionConfigSource {
          config_source?: envoy.config.core.v3.ConfigSource;
          default_config?: Any;
          apply_default_config_without_warming?: boolean;
          type_urls?: string[];
        }
        export interface ExtraSourceAddress {
          address?: envoy.config.core.v3.SocketAddress;
          socket_options?: envoy.config.core.v3.SocketOptionsOverride;
        }
        export interface GrpcService {
          envoy_grpc?: envoy.config.core.v3.GrpcService.EnvoyGrpc;
          google_grpc?: envoy.config.core.v3.GrpcService.GoogleGrpc;
          timeout?: string;
          initial_metadata?: envoy.config.core.v3.HeaderValue[];
          retry_policy?: envoy.config.core.v3.RetryPolicy;
        }
        export interface HeaderValue {
          key?: string;
          value?: string;
          raw_value?: string;
        }
        export interface HeaderValueOption {
          header?: envoy.config.core.v3.HeaderValue;
          /** @deprecated */
          append?: boolean;
          append_action?: envoy.config.core.v3.HeaderValueOption.HeaderAppendAction;
          keep_empty_value?: boolean;
        }
        export interface HealthCheck {
          timeout?: string;
          interval?: string;
          initial_jitter?: string;
          interval_jitter?: string;
          interval_jitter_percent?: number;
          unhealthy_threshold?: number;
          healthy_threshold?: number;
          alt_port?: number;
          reuse_connection?: boolean;
          http_health_check?: envoy.config.core.v3.HealthCheck.HttpHealthCheck;
          tcp_health_check?: envoy.config.core.v3.HealthCheck.TcpHealthCheck;
          grpc_health_check?: envoy.config.core.v3.HealthCheck.GrpcHealthCheck;
          custom_health_check?: envoy.config.core.v3.HealthCheck.CustomHealthCheck;
          no_traffic_interval?: string;
          no_traffic_healthy_interval?: string;
          unhealthy_interval?: string;
          unhealthy_edge_interval?: string;
          healthy_edge_interval?: string;
          /** @deprecated */
          event_log_path?: string;
          event_logger?: envoy.config.core.v3.TypedExtensionConfig[];
          event_service?: envoy.config.core.v3.EventServiceConfig;
          always_log_health_check_failures?: boolean;
          always_log_health_check_success?: boolean;
          tls_options?: envoy.config.core.v3.HealthCheck.TlsOptions;
          transport_socket_match_criteria?: { [key: string]: unknown };
        }
        export type HealthStatus = 'UNKNOWN' | 'HEALTHY' | 'UNHEALTHY' | 'DRAINING' | 'TIMEOUT' | 'DEGRADED';
        export interface HealthStatusSet {
          statuses?: envoy.config.core.v3.HealthStatus[];
        }
        export interface Http1ProtocolOptions {
          allow_absolute_url?: boolean;
          accept_http_10?: boolean;
          default_host_for_http_10?: string;
          header_key_format?: envoy.config.core.v3.Http1ProtocolOptions.HeaderKeyFormat;
          enable_trailers?: boolean;
          allow_chunked_length?: boolean;
          override_stream_error_on_invalid_http_message?: boolean;
          send_fully_qualified_url?: boolean;
          /** @deprecated */
          use_balsa_parser?: boolean;
          allow_custom_methods?: boolean;
          ignore_http_11_upgrade?: envoy.type.matcher.v3.StringMatcher[];
        }
        export interface Http2ProtocolOptions {
          hpack_table_size?: number;
          max_concurrent_streams?: number;
          initial_stream_window_size?: number;
          initial_connection_window_size?: number;
          allow_connect?: boolean;
          allow_metadata?: boolean;
          max_outbound_frames?: number;
          max_outbound_control_frames?: number;
          max_consecutive_inbound_frames_with_empty_payload?: number;
          max_inbound_priority_frames_per_stream?: number;
          max_inbound_window_update_frames_per_data_frame_sent?: number;
          /** @deprecated */
          stream_error_on_invalid_http_messaging?: boolean;
          override_stream_error_on_invalid_http_message?: boolean;
          custom_settings_parameters?: envoy.config.core.v3.Http2ProtocolOptions.SettingsParameter[];
          connection_keepalive?: envoy.config.core.v3.KeepaliveSettings;
          use_oghttp2_codec?: boolean;
          max_metadata_size?: number | string;
          enable_huffman_encoding?: boolean;
        }
        export interface Http3ProtocolOptions {
          quic_protocol_options?: envoy.config.core.v3.QuicProtocolOptions;
          override_stream_error_on_invalid_http_message?: boolean;
          allow_extended_connect?: boolean;
          allow_metadata?: boolean;
          disable_qpack?: boolean;
          disable_connection_flow_control_for_streams?: boolean;
        }
        export interface HttpProtocolOptions {
          idle_timeout?: string;
          max_connection_duration?: string;
          max_headers_count?: number;
          max_response_headers_kb?: number;
          max_stream_duration?: string;
          headers_with_underscores_action?: envoy.config.core.v3.HttpProtocolOptions.HeadersWithUnderscoresAction;
          max_requests_per_connection?: number;
        }
        export interface HttpService {
          http_uri?: envoy.config.core.v3.HttpUri;
          request_headers_to_add?: envoy.config.core.v3.HeaderValueOption[];
        }
        export interface HttpUri {
          uri?: string;
          cluster?: string;
          timeout?: string;
        }
        export interface JsonFormatOptions {
          /** @deprecated */
          sort_properties?: boolean;
        }
        export interface KeepaliveSettings {
          interval?: string;
          timeout?: string;
          interval_jitter?: envoy.type.v3.Percent;
          connection_idle_interval?: string;
        }
        export interface Locality {
          region?: string;
          zone?: string;
          sub_zone?: string;
        }
        export interface Metadata {
          filter_metadata?: { [key: string]: { [key: string]: unknown } };
          typed_filter_metadata?: { [key: string]: Any };
        }
        export interface Node {
          id?: string;
          cluster?: string;
          metadata?: { [key: string]: unknown };
          dynamic_parameters?: { [key: string]: xds.core.v3.ContextParams };
          locality?: envoy.config.core.v3.Locality;
          user_agent_name?: string;
          user_agent_version?: string;
          user_agent_build_version?: envoy.config.core.v3.BuildVersion;
          extensions?: envoy.config.core.v3.Extension[];
          client_features?: string[];
          /** @deprecated */
          listening_addresses?: envoy.config.core.v3.Address[];
        }
        export interface PathConfigSource {
          path?: string;
          watched_directory?: envoy.config.core.v3.WatchedDirectory;
        }
        export interface Pipe {
          path?: string;
          mode?: number;
        }
        export interface ProxyProtocolConfig {
          version?: envoy.config.core.v3.ProxyProtocolConfig.Version;
          pass_through_tlvs?: envoy.config.core.v3.ProxyProtocolPassThroughTLVs;
          added_tlvs?: envoy.config.core.v3.TlvEntry[];
        }
        export interface ProxyProtocolPassThroughTLVs {
          match_type?: envoy.config.core.v3.ProxyProtocolPassThroughTLVs.PassTLVsMatchType;
          tlv_type?: number[];
        }
        export interface QuicKeepAliveSettings {
          max_interval?: string;
          initial_interval?: string;
        }
        export interface QuicProtocolOptions {
          max_concurrent_streams?: number;
          initial_stream_window_size?: number;
          initial_connection_window_size?: number;
          num_timeouts_to_trigger_port_migration?: number;
          connection_keepalive?: envoy.config.core.v3.QuicKeepAliveSettings;
          connection_options?: string;
          client_connection_options?: string;
          idle_network_timeout?: string;
          max_packet_length?: number | string;
          client_packet_writer?: envoy.config.core.v3.TypedExtensionConfig;
          connection_migration?: envoy.config.core.v3.QuicProtocolOptions.ConnectionMigrationSettings;
        }
        export interface RateLimitSettings {
          max_tokens?: number;
          fill_rate?: number;
        }
        export type RequestMethod = 'METHOD_UNSPECIFIED' | 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE' | 'CONNECT' | 'OPTIONS' | 'TRACE' | 'PATCH';
        export interface RetryPolicy {
          retry_back_off?: envoy.config.core.v3.BackoffStrategy;
          num_retries?: number;
          retry_on?: string;
          retry_priority?: envoy.config.core.v3.RetryPolicy.RetryPriority;
          retry_host_predicate?: envoy.config.core.v3.RetryPolicy.RetryHostPredicate[];
          host_selection_retry_max_attempts?: number | string;
        }
        export type RoutingPriority = 'DEFAULT' | 'HIGH';
        export interface RuntimeDouble {
          default_value?: number;
          runtime_key?: string;
        }
        export interface RuntimeFeatureFlag {
          default_value?: boolean;
          runtime_key?: string;
        }
        export interface RuntimeFractionalPercent {
          default_value?: envoy.type.v3.FractionalPercent;
          runtime_key?: string;
        }
        export interface RuntimeUInt32 {
          default_value?: number;
          runtime_key?: string;
        }
        export interface SchemeHeaderTransformation {
          scheme_to_overwrite?: string;
          match_upstream?: boolean;
        }
        export interface SelfConfigSource {
          transport_api_version?: envoy.config.core.v3.ApiVersion;
        }
        export interface SocketAddress {
          protocol?: envoy.config.core.v3.SocketAddress.Protocol;
          address?: string;
          port_value?: number;
          named_port?: string;
          resolver_name?: string;
          ipv4_compat?: boolean;
          network_namespace_filepath?: string;
        }
        export interface SocketCmsgHeaders {
          level?: number;
          type?: number;
          expected_size?: number;
        }
        export interface SocketOption {
          description?: string;
          level?: number | string;
          name?: number | string;
          int_value?: number | string;
          buf_value?: string;
          state?: envoy.config.core.v3.SocketOption.SocketState;
          type?: envoy.config.core.v3.SocketOption.SocketType;
          ip_version?: envoy.config.core.v3.SocketOption.SocketIpVersion;
        }
        export interface SocketOptionsOverride {
          socket_options?: envoy.config.core.v3.SocketOption[];
        }
        export interface SubstitutionFormatString {
          /** @deprecated */
          text_format?: string;
          json_format?: { [key: string]: unknown };
          text_format_source?: envoy.config.core.v3.DataSource;
          omit_empty_values?: boolean;
          content_type?: string;
          formatters?: envoy.config.core.v3.TypedExtensionConfig[];
          json_format_options?: envoy.config.core.v3.JsonFormatOptions;
        }
        export interface TcpKeepalive {
          keepalive_probes?: number;
          keepalive_time?: number;
          keepalive_interval?: number;
        }
        export interface TlvEntry {
          type?: number;
          value?: string;
          format_string?: envoy.config.core.v3.SubstitutionFormatString;
        }
        export type TrafficDirection = 'UNSPECIFIED' | 'INBOUND' | 'OUTBOUND';
        export interface TransportSocket {
          name?: string;
          typed_config?: Any;
        }
        export interface TypedExtensionConfig {
          name?: string;
          typed_config?: Any;
        }
        export interface UdpSocketConfig {
          max_rx_datagram_size?: number | string;
          prefer_gro?: boolean;
        }
        export interface UpstreamHttpProtocolOptions {
          auto_sni?: boolean;
          auto_san_validation?: boolean;
          override_auto_sni_header?: string;
        }
        export interface WatchedDirectory {
          path?: string;
        }
        export namespace AlternateProtocolsCacheOptions {
          export interface AlternateProtocolsCacheEntry {
            hostname?: string;
            port?: number;
          }
        }
        export namespace ApiConfigSource {
          export type ApiType = 'DEPRECATED_AND_UNAVAILABLE_DO_NOT_USE' | 'REST' | 'GRPC' | 'DELTA_GRPC' | 'AGGREGATED_GRPC' | 'AGGREGATED_DELTA_GRPC';
        }
        export namespace GrpcService {
          export interface EnvoyGrpc {
            cluster_name?: string;
            authority?: string;
            retry_policy?: envoy.config.core.v3.RetryPolicy;
            max_receive_message_length?: number;
            skip_envoy_headers?: boolean;
          }
          export interface GoogleGrpc {
            target_uri?: string;
            channel_credentials?: envoy.config.core.v3.GrpcService.GoogleGrpc.ChannelCredentials;
            channel_credentials_plugin?: Any[];
            call_credentials?: envoy.config.core.v3.GrpcService.GoogleGrpc.CallCredentials[];
            call_credentials_plugin?: Any[];
            stat_prefix?: string;
            credentials_factory_name?: string;
            config?: { [key: string]: unknown };
            per_stream_buffer_limit_bytes?: number;
            channel_args?: envoy.config.core.v3.GrpcService.GoogleGrpc.ChannelArgs;
          }
          export namespace GoogleGrpc {
            export interface CallCredentials {
              access_token?: string;
              google_compute_engine?: Record<string, never>;
              google_refresh_token?: string;
              service_account_jwt_access?: envoy.config.core.v3.GrpcService.GoogleGrpc.CallCredentials.ServiceAccountJWTAccessCredentials;
              google_iam?: envoy.config.core.v3.GrpcService.GoogleGrpc.CallCredentials.GoogleIAMCredentials;
              from_plugin?: envoy.config.core.v3.GrpcService.GoogleGrpc.CallCredentials.MetadataCredentialsFromPlugin;
              sts_service?: envoy.config.core.v3.GrpcService.GoogleGrpc.CallCredentials.StsService;
            }
            export interface ChannelArgs {
              args?: { [key: string]: envoy.config.core.v3.GrpcService.GoogleGrpc.ChannelArgs.Value };
            }
            export interface ChannelCredentials {
              ssl_credentials?: envoy.config.core.v3.GrpcService.GoogleGrpc.SslCredentials;
              google_default?: Record<string, never>;
              local_credentials?: envoy.config.core.v3.GrpcService.GoogleGrpc.GoogleLocalCredentials;
            }
            export interface GoogleLocalCredentials {
            }
            export interface SslCredentials {
              root_certs?: envoy.config.core.v3.DataSource;
              private_key?: envoy.config.core.v3.DataSource;
              cert_chain?: envoy.config.core.v3.DataSource;
            }
            export namespace CallCredentials {
              export interface GoogleIAMCredentials {
                authorization_token?: string;
                authority_selector?: string;
              }
              export interface MetadataCredentialsFromPlugin {
                name?: string;
                typed_config?: Any;
              }
              export interface ServiceAccountJWTAccessCredentials {
                json_key?: string;
                token_lifetime_seconds?: number | string;
              }
              export interface StsService {
                token_exchange_service_uri?: string;
                resource?: string;
                audience?: string;
                scope?: string;
                requested_token_type?: string;
                subject_token_path?: string;
                subject_token_type?: string;
                actor_token_path?: string;
                actor_token_type?: string;
              }
            }
            export namespace ChannelArgs {
              export interface Value {
                string_value?: string;
                int_value?: number | string;
              }
            }
          }
        }
        export namespace HeaderValueOption {
          export type HeaderAppendAction = 'APPEND_IF_EXISTS_OR_ADD' | 'ADD_IF_ABSENT' | 'OVERWRITE_IF_EXISTS_OR_ADD' | 'OVERWRITE_IF_EXISTS';
        }
        export namespace HealthCheck {
          export interface CustomHealthCheck {
            name?: string;
            typed_config?: Any;
          }
          export interface GrpcHealthCheck {
            service_name?: string;
            authority?: string;
            initial_metadata?: envoy.config.core.v3.HeaderValueOption[];
          }
          export interface HttpHealthCheck {
            host?: string;
            path?: string;
            send?: envoy.config.core.v3.HealthCheck.Payload;
            receive?: envoy.config.core.v3.HealthCheck.Payload[];
            response_buffer_size?: number | string;
            request_headers_to_add?: envoy.config.core.v3.HeaderValueOption[];
            request_headers_to_remove?: string[];
            expected_statuses?: envoy.type.v3.Int64Range[];
            retriable_statuses?: envoy.type.v3.Int64Range[];
            codec_client_type?: envoy.type.v3.CodecClientType;
            service_name_matcher?: envoy.type.matcher.v3.StringMatcher;
            method?: envoy.config.core.v3.RequestMethod;
          }
          export interface Payload {
            text?: string;
            binary?: string;
          }
          export interface TcpHealthCheck {
            send?: envoy.config.core.v3.HealthCheck.Payload;
            receive?: envoy.config.core.v3.HealthCheck.Payload[];
            proxy_protocol_config?: envoy.config.core.v3.ProxyProtocolConfig;
          }
          export interface TlsOptions {
            alpn_protocols?: string[];
          }
        }
        export namespace Http1ProtocolOptions {
          export interface HeaderKeyFormat {
            proper_case_words?: envoy.config.core.v3.Http1ProtocolOptions.HeaderKeyFormat.ProperCaseWords;
            stateful_formatter?: envoy.config.core.v3.TypedExtensionConfig;
          }
          export namespace HeaderKeyFormat {
            export interface ProperCaseWords {
            }
          }
        }
        export namespace Http2ProtocolOptions {
          export interface SettingsParameter {
            identifier?: number;
            value?: number;
          }
        }
        export namespace HttpProtocolOptions {
          export type HeadersWithUnderscoresAction = 'ALLOW' | 'REJECT_REQUEST' | 'DROP_HEADER';
        }
        export namespace ProxyProtocolConfig {
          export type Version = 'V1' | 'V2';
        }
        export namespace ProxyProtocolPassThroughTLVs {
          export type PassTLVsMatchType = 'INCLUDE_ALL' | 'INCLUDE';
        }
        export namespace QuicProtocolOptions {
          export interface ConnectionMigrationSettings {
            migrate_idle_connections?: envoy.config.core.v3.QuicProtocolOptions.ConnectionMigrationSettings.MigrateIdleConnectionSettings;
            max_time_on_non_default_network?: string;
          }
          export namespace ConnectionMigrationSettings {
            export interface MigrateIdleConnectionSettings {
              max_idle_time_before_migration?: string;
            }
          }
        }
        export namespace RetryPolicy {
          export interface RetryHostPredicate {
            name?: string;
            typed_config?: Any;
          }
          export interface RetryPriority {
            name?: string;
            typed_config?: Any;
          }
        }
        export namespace SocketAddress {
          export type Protocol = 'TCP' | 'UDP';
        }
        export namespace SocketOption {
          export type SocketIpVersion = 'SOCKET_IP_VERSION_UNSPECIFIED' | 'SOCKET_IP_VERSION_IPV4' | 'SOCKET_IP_VERSION_IPV6';
          export type SocketState = 'STATE_PREBIND' | 'STATE_BOUND' | 'STATE_LISTENING';
          export interface SocketType {
            stream?: envoy.config.core.v3.SocketOption.SocketType.Stream;
            datagram?: envoy.config.core.v3.SocketOption.SocketType.Datagram;
          }
          export namespace SocketType {
            export interface Datagram {
            }
            export interface Stream {
            }
          }
        }
      }
    }
    export namespace endpoint {
      export namespace v3 {
        export interface ClusterLoadAssignment {
          cluster_name?: string;
          endpoints?: envoy.config.endpoint.v3.LocalityLbEndpoints[];
          named_endpoints?: { [key: string]: envoy.config.endpoint.v3.Endpoint };
          policy?: envoy.config.endpoint.v3.ClusterLoadAssignment.Policy;
        }
        export interface Endpoint {
          address?: envoy.config.core.v3.Address;
          health_check_config?: envoy.config.endpoint.v3.Endpoint.HealthCheckConfig;
          hostname?: string;
          additional_addresses?: envoy.config.endpoint.v3.Endpoint.AdditionalAddress[];
        }
        export interface LbEndpoint {
          endpoint?: envoy.config.endpoint.v3.Endpoint;
          endpoint_name?: string;
          health_status?: envoy.config.core.v3.HealthStatus;
          metadata?: envoy.config.core.v3.Metadata;
          load_balancing_weight?: number;
        }
        export interface LedsClusterLocalityConfig {
          leds_config?: envoy.config.core.v3.ConfigSource;
          leds_collection_name?: string;
        }
        export interface LocalityLbEndpoints {
          locality?: envoy.config.core.v3.Locality;
          metadata?: envoy.config.core.v3.Metadata;
          lb_endpoints?: envoy.config.endpoint.v3.LbEndpoint[];
          /** @deprecated */
          load_balancer_endpoints?: envoy.config.endpoint.v3.LocalityLbEndpoints.LbEndpointList;
          leds_cluster_locality_config?: envoy.config.endpoint.v3.LedsClusterLocalityConfig;
          load_balancing_weight?: number;
          priority?: number;
          proximity?: number;
        }
        export namespace ClusterLoadAssignment {
          export interface Policy {
            drop_overloads?: envoy.config.endpoint.v3.ClusterLoadAssignment.Policy.DropOverload[];
            overprovisioning_factor?: number;
            endpoint_stale_after?: string;
            weighted_priority_health?: boolean;
          }
          export namespace Policy {
            export interface DropOverload {
              category?: string;
              drop_percentage?: envoy.type.v3.FractionalPercent;
            }
          }
        }
        export namespace Endpoint {
          export interface AdditionalAddress {
            address?: envoy.config.core.v3.Address;
          }
          export interface HealthCheckConfig {
            port_value?: number;
            hostname?: string;
            address?: envoy.config.core.v3.Address;
            disable_active_health_check?: boolean;
          }
        }
        export namespace LocalityLbEndpoints {
          export interface LbEndpointList {
            lb_endpoints?: envoy.config.endpoint.v3.LbEndpoint[];
          }
        }
      }
    }
    export namespace listener {
      export namespace v3 {
        export interface AdditionalAddress {
          address?: envoy.config.core.v3.Address;
          socket_options?: envoy.config.core.v3.SocketOptionsOverride;
          tcp_keepalive?: envoy.config.core.v3.TcpKeepalive;
        }
        export interface ApiListener {
          api_listener?: Any;
        }
        export interface Filter {
          name?: string;
          typed_config?: Any;
          config_discovery?: envoy.config.core.v3.ExtensionConfigSource;
        }
        export interface FilterChain {
          filter_chain_match?: envoy.config.listener.v3.FilterChainMatch;
          filters?: envoy.config.listener.v3.Filter[];
          /** @deprecated */
          use_proxy_proto?: boolean;
          metadata?: envoy.config.core.v3.Metadata;
          transport_socket?: envoy.config.core.v3.TransportSocket;
          transport_socket_connect_timeout?: string;
          name?: string;
        }
        export interface FilterChainMatch {
          destination_port?: number;
          prefix_ranges?: envoy.config.core.v3.CidrRange[];
          address_suffix?: string;
          suffix_len?: number;
          direct_source_prefix_ranges?: envoy.config.core.v3.CidrRange[];
          source_type?: envoy.config.listener.v3.FilterChainMatch.ConnectionSourceType;
          source_prefix_ranges?: envoy.config.core.v3.CidrRange[];
          source_ports?: number[];
          server_names?: string[];
          transport_protocol?: string;
          application_protocols?: string[];
        }
        export interface Listener {
          name?: string;
          address?: envoy.config.core.v3.Address;
          additional_addresses?: envoy.config.listener.v3.AdditionalAddress[];
          stat_prefix?: string;
          filter_chains?: envoy.config.listener.v3.FilterChain[];
          fcds_config?: envoy.config.listener.v3.Listener.FcdsConfig;
          filter_chain_matcher?: xds.type.matcher.v3.Matcher;
          use_original_dst?: boolean;
          default_filter_chain?: envoy.config.listener.v3.FilterChain;
          per_connection_buffer_limit_bytes?: number;
          metadata?: envoy.config.core.v3.Metadata;
          /** @deprecated */
          deprecated_v1?: envoy.config.listener.v3.Listener.DeprecatedV1;
          drain_type?: envoy.config.listener.v3.Listener.DrainType;
          listener_filters?: envoy.config.listener.v3.ListenerFilter[];
          listener_filters_timeout?: string;
          continue_on_listener_filters_timeout?: boolean;
          transparent?: boolean;
          freebind?: boolean;
          socket_options?: envoy.config.core.v3.SocketOption[];
          tcp_fast_open_queue_length?: number;
          traffic_direction?: envoy.config.core.v3.TrafficDirection;
          udp_listener_config?: envoy.config.listener.v3.UdpListenerConfig;
          api_listener?: envoy.config.listener.v3.ApiListener;
          connection_balance_config?: envoy.config.listener.v3.Listener.ConnectionBalanceConfig;
          /** @deprecated */
          reuse_port?: boolean;
          enable_reuse_port?: boolean;
          access_log?: envoy.config.accesslog.v3.AccessLog[];
          tcp_backlog_size?: number;
          max_connections_to_accept_per_socket_event?: number;
          bind_to_port?: boolean;
          internal_listener?: envoy.config.listener.v3.Listener.InternalListenerConfig;
          enable_mptcp?: boolean;
          ignore_global_conn_limit?: boolean;
          bypass_overload_manager?: boolean;
          tcp_keepalive?: envoy.config.core.v3.TcpKeepalive;
        }
        export interface ListenerFilter {
          name?: string;
          typed_config?: Any;
          config_discovery?: envoy.config.core.v3.ExtensionConfigSource;
          filter_disabled?: envoy.config.listener.v3.ListenerFilterChainMatchPredicate;
        }
        export interface ListenerFilterChainMatchPredicate {
          or_match?: envoy.config.listener.v3.ListenerFilterChainMatchPredicate.MatchSet;
          and_match?: envoy.config.listener.v3.ListenerFilterChainMatchPredicate.MatchSet;
          not_match?: envoy.config.listener.v3.ListenerFilterChainMatchPredicate;
          any_match?: boolean;
          destination_port_range?: envoy.type.v3.Int32Range;
        }
        export interface QuicProtocolOptions {
          quic_protocol_options?: envoy.config.core.v3.QuicProtocolOptions;
          idle_timeout?: string;
          crypto_handshake_timeout?: string;
          enabled?: envoy.config.core.v3.RuntimeFeatureFlag;
          packets_to_read_to_connection_count_ratio?: number;
          crypto_stream_config?: envoy.config.core.v3.TypedExtensionConfig;
          proof_source_config?: envoy.config.core.v3.TypedExtensionConfig;
          connection_id_generator_config?: envoy.config.core.v3.TypedExtensionConfig;
          server_preferred_address_config?: envoy.config.core.v3.TypedExtensionConfig;
          send_disable_active_migration?: boolean;
          connection_debug_visitor_config?: envoy.config.core.v3.TypedExtensionConfig;
          save_cmsg_config?: envoy.config.core.v3.SocketCmsgHeaders[];
          reject_new_connections?: boolean;
          max_sessions_per_event_loop?: number;
        }
        export interface UdpListenerConfig {
          downstream_socket_config?: envoy.config.core.v3.UdpSocketConfig;
          quic_options?: envoy.config.listener.v3.QuicProtocolOptions;
          udp_packet_packet_writer_config?: envoy.config.core.v3.TypedExtensionConfig;
        }
        export namespace FilterChainMatch {
          export type ConnectionSourceType = 'ANY' | 'SAME_IP_OR_LOOPBACK' | 'EXTERNAL';
        }
        export namespace Listener {
          export interface ConnectionBalanceConfig {
            exact_balance?: envoy.config.listener.v3.Listener.ConnectionBalanceConfig.ExactBalance;
            extend_balance?: envoy.config.core.v3.TypedExtensionConfig;
          }
          export interface DeprecatedV1 {
            bind_to_port?: boolean;
          }
          export type DrainType = 'DEFAULT' | 'MODIFY_ONLY';
          export interface FcdsConfig {
            name?: string;
            config_source?: envoy.config.core.v3.ConfigSource;
          }
          export interface InternalListenerConfig {
          }
          export namespace ConnectionBalanceConfig {
            export interface ExactBalance {
            }
          }
        }
        export namespace ListenerFilterChainMatchPredicate {
          export interface MatchSet {
            rules?: envoy.config.listener.v3.ListenerFilterChainMatchPredicate[];
          }
        }
      }
    }
    export namespace metrics {
      export namespace v3 {
        export interface DogStatsdSink {
          address?: envoy.config.core.v3.Address;
          prefix?: string;
          max_bytes_per_datagram?: number | string;
        }
        export interface HistogramBucketSettings {
          match?: envoy.type.matcher.v3.StringMatcher;
          buckets?: number[];
          bins?: number;
        }
        export interface HystrixSink {
          num_buckets?: number | string;
        }
        export interface StatsConfig {
          stats_tags?: envoy.config.metrics.v3.TagSpecifier[];
          use_all_default_tags?: boolean;
          stats_matcher?: envoy.config.metrics.v3.StatsMatcher;
          histogram_bucket_settings?: envoy.config.metrics.v3.HistogramBucketSettings[];
        }
        export interface StatsMatcher {
          reject_all?: boolean;
          exclusion_list?: envoy.type.matcher.v3.ListStringMatcher;
          inclusion_list?: envoy.type.matcher.v3.ListStringMatcher;
        }
        export interface StatsSink {
          name?: string;
          typed_config?: Any;
        }
        export interface StatsdSink {
          address?: envoy.config.core.v3.Address;
          tcp_cluster_name?: string;
          prefix?: string;
        }
        export interface TagSpecifier {
          tag_name?: string;
          regex?: string;
          fixed_value?: string;
        }
      }
    }
    export namespace overload {
      export namespace v3 {
        export interface BufferFactoryConfig {
          minimum_account_to_track_power_of_two?: number;
        }
        export interface LoadShedPoint {
          name?: string;
          triggers?: envoy.config.overload.v3.Trigger[];
        }
        export interface OverloadAction {
          name?: string;
          triggers?: envoy.config.overload.v3.Trigger[];
          typed_config?: Any;
        }
        export interface OverloadManager {
          refresh_interval?: string;
          resource_monitors?: envoy.config.overload.v3.ResourceMonitor[];
          actions?: envoy.config.overload.v3.OverloadAction[];
          loadshed_points?: envoy.config.overload.v3.LoadShedPoint[];
          buffer_factory_config?: envoy.config.overload.v3.BufferFactoryConfig;
        }
        export interface ResourceMonitor {
          name?: string;
          typed_config?: Any;
        }
        export interface ScaledTrigger {
          scaling_threshold?: number;
          saturation_threshold?: number;
        }
        export interface ThresholdTrigger {
          value?: number;
        }
        export interface Trigger {
          name?: string;
          threshold?: envoy.config.overload.v3.ThresholdTrigger;
          scaled?: envoy.config.overload.v3.ScaledTrigger;
        }
      }
    }
    export namespace ratelimit {
      export namespace v3 {
        export interface RateLimitServiceConfig {
          grpc_service?: envoy.config.core.v3.GrpcService;
          transport_api_version?: envoy.config.core.v3.ApiVersion;
        }
      }
    }
    export namespace rbac {
      export namespace v3 {
        export type MetadataSource = 'DYNAMIC' | 'ROUTE';
        export interface Permission {
          and_rules?: envoy.config.rbac.v3.Permission.Set;
          or_rules?: envoy.config.rbac.v3.Permission.Set;
          any?: boolean;
          header?: envoy.config.route.v3.HeaderMatcher;
          url_path?: envoy.type.matcher.v3.PathMatcher;
          destination_ip?: envoy.config.core.v3.CidrRange;
          destination_port?: number;
          destination_port_range?: envoy.type.v3.Int32Range;
          /** @deprecated */
          metadata?: envoy.type.matcher.v3.MetadataMatcher;
          not_rule?: envoy.config.rbac.v3.Permission;
          requested_server_name?: envoy.type.matcher.v3.StringMatcher;
          matcher?: envoy.config.core.v3.TypedExtensionConfig;
          uri_template?: envoy.config.core.v3.TypedExtensionConfig;
          sourced_metadata?: envoy.config.rbac.v3.SourcedMetadata;
        }
        export interface Policy {
          permissions?: envoy.config.rbac.v3.Permission[];
          principals?: envoy.config.rbac.v3.Principal[];
          condition?: google.api.expr.v1alpha1.Expr;
          checked_condition?: google.api.expr.v1alpha1.CheckedExpr;
          cel_config?: envoy.config.core.v3.CelExpressionConfig;
        }
        export interface Principal {
          and_ids?: envoy.config.rbac.v3.Principal.Set;
          or_ids?: envoy.config.rbac.v3.Principal.Set;
          any?: boolean;
          authenticated?: envoy.config.rbac.v3.Principal.Authenticated;
          /** @deprecated */
          source_ip?: envoy.config.core.v3.CidrRange;
          direct_remote_ip?: envoy.config.core.v3.CidrRange;
          remote_ip?: envoy.config.core.v3.CidrRange;
          header?: envoy.config.route.v3.HeaderMatcher;
          url_path?: envoy.type.matcher.v3.PathMatcher;
          /** @deprecated */
          metadata?: envoy.type.matcher.v3.MetadataMatcher;
          filter_state?: envoy.type.matcher.v3.FilterStateMatcher;
          not_id?: envoy.config.rbac.v3.Principal;
          sourced_metadata?: envoy.config.rbac.v3.SourcedMetadata;
          custom?: envoy.config.core.v3.TypedExtensionConfig;
        }
        export interface RBAC {
          action?: envoy.config.rbac.v3.RBAC.Action;
          policies?: { [key: string]: envoy.config.rbac.v3.Policy };
          audit_logging_options?: envoy.config.rbac.v3.RBAC.AuditLoggingOptions;
        }
        export interface SourcedMetadata {
          metadata_matcher?: envoy.type.matcher.v3.MetadataMatcher;
          metadata_source?: envoy.config.rbac.v3.MetadataSource;
        }
        export namespace Permission {
          export interface Set {
            rules?: envoy.config.rbac.v3.Permission[];
          }
        }
        export namespace Principal {
          export interface Authenticated {
            principal_name?: envoy.type.matcher.v3.StringMatcher;
          }
          export interface Set {
            ids?: envoy.config.rbac.v3.Principal[];
          }
        }
        export namespace RBAC {
          export type Action = 'ALLOW' | 'DENY' | 'LOG';
          export interface AuditLoggingOptions {
            audit_condition?: envoy.config.rbac.v3.RBAC.AuditLoggingOptions.AuditCondition;
            logger_configs?: envoy.config.rbac.v3.RBAC.AuditLoggingOptions.AuditLoggerConfig[];
          }
          export namespace AuditLoggingOptions {
            export type AuditCondition = 'NONE' | 'ON_DENY' | 'ON_ALLOW' | 'ON_DENY_AND_ALLOW';
            export interface AuditLoggerConfig {
              audit_logger?: envoy.config.core.v3.TypedExtensionConfig;
              is_optional?: boolean;
            }
          }
        }
      }
    }
    export namespace route {
      export namespace v3 {
        export interface ClusterSpecifierPlugin {
          extension?: envoy.config.core.v3.TypedExtensionConfig;
          is_optional?: boolean;
        }
        export interface CookieMatcher {
          name?: string;
          string_match?: envoy.type.matcher.v3.StringMatcher;
          invert_match?: boolean;
        }
        export interface CorsPolicy {
          allow_origin_string_match?: envoy.type.matcher.v3.StringMatcher[];
          allow_methods?: string;
          allow_headers?: string;
          expose_headers?: string;
          max_age?: string;
          allow_credentials?: boolean;
          filter_enabled?: envoy.config.core.v3.RuntimeFractionalPercent;
          shadow_enabled?: envoy.config.core.v3.RuntimeFractionalPercent;
          allow_private_network_access?: boolean;
          forward_not_matching_preflights?: boolean;
        }
        export interface Decorator {
          operation?: string;
          propagate?: boolean;
        }
        export interface DirectResponseAction {
          status?: number;
          body?: envoy.config.core.v3.DataSource;
          body_format?: envoy.config.core.v3.SubstitutionFormatString;
        }
        export interface FilterAction {
          action?: Any;
        }
        export interface HeaderMatcher {
          name?: string;
          /** @deprecated */
          exact_match?: string;
          /** @deprecated */
          safe_regex_match?: envoy.type.matcher.v3.RegexMatcher;
          range_match?: envoy.type.v3.Int64Range;
          present_match?: boolean;
          /** @deprecated */
          prefix_match?: string;
          /** @deprecated */
          suffix_match?: string;
          /** @deprecated */
          contains_match?: string;
          string_match?: envoy.type.matcher.v3.StringMatcher;
          invert_match?: boolean;
          treat_missing_header_as_empty?: boolean;
        }
        export interface HedgePolicy {
          initial_requests?: number;
          additional_request_chance?: envoy.type.v3.FractionalPercent;
          hedge_on_per_try_timeout?: boolean;
        }
        export interface InternalRedirectPolicy {
          max_internal_redirects?: number;
          redirect_response_codes?: number[];
          predicates?: envoy.config.core.v3.TypedExtensionConfig[];
          allow_cross_scheme_redirect?: boolean;
          response_headers_to_copy?: string[];
        }
        export interface NonForwardingAction {
        }
        export interface QueryParameterMatcher {
          name?: string;
          string_match?: envoy.type.matcher.v3.StringMatcher;
          present_match?: boolean;
        }
        export interface RateLimit {
          stage?: number;
          disable_key?: string;
          actions?: envoy.config.route.v3.RateLimit.Action[];
          limit?: envoy.config.route.v3.RateLimit.Override;
          hits_addend?: envoy.config.route.v3.RateLimit.HitsAddend;
          apply_on_stream_done?: boolean;
          x_ratelimit_option?: envoy.config.route.v3.RateLimit.XRateLimitOption;
        }
        export interface RedirectAction {
          https_redirect?: boolean;
          scheme_redirect?: string;
          host_redirect?: string;
          port_redirect?: number;
          path_redirect?: string;
          prefix_rewrite?: string;
          regex_rewrite?: envoy.type.matcher.v3.RegexMatchAndSubstitute;
          response_code?: envoy.config.route.v3.RedirectAction.RedirectResponseCode;
          strip_query?: boolean;
        }
        export interface RetryPolicy {
          retry_on?: string;
          num_retries?: number;
          per_try_timeout?: string;
          per_try_idle_timeout?: string;
          retry_priority?: envoy.config.route.v3.RetryPolicy.RetryPriority;
          retry_host_predicate?: envoy.config.route.v3.RetryPolicy.RetryHostPredicate[];
          retry_options_predicates?: envoy.config.core.v3.TypedExtensionConfig[];
          host_selection_retry_max_attempts?: number | string;
          retriable_status_codes?: number[];
          retry_back_off?: envoy.config.route.v3.RetryPolicy.RetryBackOff;
          rate_limited_retry_back_off?: envoy.config.route.v3.RetryPolicy.RateLimitedRetryBackOff;
          retriable_headers?: envoy.config.route.v3.HeaderMatcher[];
          retriable_request_headers?: envoy.config.route.v3.HeaderMatcher[];
        }
        export interface Route {
          name?: string;
          match?: envoy.config.route.v3.RouteMatch;
          route?: envoy.config.route.v3.RouteAction;
          redirect?: envoy.config.route.v3.RedirectAction;
          direct_response?: envoy.config.route.v3.DirectResponseAction;
          filter_action?: envoy.config.route.v3.FilterAction;
          non_forwarding_action?: envoy.config.route.v3.NonForwardingAction;
          metadata?: envoy.config.core.v3.Metadata;
          decorator?: envoy.config.route.v3.Decorator;
          typed_per_filter_config?: { [key: string]: Any };
          request_headers_to_add?: envoy.config.core.v3.HeaderValueOption[];
          request_headers_to_remove?: string[];
          response_headers_to_add?: envoy.config.core.v3.HeaderValueOption[];
          response_headers_to_remove?: string[];
          tracing?: envoy.config.route.v3.Tracing;
          /** @deprecated */
          per_request_buffer_limit_bytes?: number;
          stat_prefix?: string;
          request_body_buffer_limit?: number | string;
        }
        export interface RouteAction {
          cluster?: string;
          cluster_header?: string;
          weighted_clusters?: envoy.config.route.v3.WeightedCluster;
          cluster_specifier_plugin?: string;
          inline_cluster_specifier_plugin?: envoy.config.route.v3.ClusterSpecifierPlugin;
          cluster_not_found_response_code?: envoy.config.route.v3.RouteAction.ClusterNotFoundResponseCode;
          metadata_match?: envoy.config.core.v3.Metadata;
          prefix_rewrite?: string;
          regex_rewrite?: envoy.type.matcher.v3.RegexMatchAndSubstitute;
          path_rewrite_policy?: envoy.config.core.v3.TypedExtensionConfig;
          path_rewrite?: string;
          host_rewrite_literal?: string;
          auto_host_rewrite?: boolean;
          host_rewrite_header?: string;
          host_rewrite_path_regex?: envoy.type.matcher.v3.RegexMatchAndSubstitute;
          host_rewrite?: string;
          append_x_forwarded_host?: boolean;
          timeout?: string;
          idle_timeout?: string;
          flush_timeout?: string;
          early_data_policy?: envoy.config.core.v3.TypedExtensionConfig;
          retry_policy?: envoy.config.route.v3.RetryPolicy;
          retry_policy_typed_config?: Any;
          request_mirror_policies?: envoy.config.route.v3.RouteAction.RequestMirrorPolicy[];
          priority?: envoy.config.core.v3.RoutingPriority;
          rate_limits?: envoy.config.route.v3.RateLimit[];
          /** @deprecated */
          include_vh_rate_limits?: boolean;
          hash_policy?: envoy.config.route.v3.RouteAction.HashPolicy[];
          /** @deprecated */
          cors?: envoy.config.route.v3.CorsPolicy;
          /** @deprecated */
          max_grpc_timeout?: string;
          /** @deprecated */
          grpc_timeout_offset?: string;
          upgrade_configs?: envoy.config.route.v3.RouteAction.UpgradeConfig[];
          internal_redirect_policy?: envoy.config.route.v3.InternalRedirectPolicy;
          /** @deprecated */
          internal_redirect_action?: envoy.config.route.v3.RouteAction.InternalRedirectAction;
          /** @deprecated */
          max_internal_redirects?: number;
          hedge_policy?: envoy.config.route.v3.HedgePolicy;
          max_stream_duration?: envoy.config.route.v3.RouteAction.MaxStreamDuration;
        }
        export interface RouteConfiguration {
          name?: string;
          virtual_hosts?: envoy.config.route.v3.VirtualHost[];
          vhds?: envoy.config.route.v3.Vhds;
          internal_only_headers?: string[];
          response_headers_to_add?: envoy.config.core.v3.HeaderValueOption[];
          response_headers_to_remove?: string[];
          request_headers_to_add?: envoy.config.core.v3.HeaderValueOption[];
          request_headers_to_remove?: string[];
          most_specific_header_mutations_wins?: boolean;
          validate_clusters?: boolean;
          max_direct_response_body_size_bytes?: number;
          cluster_specifier_plugins?: envoy.config.route.v3.ClusterSpecifierPlugin[];
          request_mirror_policies?: envoy.config.route.v3.RouteAction.RequestMirrorPolicy[];
          ignore_port_in_host_matching?: boolean;
          vhost_header?: string;
          ignore_path_parameters_in_path_matching?: boolean;
          typed_per_filter_config?: { [key: string]: Any };
          metadata?: envoy.config.core.v3.Metadata;
        }
        export interface RouteMatch {
          prefix?: string;
          path?: string;
          safe_regex?: envoy.type.matcher.v3.RegexMatcher;
          connect_matcher?: envoy.config.route.v3.RouteMatch.ConnectMatcher;
          path_separated_prefix?: string;
          path_match_policy?: envoy.config.core.v3.TypedExtensionConfig;
          case_sensitive?: boolean;
          runtime_fraction?: envoy.config.core.v3.RuntimeFractionalPercent;
          headers?: envoy.config.route.v3.HeaderMatcher[];
          query_parameters?: envoy.config.route.v3.QueryParameterMatcher[];
          cookies?: envoy.config.route.v3.CookieMatcher[];
          grpc?: envoy.config.route.v3.RouteMatch.GrpcRouteMatchOptions;
          tls_context?: envoy.config.route.v3.RouteMatch.TlsContextMatchOptions;
          dynamic_metadata?: envoy.type.matcher.v3.MetadataMatcher[];
          filter_state?: envoy.type.matcher.v3.FilterStateMatcher[];
        }
        export interface ScopedRouteConfiguration {
          on_demand?: boolean;
          name?: string;
          route_configuration_name?: string;
          route_configuration?: envoy.config.route.v3.RouteConfiguration;
          key?: envoy.config.route.v3.ScopedRouteConfiguration.Key;
        }
        export interface Tracing {
          client_sampling?: envoy.type.v3.FractionalPercent;
          random_sampling?: envoy.type.v3.FractionalPercent;
          overall_sampling?: envoy.type.v3.FractionalPercent;
          custom_tags?: envoy.type.tracing.v3.CustomTag[];
          operation?: string;
          upstream_operation?: string;
        }
        export interface Vhds {
          config_source?: envoy.config.core.v3.ConfigSource;
        }
        export interface VirtualCluster {
          headers?: envoy.config.route.v3.HeaderMatcher[];
          name?: string;
        }
        export interface VirtualHost {
          name?: string;
          domains?: string[];
          routes?: envoy.config.route.v3.Route[];
          matcher?: xds.type.matcher.v3.Matcher;
          require_tls?: envoy.config.route.v3.VirtualHost.TlsRequirementType;
          virtual_clusters?: envoy.config.route.v3.VirtualCluster[];
          rate_limits?: envoy.config.route.v3.RateLimit[];
          request_headers_to_add?: envoy.config.core.v3.HeaderValueOption[];
          request_headers_to_remove?: string[];
          response_headers_to_add?: envoy.config.core.v3.HeaderValueOption[];
          response_headers_to_remove?: string[];
          /** @deprecated */
          cors?: envoy.config.route.v3.CorsPolicy;
          typed_per_filter_config?: { [key: string]: Any };
          include_request_attempt_count?: boolean;
          include_attempt_count_in_response?: boolean;
          retry_policy?: envoy.config.route.v3.RetryPolicy;
          retry_policy_typed_config?: Any;
          hedge_policy?: envoy.config.route.v3.HedgePolicy;
          include_is_timeout_retry_header?: boolean;
          /** @deprecated */
          per_request_buffer_limit_bytes?: number;
          request_body_buffer_limit?: number | string;
          request_mirror_policies?: envoy.config.route.v3.RouteAction.RequestMirrorPolicy[];
          metadata?: envoy.config.core.v3.Metadata;
        }
        export interface WeightedCluster {
          clusters?: envoy.config.route.v3.WeightedCluster.ClusterWeight[];
          /** @deprecated */
          total_weight?: number;
          runtime_key_prefix?: string;
          header_name?: string;
          use_hash_policy?: boolean;
        }
        export namespace RateLimit {
          export interface Action {
            source_cluster?: envoy.config.route.v3.RateLimit.Action.SourceCluster;
            destination_cluster?: envoy.config.route.v3.RateLimit.Action.DestinationCluster;
            request_headers?: envoy.config.route.v3.RateLimit.Action.RequestHeaders;
            query_parameters?: envoy.config.route.v3.RateLimit.Action.QueryParameters;
            remote_address?: envoy.config.route.v3.RateLimit.Action.RemoteAddress;
            generic_key?: envoy.config.route.v3.RateLimit.Action.GenericKey;
            header_value_match?: envoy.config.route.v3.RateLimit.Action.HeaderValueMatch;
            /** @deprecated */
            dynamic_metadata?: envoy.config.route.v3.RateLimit.Action.DynamicMetaData;
            metadata?: envoy.config.route.v3.RateLimit.Action.MetaData;
            extension?: envoy.config.core.v3.TypedExtensionConfig;
            masked_remote_address?: envoy.config.route.v3.RateLimit.Action.MaskedRemoteAddress;
            query_parameter_value_match?: envoy.config.route.v3.RateLimit.Action.QueryParameterValueMatch;
          }
          export interface HitsAddend {
            number?: number | string;
            format?: string;
          }
          export interface Override {
            dynamic_metadata?: envoy.config.route.v3.RateLimit.Override.DynamicMetadata;
          }
          export type XRateLimitOption = 'UNSPECIFIED' | 'OFF' | 'DRAFT_VERSION_03';
          export namespace Action {
            export interface DestinationCluster {
            }
            export interface DynamicMetaData {
              descriptor_key?: string;
              metadata_key?: envoy.type.metadata.v3.MetadataKey;
              default_value?: string;
            }
            export interface GenericKey {
              descriptor_value?: string;
              default_value?: string;
              descriptor_key?: string;
            }
            export interface HeaderValueMatch {
              descriptor_value?: string;
              default_value?: string;
              descriptor_key?: string;
              expect_match?: boolean;
              headers?: envoy.config.route.v3.HeaderMatcher[];
            }
            export interface MaskedRemoteAddress {
              v4_prefix_mask_len?: number;
              v6_prefix_mask_len?: number;
            }
            export interface MetaData {
              descriptor_key?: string;
              metadata_key?: envoy.type.metadata.v3.MetadataKey;
              default_value?: string;
              source?: envoy.config.route.v3.RateLimit.Action.MetaData.Source;
              skip_if_absent?: boolean;
            }
            export interface QueryParameterValueMatch {
              descriptor_value?: string;
              default_value?: string;
              descriptor_key?: string;
              expect_match?: boolean;
              query_parameters?: envoy.config.route.v3.QueryParameterMatcher[];
            }
            export interface QueryParameters {
              query_parameter_name?: string;
              descriptor_key?: string;
              skip_if_absent?: boolean;
            }
            export interface RemoteAddress {
            }
            export interface RequestHeaders {
              header_name?: string;
              descriptor_key?: string;
              skip_if_absent?: boolean;
            }
            export interface SourceCluster {
            }
            export namespace MetaData {
              export type Source = 'DYNAMIC' | 'ROUTE_ENTRY';
            }
          }
          export namespace Override {
            export interface DynamicMetadata {
              metadata_key?: envoy.type.metadata.v3.MetadataKey;
            }
          }
        }
        export namespace RedirectAction {
          export type RedirectResponseCode = 'MOVED_PERMANENTLY' | 'FOUND' | 'SEE_OTHER' | 'TEMPORARY_REDIRECT' | 'PERMANENT_REDIRECT';
        }
        export namespace RetryPolicy {
          export interface RateLimitedRetryBackOff {
            reset_headers?: envoy.config.route.v3.RetryPolicy.ResetHeader[];
            max_interval?: string;
          }
          export interface ResetHeader {
            name?: string;
            format?: envoy.config.route.v3.RetryPolicy.ResetHeaderFormat;
          }
          export type ResetHeaderFormat = 'SECONDS' | 'UNIX_TIMESTAMP';
          export interface RetryBackOff {
            base_interval?: string;
            max_interval?: string;
          }
          export interface RetryHostPredicate {
            name?: string;
            typed_config?: Any;
          }
          export interface RetryPriority {
            name?: string;
            typed_config?: Any;
          }
        }
        export namespace RouteAction {
          export type ClusterNotFoundResponseCode = 'SERVICE_UNAVAILABLE' | 'NOT_FOUND' | 'INTERNAL_SERVER_ERROR';
          export interface HashPolicy {
            header?: envoy.config.route.v3.RouteAction.HashPolicy.Header;
            cookie?: envoy.config.route.v3.RouteAction.HashPolicy.Cookie;
            connection_properties?: envoy.config.route.v3.RouteAction.HashPolicy.ConnectionProperties;
            query_parameter?: envoy.config.route.v3.RouteAction.HashPolicy.QueryParameter;
            filter_state?: envoy.config.route.v3.RouteAction.HashPolicy.FilterState;
            terminal?: boolean;
          }
          export type InternalRedirectAction = 'PASS_THROUGH_INTERNAL_REDIRECT' | 'HANDLE_INTERNAL_REDIRECT';
          export interface MaxStreamDuration {
            max_stream_duration?: string;
            grpc_timeout_header_max?: string;
            grpc_timeout_header_offset?: string;
          }
          export interface RequestMirrorPolicy {
            cluster?: string;
            cluster_header?: string;
            runtime_fraction?: envoy.config.core.v3.RuntimeFractionalPercent;
            trace_sampled?: boolean;
            disable_shadow_host_suffix_append?: boolean;
            request_headers_mutations?: envoy.config.common.mutation_rules.v3.HeaderMutation[];
            host_rewrite_literal?: string;
          }
          export interface UpgradeConfig {
            upgrade_type?: string;
            enabled?: boolean;
            connect_config?: envoy.config.route.v3.RouteAction.UpgradeConfig.ConnectConfig;
          }
          export namespace HashPolicy {
            export interface ConnectionProperties {
              source_ip?: boolean;
            }
            export interface Cookie {
              name?: string;
              ttl?: string;
              path?: string;
              attributes?: envoy.config.route.v3.RouteAction.HashPolicy.CookieAttribute[];
            }
            export interface CookieAttribute {
              name?: string;
              value?: string;
            }
            export interface FilterState {
              key?: string;
            }
            export interface Header {
              header_name?: string;
              regex_rewrite?: envoy.type.matcher.v3.RegexMatchAndSubstitute;
            }
            export interface QueryParameter {
              name?: string;
            }
          }
          export namespace UpgradeConfig {
            export interface ConnectConfig {
              proxy_protocol_config?: envoy.config.core.v3.ProxyProtocolConfig;
              allow_post?: boolean;
            }
          }
        }
        export namespace RouteMatch {
          export interface ConnectMatcher {
          }
          export interface GrpcRouteMatchOptions {
          }
          export interface TlsContextMatchOptions {
            presented?: boolean;
            validated?: boolean;
          }
        }
        export namespace ScopedRouteConfiguration {
          export interface Key {
            fragments?: envoy.config.route.v3.ScopedRouteConfiguration.Key.Fragment[];
          }
          export namespace Key {
            export interface Fragment {
              string_key?: string;
            }
          }
        }
        export namespace VirtualHost {
          export type TlsRequirementType = 'NONE' | 'EXTERNAL_ONLY' | 'ALL';
        }
        export namespace WeightedCluster {
          export interface ClusterWeight {
            name?: string;
            cluster_header?: string;
            weight?: number;
            metadata_match?: envoy.config.core.v3.Metadata;
            request_headers_to_add?: envoy.config.core.v3.HeaderValueOption[];
            request_headers_to_remove?: string[];
            response_headers_to_add?: envoy.config.core.v3.HeaderValueOption[];
            response_headers_to_remove?: string[];
            typed_per_filter_config?: { [key: string]: Any };
            host_rewrite_literal?: string;
          }
        }
      }
    }
    export namespace tap {
      export namespace v3 {
        export interface BufferedAdminSink {
          max_traces?: number | string;
          timeout?: string;
        }
        export interface FilePerTapSink {
          path_prefix?: string;
        }
        export interface HttpGenericBodyMatch {
          bytes_limit?: number;
          patterns?: envoy.config.tap.v3.HttpGenericBodyMatch.GenericTextMatch[];
        }
        export interface HttpHeadersMatch {
          headers?: envoy.config.route.v3.HeaderMatcher[];
        }
        export interface MatchPredicate {
          or_match?: envoy.config.tap.v3.MatchPredicate.MatchSet;
          and_match?: envoy.config.tap.v3.MatchPredicate.MatchSet;
          not_match?: envoy.config.tap.v3.MatchPredicate;
          any_match?: boolean;
          http_request_headers_match?: envoy.config.tap.v3.HttpHeadersMatch;
          http_request_trailers_match?: envoy.config.tap.v3.HttpHeadersMatch;
          http_response_headers_match?: envoy.config.tap.v3.HttpHeadersMatch;
          http_response_trailers_match?: envoy.config.tap.v3.HttpHeadersMatch;
          http_request_generic_body_match?: envoy.config.tap.v3.HttpGenericBodyMatch;
          http_response_generic_body_match?: envoy.config.tap.v3.HttpGenericBodyMatch;
        }
        export interface OutputConfig {
          sinks?: envoy.config.tap.v3.OutputSink[];
          max_buffered_rx_bytes?: number;
          max_buffered_tx_bytes?: number;
          streaming?: boolean;
          min_streamed_sent_bytes?: number;
        }
        export interface OutputSink {
          format?: envoy.config.tap.v3.OutputSink.Format;
          streaming_admin?: envoy.config.tap.v3.StreamingAdminSink;
          file_per_tap?: envoy.config.tap.v3.FilePerTapSink;
          streaming_grpc?: envoy.config.tap.v3.StreamingGrpcSink;
          buffered_admin?: envoy.config.tap.v3.BufferedAdminSink;
          custom_sink?: envoy.config.core.v3.TypedExtensionConfig;
        }
        export interface StreamingAdminSink {
        }
        export interface StreamingGrpcSink {
          tap_id?: string;
          grpc_service?: envoy.config.core.v3.GrpcService;
        }
        export interface TapConfig {
          /** @deprecated */
          match_config?: envoy.config.tap.v3.MatchPredicate;
          match?: envoy.config.common.matcher.v3.MatchPredicate;
          output_config?: envoy.config.tap.v3.OutputConfig;
          tap_enabled?: envoy.config.core.v3.RuntimeFractionalPercent;
        }
        export namespace HttpGenericBodyMatch {
          export interface GenericTextMatch {
            string_match?: string;
            binary_match?: string;
          }
        }
        export namespace MatchPredicate {
          export interface MatchSet {
            rules?: envoy.config.tap.v3.MatchPredicate[];
          }
        }
        export namespace OutputSink {
          export type Format = 'JSON_BODY_AS_BYTES' | 'JSON_BODY_AS_STRING' | 'PROTO_BINARY' | 'PROTO_BINARY_LENGTH_DELIMITED' | 'PROTO_TEXT';
        }
      }
    }
    export namespace trace {
      export namespace v3 {
        export interface OpenTelemetryConfig {
          grpc_service?: envoy.config.core.v3.GrpcService;
          http_service?: envoy.config.core.v3.HttpService;
          service_name?: string;
          resource_detectors?: envoy.config.core.v3.TypedExtensionConfig[];
          sampler?: envoy.config.core.v3.TypedExtensionConfig;
          max_cache_size?: number;
        }
        export interface Tracing {
          http?: envoy.config.trace.v3.Tracing.Http;
        }
        export interface ZipkinConfig {
          collector_cluster?: string;
          collector_endpoint?: string;
          trace_id_128bit?: boolean;
          shared_span_context?: boolean;
          collector_endpoint_version?: envoy.config.trace.v3.ZipkinConfig.CollectorEndpointVersion;
          collector_hostname?: string;
          /** @deprecated */
          split_spans_for_request?: boolean;
          trace_context_option?: envoy.config.trace.v3.ZipkinConfig.TraceContextOption;
          collector_service?: envoy.config.core.v3.HttpService;
        }
        export namespace Tracing {
          export interface Http {
            name?: string;
            typed_config?: Any;
          }
        }
        export namespace ZipkinConfig {
          export type CollectorEndpointVersion = 'DEPRECATED_AND_UNAVAILABLE_DO_NOT_USE' | 'HTTP_JSON' | 'HTTP_PROTO' | 'GRPC';
          export type TraceContextOption = 'USE_B3' | 'USE_B3_WITH_W3C_PROPAGATION';
        }
      }
    }
  }
  export namespace data {
    export namespace accesslog {
      export namespace v3 {
        export type AccessLogType = 'NotSet' | 'TcpUpstreamConnected' | 'TcpPeriodic' | 'TcpConnectionStart' | 'TcpConnectionEnd' | 'DownstreamStart' | 'DownstreamPeriodic' | 'DownstreamEnd' | 'UpstreamPoolReady' | 'UpstreamPeriodic' | 'UpstreamEnd' | 'DownstreamTunnelSuccessfullyEstablished' | 'UdpTunnelUpstreamConnected' | 'UdpPeriodic' | 'UdpSessionEnd';
      }
    }
  }
  export namespace extensions {
    export namespace access_loggers {
      export namespace file {
        export namespace v3 {
          export interface FileAccessLog {
            path?: string;
            /** @deprecated */
            format?: string;
            /** @deprecated */
            json_format?: { [key: string]: unknown };
            /** @deprecated */
            typed_json_format?: { [key: string]: unknown };
            log_format?: envoy.config.core.v3.SubstitutionFormatString;
          }
        }
      }
      export namespace stream {
        export namespace v3 {
          export interface StderrAccessLog {
            log_format?: envoy.config.core.v3.SubstitutionFormatString;
          }
          export interface StdoutAccessLog {
            log_format?: envoy.config.core.v3.SubstitutionFormatString;
          }
        }
      }
    }
    export namespace common {
      export namespace ratelimit {
        export namespace v3 {
          export interface LocalClusterRateLimit {
          }
          export interface LocalRateLimitDescriptor {
            entries?: envoy.extensions.common.ratelimit.v3.RateLimitDescriptor.Entry[];
            token_bucket?: envoy.type.v3.TokenBucket;
            shadow_mode?: boolean;
          }
          export type VhRateLimitsOptions = 'OVERRIDE' | 'INCLUDE' | 'IGNORE';
          export type XRateLimitHeadersRFCVersion = 'OFF' | 'DRAFT_VERSION_03';
          export namespace RateLimitDescriptor {
            export interface Entry {
              key?: string;
              value?: string;
            }
          }
        }
      }
      export namespace tap {
        export namespace v3 {
          export interface AdminConfig {
            config_id?: string;
          }
          export interface CommonExtensionConfig {
            admin_config?: envoy.extensions.common.tap.v3.AdminConfig;
            static_config?: envoy.config.tap.v3.TapConfig;
          }
        }
      }
    }
    export namespace compression {
      export namespace brotli {
        export namespace compressor {
          export namespace v3 {
            export interface Brotli {
              quality?: number;
              encoder_mode?: envoy.extensions.compression.brotli.compressor.v3.Brotli.EncoderMode;
              window_bits?: number;
              input_block_bits?: number;
              chunk_size?: number;
              disable_literal_context_modeling?: boolean;
            }
            export namespace Brotli {
              export type EncoderMode = 'DEFAULT' | 'GENERIC' | 'TEXT' | 'FONT';
            }
          }
        }
        export namespace decompressor {
          export namespace v3 {
            export interface Brotli {
              disable_ring_buffer_reallocation?: boolean;
              chunk_size?: number;
            }
          }
        }
      }
      export namespace gzip {
        export namespace compressor {
          export namespace v3 {
            export interface Gzip {
              memory_level?: number;
              compression_level?: envoy.extensions.compression.gzip.compressor.v3.Gzip.CompressionLevel;
              compression_strategy?: envoy.extensions.compression.gzip.compressor.v3.Gzip.CompressionStrategy;
              window_bits?: number;
              chunk_size?: number;
            }
            export namespace Gzip {
              export type CompressionLevel = 'DEFAULT_COMPRESSION' | 'BEST_SPEED' | 'COMPRESSION_LEVEL_1' | 'COMPRESSION_LEVEL_2' | 'COMPRESSION_LEVEL_3' | 'COMPRESSION_LEVEL_4' | 'COMPRESSION_LEVEL_5' | 'COMPRESSION_LEVEL_6' | 'COMPRESSION_LEVEL_7' | 'COMPRESSION_LEVEL_8' | 'COMPRESSION_LEVEL_9' | 'BEST_COMPRESSION';
              export type CompressionStrategy = 'DEFAULT_STRATEGY' | 'FILTERED' | 'HUFFMAN_ONLY' | 'RLE' | 'FIXED';
            }
          }
        }
        export namespace decompressor {
          export namespace v3 {
            export interface Gzip {
              window_bits?: number;
              chunk_size?: number;
              max_inflate_ratio?: number;
            }
          }
        }
      }
    }
    export namespace filters {
      export namespace common {
        export namespace fault {
          export namespace v3 {
            export interface FaultDelay {
              fixed_delay?: string;
              header_delay?: envoy.extensions.filters.common.fault.v3.FaultDelay.HeaderDelay;
              percentage?: envoy.type.v3.FractionalPercent;
            }
            export interface FaultRateLimit {
              fixed_limit?: envoy.extensions.filters.common.fault.v3.FaultRateLimit.FixedLimit;
              header_limit?: envoy.extensions.filters.common.fault.v3.FaultRateLimit.HeaderLimit;
              percentage?: envoy.type.v3.FractionalPercent;
            }
            export namespace FaultDelay {
              export interface HeaderDelay {
              }
            }
            export namespace FaultRateLimit {
              export interface FixedLimit {
                limit_kbps?: number | string;
              }
              export interface HeaderLimit {
              }
            }
          }
        }
      }
      export namespace http {
        export namespace buffer {
          export namespace v3 {
            export interface Buffer {
              max_request_bytes?: number;
            }
            export interface BufferPerRoute {
              disabled?: boolean;
              buffer?: envoy.extensions.filters.http.buffer.v3.Buffer;
            }
          }
        }
        export namespace compressor {
          export namespace v3 {
            export interface Compressor {
              /** @deprecated */
              content_length?: number;
              /** @deprecated */
              content_type?: string[];
              /** @deprecated */
              disable_on_etag_header?: boolean;
              /** @deprecated */
              remove_accept_encoding_header?: boolean;
              /** @deprecated */
              runtime_enabled?: envoy.config.core.v3.RuntimeFeatureFlag;
              compressor_library?: envoy.config.core.v3.TypedExtensionConfig;
              request_direction_config?: envoy.extensions.filters.http.compressor.v3.Compressor.RequestDirectionConfig;
              response_direction_config?: envoy.extensions.filters.http.compressor.v3.Compressor.ResponseDirectionConfig;
              choose_first?: boolean;
            }
            export interface CompressorOverrides {
              response_direction_config?: envoy.extensions.filters.http.compressor.v3.ResponseDirectionOverrides;
              compressor_library?: envoy.config.core.v3.TypedExtensionConfig;
            }
            export interface CompressorPerRoute {
              disabled?: boolean;
              overrides?: envoy.extensions.filters.http.compressor.v3.CompressorOverrides;
            }
            export interface ResponseDirectionOverrides {
              remove_accept_encoding_header?: boolean;
            }
            export namespace Compressor {
              export interface CommonDirectionConfig {
                enabled?: envoy.config.core.v3.RuntimeFeatureFlag;
                min_content_length?: number;
                content_type?: string[];
              }
              export interface RequestDirectionConfig {
                common_config?: envoy.extensions.filters.http.compressor.v3.Compressor.CommonDirectionConfig;
              }
              export interface ResponseDirectionConfig {
                common_config?: envoy.extensions.filters.http.compressor.v3.Compressor.CommonDirectionConfig;
                disable_on_etag_header?: boolean;
                remove_accept_encoding_header?: boolean;
                uncompressible_response_codes?: number[];
                status_header_enabled?: boolean;
              }
            }
          }
        }
        export namespace cors {
          export namespace v3 {
            export interface Cors {
            }
            export interface CorsPolicy {
              allow_origin_string_match?: envoy.type.matcher.v3.StringMatcher[];
              allow_methods?: string;
              allow_headers?: string;
              expose_headers?: string;
              max_age?: string;
              allow_credentials?: boolean;
              filter_enabled?: envoy.config.core.v3.RuntimeFractionalPercent;
              shadow_enabled?: envoy.config.core.v3.RuntimeFractionalPercent;
              allow_private_network_access?: boolean;
              forward_not_matching_preflights?: boolean;
            }
          }
        }
        export namespace csrf {
          export namespace v3 {
            export interface CsrfPolicy {
              filter_enabled?: envoy.config.core.v3.RuntimeFractionalPercent;
              shadow_enabled?: envoy.config.core.v3.RuntimeFractionalPercent;
              additional_origins?: envoy.type.matcher.v3.StringMatcher[];
            }
          }
        }
        export namespace decompressor {
          export namespace v3 {
            export interface Decompressor {
              decompressor_library?: envoy.config.core.v3.TypedExtensionConfig;
              request_direction_config?: envoy.extensions.filters.http.decompressor.v3.Decompressor.RequestDirectionConfig;
              response_direction_config?: envoy.extensions.filters.http.decompressor.v3.Decompressor.ResponseDirectionConfig;
            }
            export namespace Decompressor {
              export interface CommonDirectionConfig {
                enabled?: envoy.config.core.v3.RuntimeFeatureFlag;
                ignore_no_transform_header?: boolean;
              }
              export interface RequestDirectionConfig {
                common_config?: envoy.extensions.filters.http.decompressor.v3.Decompressor.CommonDirectionConfig;
                advertise_accept_encoding?: boolean;
              }
              export interface ResponseDirectionConfig {
                common_config?: envoy.extensions.filters.http.decompressor.v3.Decompressor.CommonDirectionConfig;
              }
            }
          }
        }
        export namespace ext_authz {
          export namespace v3 {
            export interface AuthorizationRequest {
              /** @deprecated */
              allowed_headers?: envoy.type.matcher.v3.ListStringMatcher;
              headers_to_add?: envoy.config.core.v3.HeaderValue[];
            }
            export interface AuthorizationResponse {
              allowed_upstream_headers?: envoy.type.matcher.v3.ListStringMatcher;
              allowed_upstream_headers_to_append?: envoy.type.matcher.v3.ListStringMatcher;
              allowed_client_headers?: envoy.type.matcher.v3.ListStringMatcher;
              allowed_client_headers_on_success?: envoy.type.matcher.v3.ListStringMatcher;
              dynamic_metadata_from_headers?: envoy.type.matcher.v3.ListStringMatcher;
            }
            export interface BufferSettings {
              max_request_bytes?: number;
              allow_partial_message?: boolean;
              pack_as_bytes?: boolean;
            }
            export interface CheckSettings {
              context_extensions?: { [key: string]: string };
              disable_request_body_buffering?: boolean;
              with_request_body?: envoy.extensions.filters.http.ext_authz.v3.BufferSettings;
              grpc_service?: envoy.config.core.v3.GrpcService;
              http_service?: envoy.extensions.filters.http.ext_authz.v3.HttpService;
            }
            export interface ExtAuthz {
              grpc_service?: envoy.config.core.v3.GrpcService;
              http_service?: envoy.extensions.filters.http.ext_authz.v3.HttpService;
              transport_api_version?: envoy.config.core.v3.ApiVersion;
              failure_mode_allow?: boolean;
              failure_mode_allow_header_add?: boolean;
              with_request_body?: envoy.extensions.filters.http.ext_authz.v3.BufferSettings;
              clear_route_cache?: boolean;
              status_on_error?: envoy.type.v3.HttpStatus;
              validate_mutations?: boolean;
              metadata_context_namespaces?: string[];
              typed_metadata_context_namespaces?: string[];
              route_metadata_context_namespaces?: string[];
              route_typed_metadata_context_namespaces?: string[];
              filter_enabled?: envoy.config.core.v3.RuntimeFractionalPercent;
              filter_enabled_metadata?: envoy.type.matcher.v3.MetadataMatcher;
              deny_at_disable?: envoy.config.core.v3.RuntimeFeatureFlag;
              include_peer_certificate?: boolean;
              stat_prefix?: string;
              bootstrap_metadata_labels_key?: string;
              allowed_headers?: envoy.type.matcher.v3.ListStringMatcher;
              disallowed_headers?: envoy.type.matcher.v3.ListStringMatcher;
              include_tls_session?: boolean;
              charge_cluster_response_stats?: boolean;
              encode_raw_headers?: boolean;
              decoder_header_mutation_rules?: envoy.config.common.mutation_rules.v3.HeaderMutationRules;
              enable_dynamic_metadata_ingestion?: boolean;
              filter_metadata?: { [key: string]: unknown };
              emit_filter_state_stats?: boolean;
              max_denied_response_body_bytes?: number;
              enforce_response_header_limits?: boolean;
            }
            export interface ExtAuthzPerRoute {
              disabled?: boolean;
              check_settings?: envoy.extensions.filters.http.ext_authz.v3.CheckSettings;
            }
            export interface HttpService {
              server_uri?: envoy.config.core.v3.HttpUri;
              path_prefix?: string;
              authorization_request?: envoy.extensions.filters.http.ext_authz.v3.AuthorizationRequest;
              authorization_response?: envoy.extensions.filters.http.ext_authz.v3.AuthorizationResponse;
              retry_policy?: envoy.config.core.v3.RetryPolicy;
            }
          }
        }
        export namespace fault {
          export namespace v3 {
            export interface FaultAbort {
              http_status?: number;
              grpc_status?: number;
              header_abort?: envoy.extensions.filters.http.fault.v3.FaultAbort.HeaderAbort;
              percentage?: envoy.type.v3.FractionalPercent;
            }
            export interface HTTPFault {
              delay?: envoy.extensions.filters.common.fault.v3.FaultDelay;
              abort?: envoy.extensions.filters.http.fault.v3.FaultAbort;
              upstream_cluster?: string;
              headers?: envoy.config.route.v3.HeaderMatcher[];
              downstream_nodes?: string[];
              max_active_faults?: number;
              response_rate_limit?: envoy.extensions.filters.common.fault.v3.FaultRateLimit;
              delay_percent_runtime?: string;
              abort_percent_runtime?: string;
              delay_duration_runtime?: string;
              abort_http_status_runtime?: string;
              max_active_faults_runtime?: string;
              response_rate_limit_percent_runtime?: string;
              abort_grpc_status_runtime?: string;
              disable_downstream_cluster_stats?: boolean;
              filter_metadata?: { [key: string]: unknown };
            }
            export namespace FaultAbort {
              export interface HeaderAbort {
              }
            }
          }
        }
        export namespace grpc_web {
          export namespace v3 {
            export interface GrpcWeb {
            }
          }
        }
        export namespace header_to_metadata {
          export namespace v3 {
            export interface Config {
              request_rules?: envoy.extensions.filters.http.header_to_metadata.v3.Config.Rule[];
              response_rules?: envoy.extensions.filters.http.header_to_metadata.v3.Config.Rule[];
              stat_prefix?: string;
            }
            export namespace Config {
              export interface KeyValuePair {
                metadata_namespace?: string;
                key?: string;
                value?: string;
                regex_value_rewrite?: envoy.type.matcher.v3.RegexMatchAndSubstitute;
                type?: envoy.extensions.filters.http.header_to_metadata.v3.Config.ValueType;
                encode?: envoy.extensions.filters.http.header_to_metadata.v3.Config.ValueEncode;
              }
              export interface Rule {
                header?: string;
                cookie?: string;
                on_header_present?: envoy.extensions.filters.http.header_to_metadata.v3.Config.KeyValuePair;
                on_header_missing?: envoy.extensions.filters.http.header_to_metadata.v3.Config.KeyValuePair;
                remove?: boolean;
              }
              export type ValueEncode = 'NONE' | 'BASE64';
              export type ValueType = 'STRING' | 'NUMBER' | 'PROTOBUF_VALUE';
            }
          }
        }
        export namespace health_check {
          export namespace v3 {
            export interface HealthCheck {
              pass_through_mode?: boolean;
              cache_time?: string;
              cluster_min_healthy_percentages?: { [key: string]: envoy.type.v3.Percent };
              headers?: envoy.config.route.v3.HeaderMatcher[];
            }
          }
        }
        export namespace local_ratelimit {
          export namespace v3 {
            export interface LocalRateLimit {
              stat_prefix?: string;
              status?: envoy.type.v3.HttpStatus;
              token_bucket?: envoy.type.v3.TokenBucket;
              filter_enabled?: envoy.config.core.v3.RuntimeFractionalPercent;
              filter_enforced?: envoy.config.core.v3.RuntimeFractionalPercent;
              request_headers_to_add_when_not_enforced?: envoy.config.core.v3.HeaderValueOption[];
              response_headers_to_add?: envoy.config.core.v3.HeaderValueOption[];
              descriptors?: envoy.extensions.common.ratelimit.v3.LocalRateLimitDescriptor[];
              stage?: number;
              local_rate_limit_per_downstream_connection?: boolean;
              local_cluster_rate_limit?: envoy.extensions.common.ratelimit.v3.LocalClusterRateLimit;
              enable_x_ratelimit_headers?: envoy.extensions.common.ratelimit.v3.XRateLimitHeadersRFCVersion;
              vh_rate_limits?: envoy.extensions.common.ratelimit.v3.VhRateLimitsOptions;
              always_consume_default_token_bucket?: boolean;
              rate_limited_as_resource_exhausted?: boolean;
              rate_limits?: envoy.config.route.v3.RateLimit[];
              max_dynamic_descriptors?: number;
            }
          }
        }
        export namespace lua {
          export namespace v3 {
            export interface Lua {
              /** @deprecated */
              inline_code?: string;
              source_codes?: { [key: string]: envoy.config.core.v3.DataSource };
              default_source_code?: envoy.config.core.v3.DataSource;
              stat_prefix?: string;
              clear_route_cache?: boolean;
            }
            export interface LuaPerRoute {
              disabled?: boolean;
              name?: string;
              source_code?: envoy.config.core.v3.DataSource;
              filter_context?: { [key: string]: unknown };
            }
          }
        }
        export namespace ratelimit {
          export namespace v3 {
            export interface RateLimit {
              domain?: string;
              stage?: number;
              request_type?: string;
              timeout?: string;
              failure_mode_deny?: boolean;
              rate_limited_as_resource_exhausted?: boolean;
              rate_limit_service?: envoy.config.ratelimit.v3.RateLimitServiceConfig;
              enable_x_ratelimit_headers?: envoy.extensions.filters.http.ratelimit.v3.RateLimit.XRateLimitHeadersRFCVersion;
              disable_x_envoy_ratelimited_header?: boolean;
              rate_limited_status?: envoy.type.v3.HttpStatus;
              response_headers_to_add?: envoy.config.core.v3.HeaderValueOption[];
              status_on_error?: envoy.type.v3.HttpStatus;
              stat_prefix?: string;
              filter_enabled?: envoy.config.core.v3.RuntimeFractionalPercent;
              filter_enforced?: envoy.config.core.v3.RuntimeFractionalPercent;
              failure_mode_deny_percent?: envoy.config.core.v3.RuntimeFractionalPercent;
              rate_limits?: envoy.config.route.v3.RateLimit[];
            }
            export interface RateLimitPerRoute {
              vh_rate_limits?: envoy.extensions.filters.http.ratelimit.v3.RateLimitPerRoute.VhRateLimitsOptions;
              override_option?: envoy.extensions.filters.http.ratelimit.v3.RateLimitPerRoute.OverrideOptions;
              rate_limits?: envoy.config.route.v3.RateLimit[];
              domain?: string;
            }
            export namespace RateLimit {
              export type XRateLimitHeadersRFCVersion = 'OFF' | 'DRAFT_VERSION_03';
            }
            export namespace RateLimitPerRoute {
              export type OverrideOptions = 'DEFAULT' | 'OVERRIDE_POLICY' | 'INCLUDE_POLICY' | 'IGNORE_POLICY';
              export type VhRateLimitsOptions = 'OVERRIDE' | 'INCLUDE' | 'IGNORE';
            }
          }
        }
        export namespace rbac {
          export namespace v3 {
            export interface RBAC {
              rules?: envoy.config.rbac.v3.RBAC;
              rules_stat_prefix?: string;
              matcher?: xds.type.matcher.v3.Matcher;
              shadow_rules?: envoy.config.rbac.v3.RBAC;
              shadow_matcher?: xds.type.matcher.v3.Matcher;
              shadow_rules_stat_prefix?: string;
              track_per_rule_stats?: boolean;
            }
            export interface RBACPerRoute {
              rbac?: envoy.extensions.filters.http.rbac.v3.RBAC;
            }
          }
        }
        export namespace router {
          export namespace v3 {
            export interface Router {
              dynamic_stats?: boolean;
              /** @deprecated */
              start_child_span?: boolean;
              upstream_log?: envoy.config.accesslog.v3.AccessLog[];
              upstream_log_options?: envoy.extensions.filters.http.router.v3.Router.UpstreamAccessLogOptions;
              suppress_envoy_headers?: boolean;
              strict_check_headers?: string[];
              respect_expected_rq_timeout?: boolean;
              suppress_grpc_request_failure_code_stats?: boolean;
              upstream_http_filters?: envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter[];
              reject_connect_request_early_data?: boolean;
            }
            export namespace Router {
              export interface UpstreamAccessLogOptions {
                flush_upstream_log_on_upstream_stream?: boolean;
                upstream_log_flush_interval?: string;
              }
            }
          }
        }
        export namespace tap {
          export namespace v3 {
            export interface Tap {
              common_config?: envoy.extensions.common.tap.v3.CommonExtensionConfig;
              record_headers_received_time?: boolean;
              record_downstream_connection?: boolean;
              record_upstream_connection?: boolean;
            }
          }
        }
      }
      export namespace listener {
        export namespace proxy_protocol {
          export namespace v3 {
            export interface ProxyProtocol {
              rules?: envoy.extensions.filters.listener.proxy_protocol.v3.ProxyProtocol.Rule[];
              allow_requests_without_proxy_protocol?: boolean;
              pass_through_tlvs?: envoy.config.core.v3.ProxyProtocolPassThroughTLVs;
              disallowed_versions?: envoy.config.core.v3.ProxyProtocolConfig.Version[];
              stat_prefix?: string;
              tlv_location?: envoy.extensions.filters.listener.proxy_protocol.v3.ProxyProtocol.TlvLocation;
            }
            export namespace ProxyProtocol {
              export interface KeyValuePair {
                metadata_namespace?: string;
                key?: string;
              }
              export interface Rule {
                tlv_type?: number;
                on_tlv_present?: envoy.extensions.filters.listener.proxy_protocol.v3.ProxyProtocol.KeyValuePair;
              }
              export type TlvLocation = 'DYNAMIC_METADATA' | 'FILTER_STATE';
            }
          }
        }
        export namespace tls_inspector {
          export namespace v3 {
            export interface TlsInspector {
              enable_ja3_fingerprinting?: boolean;
              enable_ja4_fingerprinting?: boolean;
              initial_read_buffer_size?: number;
              close_connection_on_client_hello_parsing_errors?: boolean;
              max_client_hello_size?: number;
            }
          }
        }
      }
      export namespace network {
        export namespace http_connection_manager {
          export namespace v3 {
            export interface ForwardProtoConfig {
              https_destination_ports?: number[];
              http_destination_ports?: number[];
            }
            export interface HttpConnectionManager {
              codec_type?: envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.CodecType;
              stat_prefix?: string;
              rds?: envoy.extensions.filters.network.http_connection_manager.v3.Rds;
              route_config?: envoy.config.route.v3.RouteConfiguration;
              scoped_routes?: envoy.extensions.filters.network.http_connection_manager.v3.ScopedRoutes;
              http_filters?: envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter[];
              add_user_agent?: boolean;
              tracing?: envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.Tracing;
              common_http_protocol_options?: envoy.config.core.v3.HttpProtocolOptions;
              http1_safe_max_connection_duration?: boolean;
              http_protocol_options?: envoy.config.core.v3.Http1ProtocolOptions;
              http2_protocol_options?: envoy.config.core.v3.Http2ProtocolOptions;
              http3_protocol_options?: envoy.config.core.v3.Http3ProtocolOptions;
              server_name?: string;
              server_header_transformation?: envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.ServerHeaderTransformation;
              scheme_header_transformation?: envoy.config.core.v3.SchemeHeaderTransformation;
              max_request_headers_kb?: number;
              stream_idle_timeout?: string;
              stream_flush_timeout?: string;
              request_timeout?: string;
              request_headers_timeout?: string;
              drain_timeout?: string;
              delayed_close_timeout?: string;
              access_log?: envoy.config.accesslog.v3.AccessLog[];
              /** @deprecated */
              access_log_flush_interval?: string;
              /** @deprecated */
              flush_access_log_on_new_request?: boolean;
              access_log_options?: envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.HcmAccessLogOptions;
              use_remote_address?: boolean;
              xff_num_trusted_hops?: number;
              original_ip_detection_extensions?: envoy.config.core.v3.TypedExtensionConfig[];
              early_header_mutation_extensions?: envoy.config.core.v3.TypedExtensionConfig[];
              internal_address_config?: envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.InternalAddressConfig;
              skip_xff_append?: boolean;
              via?: string;
              generate_request_id?: boolean;
              preserve_external_request_id?: boolean;
              always_set_request_id_in_response?: boolean;
              forward_client_cert_details?: envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.ForwardClientCertDetails;
              set_current_client_cert_details?: envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.SetCurrentClientCertDetails;
              forward_client_cert_matcher?: xds.type.matcher.v3.Matcher;
              proxy_100_continue?: boolean;
              represent_ipv4_remote_address_as_ipv4_mapped_ipv6?: boolean;
              upgrade_configs?: envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.UpgradeConfig[];
              normalize_path?: boolean;
              merge_slashes?: boolean;
              path_with_escaped_slashes_action?: envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.PathWithEscapedSlashesAction;
              request_id_extension?: envoy.extensions.filters.network.http_connection_manager.v3.RequestIDExtension;
              local_reply_config?: envoy.extensions.filters.network.http_connection_manager.v3.LocalReplyConfig;
              strip_matching_host_port?: boolean;
              strip_any_host_port?: boolean;
              stream_error_on_invalid_http_message?: boolean;
              path_normalization_options?: envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.PathNormalizationOptions;
              strip_trailing_host_dot?: boolean;
              proxy_status_config?: envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.ProxyStatusConfig;
              typed_header_validation_config?: envoy.config.core.v3.TypedExtensionConfig;
              append_x_forwarded_port?: boolean;
              append_local_overload?: boolean;
              add_proxy_protocol_connection_state?: boolean;
              forward_proto_config?: envoy.extensions.filters.network.http_connection_manager.v3.ForwardProtoConfig;
            }
            export interface HttpFilter {
              name?: string;
              typed_config?: Any;
              config_discovery?: envoy.config.core.v3.ExtensionConfigSource;
              is_optional?: boolean;
              disabled?: boolean;
            }
            export interface LocalReplyConfig {
              mappers?: envoy.extensions.filters.network.http_connection_manager.v3.ResponseMapper[];
              body_format?: envoy.config.core.v3.SubstitutionFormatString;
            }
            export interface Rds {
              config_source?: envoy.config.core.v3.ConfigSource;
              route_config_name?: string;
            }
            export interface RequestIDExtension {
              typed_config?: Any;
            }
            export interface ResponseMapper {
              filter?: envoy.config.accesslog.v3.AccessLogFilter;
              status_code?: number;
              body?: envoy.config.core.v3.DataSource;
              body_format_override?: envoy.config.core.v3.SubstitutionFormatString;
              headers_to_add?: envoy.config.core.v3.HeaderValueOption[];
            }
            export interface ScopedRds {
              scoped_rds_config_source?: envoy.config.core.v3.ConfigSource;
              srds_resources_locator?: string;
            }
            export interface ScopedRouteConfigurationsList {
              scoped_route_configurations?: envoy.config.route.v3.ScopedRouteConfiguration[];
            }
            export interface ScopedRoutes {
              name?: string;
              scope_key_builder?: envoy.extensions.filters.network.http_connection_manager.v3.ScopedRoutes.ScopeKeyBuilder;
              rds_config_source?: envoy.config.core.v3.ConfigSource;
              scoped_route_configurations_list?: envoy.extensions.filters.network.http_connection_manager.v3.ScopedRouteConfigurationsList;
              scoped_rds?: envoy.extensions.filters.network.http_connection_manager.v3.ScopedRds;
            }
            export namespace HttpConnectionManager {
              export type CodecType = 'AUTO' | 'HTTP1' | 'HTTP2' | 'HTTP3';
              export type ForwardClientCertDetails = 'SANITIZE' | 'FORWARD_ONLY' | 'APPEND_FORWARD' | 'SANITIZE_SET' | 'ALWAYS_FORWARD_ONLY';
              export interface HcmAccessLogOptions {
                access_log_flush_interval?: string;
                flush_access_log_on_new_request?: boolean;
                flush_log_on_tunnel_successfully_established?: boolean;
              }
              export interface InternalAddressConfig {
                unix_sockets?: boolean;
                cidr_ranges?: envoy.config.core.v3.CidrRange[];
              }
              export interface PathNormalizationOptions {
                forwarding_transformation?: envoy.type.http.v3.PathTransformation;
                http_filter_transformation?: envoy.type.http.v3.PathTransformation;
              }
              export type PathWithEscapedSlashesAction = 'IMPLEMENTATION_SPECIFIC_DEFAULT' | 'KEEP_UNCHANGED' | 'REJECT_REQUEST' | 'UNESCAPE_AND_REDIRECT' | 'UNESCAPE_AND_FORWARD';
              export interface ProxyStatusConfig {
                remove_details?: boolean;
                remove_connection_termination_details?: boolean;
                remove_response_flags?: boolean;
                set_recommended_response_code?: boolean;
                use_node_id?: boolean;
                literal_proxy_name?: string;
              }
              export type ServerHeaderTransformation = 'OVERWRITE' | 'APPEND_IF_ABSENT' | 'PASS_THROUGH';
              export interface SetCurrentClientCertDetails {
                subject?: boolean;
                cert?: boolean;
                chain?: boolean;
                dns?: boolean;
                uri?: boolean;
              }
              export interface Tracing {
                client_sampling?: envoy.type.v3.Percent;
                random_sampling?: envoy.type.v3.Percent;
                overall_sampling?: envoy.type.v3.Percent;
                verbose?: boolean;
                max_path_tag_length?: number;
                custom_tags?: envoy.type.tracing.v3.CustomTag[];
                provider?: envoy.config.trace.v3.Tracing.Http;
                spawn_upstream_span?: boolean;
                operation?: string;
                upstream_operation?: string;
              }
              export interface UpgradeConfig {
                upgrade_type?: string;
                filters?: envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter[];
                enabled?: boolean;
              }
            }
            export namespace ScopedRoutes {
              export interface ScopeKeyBuilder {
                fragments?: envoy.extensions.filters.network.http_connection_manager.v3.ScopedRoutes.ScopeKeyBuilder.FragmentBuilder[];
              }
              export namespace ScopeKeyBuilder {
                export interface FragmentBuilder {
                  header_value_extractor?: envoy.extensions.filters.network.http_connection_manager.v3.ScopedRoutes.ScopeKeyBuilder.FragmentBuilder.HeaderValueExtractor;
                }
                export namespace FragmentBuilder {
                  export interface HeaderValueExtractor {
                    name?: string;
                    element_separator?: string;
                    index?: number;
                    element?: envoy.extensions.filters.network.http_connection_manager.v3.ScopedRoutes.ScopeKeyBuilder.FragmentBuilder.HeaderValueExtractor.KvElement;
                  }
                  export namespace HeaderValueExtractor {
                    export interface KvElement {
                      separator?: string;
                      key?: string;
                    }
                  }
                }
              }
            }
          }
        }
        export namespace tcp_proxy {
          export namespace v3 {
            export interface TcpProxy {
              stat_prefix?: string;
              cluster?: string;
              weighted_clusters?: envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy.WeightedCluster;
              on_demand?: envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy.OnDemand;
              metadata_match?: envoy.config.core.v3.Metadata;
              idle_timeout?: string;
              downstream_idle_timeout?: string;
              upstream_idle_timeout?: string;
              access_log?: envoy.config.accesslog.v3.AccessLog[];
              max_connect_attempts?: number;
              backoff_options?: envoy.config.core.v3.BackoffStrategy;
              hash_policy?: envoy.type.v3.HashPolicy[];
              tunneling_config?: envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy.TunnelingConfig;
              max_downstream_connection_duration?: string;
              max_downstream_connection_duration_jitter_percentage?: envoy.type.v3.Percent;
              /** @deprecated */
              access_log_flush_interval?: string;
              /** @deprecated */
              flush_access_log_on_connected?: boolean;
              access_log_options?: envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy.TcpAccessLogOptions;
              proxy_protocol_tlvs?: envoy.config.core.v3.TlvEntry[];
              upstream_connect_mode?: envoy.extensions.filters.network.tcp_proxy.v3.UpstreamConnectMode;
              max_early_data_bytes?: number;
            }
            export type UpstreamConnectMode = 'IMMEDIATE' | 'ON_DOWNSTREAM_DATA' | 'ON_DOWNSTREAM_TLS_HANDSHAKE';
            export namespace TcpProxy {
              export interface OnDemand {
                odcds_config?: envoy.config.core.v3.ConfigSource;
                resources_locator?: string;
                timeout?: string;
              }
              export interface TcpAccessLogOptions {
                access_log_flush_interval?: string;
                flush_access_log_on_connected?: boolean;
                flush_access_log_on_start?: boolean;
              }
              export interface TunnelingConfig {
                hostname?: string;
                use_post?: boolean;
                headers_to_add?: envoy.config.core.v3.HeaderValueOption[];
                propagate_response_headers?: boolean;
                post_path?: string;
                propagate_response_trailers?: boolean;
                request_id_extension?: envoy.extensions.filters.network.http_connection_manager.v3.RequestIDExtension;
                request_id_header?: string;
                request_id_metadata_key?: string;
              }
              export interface WeightedCluster {
                clusters?: envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy.WeightedCluster.ClusterWeight[];
              }
              export namespace WeightedCluster {
                export interface ClusterWeight {
                  name?: string;
                  weight?: number;
                  metadata_match?: envoy.config.core.v3.Metadata;
                }
              }
            }
          }
        }
      }
      export namespace udp {
        export namespace udp_proxy {
          export namespace v3 {
            export interface Route {
              cluster?: string;
            }
            export interface UdpProxyConfig {
              stat_prefix?: string;
              /** @deprecated */
              cluster?: string;
              matcher?: xds.type.matcher.v3.Matcher;
              idle_timeout?: string;
              use_original_src_ip?: boolean;
              hash_policies?: envoy.extensions.filters.udp.udp_proxy.v3.UdpProxyConfig.HashPolicy[];
              upstream_socket_config?: envoy.config.core.v3.UdpSocketConfig;
              use_per_packet_load_balancing?: boolean;
              access_log?: envoy.config.accesslog.v3.AccessLog[];
              proxy_access_log?: envoy.config.accesslog.v3.AccessLog[];
              session_filters?: envoy.extensions.filters.udp.udp_proxy.v3.UdpProxyConfig.SessionFilter[];
              tunneling_config?: envoy.extensions.filters.udp.udp_proxy.v3.UdpProxyConfig.UdpTunnelingConfig;
              access_log_options?: envoy.extensions.filters.udp.udp_proxy.v3.UdpProxyConfig.UdpAccessLogOptions;
            }
            export namespace UdpProxyConfig {
              export interface HashPolicy {
                source_ip?: boolean;
                key?: string;
              }
              export interface SessionFilter {
                name?: string;
                typed_config?: Any;
                config_discovery?: envoy.config.core.v3.ExtensionConfigSource;
              }
              export interface UdpAccessLogOptions {
                access_log_flush_interval?: string;
                flush_access_log_on_tunnel_connected?: boolean;
              }
              export interface UdpTunnelingConfig {
                proxy_host?: string;
                proxy_port?: number;
                target_host?: string;
                default_target_port?: number;
                use_post?: boolean;
                post_path?: string;
                retry_options?: envoy.extensions.filters.udp.udp_proxy.v3.UdpProxyConfig.UdpTunnelingConfig.RetryOptions;
                headers_to_add?: envoy.config.core.v3.HeaderValueOption[];
                buffer_options?: envoy.extensions.filters.udp.udp_proxy.v3.UdpProxyConfig.UdpTunnelingConfig.BufferOptions;
                propagate_response_headers?: boolean;
                propagate_response_trailers?: boolean;
              }
              export namespace UdpTunnelingConfig {
                export interface BufferOptions {
                  max_buffered_datagrams?: number;
                  max_buffered_bytes?: number | string;
                }
                export interface RetryOptions {
                  max_connect_attempts?: number;
                  backoff_options?: envoy.config.core.v3.BackoffStrategy;
                }
              }
            }
          }
        }
      }
    }
    export namespace http {
      export namespace original_ip_detection {
        export namespace custom_header {
          export namespace v3 {
            export interface CustomHeaderConfig {
              header_name?: string;
              allow_extension_to_set_address_as_trusted?: boolean;
              reject_with_status?: envoy.type.v3.HttpStatus;
            }
          }
        }
        export namespace xff {
          export namespace v3 {
            export interface XffConfig {
              xff_num_trusted_hops?: number;
              xff_trusted_cidrs?: envoy.extensions.http.original_ip_detection.xff.v3.XffTrustedCidrs;
              skip_xff_append?: boolean;
            }
            export interface XffTrustedCidrs {
              cidrs?: envoy.config.core.v3.CidrRange[];
            }
          }
        }
      }
    }
    export namespace load_balancing_policies {
      export namespace common {
        export namespace v3 {
          export interface ConsistentHashingLbConfig {
            use_hostname_for_hashing?: boolean;
            hash_balance_factor?: number;
            hash_policy?: envoy.config.route.v3.RouteAction.HashPolicy[];
          }
          export interface LocalityLbConfig {
            zone_aware_lb_config?: envoy.extensions.load_balancing_policies.common.v3.LocalityLbConfig.ZoneAwareLbConfig;
            locality_weighted_lb_config?: envoy.extensions.load_balancing_policies.common.v3.LocalityLbConfig.LocalityWeightedLbConfig;
          }
          export interface SlowStartConfig {
            slow_start_window?: string;
            aggression?: envoy.config.core.v3.RuntimeDouble;
            min_weight_percent?: envoy.type.v3.Percent;
          }
          export namespace LocalityLbConfig {
            export interface LocalityWeightedLbConfig {
            }
            export interface ZoneAwareLbConfig {
              routing_enabled?: envoy.type.v3.Percent;
              min_cluster_size?: number | string;
              fail_traffic_on_panic?: boolean;
              /** @deprecated */
              force_locality_direct_routing?: boolean;
              force_local_zone?: envoy.extensions.load_balancing_policies.common.v3.LocalityLbConfig.ZoneAwareLbConfig.ForceLocalZone;
              locality_basis?: envoy.extensions.load_balancing_policies.common.v3.LocalityLbConfig.ZoneAwareLbConfig.LocalityBasis;
            }
            export namespace ZoneAwareLbConfig {
              export interface ForceLocalZone {
                min_size?: number;
              }
              export type LocalityBasis = 'HEALTHY_HOSTS_NUM' | 'HEALTHY_HOSTS_WEIGHT';
            }
          }
        }
      }
      export namespace least_request {
        export namespace v3 {
          export interface LeastRequest {
            choice_count?: number;
            active_request_bias?: envoy.config.core.v3.RuntimeDouble;
            slow_start_config?: envoy.extensions.load_balancing_policies.common.v3.SlowStartConfig;
            locality_lb_config?: envoy.extensions.load_balancing_policies.common.v3.LocalityLbConfig;
            /** @deprecated */
            enable_full_scan?: boolean;
            selection_method?: envoy.extensions.load_balancing_policies.least_request.v3.LeastRequest.SelectionMethod;
          }
          export namespace LeastRequest {
            export type SelectionMethod = 'N_CHOICES' | 'FULL_SCAN';
          }
        }
      }
      export namespace maglev {
        export namespace v3 {
          export interface Maglev {
            table_size?: number | string;
            consistent_hashing_lb_config?: envoy.extensions.load_balancing_policies.common.v3.ConsistentHashingLbConfig;
            locality_weighted_lb_config?: envoy.extensions.load_balancing_policies.common.v3.LocalityLbConfig.LocalityWeightedLbConfig;
          }
        }
      }
      export namespace random {
        export namespace v3 {
          export interface Random {
            locality_lb_config?: envoy.extensions.load_balancing_policies.common.v3.LocalityLbConfig;
          }
        }
      }
      export namespace ring_hash {
        export namespace v3 {
          export interface RingHash {
            hash_function?: envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash.HashFunction;
            minimum_ring_size?: number | string;
            maximum_ring_size?: number | string;
            /** @deprecated */
            use_hostname_for_hashing?: boolean;
            /** @deprecated */
            hash_balance_factor?: number;
            consistent_hashing_lb_config?: envoy.extensions.load_balancing_policies.common.v3.ConsistentHashingLbConfig;
            locality_weighted_lb_config?: envoy.extensions.load_balancing_policies.common.v3.LocalityLbConfig.LocalityWeightedLbConfig;
          }
          export namespace RingHash {
            export type HashFunction = 'DEFAULT_HASH' | 'XX_HASH' | 'MURMUR_HASH_2';
          }
        }
      }
      export namespace round_robin {
        export namespace v3 {
          export interface RoundRobin {
            slow_start_config?: envoy.extensions.load_balancing_policies.common.v3.SlowStartConfig;
            locality_lb_config?: envoy.extensions.load_balancing_policies.common.v3.LocalityLbConfig;
          }
        }
      }
    }
    export namespace network {
      export namespace dns_resolver {
        export namespace cares {
          export namespace v3 {
            export interface CaresDnsResolverConfig {
              resolvers?: envoy.config.core.v3.Address[];
              use_resolvers_as_fallback?: boolean;
              filter_unroutable_families?: boolean;
              dns_resolver_options?: envoy.config.core.v3.DnsResolverOptions;
              udp_max_queries?: number;
              query_timeout_seconds?: number | string;
              query_tries?: number;
              rotate_nameservers?: boolean;
              edns0_max_payload_size?: number;
              max_udp_channel_duration?: string;
              reinit_channel_on_timeout?: boolean;
            }
          }
        }
      }
    }
    export namespace resource_monitors {
      export namespace downstream_connections {
        export namespace v3 {
          export interface DownstreamConnectionsConfig {
            max_active_downstream_connections?: number | string;
          }
        }
      }
      export namespace fixed_heap {
        export namespace v3 {
          export interface FixedHeapConfig {
            max_heap_size_bytes?: number | string;
          }
        }
      }
      export namespace injected_resource {
        export namespace v3 {
          export interface InjectedResourceConfig {
            filename?: string;
          }
        }
      }
    }
    export namespace retry {
      export namespace host {
        export namespace omit_canary_hosts {
          export namespace v3 {
            export interface OmitCanaryHostsPredicate {
            }
          }
        }
        export namespace previous_hosts {
          export namespace v3 {
            export interface PreviousHostsPredicate {
            }
          }
        }
      }
      export namespace priority {
        export namespace previous_priorities {
          export namespace v3 {
            export interface PreviousPrioritiesConfig {
              update_frequency?: number;
            }
          }
        }
      }
    }
    export namespace tracers {
      export namespace opentelemetry {
        export namespace resource_detectors {
          export namespace v3 {
            export interface EnvironmentResourceDetectorConfig {
            }
            export interface StaticConfigResourceDetectorConfig {
              attributes?: { [key: string]: string };
            }
          }
        }
      }
    }
    export namespace transport_sockets {
      export namespace proxy_protocol {
        export namespace v3 {
          export interface ProxyProtocolUpstreamTransport {
            config?: envoy.config.core.v3.ProxyProtocolConfig;
            transport_socket?: envoy.config.core.v3.TransportSocket;
            allow_unspecified_address?: boolean;
            tlv_as_pool_key?: boolean;
          }
        }
      }
      export namespace raw_buffer {
        export namespace v3 {
          export interface RawBuffer {
          }
        }
      }
      export namespace tls {
        export namespace v3 {
          export interface CertificateProviderPluginInstance {
            instance_name?: string;
            certificate_name?: string;
          }
          export interface CertificateValidationContext {
            trusted_ca?: envoy.config.core.v3.DataSource;
            ca_certificate_provider_instance?: envoy.extensions.transport_sockets.tls.v3.CertificateProviderPluginInstance;
            system_root_certs?: envoy.extensions.transport_sockets.tls.v3.CertificateValidationContext.SystemRootCerts;
            watched_directory?: envoy.config.core.v3.WatchedDirectory;
            verify_certificate_spki?: string[];
            verify_certificate_hash?: string[];
            match_typed_subject_alt_names?: envoy.extensions.transport_sockets.tls.v3.SubjectAltNameMatcher[];
            /** @deprecated */
            match_subject_alt_names?: envoy.type.matcher.v3.StringMatcher[];
            require_signed_certificate_timestamp?: boolean;
            crl?: envoy.config.core.v3.DataSource;
            allow_expired_certificate?: boolean;
            trust_chain_verification?: envoy.extensions.transport_sockets.tls.v3.CertificateValidationContext.TrustChainVerification;
            custom_validator_config?: envoy.config.core.v3.TypedExtensionConfig;
            only_verify_leaf_cert_crl?: boolean;
            max_verify_depth?: number;
          }
          export interface CommonTlsContext {
            tls_params?: envoy.extensions.transport_sockets.tls.v3.TlsParameters;
            tls_certificates?: envoy.extensions.transport_sockets.tls.v3.TlsCertificate[];
            tls_certificate_sds_secret_configs?: envoy.extensions.transport_sockets.tls.v3.SdsSecretConfig[];
            tls_certificate_provider_instance?: envoy.extensions.transport_sockets.tls.v3.CertificateProviderPluginInstance;
            custom_tls_certificate_selector?: envoy.config.core.v3.TypedExtensionConfig;
            /** @deprecated */
            tls_certificate_certificate_provider?: envoy.extensions.transport_sockets.tls.v3.CommonTlsContext.CertificateProvider;
            /** @deprecated */
            tls_certificate_certificate_provider_instance?: envoy.extensions.transport_sockets.tls.v3.CommonTlsContext.CertificateProviderInstance;
            validation_context?: envoy.extensions.transport_sockets.tls.v3.CertificateValidationContext;
            validation_context_sds_secret_config?: envoy.extensions.transport_sockets.tls.v3.SdsSecretConfig;
            combined_validation_context?: envoy.extensions.transport_sockets.tls.v3.CommonTlsContext.CombinedCertificateValidationContext;
            /** @deprecated */
            validation_context_certificate_provider?: envoy.extensions.transport_sockets.tls.v3.CommonTlsContext.CertificateProvider;
            /** @deprecated */
            validation_context_certificate_provider_instance?: envoy.extensions.transport_sockets.tls.v3.CommonTlsContext.CertificateProviderInstance;
            alpn_protocols?: string[];
            custom_handshaker?: envoy.config.core.v3.TypedExtensionConfig;
            key_log?: envoy.extensions.transport_sockets.tls.v3.TlsKeyLog;
          }
          export interface DownstreamTlsContext {
            common_tls_context?: envoy.extensions.transport_sockets.tls.v3.CommonTlsContext;
            require_client_certificate?: boolean;
            require_sni?: boolean;
            session_ticket_keys?: envoy.extensions.transport_sockets.tls.v3.TlsSessionTicketKeys;
            session_ticket_keys_sds_secret_config?: envoy.extensions.transport_sockets.tls.v3.SdsSecretConfig;
            disable_stateless_session_resumption?: boolean;
            disable_stateful_session_resumption?: boolean;
            session_timeout?: string;
            ocsp_staple_policy?: envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext.OcspStaplePolicy;
            full_scan_certs_on_sni_mismatch?: boolean;
            prefer_client_ciphers?: boolean;
          }
          export interface GenericSecret {
            secret?: envoy.config.core.v3.DataSource;
            secrets?: { [key: string]: envoy.config.core.v3.DataSource };
          }
          export interface PrivateKeyProvider {
            provider_name?: string;
            typed_config?: Any;
            fallback?: boolean;
          }
          export interface SdsSecretConfig {
            name?: string;
            sds_config?: envoy.config.core.v3.ConfigSource;
          }
          export interface Secret {
            name?: string;
            tls_certificate?: envoy.extensions.transport_sockets.tls.v3.TlsCertificate;
            session_ticket_keys?: envoy.extensions.transport_sockets.tls.v3.TlsSessionTicketKeys;
            validation_context?: envoy.extensions.transport_sockets.tls.v3.CertificateValidationContext;
            generic_secret?: envoy.extensions.transport_sockets.tls.v3.GenericSecret;
          }
          export interface SubjectAltNameMatcher {
            san_type?: envoy.extensions.transport_sockets.tls.v3.SubjectAltNameMatcher.SanType;
            matcher?: envoy.type.matcher.v3.StringMatcher;
            oid?: string;
          }
          export interface TlsCertificate {
            certificate_chain?: envoy.config.core.v3.DataSource;
            private_key?: envoy.config.core.v3.DataSource;
            pkcs12?: envoy.config.core.v3.DataSource;
            watched_directory?: envoy.config.core.v3.WatchedDirectory;
            private_key_provider?: envoy.extensions.transport_sockets.tls.v3.PrivateKeyProvider;
            password?: envoy.config.core.v3.DataSource;
            ocsp_staple?: envoy.config.core.v3.DataSource;
            signed_certificate_timestamp?: envoy.config.core.v3.DataSource[];
          }
          export interface TlsKeyLog {
            path?: string;
            local_address_range?: envoy.config.core.v3.CidrRange[];
            remote_address_range?: envoy.config.core.v3.CidrRange[];
          }
          export interface TlsParameters {
            tls_minimum_protocol_version?: envoy.extensions.transport_sockets.tls.v3.TlsParameters.TlsProtocol;
            tls_maximum_protocol_version?: envoy.extensions.transport_sockets.tls.v3.TlsParameters.TlsProtocol;
            cipher_suites?: string[];
            ecdh_curves?: string[];
            signature_algorithms?: string[];
            compliance_policies?: envoy.extensions.transport_sockets.tls.v3.TlsParameters.CompliancePolicy[];
          }
          export interface TlsSessionTicketKeys {
            keys?: envoy.config.core.v3.DataSource[];
          }
          export interface UpstreamTlsContext {
            common_tls_context?: envoy.extensions.transport_sockets.tls.v3.CommonTlsContext;
            sni?: string;
            auto_host_sni?: boolean;
            auto_sni_san_validation?: boolean;
            allow_renegotiation?: boolean;
            max_session_keys?: number;
            enforce_rsa_key_usage?: boolean;
          }
          export namespace CertificateValidationContext {
            export interface SystemRootCerts {
            }
            export type TrustChainVerification = 'VERIFY_TRUST_CHAIN' | 'ACCEPT_UNTRUSTED';
          }
          export namespace CommonTlsContext {
            export interface CertificateProvider {
              name?: string;
              typed_config?: envoy.config.core.v3.TypedExtensionConfig;
            }
            export interface CertificateProviderInstance {
              instance_name?: string;
              certificate_name?: string;
            }
            export interface CombinedCertificateValidationContext {
              default_validation_context?: envoy.extensions.transport_sockets.tls.v3.CertificateValidationContext;
              validation_context_sds_secret_config?: envoy.extensions.transport_sockets.tls.v3.SdsSecretConfig;
              /** @deprecated */
              validation_context_certificate_provider?: envoy.extensions.transport_sockets.tls.v3.CommonTlsContext.CertificateProvider;
              /** @deprecated */
              validation_context_certificate_provider_instance?: envoy.extensions.transport_sockets.tls.v3.CommonTlsContext.CertificateProviderInstance;
            }
          }
          export namespace DownstreamTlsContext {
            export type OcspStaplePolicy = 'LENIENT_STAPLING' | 'STRICT_STAPLING' | 'MUST_STAPLE';
          }
          export namespace SubjectAltNameMatcher {
            export type SanType = 'SAN_TYPE_UNSPECIFIED' | 'EMAIL' | 'DNS' | 'URI' | 'IP_ADDRESS' | 'OTHER_NAME';
          }
          export namespace TlsParameters {
            export type CompliancePolicy = 'FIPS_202205';
            export type TlsProtocol = 'TLS_AUTO' | 'TLSv1_0' | 'TLSv1_1' | 'TLSv1_2' | 'TLSv1_3';
          }
        }
      }
    }
    export namespace upstreams {
      export namespace http {
        export namespace v3 {
          export interface HttpProtocolOptions {
            common_http_protocol_options?: envoy.config.core.v3.HttpProtocolOptions;
            upstream_http_protocol_options?: envoy.config.core.v3.UpstreamHttpProtocolOptions;
            explicit_http_config?: envoy.extensions.upstreams.http.v3.HttpProtocolOptions.ExplicitHttpConfig;
            use_downstream_protocol_config?: envoy.extensions.upstreams.http.v3.HttpProtocolOptions.UseDownstreamHttpConfig;
            auto_config?: envoy.extensions.upstreams.http.v3.HttpProtocolOptions.AutoHttpConfig;
            http_filters?: envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter[];
            header_validation_config?: envoy.config.core.v3.TypedExtensionConfig;
            outlier_detection?: envoy.extensions.upstreams.http.v3.HttpProtocolOptions.OutlierDetection;
            request_mirror_policies?: envoy.config.route.v3.RouteAction.RequestMirrorPolicy[];
            hash_policy?: envoy.config.route.v3.RouteAction.HashPolicy[];
            retry_policy?: envoy.config.route.v3.RetryPolicy;
          }
          export namespace HttpProtocolOptions {
            export interface AutoHttpConfig {
              http_protocol_options?: envoy.config.core.v3.Http1ProtocolOptions;
              http2_protocol_options?: envoy.config.core.v3.Http2ProtocolOptions;
              http3_protocol_options?: envoy.config.core.v3.Http3ProtocolOptions;
              alternate_protocols_cache_options?: envoy.config.core.v3.AlternateProtocolsCacheOptions;
            }
            export interface ExplicitHttpConfig {
              http_protocol_options?: envoy.config.core.v3.Http1ProtocolOptions;
              http2_protocol_options?: envoy.config.core.v3.Http2ProtocolOptions;
              http3_protocol_options?: envoy.config.core.v3.Http3ProtocolOptions;
            }
            export interface OutlierDetection {
              error_matcher?: envoy.config.common.matcher.v3.MatchPredicate;
            }
            export interface UseDownstreamHttpConfig {
              http_protocol_options?: envoy.config.core.v3.Http1ProtocolOptions;
              http2_protocol_options?: envoy.config.core.v3.Http2ProtocolOptions;
              http3_protocol_options?: envoy.config.core.v3.Http3ProtocolOptions;
            }
          }
        }
      }
    }
  }
  export namespace type {
    export namespace http {
      export namespace v3 {
        export interface PathTransformation {
          operations?: envoy.type.http.v3.PathTransformation.Operation[];
        }
        export namespace PathTransformation {
          export interface Operation {
            normalize_path_rfc_3986?: envoy.type.http.v3.PathTransformation.Operation.NormalizePathRFC3986;
            merge_slashes?: envoy.type.http.v3.PathTransformation.Operation.MergeSlashes;
          }
          export namespace Operation {
            export interface MergeSlashes {
            }
            export interface NormalizePathRFC3986 {
            }
          }
        }
      }
    }
    export namespace matcher {
      export namespace v3 {
        export interface AddressMatcher {
          ranges?: xds.core.v3.CidrRange[];
        }
        export interface DoubleMatcher {
          range?: envoy.type.v3.DoubleRange;
          exact?: number;
        }
        export interface FilterStateMatcher {
          key?: string;
          string_match?: envoy.type.matcher.v3.StringMatcher;
          address_match?: envoy.type.matcher.v3.AddressMatcher;
        }
        export interface ListMatcher {
          one_of?: envoy.type.matcher.v3.ValueMatcher;
        }
        export interface ListStringMatcher {
          patterns?: envoy.type.matcher.v3.StringMatcher[];
        }
        export interface MetadataMatcher {
          filter?: string;
          path?: envoy.type.matcher.v3.MetadataMatcher.PathSegment[];
          value?: envoy.type.matcher.v3.ValueMatcher;
          invert?: boolean;
        }
        export interface OrMatcher {
          value_matchers?: envoy.type.matcher.v3.ValueMatcher[];
        }
        export interface PathMatcher {
          path?: envoy.type.matcher.v3.StringMatcher;
        }
        export interface RegexMatchAndSubstitute {
          pattern?: envoy.type.matcher.v3.RegexMatcher;
          substitution?: string;
        }
        export interface RegexMatcher {
          /** @deprecated */
          google_re2?: envoy.type.matcher.v3.RegexMatcher.GoogleRE2;
          regex?: string;
        }
        export interface StringMatcher {
          exact?: string;
          prefix?: string;
          suffix?: string;
          safe_regex?: envoy.type.matcher.v3.RegexMatcher;
          contains?: string;
          custom?: xds.core.v3.TypedExtensionConfig;
          ignore_case?: boolean;
        }
        export interface ValueMatcher {
          null_match?: envoy.type.matcher.v3.ValueMatcher.NullMatch;
          double_match?: envoy.type.matcher.v3.DoubleMatcher;
          string_match?: envoy.type.matcher.v3.StringMatcher;
          bool_match?: boolean;
          present_match?: boolean;
          list_match?: envoy.type.matcher.v3.ListMatcher;
          or_match?: envoy.type.matcher.v3.OrMatcher;
        }
        export namespace MetadataMatcher {
          export interface PathSegment {
            key?: string;
          }
        }
        export namespace RegexMatcher {
          export interface GoogleRE2 {
            /** @deprecated */
            max_program_size?: number;
          }
        }
        export namespace ValueMatcher {
          export interface NullMatch {
          }
        }
      }
    }
    export namespace metadata {
      export namespace v3 {
        export interface MetadataKey {
          key?: string;
          path?: envoy.type.metadata.v3.MetadataKey.PathSegment[];
        }
        export interface MetadataKind {
          request?: envoy.type.metadata.v3.MetadataKind.Request;
          route?: envoy.type.metadata.v3.MetadataKind.Route;
          cluster?: envoy.type.metadata.v3.MetadataKind.Cluster;
          host?: envoy.type.metadata.v3.MetadataKind.Host;
        }
        export namespace MetadataKey {
          export interface PathSegment {
            key?: string;
          }
        }
        export namespace MetadataKind {
          export interface Cluster {
          }
          export interface Host {
          }
          export interface Request {
          }
          export interface Route {
          }
        }
      }
    }
    export namespace tracing {
      export namespace v3 {
        export interface CustomTag {
          tag?: string;
          literal?: envoy.type.tracing.v3.CustomTag.Literal;
          environment?: envoy.type.tracing.v3.CustomTag.Environment;
          request_header?: envoy.type.tracing.v3.CustomTag.Header;
          metadata?: envoy.type.tracing.v3.CustomTag.Metadata;
          value?: string;
        }
        export namespace CustomTag {
          export interface Environment {
            name?: string;
            default_value?: string;
          }
          export interface Header {
            name?: string;
            default_value?: string;
          }
          export interface Literal {
            value?: string;
          }
          export interface Metadata {
            kind?: envoy.type.metadata.v3.MetadataKind;
            metadata_key?: envoy.type.metadata.v3.MetadataKey;
            default_value?: string;
          }
        }
      }
    }
    export namespace v3 {
      export type CodecClientType = 'HTTP1' | 'HTTP2' | 'HTTP3';
      export interface DoubleRange {
        start?: number;
        end?: number;
      }
      export interface FractionalPercent {
        numerator?: number;
        denominator?: envoy.type.v3.FractionalPercent.DenominatorType;
      }
      export interface HashPolicy {
        source_ip?: envoy.type.v3.HashPolicy.SourceIp;
        filter_state?: envoy.type.v3.HashPolicy.FilterState;
      }
      export interface HttpStatus {
        code?: envoy.type.v3.StatusCode;
      }
      export interface Int32Range {
        start?: number;
        end?: number;
      }
      export interface Int64Range {
        start?: number | string;
        end?: number | string;
      }
      export interface Percent {
        value?: number;
      }
      export interface SemanticVersion {
        major_number?: number;
        minor_number?: number;
        patch?: number;
      }
      export type StatusCode = 'Empty' | 'Continue' | 'OK' | 'Created' | 'Accepted' | 'NonAuthoritativeInformation' | 'NoContent' | 'ResetContent' | 'PartialContent' | 'MultiStatus' | 'AlreadyReported' | 'IMUsed' | 'MultipleChoices' | 'MovedPermanently' | 'Found' | 'SeeOther' | 'NotModified' | 'UseProxy' | 'TemporaryRedirect' | 'PermanentRedirect' | 'BadRequest' | 'Unauthorized' | 'PaymentRequired' | 'Forbidden' | 'NotFound' | 'MethodNotAllowed' | 'NotAcceptable' | 'ProxyAuthenticationRequired' | 'RequestTimeout' | 'Conflict' | 'Gone' | 'LengthRequired' | 'PreconditionFailed' | 'PayloadTooLarge' | 'URITooLong' | 'UnsupportedMediaType' | 'RangeNotSatisfiable' | 'ExpectationFailed' | 'MisdirectedRequest' | 'UnprocessableEntity' | 'Locked' | 'FailedDependency' | 'UpgradeRequired' | 'PreconditionRequired' | 'TooManyRequests' | 'RequestHeaderFieldsTooLarge' | 'InternalServerError' | 'NotImplemented' | 'BadGateway' | 'ServiceUnavailable' | 'GatewayTimeout' | 'HTTPVersionNotSupported' | 'VariantAlsoNegotiates' | 'InsufficientStorage' | 'LoopDetected' | 'NotExtended' | 'NetworkAuthenticationRequired';
      export interface TokenBucket {
        max_tokens?: number;
        tokens_per_fill?: number;
        fill_interval?: string;
      }
      export namespace FractionalPercent {
        export type DenominatorType = 'HUNDRED' | 'TEN_THOUSAND' | 'MILLION';
      }
      export namespace HashPolicy {
        export interface FilterState {
          key?: string;
        }
        export interface SourceIp {
        }
      }
    }
  }
}
export declare namespace google {
  export namespace api {
    export namespace expr {
      export namespace v1alpha1 {
        export interface CheckedExpr {
          reference_map?: { [key: string]: google.api.expr.v1alpha1.Reference };
          type_map?: { [key: string]: google.api.expr.v1alpha1.Type };
          source_info?: google.api.expr.v1alpha1.SourceInfo;
          expr?: google.api.expr.v1alpha1.Expr;
        }
        export interface Constant {
          null_value?: google.protobuf.NullValue;
          bool_value?: boolean;
          int64_value?: number | string;
          uint64_value?: number | string;
          double_value?: number;
          string_value?: string;
          bytes_value?: string;
          /** @deprecated */
          duration_value?: string;
          /** @deprecated */
          timestamp_value?: string;
        }
        export interface Expr {
          id?: number | string;
          const_expr?: google.api.expr.v1alpha1.Constant;
          ident_expr?: google.api.expr.v1alpha1.Expr.Ident;
          select_expr?: google.api.expr.v1alpha1.Expr.Select;
          call_expr?: google.api.expr.v1alpha1.Expr.Call;
          list_expr?: google.api.expr.v1alpha1.Expr.CreateList;
          struct_expr?: google.api.expr.v1alpha1.Expr.CreateStruct;
          comprehension_expr?: google.api.expr.v1alpha1.Expr.Comprehension;
        }
        export interface Reference {
          name?: string;
          overload_id?: string[];
          value?: google.api.expr.v1alpha1.Constant;
        }
        export interface SourceInfo {
          syntax_version?: string;
          location?: string;
          line_offsets?: number[];
          positions?: { [key: string]: number };
          macro_calls?: { [key: string]: google.api.expr.v1alpha1.Expr };
        }
        export interface Type {
          dyn?: Record<string, never>;
          null?: google.protobuf.NullValue;
          primitive?: google.api.expr.v1alpha1.Type.PrimitiveType;
          wrapper?: google.api.expr.v1alpha1.Type.PrimitiveType;
          well_known?: google.api.expr.v1alpha1.Type.WellKnownType;
          list_type?: google.api.expr.v1alpha1.Type.ListType;
          map_type?: google.api.expr.v1alpha1.Type.MapType;
          function?: google.api.expr.v1alpha1.Type.FunctionType;
          message_type?: string;
          type_param?: string;
          type?: google.api.expr.v1alpha1.Type;
          error?: Record<string, never>;
          abstract_type?: google.api.expr.v1alpha1.Type.AbstractType;
        }
        export namespace Expr {
          export interface Call {
            target?: google.api.expr.v1alpha1.Expr;
            function?: string;
            args?: google.api.expr.v1alpha1.Expr[];
          }
          export interface Comprehension {
            iter_var?: string;
            iter_range?: google.api.expr.v1alpha1.Expr;
            accu_var?: string;
            accu_init?: google.api.expr.v1alpha1.Expr;
            loop_condition?: google.api.expr.v1alpha1.Expr;
            loop_step?: google.api.expr.v1alpha1.Expr;
            result?: google.api.expr.v1alpha1.Expr;
          }
          export interface CreateList {
            elements?: google.api.expr.v1alpha1.Expr[];
          }
          export interface CreateStruct {
            message_name?: string;
            entries?: google.api.expr.v1alpha1.Expr.CreateStruct.Entry[];
          }
          export interface Ident {
            name?: string;
          }
          export interface Select {
            operand?: google.api.expr.v1alpha1.Expr;
            field?: string;
            test_only?: boolean;
          }
          export namespace CreateStruct {
            export interface Entry {
              id?: number | string;
              field_key?: string;
              map_key?: google.api.expr.v1alpha1.Expr;
              value?: google.api.expr.v1alpha1.Expr;
            }
          }
        }
        export namespace Type {
          export interface AbstractType {
            name?: string;
            parameter_types?: google.api.expr.v1alpha1.Type[];
          }
          export interface FunctionType {
            result_type?: google.api.expr.v1alpha1.Type;
            arg_types?: google.api.expr.v1alpha1.Type[];
          }
          export interface ListType {
            elem_type?: google.api.expr.v1alpha1.Type;
          }
          export interface MapType {
            key_type?: google.api.expr.v1alpha1.Type;
            value_type?: google.api.expr.v1alpha1.Type;
          }
          export type PrimitiveType = 'PRIMITIVE_TYPE_UNSPECIFIED' | 'BOOL' | 'INT64' | 'UINT64' | 'DOUBLE' | 'STRING' | 'BYTES';
          export type WellKnownType = 'WELL_KNOWN_TYPE_UNSPECIFIED' | 'ANY' | 'TIMESTAMP' | 'DURATION';
        }
      }
    }
  }
  export namespace protobuf {
    export type NullValue = 'NULL_VALUE';
  }
}
export declare namespace xds {
  export namespace core {
    export namespace v3 {
      export interface Authority {
        name?: string;
      }
      export interface CidrRange {
        address_prefix?: string;
        prefix_len?: number;
      }
      export interface ContextParams {
        params?: { [key: string]: string };
      }
      export interface TypedExtensionConfig {
        name?: string;
        typed_config?: Any;
      }
    }
  }
  export namespace type {
    export namespace matcher {
      export namespace v3 {
        export interface Matcher {
          matcher_list?: xds.type.matcher.v3.Matcher.MatcherList;
          matcher_tree?: xds.type.matcher.v3.Matcher.MatcherTree;
          on_no_match?: xds.type.matcher.v3.Matcher.OnMatch;
        }
        export interface RegexMatcher {
          google_re2?: xds.type.matcher.v3.RegexMatcher.GoogleRE2;
          regex?: string;
        }
        export interface StringMatcher {
          exact?: string;
          prefix?: string;
          suffix?: string;
          safe_regex?: xds.type.matcher.v3.RegexMatcher;
          contains?: string;
          custom?: xds.core.v3.TypedExtensionConfig;
          ignore_case?: boolean;
        }
        export namespace Matcher {
          export interface MatcherList {
            matchers?: xds.type.matcher.v3.Matcher.MatcherList.FieldMatcher[];
          }
          export interface MatcherTree {
            input?: xds.core.v3.TypedExtensionConfig;
            exact_match_map?: xds.type.matcher.v3.Matcher.MatcherTree.MatchMap;
            prefix_match_map?: xds.type.matcher.v3.Matcher.MatcherTree.MatchMap;
            custom_match?: xds.core.v3.TypedExtensionConfig;
          }
          export interface OnMatch {
            matcher?: xds.type.matcher.v3.Matcher;
            action?: xds.core.v3.TypedExtensionConfig;
            keep_matching?: boolean;
          }
          export namespace MatcherList {
            export interface FieldMatcher {
              predicate?: xds.type.matcher.v3.Matcher.MatcherList.Predicate;
              on_match?: xds.type.matcher.v3.Matcher.OnMatch;
            }
            export interface Predicate {
              single_predicate?: xds.type.matcher.v3.Matcher.MatcherList.Predicate.SinglePredicate;
              or_matcher?: xds.type.matcher.v3.Matcher.MatcherList.Predicate.PredicateList;
              and_matcher?: xds.type.matcher.v3.Matcher.MatcherList.Predicate.PredicateList;
              not_matcher?: xds.type.matcher.v3.Matcher.MatcherList.Predicate;
            }
            export namespace Predicate {
              export interface PredicateList {
                predicate?: xds.type.matcher.v3.Matcher.MatcherList.Predicate[];
              }
              export interface SinglePredicate {
                input?: xds.core.v3.TypedExtensionConfig;
                value_match?: xds.type.matcher.v3.StringMatcher;
                custom_match?: xds.core.v3.TypedExtensionConfig;
              }
            }
          }
          export namespace MatcherTree {
            export interface MatchMap {
              map?: { [key: string]: xds.type.matcher.v3.Matcher.OnMatch };
            }
          }
        }
        export namespace RegexMatcher {
          export interface GoogleRE2 {
          }
        }
      }
    }
  }
}

/** The resources and the connection manager, by the names the proxy uses. */
export type Bootstrap = envoy.config.bootstrap.v3.Bootstrap;
export type Cluster = envoy.config.cluster.v3.Cluster;
export type ClusterLoadAssignment = envoy.config.endpoint.v3.ClusterLoadAssignment;
export type Listener = envoy.config.listener.v3.Listener;
export type RouteConfiguration = envoy.config.route.v3.RouteConfiguration;
export type HttpConnectionManager = envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
