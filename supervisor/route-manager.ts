import type { JsonObject } from '../shared/config/proto-json.js';
import type { RouteResource, UpdateFailure } from '../shared/config/resources.js';
import { checkResource, ROUTE_TYPE } from '../shared/config/xds-resource.js';
import type { DynamicFieldPolicy } from './cluster-manager.js';

/**
 * The route configurations the tree takes from the route discovery service, by name, with their
 * versions. RDS names its resources (it is not a wildcard), so a response changes the tables it
 * carries and leaves the others; each table is checked alone.
 */
export class RouteManager {
  private readonly byName = new Map<string, RouteResource>();
  /** Each route configuration's last refusal, until a later version of it is accepted. */
  private readonly failures = new Map<string, UpdateFailure>();

  get updateFailures(): UpdateFailure[] {
    return [...this.failures.values()];
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  get routes(): Record<string, RouteResource> {
    return Object.fromEntries(this.byName);
  }

  /** `clusters`: the tree's cluster names, for a table with validate_clusters: true. */
  applyRds(versionInfo: string, resources: JsonObject[], policy: DynamicFieldPolicy, clusters: Set<string>, nowMs = Date.now()): { updated: RouteResource[]; rejected: string[] } {
    const updated: RouteResource[] = [];
    const rejected: string[] = [];
    for (const [i, any] of resources.entries()) {
      const checked = checkResource(ROUTE_TYPE, any, policy.unknownFields, policy.disabledExtensions, clusters);
      const label = checked.name ?? `resources[${i}]`;
      if (!checked.message) {
        rejected.push(`route configuration '${label}': ${checked.errors.join('; ')}`);
        if (checked.name !== undefined) this.failures.set(checked.name, { name: checked.name, lastUpdateAttemptMs: nowMs, details: checked.errors.join('; '), versionInfo });
        continue;
      }
      const name = String(checked.message.name ?? '');
      this.failures.delete(name);
      const current = this.byName.get(name);
      if (current && JSON.stringify(current.config) === JSON.stringify(checked.message)) continue;
      const resource: RouteResource = { name, config: checked.message, versionInfo, lastUpdatedMs: nowMs };
      this.byName.set(name, resource);
      updated.push(resource);
    }
    return { updated, rejected };
  }
}
