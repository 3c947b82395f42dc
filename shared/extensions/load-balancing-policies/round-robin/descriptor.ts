import type { LoadBalancingPolicyDescriptor } from '../../descriptor.js';
import { localityWeighted, LOCALITY_FIELDS, LOCALITY_REASONS, NO_SLOW_START } from '../locality.js';

const ROUND_ROBIN = 'envoy.extensions.load_balancing_policies.round_robin.v3.RoundRobin';

/** Round robin, weighted by each host's load_balancing_weight (the lb_policy ROUND_ROBIN of worker/upstream/load-balancer.ts). */
export const extensions: readonly LoadBalancingPolicyDescriptor[] = [
  {
    name: 'envoy.load_balancing_policies.round_robin',
    category: 'envoy.load_balancing_policies',
    typeName: ROUND_ROBIN,
    description: 'weighted round robin over the healthy hosts',
    deprecatedNames: [],
    fields: { [ROUND_ROBIN]: ['locality_lb_config'], ...LOCALITY_FIELDS },
    refusalReasons: { [`${ROUND_ROBIN}.slow_start_config`]: NO_SLOW_START, ...LOCALITY_REASONS },
    policy: (config) => ({ kind: 'ROUND_ROBIN', localityWeighted: localityWeighted(config) }),
  },
];
