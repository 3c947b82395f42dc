import { obj } from '../../config/access.js';
import type { JsonObject } from '../../config/proto-json.js';

/** The messages the policies share (common.v3), and the fields of them this proxy implements. */
export const COMMON = 'envoy.extensions.load_balancing_policies.common.v3';

export const LOCALITY_FIELDS: Readonly<Record<string, readonly string[]>> = {
  [`${COMMON}.LocalityLbConfig`]: ['locality_weighted_lb_config'],
  [`${COMMON}.LocalityLbConfig.LocalityWeightedLbConfig`]: [],
};

export const LOCALITY_REASONS: Readonly<Record<string, string>> = {
  [`${COMMON}.LocalityLbConfig.zone_aware_lb_config`]: 'zone-aware routing is not supported (it needs the bootstrap\'s local_cluster_name, which is refused)',
};

export const NO_SLOW_START = 'slow start is not implemented: a new host takes its full share at once';

/** locality_lb_config.locality_weighted_lb_config: a locality is chosen by its weight first. */
export function localityWeighted(config: JsonObject): boolean {
  return obj(config.locality_lb_config).locality_weighted_lb_config !== undefined;
}
