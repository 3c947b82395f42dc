import { list, obj } from '../shared/config/access.js';
import type { JsonObject } from '../shared/config/proto-json.js';
import { getLogger } from '../shared/log/logger.js';
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

const log = getLogger('upstream', import.meta.url);

/** The bootstrap's inline route configurations. */
function routeConfigsOf(bootstrap: JsonObject): JsonObject[] {
  return list(obj(bootstrap.static_resources).listeners)
    .flatMap((l) => list(l.filter_chains))
    .flatMap((c) => list(c.filters))
    .map((f) => obj(obj(f.typed_config).route_config))
    .filter((rc) => rc.virtual_hosts !== undefined);
}

/** Every cluster a route configuration routes to, weighted ones included. */
function clustersNamedBy(rc: JsonObject): Set<string> {
  const names = new Set<string>();
  for (const vh of list(rc.virtual_hosts)) {
    for (const route of list(vh.routes)) {
      const action = obj(route.route);
      if (typeof action.cluster === 'string') names.add(action.cluster);
      for (const wc of list(obj(action.weighted_clusters).clusters)) if (typeof wc.name === 'string') names.add(wc.name);
    }
  }
  return names;
}

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
    private readonly bootstrap: JsonObject,
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
    this.reportRoutedRemovals(changes.removed);
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
    context.clusterFailures = this.clusters.updateFailures;
    this.tree.toAdmin({ type: 'clusters', clusters: context.clusters, failures: context.clusterFailures, ...(context.cdsVersionInfo !== undefined ? { cdsVersionInfo: context.cdsVersionInfo } : {}) });
  }

  /**
   * Beyond Envoy, which answers 503 (NC) without a word: a cluster removed while a route still
   * names it is reported, with the routes, so the cause of those 503s is in the log.
   */
  private reportRoutedRemovals(removed: string[]): void {
    if (removed.length === 0) return;
    const tables: [string, JsonObject][] = [
      ...routeConfigsOf(this.bootstrap).map((rc) => [`the static route configuration ${rc.name ? `'${String(rc.name)}'` : 'without a name'}`, rc] as [string, JsonObject]),
      ...Object.values(this.tree.context.routes).map((r) => [`the RDS route configuration '${r.name}'`, r.config] as [string, JsonObject]),
    ];
    for (const name of removed) {
      const users = tables.filter(([, rc]) => clustersNamedBy(rc).has(name)).map(([label]) => label);
      if (users.length) log.warn(`cds: cluster '${name}' was removed while ${users.join(', ')} still route to it: those requests get 503 (no cluster)`);
    }
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
