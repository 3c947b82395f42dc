import { list, obj } from '../../config/access.js';
import { configError, type ConfigError } from '../../config/config-error.js';
import type { Cluster } from '../../config/envoy-types.js';
import type { JsonObject } from '../../config/proto-json.js';
import { typeNameOfUrl } from '../../config/wkt.js';
import { legacyLbPolicy, type LbPolicy } from '../../upstream/lb-policy.js';
import type { LoadBalancingPolicyDescriptor } from '../descriptor.js';
import * as policyFolders from './index.js';

/**
 * A cluster's load balancing, as Envoy's ClusterInfoImpl::configureLbPolicies reads it: a
 * load_balancing_policy takes the first of its policies this proxy implements (the others are
 * passed over, as Envoy passes over a policy without a registered factory) and sets lb_policy
 * aside; without one, lb_policy and its *_lb_config. For the workers, which build a cluster's
 * balancer without loading the whole registry (../registry.ts lists these with every extension).
 */

const policies = new Map(Object.values(policyFolders).flat().map((d: LoadBalancingPolicyDescriptor) => [d.typeName, d]));

/** A policies[] entry's typed_extension_config, and its descriptor when this proxy implements it. */
function entries(c: Cluster): { name: string; config: JsonObject; descriptor: LoadBalancingPolicyDescriptor | undefined }[] {
  return list(obj(c.load_balancing_policy).policies).map((p) => {
    const extension = obj(p.typed_extension_config);
    const config = obj(extension.typed_config);
    return { name: String(extension.name ?? ''), config, descriptor: policies.get(typeNameOfUrl(String(config['@type'] ?? ''))) };
  });
}

export function clusterLbPolicy(c: Cluster): LbPolicy {
  if (c.load_balancing_policy === undefined) return legacyLbPolicy(c);
  for (const { config, descriptor } of entries(c)) if (descriptor) return descriptor.policy(config);
  return legacyLbPolicy(c); // refused when it loads (checkLoadBalancingPolicy)
}

/** The configuration's checks of a cluster's load_balancing_policy, with Envoy's words. */
export function checkLoadBalancingPolicy(c: Cluster, path: string, errors: ConfigError[]): void {
  const name = String(c.name ?? '');
  if (c.load_balancing_policy === undefined) {
    if (c.lb_policy === 'LOAD_BALANCING_POLICY_CONFIG') errors.push(configError('missing', `${path}.load_balancing_policy`, 'cluster: field load_balancing_policy need to be set'));
    return;
  }
  const common = obj(c.common_lb_config);
  if (common.zone_aware_lb_config !== undefined || common.locality_weighted_lb_config !== undefined || common.consistent_hashing_lb_config !== undefined) {
    errors.push(configError('conflict', `${path}.common_lb_config`, 'cluster: load_balancing_policy cannot be combined with partial fields (zone_aware_lb_config, locality_weighted_lb_config, consistent_hashing_lb_config) of common_lb_config'));
  }
  const all = entries(c);
  const chosen = all.findIndex((e) => e.descriptor !== undefined);
  if (chosen < 0) {
    errors.push(configError('unsupported_extension', `${path}.load_balancing_policy`, `cluster: didn't find a registered load balancer factory implementation for cluster: '${name}' with names from [${all.map((e) => e.name).join(', ')}] (implemented: ${[...policies.values()].map((d) => d.name).join(', ')})`));
    return;
  }
  all[chosen]!.descriptor!.validate?.(all[chosen]!.config, `${path}.load_balancing_policy.policies[${chosen}].typed_extension_config.typed_config`, errors);
}

/** The typed_config of a policies[] entry: the loader does not refuse one this proxy does not implement (the cluster takes the first it does). */
export const POLICY_CONFIG_PATH = /\.load_balancing_policy\.policies\[\d+\]\.typed_extension_config\.typed_config$/;
