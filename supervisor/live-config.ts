import type { JsonObject } from '../shared/config/proto-json.js';
import type { RouteResource } from '../shared/config/resources.js';
import type { ServerContext, ToAdmin, ToWorker } from '../shared/ipc.js';
import type { BreakerCounts } from '../shared/upstream/breaker-counts.js';
import type { ClusterChanges, ClusterManager } from './cluster-manager.js';
import type { Options } from './options.js';
import { RouteManager } from './route-manager.js';
import type { BreakerGauges } from './upstream/breaker-gauges.js';
import type { UpstreamMembership } from './upstream/membership.js';
import { ConfigSources } from './xds/sources.js';

/**
 * The tree's live configuration: the bootstrap's `dynamic_resources` feed the cluster and route
 * managers, and every change they accept reaches the whole tree — membership (DNS, health
 * checks) and circuit-breaker gauges here, every worker as a message applied between its events
 * (requests in flight keep the cluster and route they started with), the admin process, and the
 * context a replacement child starts from.
 */

export interface LiveConfigTree {
  context: ServerContext;
  membership: UpstreamMembership;
  breakers: BreakerCounts;
  breakerGauges: BreakerGauges;
  toEveryWorker: (m: ToWorker) => void;
  toAdmin: (m: ToAdmin) => void;
}

export class LiveConfig {
  readonly routes = new RouteManager();
  private readonly sources: ConfigSources;

  constructor(
    bootstrap: JsonObject,
    options: Options,
    private readonly clusters: ClusterManager,
    private readonly tree: LiveConfigTree,
  ) {
    this.sources = new ConfigSources(bootstrap, options, {
      clusters,
      routes: this.routes,
      applyClusters: (changes) => this.applyClusters(changes),
      assignEndpoints: (cluster, assignment) => tree.membership.clusters.get(cluster)?.assign(assignment),
      applyRoutes: (updated) => this.applyRoutes(updated),
    });
  }

  /** Resolves once every source has had its initial fetch (or initial_fetch_timeout). */
  start(): Promise<void> {
    return this.sources.start();
  }

  private applyClusters(changes: ClusterChanges): void {
    const { context, membership } = this.tree;
    for (const name of changes.removed) {
      membership.remove(name);
      this.tree.breakerGauges.unwatch(name);
      delete context.upstream[name];
      this.tree.toEveryWorker({ type: 'cluster_remove', name });
    }
    for (const resource of changes.upserted) {
      this.tree.breakers.assign(resource.name, resource.breakerSlot);
      this.tree.breakerGauges.watch(resource.config);
      const hosts = [...membership.upsert(resource.config)];
      context.upstream[resource.name] = hosts;
      this.tree.toEveryWorker({ type: 'cluster_upsert', resource, hosts });
    }
    context.clusters = this.clusters.clusters;
    context.cdsVersionInfo = this.clusters.cdsVersionInfo;
    this.tree.toAdmin({ type: 'clusters', clusters: context.clusters, ...(context.cdsVersionInfo !== undefined ? { cdsVersionInfo: context.cdsVersionInfo } : {}) });
  }

  private applyRoutes(updated: RouteResource[]): void {
    this.tree.context.routes = this.routes.routes;
    for (const resource of updated) this.tree.toEveryWorker({ type: 'route_update', resource });
    this.tree.toAdmin({ type: 'routes', routes: this.tree.context.routes });
  }

  close(): void {
    this.sources.close();
  }
}
