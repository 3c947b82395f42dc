import { obj } from '../../../../config/access.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import type { ExtensionDescriptor, HttpFilterDescriptor } from '../../../descriptor.js';
import { rateLimitFactory } from './ratelimit.js';
import { configError, type ConfigError } from '../../../../config/config-error.js';

/** Requests limited by a rate-limit service (RateLimitService/ShouldRateLimit); per route too. */
export const extensions: readonly (ExtensionDescriptor | HttpFilterDescriptor)[] = [
  {
    name: 'envoy.filters.http.ratelimit',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.ratelimit.v3.RateLimit',
    perRouteTypeName: 'envoy.extensions.filters.http.ratelimit.v3.RateLimitPerRoute',
    description: 'asks a rate-limit service (Envoy\'s RateLimitService API) about each request',
    deprecatedNames: ['envoy.rate_limit'],
    fields: {
      'envoy.extensions.filters.http.ratelimit.v3.RateLimitPerRoute': ['vh_rate_limits', 'domain'],
      'envoy.extensions.filters.http.ratelimit.v3.RateLimit': [
        'domain', 'stage', 'request_type', 'timeout', 'failure_mode_deny', 'rate_limited_as_resource_exhausted', 'rate_limit_service', 'enable_x_ratelimit_headers',
        'disable_x_envoy_ratelimited_header', 'rate_limited_status', 'response_headers_to_add', 'status_on_error', 'stat_prefix',
      ],
    },
    refusalReasons: {
      'envoy.extensions.filters.http.ratelimit.v3.RateLimitPerRoute.rate_limits': 'put the rate limits on the route (RouteAction.rate_limits) or its virtual host',
      'envoy.extensions.filters.http.ratelimit.v3.RateLimitPerRoute.override_option': 'put the rate limits on the route (RouteAction.rate_limits) or its virtual host',
    },
    create: (name, config, ctx) => rateLimitFactory(name, config, ctx),
    validate: checkRateLimit,
  },
];

/** The global rate limit filter: a domain, and a service reached over gRPC with the v3 API. */
function checkRateLimit(config: JsonObject, path: string, errors: ConfigError[]): void {
  if (typeof config.domain !== 'string' || config.domain === '') errors.push(configError('missing', `${path}.domain`, 'a rate limit domain is required'));
  const service = obj(config.rate_limit_service);
  if (config.rate_limit_service === undefined || obj(service.grpc_service).envoy_grpc === undefined) errors.push(configError('missing', `${path}.rate_limit_service.grpc_service`, 'the rate-limit service (envoy_grpc with its cluster) is required'));
  if (service.transport_api_version === 'V2') errors.push(configError('unsupported', `${path}.rate_limit_service.transport_api_version`, 'V2 is not supported; use V3'));
}
