import type { LoadBalancingPolicyDescriptor } from '../../descriptor.js';
import { localityWeighted, LOCALITY_FIELDS, LOCALITY_REASONS } from '../locality.js';

const RANDOM = 'envoy.extensions.load_balancing_policies.random.v3.Random';

/** A healthy host at random, weighted (the lb_policy RANDOM). */
export const extensions: readonly LoadBalancingPolicyDescriptor[] = [
  {
    name: 'envoy.load_balancing_policies.random',
    category: 'envoy.load_balancing_policies',
    typeName: RANDOM,
    description: 'a healthy host at random, by weight',
    deprecatedNames: [],
    fields: { [RANDOM]: ['locality_lb_config'], ...LOCALITY_FIELDS },
    refusalReasons: LOCALITY_REASONS,
    policy: (config) => ({ kind: 'RANDOM', localityWeighted: localityWeighted(config) }),
  },
];
