import type { Listener } from '../shared/config/envoy-types.js';
import { list, obj } from '../shared/config/access.js';
import type { JsonObject } from '../shared/config/proto-json.js';
import { getLogger } from '../shared/log/logger.js';
import { filterChainsOf, rdsUsersOf, type ClusterResource, type RouteResource } from '../shared/config/resources.js';
import { durationMs } from '../shared/config/wkt.js';
import type { ServerContext, ToAdmin, ToWorker } from '../shared/ipc.js';
import type { BreakerCounts } from '../shared/upstream/breaker-counts.js';
import type { ClusterChanges, ClusterManager } from './cluster-manager.js';
import type { ListenSocket } from './listen-sockets.js';
import type { ListenerChanges, ListenerManager } from './listener-manager.js';
import type { Options } from './options.js';
import type { BucketRegion } from './ratelimit/bucket-region.js';
import { RouteManager } from './route-manager.js';
import type { BreakerGauges } from './upstream/breaker-gauges.js';
import type { ClusterMembership, UpstreamMembership } from './upstream/membership.js';
import type { UpstreamHost } from '../shared/upstream/hosts.js';
import { ConfigSources } from './xds/sources.js';
import { TlsSecrets } from './tls-secrets.js';

/**
 * The tree's live configuration: the bootstrap's `dynamic_resources` feed the cluster and route
 * managers, and every change they accept reaches the whole tree — membership (DNS, health
 * checks) and circuit-breaker gauges here, every worker as a message applied between its events
 * (requests in flight keep the cluster and route they started with), the admin process, and the
 * context a replacement child starts from.
 */

const log = getLogger('upstream', import.meta.url);
/** Envoy's initial_fetch_timeout default, which bounds a listener's wait for its route tables and a cluster's for its endpoints. */
const RDS_WARMING_TIMEOUT_MS = 15_000;
const WARMING_TIMEOUT_MS = RDS_WARMING_TIMEOUT_MS;

/** The listeners' inline route configurations. */
function routeConfigsOf(listeners: readonly Listener[]): JsonObject[] {
  return listeners
    .flatMap((l) => filterChainsOf(l).map(([, c]) => c))
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
  /** The tree's token buckets: route configurations take slots for their local rate limits. */
  buckets: BucketRegion;
  toEveryWorker: (m: ToWorker) => void;
  toAdmin: (m: ToAdmin) => void;
  /** A socket opened after the workers forked reaches every running worker. */
  sendSocket: (socket: ListenSocket) => void;
}

export class LiveConfig {
  readonly routes: RouteManager;
  /** The membership of each cluster version warming (see warmCluster). */
  private readonly warmingClusters = new Map<string, ClusterMembership>();
  /** Called once no cluster warms. */
  private warmWaiters: (() => void)[] = [];
  private reportScheduled = false;
  private readonly sources: ConfigSources;
  private readonly tls: TlsSecrets;

  constructor(
    bootstrap: JsonObject,
    options: Options,
    private readonly clusters: ClusterManager,
    private readonly listeners: ListenerManager,
    private readonly tree: LiveConfigTree,
  ) {
    this.routes = new RouteManager(tree.buckets);
    this.sources = new ConfigSources(bootstrap, options, {
      clusters,
      listeners,
      applyListeners: (changes) => this.applyListeners(changes),
      routes: this.routes,
      applyClusters: (changes) => this.applyClusters(changes),
      clustersWarm: () => this.clustersWarm(),
      assignEndpoints: (cluster, assignment, warming) => (warming ? this.warmingClusters.get(cluster) : tree.membership.clusters.get(cluster))?.assign(assignment),
      applyRoutes: (updated) => this.applyRoutes(updated),
      clusterTls: (cluster) => tree.context.tls.clusters[cluster],
      refreshTls: () => this.tls.refreshWaiting(),
    });
    listeners.drains.onDrained = () => this.reportListeners();
    listeners.hasRoutes = (name) => this.routes.has(name);
    const secrets = this.sources.secrets;
    this.tls = new TlsSecrets(
      {
        bootstrap,
        loaded: tree.context.tls,
        listeners: () => ({ active: listeners.listeners.filter((l) => !l.stopped), warming: listeners.warmingNow }),
        clusters: () => ({ active: clusters.clusters, warming: clusters.warming }),
        checksUse: (cluster, warming, tls, match) => (warming ? this.warmingClusters.get(cluster) : tree.membership.clusters.get(cluster))?.updateTls(tls, match),
        toEveryWorker: tree.toEveryWorker,
        report: () => {
          this.reportListeners();
          this.reportClusters();
        },
      },
      secrets,
    );
    listeners.secrets = secrets;
    clusters.secrets = secrets;
    listeners.secretsPending = (tls) => secrets.pending(Object.values(tls).flatMap((c) => c.notReady ?? []));
    secrets.target = {
      changed: (key) => this.tls.changed(key),
      initialized: () => this.secretsInitialized(),
      report: () => this.reportSecrets(),
    };
    this.reportSecrets();
  }

  /** Secrets from SDS came (or their wait ended): the listeners that warmed for them serve. */
  private secretsInitialized(): void {
    for (const warming of this.listeners.warmingNow) {
      if (this.listeners.waitingFor(warming).length === 0) this.applyListeners(this.listeners.promote(warming.name));
    }
  }

  /** The secrets as /config_dump shows them, with the bootstrap's contexts built of them (/certs). */
  private reportSecrets(): void {
    this.tree.context.secrets = this.sources.secrets.dump();
    this.tree.toAdmin({ type: 'secrets', secrets: this.tree.context.secrets, tls: this.tree.context.tls });
  }

  /** After an update: contexts whose secrets came meanwhile take them; secrets no context names are dropped. */
  private settleSecrets(): void {
    this.tls.refreshWaiting();
    this.sources.secrets.prune(this.tls.used());
    this.secretsInitialized();
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
    for (const resource of changes.upserted) this.serveCluster(resource, membership.upsert(resource.config, resource.tls, resource.matchTls));
    // A warming version the update dropped (or replaced) stops warming.
    const warmingNow = new Map(this.clusters.warming.map((r) => [r.name, r]));
    for (const [name, m] of this.warmingClusters) {
      if (warmingNow.get(name)?.config === m.config) continue;
      m.close();
      this.warmingClusters.delete(name);
    }
    for (const resource of changes.warming) this.warmCluster(resource);
    this.settleSecrets();
    this.reportClusters();
    this.maybeAllWarm();
  }

  /**
   * A new or changed cluster warms before it serves (as Envoy's): its first endpoints (EDS, at
   * most its source's initial_fetch_timeout), DNS answer and health-check round, while the version
   * it replaces serves on. Then it takes over across the tree.
   */
  private warmCluster(resource: ClusterResource): void {
    const m = this.tree.membership.prepare(resource.config, resource.tls, resource.matchTls);
    this.warmingClusters.get(resource.name)?.close();
    this.warmingClusters.set(resource.name, m);
    const eds = obj(obj(resource.config.eds_cluster_config).eds_config);
    const edsTimeoutMs = typeof eds.initial_fetch_timeout === 'string' ? durationMs(eds.initial_fetch_timeout) : WARMING_TIMEOUT_MS;
    log.debug(`cds: cluster '${resource.name}' warming`);
    // Its first endpoints, and its secrets from SDS (each bounded by its source's initial_fetch_timeout).
    void Promise.all([m.warm(edsTimeoutMs === 0 ? undefined : edsTimeoutMs), this.sources.secrets.initialFetches([resource.tls, ...(resource.matchTls ?? [])].flatMap((t) => t?.notReady ?? []))]).then(() => {
      if (this.warmingClusters.get(resource.name) !== m) return; // replaced or dropped meanwhile
      this.warmingClusters.delete(resource.name);
      if (this.clusters.promote(resource.name) !== resource) m.close();
      else {
        this.tree.membership.install(m);
        this.serveCluster(resource, m.hosts);
        this.reportClustersSoon();
        log.debug(`cds: cluster '${resource.name}' warm: serving`);
      }
      this.maybeAllWarm();
    });
  }

  /** Resolves once no cluster warms; undefined when none does now. */
  private clustersWarm(): Promise<void> | undefined {
    if (this.warmingClusters.size === 0) return undefined;
    return new Promise((resolve) => this.warmWaiters.push(resolve));
  }

  private maybeAllWarm(): void {
    if (this.warmingClusters.size > 0) return;
    for (const resolve of this.warmWaiters.splice(0)) resolve();
  }

  /** A cluster version serves across the tree from now on: circuit breakers, gauges, and every worker. */
  private serveCluster(resource: ClusterResource, hosts: readonly UpstreamHost[]): void {
    this.tree.breakers.assign(resource.name, resource.breakerSlot);
    this.tree.breakerGauges.watch(resource.config);
    this.tree.context.upstream[resource.name] = [...hosts];
    this.tree.toEveryWorker({ type: 'cluster_upsert', resource, hosts: [...hosts] });
  }

  /** Clusters that warm together are reported together: once, after this turn of the event loop. */
  private reportClustersSoon(): void {
    if (this.reportScheduled) return;
    this.reportScheduled = true;
    setImmediate(() => {
      this.reportScheduled = false;
      this.reportClusters();
    });
  }

  private reportClusters(): void {
    const { context } = this.tree;
    context.clusters = this.clusters.clusters;
    context.warmingClusters = this.clusters.warming;
    context.cdsVersionInfo = this.clusters.cdsVersionInfo;
    context.clusterFailures = this.clusters.updateFailures;
    this.tree.toAdmin({ type: 'clusters', clusters: context.clusters, warming: context.warmingClusters, failures: context.clusterFailures, ...(context.cdsVersionInfo !== undefined ? { cdsVersionInfo: context.cdsVersionInfo } : {}) });
  }

  /**
   * Beyond Envoy, which answers 503 (NC) without a word: a cluster removed while a route still
   * names it is reported, with the routes, so the cause of those 503s is in the log.
   */
  private reportRoutedRemovals(removed: string[]): void {
    if (removed.length === 0) return;
    const tables: [string, JsonObject][] = [
      ...this.listeners.listeners.flatMap((l) =>
        routeConfigsOf([l.config]).map((rc) => {
          const named = rc.name ? `'${String(rc.name)}'` : 'without a name';
          return [l.addedViaApi ? `the route configuration ${named} of listener '${l.name}'` : `the static route configuration ${named}`, rc] as [string, JsonObject];
        }),
      ),
      ...Object.values(this.tree.context.routes).map((r) => [`the RDS route configuration '${r.name}'`, r.config] as [string, JsonObject]),
    ];
    for (const name of removed) {
      const users = tables.filter(([, rc]) => clustersNamedBy(rc).has(name)).map(([label]) => label);
      if (users.length) log.warn(`cds: cluster '${name}' was removed while ${users.join(', ')} still route to it: those requests get 503 (no cluster)`);
    }
  }

  private applyRoutes(updated: RouteResource[]): void {
    this.tree.context.routes = this.routes.routes;
    this.tree.context.routeFailures = this.routes.updateFailures;
    for (const resource of updated) this.tree.toEveryWorker({ type: 'route_update', resource });
    this.tree.toAdmin({ type: 'routes', routes: this.tree.context.routes, failures: this.tree.context.routeFailures });
    // Listeners that were waiting for these tables are warm: they serve from now on.
    for (const name of this.listeners.warmingNames) {
      const warming = this.listeners.warmingNow.find((l) => l.name === name)!;
      if (this.listeners.missingRoutes(warming.config).length === 0) this.applyListeners(this.listeners.promote(name));
    }
  }

  /**
   * Listener changes reach every worker in order: new sockets first (on each worker's socket
   * channel), then the changes (removals before additions), then the sockets no listener uses.
   */
  private applyListeners(changes: ListenerChanges): void {
    for (const socket of changes.openedSockets) this.tree.sendSocket(socket);
    for (const change of changes.changes) {
      if (change.kind === 'remove') this.tree.toEveryWorker({ type: 'listener_remove', name: change.name, drain: change.drain });
      else this.tree.toEveryWorker({ type: 'listener_upsert', resource: change.resource, inPlace: change.inPlace, drain: change.drain });
    }
    if (changes.closedSockets.length) this.tree.toEveryWorker({ type: 'sockets_closed', ids: changes.closedSockets });
    for (const name of changes.warming) this.warmAtTheLatest(name);
    this.settleSecrets();
    this.reportListeners();
  }

  /**
   * A warming listener waits for its route tables no longer than their sources' initial fetch
   * timeout (15 s unless set; 0: for ever). Then, as Envoy, it serves without them: its requests
   * get 404 (NR) until they come.
   */
  private warmAtTheLatest(name: string): void {
    const resource = this.listeners.warmingNow.find((l) => l.name === name);
    if (!resource) return;
    const timeouts = rdsUsersOf([resource.config]).map((u) => (typeof u.source.initial_fetch_timeout === 'string' ? durationMs(u.source.initial_fetch_timeout) : RDS_WARMING_TIMEOUT_MS));
    if (timeouts.length === 0 || timeouts.includes(0)) return;
    setTimeout(() => {
      if (!this.listeners.warmingNow.includes(resource)) return;
      log.warn(`lds: listener '${name}' has waited ${Math.max(...timeouts)} ms for route configuration(s) ${this.listeners.missingRoutes(resource.config).map((n) => `'${n}'`).join(', ')}: serving without them (404 until they come)`);
      this.applyListeners(this.listeners.promote(name));
    }, Math.max(...timeouts)).unref();
  }

  /** The listeners as the context (for children started later) and the admin process show them. */
  reportListeners(): void {
    const { context } = this.tree;
    context.listeners = this.listeners.listeners;
    context.listenerFailures = this.listeners.updateFailures;
    context.drainingListeners = this.listeners.drains.now;
    context.warmingListeners = this.listeners.warmingNow;
    if (this.listeners.ldsVersionInfo !== undefined) context.ldsVersionInfo = this.listeners.ldsVersionInfo;
    this.tree.toAdmin({ type: 'listeners', listeners: context.listeners, failures: context.listenerFailures, draining: context.drainingListeners, warming: context.warmingListeners, ...(context.ldsVersionInfo !== undefined ? { ldsVersionInfo: context.ldsVersionInfo } : {}) });
  }

  close(): void {
    for (const m of this.warmingClusters.values()) m.close();
    this.sources.close();
  }
}
