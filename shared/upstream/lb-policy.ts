import { obj } from '../config/access.js';
import type { Cluster } from '../config/envoy-types.js';

/**
 * How a cluster picks a host, whichever way its configuration says it: the lb_policy enum with
 * its *_lb_config, or a typed load_balancing_policy (shared/extensions/load-balancing-policies/).
 * `localityWeighted`: locality weights pick the locality first (worker/upstream/priority-set.ts).
 */
export type LbPolicy =
  | { readonly kind: 'ROUND_ROBIN' | 'RANDOM'; readonly localityWeighted: boolean }
  | { readonly kind: 'LEAST_REQUEST'; readonly choiceCount: number; readonly localityWeighted: boolean }
  | { readonly kind: 'RING_HASH'; readonly minimumRingSize: number; readonly maximumRingSize: number; readonly localityWeighted: false }
  | { readonly kind: 'MAGLEV'; readonly tableSize: number; readonly localityWeighted: false };

export const RING_DEFAULTS = { minimum: 1024, maximum: 8 * 1024 * 1024 } as const;
export const MAGLEV_DEFAULT_TABLE = 65537;

/** The policy of the lb_policy enum (ROUND_ROBIN when unset) and its legacy per-policy fields. */
export function legacyLbPolicy(c: Cluster): LbPolicy {
  const localityWeighted = obj(c.common_lb_config).locality_weighted_lb_config !== undefined;
  switch (c.lb_policy) {
    case 'LEAST_REQUEST':
      return { kind: 'LEAST_REQUEST', choiceCount: Number(obj(c.least_request_lb_config).choice_count ?? 2), localityWeighted };
    case 'RANDOM':
      return { kind: 'RANDOM', localityWeighted };
    case 'RING_HASH': {
      const ring = obj(c.ring_hash_lb_config);
      return { kind: 'RING_HASH', minimumRingSize: Number(ring.minimum_ring_size ?? RING_DEFAULTS.minimum), maximumRingSize: Number(ring.maximum_ring_size ?? RING_DEFAULTS.maximum), localityWeighted: false };
    }
    case 'MAGLEV':
      return { kind: 'MAGLEV', tableSize: Number(obj(c.maglev_lb_config).table_size ?? MAGLEV_DEFAULT_TABLE), localityWeighted: false };
    default:
      return { kind: 'ROUND_ROBIN', localityWeighted };
  }
}
