import { configError } from '../../../config/config-error.js';
import { RING_DEFAULTS } from '../../../upstream/lb-policy.js';
import type { LoadBalancingPolicyDescriptor } from '../../descriptor.js';

const RING_HASH = 'envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash';
const CONSISTENT = 'consistent hashing reads the route\'s hash_policy; hostnames are not hashed';

/** Ketama-style consistent hashing of the route's hash_policy (the lb_policy RING_HASH). */
export const extensions: readonly LoadBalancingPolicyDescriptor[] = [
  {
    name: 'envoy.load_balancing_policies.ring_hash',
    category: 'envoy.load_balancing_policies',
    typeName: RING_HASH,
    description: 'consistent hashing on a ring (xxHash), by the route\'s hash_policy',
    deprecatedNames: [],
    fields: { [RING_HASH]: ['hash_function', 'minimum_ring_size', 'maximum_ring_size'] },
    refusalReasons: {
      [`${RING_HASH}.use_hostname_for_hashing`]: CONSISTENT,
      [`${RING_HASH}.consistent_hashing_lb_config`]: CONSISTENT,
      [`${RING_HASH}.hash_balance_factor`]: 'bounded loads are not implemented',
      [`${RING_HASH}.locality_weighted_lb_config`]: 'locality weights are taken by round_robin, least_request and random',
    },
    validate(config, path, errors) {
      if (config.hash_function === 'MURMUR_HASH_2') errors.push(configError('unsupported', `${path}.hash_function`, 'MURMUR_HASH_2 is not supported by this proxy (XX_HASH is)'));
      const min = Number(config.minimum_ring_size ?? RING_DEFAULTS.minimum);
      const max = Number(config.maximum_ring_size ?? RING_DEFAULTS.maximum);
      if (min > max) errors.push(configError('invalid', path, `ring hash: minimum_ring_size (${min}) > maximum_ring_size (${max})`));
    },
    policy: (config) => ({ kind: 'RING_HASH', minimumRingSize: Number(config.minimum_ring_size ?? RING_DEFAULTS.minimum), maximumRingSize: Number(config.maximum_ring_size ?? RING_DEFAULTS.maximum), localityWeighted: false }),
  },
];
