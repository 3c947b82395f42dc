import type { JsonObject } from '../shared/config/proto-json.js';
import type { RouteResource, UpdateFailure } from '../shared/config/resources.js';
import { checkResource, ROUTE_TYPE } from '../shared/config/xds-resource.js';
import { sameResource } from '../shared/config/resource-hash.js';
import { luaLoadErrors } from '../shared/lua/load-check.js';
import type { DynamicFieldPolicy } from './cluster-manager.js';
import type { BucketRegion } from './ratelimit/bucket-region.js';
import { errorText } from '../shared/config/config-error.js';

/**
 * The route configurations the tree takes from the route discovery service, by name, with their
 * versions. RDS names its resources (it is not a wildcard), so a response changes the tables it
 * carries and leaves the others; each table is checked alone.
 */
export class RouteManager {
  private readonly byName = new Map<string, RouteResource>();
  /** Each route configuration's last refusal, until a later version of it is accepted. */
  private readonly failures = new Map<string, UpdateFailure>();

  constructor(private readonly buckets: Pick<BucketRegion, 'allocate' | 'release'>) {}

  get updateFailures(): UpdateFailure[] {
    return [...this.failures.values()];
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  get routes(): Record<string, RouteResource> {
    return Object.fromEntries(this.byName);
  }

  /**
   * `clusters`: the tree's cluster names, for a table with validate_clusters: true. A table whose
   * per-route Lua source_code does not load is refused, as Envoy refuses it when it builds the
   * route's filter config.
   */
  async applyRds(versionInfo: string, resources: JsonObject[], policy: DynamicFieldPolicy, clusters: Set<string>, nowMs = Date.now()): Promise<{ updated: RouteResource[]; rejected: string[] }> {
    const updated: RouteResource[] = [];
    const rejected: string[] = [];
    for (const [i, any] of resources.entries()) {
      const checked = checkResource(ROUTE_TYPE, any, policy.unknownFields, policy.disabledExtensions, clusters);
      const label = checked.name ?? `resources[${i}]`;
      const errors = checked.message ? await luaLoadErrors(checked.message, 'route configuration') : checked.errors;
      if (!checked.message || errors.length) {
        rejected.push(`route configuration '${label}': ${errorText(errors)}`);
        if (checked.name !== undefined) this.failures.set(checked.name, { name: checked.name, lastUpdateAttemptMs: nowMs, details: errorText(errors), versionInfo });
        continue;
      }
      const name = String(checked.message.name ?? '');
      const current = this.byName.get(name);
      if (current && sameResource(current.config, checked.message)) {
        this.failures.delete(name);
        continue;
      }
      let bucketSlots: number[];
      try {
        // A new version's local rate limits start with full buckets, as Envoy's new route configuration's do.
        bucketSlots = this.buckets.allocate(checked.message, `route configuration '${name}'`);
      } catch (err) {
        rejected.push(`route configuration '${name}': ${(err as Error).message}`);
        this.failures.set(name, { name, lastUpdateAttemptMs: nowMs, details: (err as Error).message, versionInfo });
        continue;
      }
      this.failures.delete(name);
      if (current) this.buckets.release(current.bucketSlots);
      const resource: RouteResource = { name, config: checked.message, versionInfo, lastUpdatedMs: nowMs, bucketSlots };
      this.byName.set(name, resource);
      updated.push(resource);
    }
    return { updated, rejected };
  }
}
