import { bindBucketSlots } from '../../shared/ratelimit/bucket-slots.js';
import type { RouteResource } from '../../shared/config/resources.js';
import { RouteTable } from '../../shared/http/route-table.js';

/**
 * The route configurations this worker has from the route discovery service, compiled once per
 * version. A connection manager with `rds` looks its table up per request, so a new version
 * routes the next request; a request already routed keeps its route.
 */
export class RouteTables {
  private readonly tables = new Map<string, RouteTable>();

  constructor(routes: Record<string, RouteResource>) {
    for (const r of Object.values(routes)) this.set(r);
  }

  set(resource: RouteResource): void {
    // Its local rate limits (typed_per_filter_config) count in the buckets the supervisor gave this version.
    bindBucketSlots(resource.config, resource.bucketSlots);
    this.tables.set(resource.name, new RouteTable(resource.config));
  }

  /** Undefined until the first version arrives: every request then gets a 404, as in Envoy. */
  get(name: string): RouteTable | undefined {
    return this.tables.get(name);
  }
}
