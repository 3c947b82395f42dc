import { list, obj } from '../../../../config/access.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import { checkRegex } from '../../../../matchers.js';
import type { ExtensionDescriptor, HttpFilterDescriptor } from '../../../descriptor.js';
import { csrfFactory } from './csrf.js';
import type { ConfigError } from '../../../../config/config-error.js';

/** State-changing requests must come from their own origin; per route too. */
export const extensions: readonly (ExtensionDescriptor | HttpFilterDescriptor)[] = [
  {
    name: 'envoy.filters.http.csrf',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.csrf.v3.CsrfPolicy',
    description: 'refuses state-changing requests from another origin',
    deprecatedNames: ['envoy.csrf'],
    create: (name, config, ctx) => csrfFactory(name, config, ctx.statPrefix),
    validate: checkCsrfPolicy,
    validatePerRoute: checkCsrfPolicy,
  },
];

/** A CSRF policy (the filter's, or a route's): its additional origins' regexes must compile. */
function checkCsrfPolicy(policy: JsonObject, path: string, errors: ConfigError[]): void {
  list(policy.additional_origins).forEach((m, i) => checkRegex(obj(m.safe_regex).regex, `${path}.additional_origins[${i}].safe_regex.regex`, errors));
}
