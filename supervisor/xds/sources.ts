import { existsSync } from 'node:fs';
import type { ChannelCredentials } from '@grpc/grpc-js';
import { list, obj } from '../../shared/config/access.js';
import { parseDisabledExtensions } from '../../shared/extensions/registry.js';
import type { Cluster, envoy } from '../../shared/config/envoy-types.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import { checkApiConfigSource } from '../../shared/config/semantic/bootstrap.js';
import { rdsUsersOf, type ClusterResource, type RouteResource } from '../../shared/config/resources.js';
import { durationMs, typeNameOfUrl } from '../../shared/config/wkt.js';
import { checkResource, CLUSTERS, ENDPOINTS, ENDPOINTS_TYPE, LISTENERS, ROUTE_TYPE, ROUTES } from '../../shared/config/xds-resource.js';
import { getLogger } from '../../shared/log/logger.js';
import type { ClusterChanges, ClusterManager, DynamicFieldPolicy } from '../cluster-manager.js';
import type { Options } from '../options.js';
import type { ListenerChanges, ListenerManager } from '../listener-manager.js';
import type { RouteManager } from '../route-manager.js';
import { FileSubscription, pathSourceOf, type ApplyUpdate, type PathSource } from './file-subscription.js';
import { grpcCredentials, type GrpcJs } from '../../shared/extensions/transport-sockets/tls/grpc-credentials.js';
import type { TlsContext } from '../../shared/extensions/transport-sockets/tls/context.js';
import { UpstreamTls } from '../../shared/extensions/transport-sockets/tls/upstream.js';
import { ADS_METHOD, CDS_METHOD, EDS_METHOD, GrpcXdsStream, LDS_METHOD, RDS_METHOD } from './grpc-stream.js';
import { SubscriptionStats } from './subscription-stats.js';
import { bootstrapHasAds, SecretManager, staticClusterNames } from './secrets.js';
import { StaticSecrets } from '../../shared/extensions/transport-sockets/tls/secrets.js';
import { ResponseRefused, screened } from './response-refused.js';
import { configError, errorText, type ConfigError } from '../../shared/config/config-error.js';

/**
 * The bootstrap's `dynamic_resources`, as subscriptions feeding the supervisor's managers:
 * clusters (CDS), the endpoints of EDS clusters (EDS, asked for by the clusters' service names,
 * which change with CDS), listeners (LDS) and the route tables of connection managers with `rds`
 * (RDS, asked for by the names the listeners use, which change with LDS), each from a file
 * (`path_config_source`) or from a control plane over gRPC (`api_config_source` with api_type
 * GRPC or DELTA_GRPC, or `ads` over `ads_config`, one aggregated stream). CDS, then EDS, then
 * LDS, then RDS, as Envoy's init orders them.
 */

type ConfigSource = envoy.config.core.v3.ConfigSource;
type ApiConfigSource = envoy.config.core.v3.ApiConfigSource;

const ENDPOINTS_URL = ENDPOINTS.typeUrl;
const ROUTES_URL = ROUTES.typeUrl;
const LISTENERS_URL = LISTENERS.typeUrl;
const log = getLogger('config', import.meta.url);
/** Envoy's rate_limit_settings defaults: a bucket of 100 requests, refilled at 10 a second. */
const RATE_LIMIT_MAX_TOKENS = 100;
const RATE_LIMIT_FILL_RATE = 10;
/** Envoy's initial_fetch_timeout default. */
const INITIAL_FETCH_TIMEOUT_MS = 15_000;

/** An EDS cluster's service name (the ClusterLoadAssignment's cluster_name) and its source. */
function edsOf(cluster: Cluster): { service: string; source: ConfigSource } | undefined {
  if (cluster.type !== 'EDS') return undefined;
  const eds = cluster.eds_cluster_config;
  return { service: eds?.service_name || (cluster.name ?? ''), source: eds?.eds_config ?? {} };
}

/** `ip:port` of the first host of a static cluster (the xDS cluster a gRPC source names). */
function clusterTarget(bootstrap: JsonObject, name: string): string {
  const cluster = list(obj(bootstrap.static_resources).clusters).find((c) => c.name === name);
  const endpoint = list(list(obj(obj(cluster).load_assignment).endpoints)[0]?.lb_endpoints)[0];
  const address = obj(obj(obj(obj(endpoint).endpoint).address).socket_address);
  const host = String(address.address ?? '');
  return `${host.includes(':') ? `[${host}]` : host}:${Number(address.port_value ?? 0)}`;
}

/** What the sources feed: the supervisor's managers, and the tree that applies their changes. */
export interface ConfigTarget {
  clusters: ClusterManager;
  routes: RouteManager;
  /** A cluster update reaches the tree (membership, breakers, workers, admin). */
  applyClusters: (changes: ClusterChanges) => void;
  /** Resolves once no cluster warms (undefined when none does now). */
  clustersWarm: () => Promise<void> | undefined;
  /** An EDS cluster's endpoints (the tree's membership publishes them). */
  assignEndpoints: (cluster: string, assignment: JsonObject, warming: boolean) => void;
  /** New or changed route configurations reach the workers and the admin. */
  applyRoutes: (updated: RouteResource[]) => void;
  listeners: ListenerManager;
  /** A listener update reaches the tree (sockets and changes to the workers, the admin). */
  applyListeners: (changes: ListenerChanges) => void;
  /** A static cluster's loaded TLS context (the cluster of a control plane). */
  clusterTls: (cluster: string) => TlsContext | undefined;
  /** TLS contexts that wait for secrets load again (asking for them, taking those that came). */
  refreshTls: () => void;
}

export class ConfigSources {
  private readonly files: FileSubscription[] = [];
  private readonly streams = new Map<string, GrpcXdsStream>();
  private readonly policy: DynamicFieldPolicy;
  /** The last ClusterLoadAssignment of each EDS service name, for a cluster that (re)appears. */
  private readonly assignments = new Map<string, JsonObject>();
  private readonly edsFiles = new Set<string>();
  /** RDS: each user's figures (by stat prefix and route name), and the files watched. */
  private readonly rdsStats = new Map<string, SubscriptionStats[]>();
  private readonly rdsUsersSeen = new Set<string>();
  private readonly rdsFiles = new Set<string>();
  /** The route configuration names and EDS service names asked for on each stream now. */
  private readonly rdsNames = new Map<GrpcXdsStream, Set<string>>();
  private readonly edsServices = new Map<GrpcXdsStream, Set<string>>();
  /** The EDS clusters whose gRPC subscription has started (counted once, as Envoy's start). */
  private readonly edsStarted = new Set<string>();
  /** The initial fetches start() waits for (CDS first, then EDS), each bounded by initial_fetch_timeout. */
  private readonly initialFetches: Promise<void>[] = [];
  private readonly clusters: ClusterManager;
  /** The bootstrap's secrets and those from SDS, which TLS contexts load against. */
  readonly secrets: SecretManager;

  constructor(
    private readonly bootstrap: JsonObject,
    options: Options,
    private readonly tree: ConfigTarget,
  ) {
    this.clusters = tree.clusters;
    this.policy = {
      unknownFields: options.rejectUnknownDynamicFields ? 'reject' : options.ignoreUnknownDynamicFields ? 'ignore' : 'warn',
      disabledExtensions: parseDisabledExtensions(options.disableExtensions, () => undefined),
      checkSources: (cluster) => this.checkEdsSource(cluster),
    };
    this.secrets = new SecretManager(new StaticSecrets(bootstrap, []), {
      streamFor: (source, method, scope) => this.streamFor(source, method, scope),
      hasAds: bootstrapHasAds(bootstrap),
      staticClusters: staticClusterNames(bootstrap),
      unknownFields: this.policy.unknownFields,
      disabledExtensions: this.policy.disabledExtensions,
    });
  }

  /**
   * Starts every source; resolves once each has had its initial fetch (a file: at once; a control
   * plane: its first response, or initial_fetch_timeout), so the workers start with it, as Envoy's
   * init waits for CDS.
   */
  async start(): Promise<void> {
    // The bootstrap's contexts ask for their secrets from SDS (its listeners and clusters wait for them, as Envoy's init does).
    this.tree.refreshTls();
    await this.startCds();
    this.refreshEds();
    await Promise.all(this.initialFetches);
    // Listeners after the clusters, and their route tables after them, as Envoy's init orders them.
    await this.startLds();
    this.refreshRds();
    await Promise.all(this.initialFetches);
    await this.secrets.initialFetches();
  }

  private startLds(): Promise<void> {
    const ldsConfig = obj(obj(this.bootstrap.dynamic_resources).lds_config);
    if (Object.keys(ldsConfig).length === 0) return Promise.resolve();
    const ldsStats = new SubscriptionStats('listener_manager.lds.');
    const applyLds = async (versionInfo: string, resources: JsonObject[]) => {
      const clusterNames = new Set(this.clusters.clusters.map((c) => c.name));
      const changes = await this.tree.listeners.applyLds(versionInfo, resources, this.policy, clusterNames);
      this.tree.applyListeners(changes);
      this.refreshRds();
      return changes.rejected;
    };
    return this.subscribeAll(ldsConfig, 'lds', 'listeners', ldsStats, LDS_METHOD, LISTENERS_URL, applyLds, undefined, 'listener_manager.lds.');
  }

  /**
   * A wildcard subscription (CDS, LDS: every resource of the type, full state) from the source's
   * file or control plane; resolves at its initial fetch.
   */
  private subscribeAll(source: ConfigSource, what: string, things: string, counts: SubscriptionStats, method: string, typeUrl: string, apply: ApplyUpdate, holdAck: (() => Promise<void> | undefined) | undefined, scope: string): Promise<void> {
    const file = pathSourceOf(source);
    const whole = screened(typeNameOfUrl(typeUrl), this.policy.unknownFields, apply);
    if (file) {
      log.info(`${what}: reading ${things} from ${file.path}${file.watchedDirectory ? ` (watching ${file.watchedDirectory})` : ''}`);
      return this.watchFile(file, counts, whole);
    }
    const stream = this.streamFor(source, method, scope);
    const counted = (versionInfo: string, resources: JsonObject[]) => counts.update(versionInfo, () => whole(versionInfo, resources));
    counts.started();
    return this.initialFetch(source, what, counts, (first) => stream.subscribe(typeUrl, counted, first, [], holdAck));
  }

  /**
   * Route configurations for every HTTP connection manager with `rds`, by name, from each one's
   * config source (again after every LDS update: the names change with the listeners); figures
   * per user under `http.<stat_prefix>.rds.<route_config_name>.`.
   */
  private refreshRds(): void {
    const bySource = new Map<GrpcXdsStream, { source: ConfigSource; names: Set<string> }>();
    const served = [...this.tree.listeners.listeners.filter((l) => !l.stopped), ...this.tree.listeners.warmingNow].map((l) => l.config);
    for (const user of rdsUsersOf(served)) {
      const userKey = `${user.statPrefix}\n${user.name}`;
      if (!this.rdsUsersSeen.has(userKey)) {
        this.rdsUsersSeen.add(userKey);
        const userStats = this.rdsStats.get(user.name) ?? this.rdsStats.set(user.name, []).get(user.name)!;
        const stats = new SubscriptionStats(`http.${user.statPrefix}.rds.${user.name}.`);
        userStats.push(stats);
        if (!pathSourceOf(user.source)) stats.started();
      }
      const file = pathSourceOf(user.source);
      if (file) {
        if (this.rdsFiles.has(file.path)) continue;
        this.rdsFiles.add(file.path);
        const fileStats = this.rdsStats.get(user.name)!.at(-1)!;
        this.initialFetches.push(this.watchFile(file, fileStats, screened(ROUTE_TYPE, this.policy.unknownFields, (version, resources) => this.applyRds(version, resources, undefined))));
        continue;
      }
      const stream = this.streamFor(user.source, RDS_METHOD);
      const entry = bySource.get(stream) ?? bySource.set(stream, { source: user.source, names: new Set() }).get(stream)!;
      entry.names.add(user.name);
    }
    for (const [stream, { source, names }] of bySource) {
      const sorted = [...names].sort();
      this.rdsNames.set(stream, names);
      if (stream.has(ROUTES_URL)) stream.rename(ROUTES_URL, sorted);
      else {
        // Refused as a whole, a response counts against every route configuration asked for on the stream, as Envoy's watches each count it.
        const refused = () => {
          for (const name of this.rdsNames.get(stream) ?? []) for (const c of this.rdsStats.get(name) ?? []) c.refusedWhole();
        };
        const apply = this.counted(ROUTE_TYPE, refused, (version, resources) => this.applyRds(version, resources, this.rdsStats));
        this.initialFetches.push(this.initialFetch(source, 'rds', undefined, (first) => stream.subscribe(ROUTES_URL, apply, first, sorted)));
      }
    }
  }

  /** Route configurations, each checked alone; `counters`: each name's figures (a file counts its own). */
  private async applyRds(versionInfo: string, resources: JsonObject[], counters: Map<string, SubscriptionStats[]> | undefined): Promise<string[]> {
    const clusterNames = new Set(this.clusters.clusters.map((c) => c.name));
    const { updated, rejected } = await this.tree.routes.applyRds(versionInfo, resources, this.policy, clusterNames);
    if (updated.length || rejected.length) this.tree.applyRoutes(updated);
    if (counters) {
      for (const any of resources) {
        const name = String(any.name ?? '');
        const refused = rejected.filter((r) => r.startsWith(`route configuration '${name}'`));
        for (const c of counters.get(name) ?? []) c.update(versionInfo, () => refused);
      }
    }
    return rejected;
  }

  private startCds(): Promise<void> {
    const cdsConfig = obj(obj(this.bootstrap.dynamic_resources).cds_config);
    if (Object.keys(cdsConfig).length === 0) return Promise.resolve();
    const cdsStats = new SubscriptionStats('cluster_manager.cds.');
    const applyCds = (versionInfo: string, resources: JsonObject[]) => {
      const changes = this.clusters.applyCds(versionInfo, resources, this.policy);
      this.tree.applyClusters(changes);
      // A cluster whose endpoints are known already (by service name) takes them at once.
      for (const [list, warming] of [[changes.upserted, false], [changes.warming, true]] as const) {
        for (const c of list) {
          const eds = edsOf(c.config);
          const known = eds && this.assignments.get(eds.service);
          if (known) this.tree.assignEndpoints(c.name, known, warming);
        }
      }
      this.refreshEds();
      return changes.rejected;
    };
    // As Envoy's ADS: the CDS ACK waits while clusters warm.
    const holdAck = cdsConfig.ads !== undefined ? this.tree.clustersWarm : undefined;
    return this.subscribeAll(cdsConfig, 'cds', 'clusters', cdsStats, CDS_METHOD, CLUSTERS.typeUrl, applyCds, holdAck, 'cluster_manager.cds.');
  }

  /**
   * Asks every EDS cluster's source for its endpoints, by service name (again after every CDS
   * update: the names change with the clusters). A new gRPC subscription's initial fetch joins
   * `initialFetches`; a file is read at once.
   */
  private refreshEds(): void {
    const names = new Map<GrpcXdsStream, { source: ConfigSource; names: Set<string> }>();
    for (const c of [...this.clusters.clusters, ...this.clusters.warming]) {
      const eds = edsOf(c.config);
      if (!eds) continue;
      const file = pathSourceOf(eds.source);
      if (file) {
        if (this.edsFiles.has(file.path)) continue;
        this.edsFiles.add(file.path);
        this.initialFetches.push(this.watchFile(file, new SubscriptionStats(`cluster.${c.name}.`, false), screened(ENDPOINTS_TYPE, this.policy.unknownFields, (_version, resources) => this.applyEds(resources, false))));
        continue;
      }
      const stream = this.streamFor(eds.source, EDS_METHOD);
      if (!this.edsStarted.has(c.name)) {
        this.edsStarted.add(c.name);
        new SubscriptionStats(`cluster.${c.name}.`, false).started();
      }
      const entry = names.get(stream) ?? names.set(stream, { source: eds.source, names: new Set() }).get(stream)!;
      entry.names.add(eds.service);
    }
    for (const [stream, { source, names: wanted }] of names) {
      const sorted = [...wanted].sort();
      this.edsServices.set(stream, wanted);
      if (stream.has(ENDPOINTS_URL)) stream.rename(ENDPOINTS_URL, sorted);
      else {
        // Refused as a whole, a response counts against every EDS cluster of the stream, as each cluster's subscription counts it in Envoy.
        const refused = () => {
          const services = this.edsServices.get(stream) ?? new Set();
          for (const c of [...this.clusters.clusters, ...this.clusters.warming]) {
            const eds = edsOf(c.config);
            if (eds && services.has(eds.service)) new SubscriptionStats(`cluster.${c.name}.`, false).refusedWhole();
          }
        };
        const apply = this.counted(ENDPOINTS_TYPE, refused, (_version, resources) => this.applyEds(resources, true));
        this.initialFetches.push(this.initialFetch(source, 'eds', undefined, (first) => stream.subscribe(ENDPOINTS_URL, apply, first, sorted)));
      }
    }
  }

  /**
   * ClusterLoadAssignments: each checked alone (the endpoints' rules are a static
   * load_assignment's) and given to every EDS cluster of its service name, counted per cluster.
   */
  private applyEds(resources: JsonObject[], count: boolean): string[] {
    const errors: string[] = [];
    // The EDS clusters by service name, serving and warming, once per update (not once per resource).
    const byService = (clusters: ClusterResource[]) => {
      const index = new Map<string, ClusterResource[]>();
      for (const c of clusters) {
        const eds = edsOf(c.config);
        if (eds) index.set(eds.service, [...(index.get(eds.service) ?? []), c]);
      }
      return index;
    };
    const serving = byService(this.clusters.clusters);
    const warmingIndex = byService(this.clusters.warming);
    for (const [i, any] of resources.entries()) {
      const checked = checkResource(ENDPOINTS_TYPE, any, this.policy.unknownFields, this.policy.disabledExtensions);
      const service = typeof any.cluster_name === 'string' ? any.cluster_name : `resources[${i}]`;
      const targets = serving.get(service) ?? [];
      const warming = warmingIndex.get(service) ?? [];
      if (count) for (const name of new Set([...targets, ...warming].map((t) => t.name))) new SubscriptionStats(`cluster.${name}.`, false).update('', () => (checked.message ? [] : checked.errors.map(String)));
      if (!checked.message) {
        errors.push(`endpoints '${service}': ${errorText(checked.errors)}`);
        continue;
      }
      this.assignments.set(service, checked.message);
      for (const t of targets) this.tree.assignEndpoints(t.name, checked.message, false);
      for (const t of warming) this.tree.assignEndpoints(t.name, checked.message, true);
    }
    return errors;
  }

  /**
   * A control plane's response of a named type (EDS, RDS: counted per resource by `apply`),
   * refused as a whole first where Envoy's decoder would refuse it; `refused` counts that.
   */
  private counted<R extends string[] | Promise<string[]>>(typeName: string, refused: () => void, apply: (versionInfo: string, resources: JsonObject[]) => R): (versionInfo: string, resources: JsonObject[]) => R {
    const whole = screened(typeName, this.policy.unknownFields, apply);
    return (versionInfo, resources) => {
      try {
        return whole(versionInfo, resources);
      } catch (err) {
        if (err instanceof ResponseRefused) refused();
        throw err;
      }
    };
  }

  /** A file source, read now and again at each rename onto it; resolves once the first reading is applied. */
  private watchFile(file: PathSource, counts: SubscriptionStats, apply: ApplyUpdate): Promise<void> {
    const subscription = new FileSubscription(file, counts, apply);
    this.files.push(subscription);
    return subscription.start();
  }

  /** Resolves at the subscription's first response, or after the source's initial_fetch_timeout (default 15 s; 0: never). */
  private initialFetch(source: ConfigSource, what: string, counts: SubscriptionStats | undefined, subscribe: (first: () => void) => void): Promise<void> {
    const timeoutMs = source.initial_fetch_timeout !== undefined ? durationMs(source.initial_fetch_timeout) : INITIAL_FETCH_TIMEOUT_MS;
    return new Promise((resolve) => {
      const timer =
        timeoutMs > 0
          ? setTimeout(() => {
              counts?.initialFetchTimedOut();
              log.warn(`${what}: no response from the control plane within the initial fetch timeout (${timeoutMs} ms); starting without it`);
              resolve();
            }, timeoutMs)
          : undefined;
      subscribe(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** What only the bootstrap can tell about a CDS cluster's EDS source: the same rules as a static one's. */
  private checkEdsSource(cluster: Cluster): ConfigError[] {
    const eds = edsOf(cluster);
    if (!eds) return [];
    const errors: ConfigError[] = [];
    const path = 'eds_cluster_config.eds_config';
    if (eds.source.ads !== undefined && obj(this.bootstrap.dynamic_resources).ads_config === undefined) errors.push(configError('missing', `${path}.ads`, 'an ads source needs dynamic_resources.ads_config in the bootstrap'));
    if (eds.source.api_config_source !== undefined) {
      const staticNames = new Set(list(obj(this.bootstrap.static_resources).clusters).map((c) => String(c.name)));
      checkApiConfigSource(obj(eds.source.api_config_source), `${path}.api_config_source`, staticNames, errors);
    }
    const file = pathSourceOf(eds.source);
    if (file && !existsSync(file.path)) errors.push(configError('unknown_reference', path, `paths must refer to an existing path in the system: '${file.path}' does not exist`));
    return errors;
  }

  /**
   * The stream for a gRPC source: the one aggregated stream (ADS) for `ads: {}`, else one per
   * control plane and service, its control_plane.* figures under `scope` (CDS's and LDS's, as
   * Envoy's; the per-type EDS and RDS streams, shared here by their subscriptions, report at the root).
   */
  private streamFor(source: ConfigSource, method: string, scope = ''): GrpcXdsStream {
    const ads = source.ads !== undefined;
    const api: ApiConfigSource = (ads ? obj(this.bootstrap.dynamic_resources).ads_config : source.api_config_source) ?? {};
    const key = ads ? 'ads' : `${method} ${scope} ${JSON.stringify(api)}`;
    let stream = this.streams.get(key);
    if (!stream) {
      const cluster = api.grpc_services?.[0]?.envoy_grpc?.cluster_name ?? '';
      const delta = api.api_type === 'DELTA_GRPC';
      const limit = api.rate_limit_settings;
      const rateLimit = limit && { maxTokens: limit.max_tokens ?? RATE_LIMIT_MAX_TOKENS, fillRate: limit.fill_rate ?? RATE_LIMIT_FILL_RATE };
      stream = new GrpcXdsStream(clusterTarget(this.bootstrap, cluster), this.credentialsFor(cluster), ads ? ADS_METHOD : method, obj(this.bootstrap.node), api.set_node_on_first_message_only === true, delta, rateLimit, ads ? '' : scope);
      this.streams.set(key, stream);
    }
    return stream;
  }

  /** The xDS cluster's TLS transport socket, as its HTTP connections would use it (ssl.* counted under the cluster). */
  private credentialsFor(cluster: string): (grpc: GrpcJs) => ChannelCredentials {
    const context = this.tree.clusterTls(cluster);
    const tls = context && new UpstreamTls(context, cluster, true);
    return (grpc) => grpcCredentials(grpc, tls);
  }

  close(): void {
    for (const f of this.files) f.close();
    for (const s of this.streams.values()) s.close();
    this.secrets.close();
  }
}
