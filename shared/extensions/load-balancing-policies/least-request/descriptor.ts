import type { LoadBalancingPolicyDescriptor } from '../../descriptor.js';
import { localityWeighted, LOCALITY_FIELDS, LOCALITY_REASONS, NO_SLOW_START } from '../locality.js';

const LEAST_REQUEST = 'envoy.extensions.load_balancing_policies.least_request.v3.LeastRequest';

/** The host with the fewest active requests of `choice_count` drawn (the lb_policy LEAST_REQUEST). */
export const extensions: readonly LoadBalancingPolicyDescriptor[] = [
  {
    name: 'envoy.load_balancing_policies.least_request',
    category: 'envoy.load_balancing_policies',
    typeName: LEAST_REQUEST,
    description: 'the least busy of choice_count hosts drawn at random',
    deprecatedNames: [],
    fields: { [LEAST_REQUEST]: ['choice_count', 'locality_lb_config'], ...LOCALITY_FIELDS },
    refusalReasons: {
      [`${LEAST_REQUEST}.slow_start_config`]: NO_SLOW_START,
      [`${LEAST_REQUEST}.active_request_bias`]: 'hosts of different weights are compared by active requests with the bias 1.0, as Envoy\'s default',
      [`${LEAST_REQUEST}.selection_method`]: 'hosts are drawn (N_CHOICES); a full scan is not implemented',
      [`${LEAST_REQUEST}.enable_full_scan`]: 'hosts are drawn (N_CHOICES); a full scan is not implemented',
      ...LOCALITY_REASONS,
    },
    policy: (config) => ({ kind: 'LEAST_REQUEST', choiceCount: Number(config.choice_count ?? 2), localityWeighted: localityWeighted(config) }),
  },
];
