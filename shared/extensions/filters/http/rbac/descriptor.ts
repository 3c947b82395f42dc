import { obj } from '../../../../config/access.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import type { ExtensionDescriptor, HttpFilterDescriptor } from '../../../descriptor.js';
import { rbacFactory } from './rbac.js';
import { configError, type ConfigError } from '../../../../config/config-error.js';

/** Role-based access control by policies of permissions and principals; per route too. */
export const extensions: readonly (ExtensionDescriptor | HttpFilterDescriptor)[] = [
  {
    name: 'envoy.filters.http.rbac',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.rbac.v3.RBAC',
    perRouteTypeName: 'envoy.extensions.filters.http.rbac.v3.RBACPerRoute',
    description: 'allows or denies requests by policies of permissions and principals',
    deprecatedNames: [],
    fields: {
      'envoy.extensions.filters.http.rbac.v3.RBAC': ['rules', 'shadow_rules', 'rules_stat_prefix', 'shadow_rules_stat_prefix'],
      'envoy.extensions.filters.http.rbac.v3.RBACPerRoute': ['rbac'],
    },
    refusalReasons: {
      'envoy.extensions.filters.http.rbac.v3.RBAC.matcher': 'the matcher API is not supported; use rules',
      'envoy.extensions.filters.http.rbac.v3.RBAC.shadow_matcher': 'the matcher API is not supported; use shadow_rules',
    },
    create: (name, config, ctx) => rbacFactory(name, config, ctx.statPrefix),
    validate: checkRbacRules,
    validatePerRoute: (config, path, errors) => checkRbacRules(obj(config.rbac), `${path}.rbac`, errors),
  },
];

/** An RBAC filter's rules (the filter's, or a route's): LOG would need dynamic metadata, which nothing here reads. */
function checkRbacRules(rbac: JsonObject, path: string, errors: ConfigError[]): void {
  for (const key of ['rules', 'shadow_rules']) {
    if (obj(rbac[key]).action === 'LOG') errors.push(configError('unsupported', `${path}.${key}.action`, 'LOG is not supported (it reports through dynamic metadata, which nothing in this proxy reads); use ALLOW or DENY, or shadow_rules to count'));
  }
}
