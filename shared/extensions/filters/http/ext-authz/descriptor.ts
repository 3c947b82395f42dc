import { obj } from '../../../../config/access.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import type { ExtensionDescriptor, HttpFilterDescriptor } from '../../../descriptor.js';
import { extAuthzFactory } from './filter.js';
import { configError, type ConfigError } from '../../../../config/config-error.js';

/** Requests checked with an authorization service, HTTP or gRPC; per route too. */
export const extensions: readonly (ExtensionDescriptor | HttpFilterDescriptor)[] = [
  {
    name: 'envoy.filters.http.ext_authz',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.ext_authz.v3.ExtAuthz',
    perRouteTypeName: 'envoy.extensions.filters.http.ext_authz.v3.ExtAuthzPerRoute',
    description: 'asks an external gRPC or HTTP service whether a request may go on',
    deprecatedNames: ['envoy.ext_authz'],
    fields: {
      'envoy.extensions.filters.http.ext_authz.v3.ExtAuthz': [
        'grpc_service', 'http_service', 'transport_api_version', 'failure_mode_allow', 'failure_mode_allow_header_add', 'with_request_body', 'status_on_error',
        'filter_enabled', 'deny_at_disable', 'include_peer_certificate', 'stat_prefix', 'allowed_headers', 'disallowed_headers', 'charge_cluster_response_stats',
        'metadata_context_namespaces', 'enable_dynamic_metadata_ingestion',
      ],
      'envoy.extensions.filters.http.ext_authz.v3.BufferSettings': ['max_request_bytes', 'pack_as_bytes'],
      'envoy.extensions.filters.http.ext_authz.v3.HttpService': ['server_uri', 'path_prefix', 'authorization_request', 'authorization_response'],
      'envoy.extensions.filters.http.ext_authz.v3.AuthorizationResponse': [
        'allowed_upstream_headers', 'allowed_upstream_headers_to_append', 'allowed_client_headers', 'allowed_client_headers_on_success', 'dynamic_metadata_from_headers',
      ],
      'envoy.extensions.filters.http.ext_authz.v3.CheckSettings': ['context_extensions', 'disable_request_body_buffering', 'with_request_body'],
    },
    refusalReasons: {
      'envoy.extensions.filters.http.ext_authz.v3.ExtAuthz.clear_route_cache': 'routes are chosen before the HTTP filters run here, and are not chosen again',
      'envoy.extensions.filters.http.ext_authz.v3.ExtAuthz.typed_metadata_context_namespaces': 'no filter of this proxy sets typed dynamic metadata; use metadata_context_namespaces',
      'envoy.extensions.filters.http.ext_authz.v3.ExtAuthz.filter_enabled_metadata': 'metadata matchers are not supported here; use filter_enabled',
      'envoy.extensions.filters.http.ext_authz.v3.BufferSettings.allow_partial_message': 'the body is sent whole; a larger one is refused with 413',
    },
    create: (name, config, ctx) => extAuthzFactory(name, config, ctx),
    validate: checkExtAuthz,
  },
];

/** ext_authz: one service, the v3 API, and the allowed headers said once. */
function checkExtAuthz(config: JsonObject, path: string, errors: ConfigError[]): void {
  if ((config.grpc_service === undefined) === (config.http_service === undefined)) errors.push(configError('conflict', path, 'exactly one of grpc_service and http_service must be set'));
  if (config.transport_api_version === 'V2') errors.push(configError('unsupported', `${path}.transport_api_version`, 'V2 is not supported; use V3'));
  if (config.allowed_headers !== undefined && obj(obj(config.http_service).authorization_request).allowed_headers !== undefined) {
    errors.push(configError('conflict', path, 'allowed_headers and http_service.authorization_request.allowed_headers cannot both be set'));
  }
  if (config.http_service !== undefined && typeof obj(obj(config.http_service).server_uri).cluster !== 'string') errors.push(configError('missing', `${path}.http_service.server_uri.cluster`, 'the authorization service\'s cluster is required'));
}
