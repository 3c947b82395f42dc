import { list } from '../config/access.js';
import type { JsonObject } from '../config/proto-json.js';
import { typeNameOfUrl } from '../config/wkt.js';

/**
 * Which slots of the tree's token-bucket region (./token-buckets.ts) each local rate limit
 * configuration of a resource counts in. The supervisor gives a resource its slots when it takes
 * it (a listener, per filter chain; a route configuration), in the order this walk finds the
 * configurations; every worker walks the same JSON the same way when the resource arrives and
 * binds each configuration object to its slots. Both sides agree without naming paths, and a
 * filter finds its buckets from the configuration object it was built from.
 *
 * A configuration takes one slot for its own bucket, then one per descriptor.
 */

export const LOCAL_RATE_LIMIT_TYPE = 'envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit';

/** Every LocalRateLimit message under `root` (filter configs and typed_per_filter_config alike), depth first in key order. */
export function localRateLimitConfigs(root: unknown, out: JsonObject[] = []): JsonObject[] {
  if (Array.isArray(root)) {
    for (const item of root) localRateLimitConfigs(item, out);
  } else if (root !== null && typeof root === 'object') {
    const o = root as JsonObject;
    if (typeof o['@type'] === 'string' && typeNameOfUrl(o['@type']) === LOCAL_RATE_LIMIT_TYPE) out.push(o);
    else for (const k in o) localRateLimitConfigs(o[k], out);
  }
  return out;
}

export function slotsFor(config: JsonObject): number {
  return 1 + list(config.descriptors).length;
}

/** How many slots the configurations under `root` take. */
export function slotsNeeded(root: unknown): number {
  return localRateLimitConfigs(root).reduce((n, c) => n + slotsFor(c), 0);
}

const bound = new WeakMap<JsonObject, number[]>();

/** A worker binds the configurations under `root` to the slots the supervisor gave them. */
export function bindBucketSlots(root: unknown, slots: readonly number[] | undefined): void {
  let next = 0;
  for (const config of localRateLimitConfigs(root)) {
    const n = slotsFor(config);
    if (!slots || next + n > slots.length) throw new Error(`local rate limit: ${slots?.length ?? 0} token-bucket slot(s) given for configurations that need more`);
    bound.set(config, slots.slice(next, next + n));
    next += n;
  }
}

/** The slots of a configuration: its own bucket's, then its descriptors' in order. */
export function boundSlots(config: JsonObject): number[] | undefined {
  return bound.get(config);
}
