import { configError } from '../../../config/config-error.js';
import { isPrime } from '../../../decimal.js';
import { MAGLEV_DEFAULT_TABLE } from '../../../upstream/lb-policy.js';
import type { LoadBalancingPolicyDescriptor } from '../../descriptor.js';

const MAGLEV = 'envoy.extensions.load_balancing_policies.maglev.v3.Maglev';

/** Google's Maglev consistent hashing of the route's hash_policy (the lb_policy MAGLEV). */
export const extensions: readonly LoadBalancingPolicyDescriptor[] = [
  {
    name: 'envoy.load_balancing_policies.maglev',
    category: 'envoy.load_balancing_policies',
    typeName: MAGLEV,
    description: 'Maglev consistent hashing, by the route\'s hash_policy',
    deprecatedNames: [],
    fields: { [MAGLEV]: ['table_size'] },
    refusalReasons: {
      [`${MAGLEV}.consistent_hashing_lb_config`]: 'consistent hashing reads the route\'s hash_policy; hostnames are not hashed',
      [`${MAGLEV}.locality_weighted_lb_config`]: 'locality weights are taken by round_robin, least_request and random',
    },
    validate(config, path, errors) {
      if (config.table_size !== undefined && !isPrime(Number(config.table_size))) errors.push(configError('invalid', `${path}.table_size`, 'The table size of maglev must be prime number'));
    },
    policy: (config) => ({ kind: 'MAGLEV', tableSize: Number(config.table_size ?? MAGLEV_DEFAULT_TABLE), localityWeighted: false }),
  },
];
