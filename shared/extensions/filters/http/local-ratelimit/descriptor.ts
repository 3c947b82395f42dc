import { list } from '../../../../config/access.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import type { ExtensionDescriptor, HttpFilterDescriptor } from '../../../descriptor.js';
import { localRateLimitFactory } from './local-ratelimit.js';
import { configError, type ConfigError } from '../../../../config/config-error.js';

/** Token buckets the whole tree shares; per route too. */
export const extensions: readonly (ExtensionDescriptor | HttpFilterDescriptor)[] = [
  {
    name: 'envoy.filters.http.local_ratelimit',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit',
    perRouteTypeName: 'envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit',
    description: 'token buckets shared by every worker, per descriptor or per connection',
    deprecatedNames: [],
    fields: {
      'envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit': [
        'stat_prefix', 'status', 'token_bucket', 'filter_enabled', 'filter_enforced', 'request_headers_to_add_when_not_enforced', 'response_headers_to_add', 'descriptors',
        'stage', 'local_rate_limit_per_downstream_connection', 'enable_x_ratelimit_headers', 'vh_rate_limits', 'always_consume_default_token_bucket', 'rate_limited_as_resource_exhausted',
      ],
    },
    refusalReasons: {
      'envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit.local_cluster_rate_limit': 'sharing a limit across the instances of the local cluster is not supported; the limit holds for this proxy (all of its workers)',
    },
    create: (name, config, ctx) => localRateLimitFactory(name, config, ctx.localCluster),
    validate: (config, path, errors) => checkLocalRateLimit(config, path, false, errors),
    validatePerRoute: (config, path, errors) => checkLocalRateLimit(config, path, true, errors),
  },
];

/** A local rate limit (the filter's, or a route's, which must have a bucket): each descriptor once. */
function checkLocalRateLimit(config: JsonObject, path: string, perRoute: boolean, errors: ConfigError[]): void {
  if (perRoute && config.token_bucket === undefined) errors.push(configError('missing', `${path}.token_bucket`, 'a local rate limit in typed_per_filter_config must have its own token bucket'));
  const seen = new Map<string, number>();
  list(config.descriptors).forEach((d, i) => {
    const entries = list(d.entries).map((e) => `${String(e.key)}=${String(e.value ?? '')}`).join(', ');
    const first = seen.get(entries);
    if (first !== undefined) errors.push(configError('duplicate', `${path}.descriptors[${i}]`, `duplicate descriptor {${entries}} (also descriptors[${first}])`));
    else seen.set(entries, i);
  });
}
