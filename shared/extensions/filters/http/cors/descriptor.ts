import { list, obj } from '../../../../config/access.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import { checkRegex } from '../../../../matchers.js';
import type { ExtensionDescriptor, HttpFilterDescriptor } from '../../../descriptor.js';
import { corsFactory } from './cors.js';
import type { ConfigError } from '../../../../config/config-error.js';

/** Cross-origin requests: preflights answered, allowed origins' responses decorated; the policy is per route. */
export const extensions: readonly (ExtensionDescriptor | HttpFilterDescriptor)[] = [
  {
    name: 'envoy.filters.http.cors',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.cors.v3.Cors',
    perRouteTypeName: 'envoy.extensions.filters.http.cors.v3.CorsPolicy',
    description: 'cross-origin requests: preflights answered, allowed origins\' responses decorated',
    deprecatedNames: ['envoy.cors'],
    create: (name, _config, ctx) => corsFactory(name, ctx.statPrefix),
    validatePerRoute: checkCorsPolicy,
  },
];

/** A CORS policy (a route's, or the deprecated `cors` of a route or virtual host): its origin regexes must compile. */
export function checkCorsPolicy(policy: JsonObject, path: string, errors: ConfigError[]): void {
  list(policy.allow_origin_string_match).forEach((m, i) => checkRegex(obj(m.safe_regex).regex, `${path}.allow_origin_string_match[${i}].safe_regex.regex`, errors));
}
