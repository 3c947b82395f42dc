import type { NetworkFilterDescriptor } from '../../../descriptor.js';

const HCM = 'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const HCM_PACKAGE = 'envoy.extensions.filters.network.http_connection_manager.v3';

/**
 * Envoy's HTTP connection manager: HTTP/1.1 and HTTP/2 connections, their routes and HTTP filters
 * (worker/http/). Its checks reach every HTTP filter's descriptor and the route table, so they are
 * the configuration's own (shared/config/semantic/connection-manager.ts), run where the loader
 * checks a filter chain; this descriptor has none of its own.
 */
export const extensions: readonly NetworkFilterDescriptor[] = [
  {
    name: 'envoy.filters.network.http_connection_manager',
    category: 'envoy.filters.network',
    typeName: HCM,
    description: 'HTTP/1.1 and HTTP/2 connections: routes, HTTP filters, the router',
    deprecatedNames: ['envoy.http_connection_manager'],
    terminal: true,
    fields: {
      [HCM]: [
        'codec_type', 'stat_prefix', 'route_config', 'http_filters', 'common_http_protocol_options', 'server_name',
        'max_request_headers_kb', 'stream_idle_timeout', 'request_timeout', 'request_headers_timeout', 'use_remote_address',
        'skip_xff_append', 'generate_request_id', 'preserve_external_request_id', 'access_log', 'rds', 'local_reply_config', 'add_user_agent',
        'http2_protocol_options', 'http_protocol_options', 'scheme_header_transformation', 'drain_timeout', 'upgrade_configs', 'tracing',
        'internal_address_config', 'server_header_transformation', 'normalize_path', 'merge_slashes', 'path_with_escaped_slashes_action', 'via',
        'xff_num_trusted_hops', 'original_ip_detection_extensions',
      ],
      [`${HCM}.Tracing`]: ['client_sampling', 'random_sampling', 'overall_sampling', 'max_path_tag_length', 'custom_tags', 'provider', 'spawn_upstream_span'],
      [`${HCM}.InternalAddressConfig`]: ['unix_sockets', 'cidr_ranges'],
      [`${HCM}.UpgradeConfig`]: ['upgrade_type', 'filters', 'enabled'],
      [`${HCM_PACKAGE}.LocalReplyConfig`]: ['mappers', 'body_format'],
      [`${HCM_PACKAGE}.ResponseMapper`]: ['filter', 'status_code', 'body', 'body_format_override', 'headers_to_add'],
      [`${HCM_PACKAGE}.Rds`]: ['config_source', 'route_config_name'],
      [`${HCM_PACKAGE}.HttpFilter`]: ['name', 'typed_config', 'disabled'],
    },
    refusalReasons: {
      [`${HCM}.Tracing.verbose`]: 'span logs (verbose) are not recorded',
      [`${HCM}.http3_protocol_options`]: 'HTTP/3 (QUIC) is not available in Node 20',
      [`${HCM}.path_normalization_options`]: 'Envoy does not implement it either (not-implemented-hide): filters and the upstream see the same path, normalized as normalize_path, merge_slashes and path_with_escaped_slashes_action say',
      [`${HCM}.scoped_routes`]: 'scoped routes are not supported; use an inline route_config',
    },
  },
];
