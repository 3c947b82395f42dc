import { proxyHeaderOf } from '../../shared/extensions/transport-sockets/proxy-protocol/upstream-proxy-protocol.js';
import { stats } from '../../shared/stats/process.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import { durationMs } from '../../shared/config/wkt.js';
import { getLogger } from '../../shared/log/logger.js';
import { MembershipStats } from '../../shared/stats/scopes.js';
import { coarseHealth, edsHealthFlags, HealthFlag, isExcluded } from '../../shared/upstream/health.js';
import { list, obj } from '../../shared/config/access.js';
import { clusterMatchKey, type TlsContext } from '../../shared/extensions/transport-sockets/tls/context.js';
import { transportSocketMatchName } from '../../shared/upstream/transport-socket-match.js';
import type { Counter } from '../../shared/stats/store.js';
import { UpstreamTls } from '../../shared/extensions/transport-sockets/tls/upstream.js';
import { clusterSpeaksHttp2 } from '../../shared/extensions/upstreams/http/protocol.js';
import { ClusterHealthChecker } from './health-checker.js';
import { ClusterDns } from './dns.js';
import { OutlierDetector } from './outlier-detector.js';
import { endpointsOf, upstreamHost, type EndpointConfig, type UpstreamHost } from '../../shared/upstream/hosts.js';
import type { OutcomeRuns } from '../../shared/upstream/outcomes.js';
import type { Cluster as ClusterConfig } from '../../shared/config/envoy-types.js';
import { upstreamTcpKeepalive } from '../../shared/upstream/tcp-keepalive.js';


const clusterUpdated = stats.counter('cluster_manager.cluster_updated');

/**
 * Every cluster's hosts for the whole tree, as Envoy's main thread keeps them: STATIC as
 * configured, STRICT_DNS and LOGICAL_DNS resolved here (one resolver for the tree, not one per
 * worker) and refreshed every dns_refresh_rate. Health flags (the configured EDS status now;
 * active health checks and outlier detection set theirs through setFlags) live here too. Every
 * change is published: to the workers, and to /clusters through the membership stats.
 */

const log = getLogger('upstream', import.meta.url);

export type Publish = (cluster: string, hosts: UpstreamHost[]) => void;

export class ClusterMembership {
  readonly name: string;
  private readonly type: string;
  private endpoints: EndpointConfig[];
  private hostList: UpstreamHost[] = [];
  private everSet = false;
  private readonly stats: MembershipStats;
  private refreshTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** The cluster's outlier detector, if it has outlier_detection. */
  readonly detector: OutlierDetector | undefined;
  /** The cluster's active health checker, if it has health_checks. */
  readonly checker: ClusterHealthChecker | undefined;
  /** Flags a new host starts with: with active health checks, unhealthy until its first check passes (as Envoy). */
  private readonly newHostFlags: number;
  /**
   * With active health checks and without ignore_health_on_host_removal, a host that discovery
   * drops while it passes its checks stays (pending_dynamic_removal), as Envoy's
   * updateDynamicHostList keeps it: until it fails a check (EDS), or the next DNS answer that
   * still leaves it out finds it failing.
   */
  private readonly keepsPassingHosts: boolean;
  /** How the cluster's names resolve (typed_dns_resolver_config), and the last resolution's shortest TTL (respect_dns_ttl). */
  private readonly dns: ClusterDns;
  private lastTtlS = 0;
  private assigned!: () => void;
  /** Resolves at an EDS cluster's first assignment. */
  private readonly firstAssignment = new Promise<void>((resolve) => (this.assigned = resolve));

  /** `cluster.<name>.<match>.total_match_count` by transport socket match (index -1: `default`), as Envoy counts each host it resolves. */
  private readonly matchCounts: Map<number, Counter>;

  constructor(
    readonly config: ClusterConfig,
    private readonly publish: Publish,
    tls: TlsContext | undefined,
    matchTls: readonly (TlsContext | null | undefined)[] = [],
  ) {
    this.name = String(config.name);
    this.type = String(config.type ?? 'STATIC');
    this.endpoints = endpointsOf(config);
    this.stats = new MembershipStats(this.name);
    const matches = config.transport_socket_matches;
    this.matchCounts = new Map([-1, ...(matches ?? []).map((_, i) => i)].map((i) => [i, stats.counter(`cluster.${this.name}.${transportSocketMatchName(matches, i)}.total_match_count`)]));
    const hc = list(config.health_checks)[0];
    const setFlags = (address: string, bits: number, on: boolean) => this.setFlags(address, bits, on);
    this.detector = config.outlier_detection !== undefined ? new OutlierDetector(this.name, obj(config.outlier_detection), setFlags) : undefined;
    // Checks go over each host's transport socket, as Envoy's do: TLS to a TLS host (its match's, else the cluster's).
    const http2 = clusterSpeaksHttp2(config);
    const checkTls = tls ? new UpstreamTls(tls, this.name, http2) : undefined;
    const checkMatchTls = matchTls.map((m) => (m ? new UpstreamTls(m, this.name, http2) : undefined));
    this.checker = hc ? new ClusterHealthChecker(this.name, hc, setFlags, (address) => this.detector?.healthCheckPassed(address), checkTls, checkMatchTls) : undefined;
    if (this.checker) {
      this.checker.proxyHeaders = { own: proxyHeaderOf(config.transport_socket, this.name), matches: (matches ?? []).map((m) => proxyHeaderOf(m.transport_socket, this.name)) };
      this.checker.tcpKeepalive = upstreamTcpKeepalive(config);
    }
    this.newHostFlags = hc ? HealthFlag.FAILED_ACTIVE_HC : 0;
    this.keepsPassingHosts = hc !== undefined && config.ignore_health_on_host_removal !== true;
    this.dns = new ClusterDns(config);
    // An EDS cluster has no hosts until its first ClusterLoadAssignment (assign()).
    this.hosts = this.type === 'STATIC' ? this.endpoints.map((e) => upstreamHost(e, e.hostname, false, this.newHostFlags)) : [];
  }

  get hosts(): readonly UpstreamHost[] {
    return this.hostList;
  }

  private set hosts(hosts: UpstreamHost[]) {
    // Hosts added or removed (not a health change) are a membership change, and a cluster update (cluster_manager.cluster_updated).
    if (this.hostList.map((h) => h.address).join(',') !== hosts.map((h) => h.address).join(',')) {
      this.stats.change.inc();
      // The cluster's first hosts are its creation, not an update.
      if (this.everSet) clusterUpdated.inc();
    }
    this.everSet = true;
    const known = new Set(this.hostList.map((h) => h.address));
    for (const h of hosts) if (!known.has(h.address)) this.matchCounts.get(h.transportSocketMatch)?.inc();
    this.hostList = hosts;
    this.stats.maxHostWeight.set(hosts.reduce((m, h) => Math.max(m, h.weight), 0));
    this.stats.total.set(hosts.length);
    this.stats.healthy.set(hosts.filter((h) => !isExcluded(h.healthFlags) && coarseHealth(h.healthFlags) === 'healthy').length);
    this.stats.degraded.set(hosts.filter((h) => !isExcluded(h.healthFlags) && coarseHealth(h.healthFlags) === 'degraded').length);
    this.stats.excluded.set(hosts.filter((h) => isExcluded(h.healthFlags)).length);
    this.stats.hosts.set(JSON.stringify(hosts));
    this.publish(this.name, hosts);
    this.detector?.sync(hosts);
    this.checker?.sync(hosts);
  }

  /** The cluster's TLS context (`match`: a transport_socket_matches entry's) is built again (its SDS secrets changed): health checks connect with it from now on. */
  updateTls(tls: TlsContext, match?: number): void {
    if (!this.checker) return;
    const next = new UpstreamTls(tls, this.name, clusterSpeaksHttp2(this.config));
    if (match === undefined) this.checker.tls = next;
    else this.checker.matchTls[match] = next;
  }

  /** Sets (`on`) or clears health flag bits of the host at `address`; publishes a change. */
  setFlags(address: string, bits: number, on: boolean): void {
    const i = this.hostList.findIndex((h) => h.address === address);
    const h = this.hostList[i];
    if (!h) return;
    const flags = on ? h.healthFlags | bits : h.healthFlags & ~bits;
    if (flags === h.healthFlags) return;
    const next = [...this.hostList];
    // An EDS host kept after its removal goes once it fails a check (Envoy's EDS reloadHealthyHostsHelper).
    if (this.type === 'EDS' && flags & HealthFlag.PENDING_DYNAMIC_REMOVAL && flags & HealthFlag.FAILED_ACTIVE_HC) next.splice(i, 1);
    else next[i] = { ...h, healthFlags: flags };
    this.hosts = next;
  }

  /**
   * An EDS cluster's endpoints, from its latest ClusterLoadAssignment (the same shape as a static
   * load_assignment, EDS health status included); a host that stays keeps its health flags.
   */
  assign(assignment: JsonObject): void {
    const started = performance.now();
    this.assigned();
    this.endpoints = endpointsOf({ load_assignment: assignment, transport_socket_matches: this.config.transport_socket_matches });
    const next = this.endpoints.map((e) => {
      const known = this.hostList.find((h) => h.ip === e.hostname && h.port === e.port);
      // Active health checking's and outlier detection's flags stay; the EDS status is the new one.
      const kept = known ? known.healthFlags & ~edsHealthFlags(known.edsHealthStatus) : this.newHostFlags;
      return upstreamHost(e, e.hostname, false, kept);
    });
    // The subscription counts the attempt and its success; the membership, what it changed.
    const u = this.stats.update;
    if (next.length === 0) u.empty.inc();
    const hosts = this.withPassingRemoved(next);
    if (sameHosts(hosts, this.hostList)) u.noRebuild.inc();
    this.hosts = hosts;
    u.durationMs.record(Math.round(performance.now() - started));
  }

  /**
   * `next` (discovery's hosts), and the hosts it leaves out that still pass their checks, flagged
   * pending_dynamic_removal (see keepsPassingHosts); a host that came back loses the flag.
   */
  private withPassingRemoved(next: UpstreamHost[]): UpstreamHost[] {
    if (!this.keepsPassingHosts) return next;
    const pending = HealthFlag.PENDING_DYNAMIC_REMOVAL;
    const hosts = next.map((h) => (h.healthFlags & pending ? { ...h, healthFlags: h.healthFlags & ~pending } : h));
    const present = new Set(hosts.map((h) => h.address));
    for (const h of this.hostList) {
      if (present.has(h.address) || h.healthFlags & (HealthFlag.FAILED_ACTIVE_HC | HealthFlag.FAILED_EDS_HEALTH)) continue;
      hosts.push(h.healthFlags & pending ? h : { ...h, healthFlags: h.healthFlags | pending });
    }
    return hosts;
  }

  /**
   * Resolves once the cluster is initialized, as Envoy's warming: DNS clusters resolved once,
   * and with active health checks, every host checked once. DNS refreshes every dns_refresh_rate.
   */
  async start(): Promise<void> {
    const resolved = this.type === 'STATIC' || this.type === 'EDS';
    if (!resolved) await this.resolve();
    await this.checker?.firstRound();
    if (resolved) return;
    const refreshMs = typeof this.config.dns_refresh_rate === 'string' ? durationMs(this.config.dns_refresh_rate) : 5000;
    // respect_dns_ttl: the next resolution after the shortest TTL the last one had, else dns_refresh_rate.
    const respectTtl = this.config.respect_dns_ttl === true;
    const tick = () => {
      const ttlMs = respectTtl ? this.lastTtlS * 1000 : 0;
      this.refreshTimer = setTimeout(() => void this.resolve().finally(() => !this.closed && tick()), ttlMs > 0 ? ttlMs : refreshMs);
      this.refreshTimer.unref();
    };
    tick();
  }

  private async resolve(): Promise<void> {
    const u = this.stats.update;
    const started = performance.now();
    u.attempt.inc();
    let failed = false;
    const next: UpstreamHost[] = [];
    let ttlS = 0;
    for (const e of this.endpoints) {
      const known = this.hostList.filter((h) => h.hostname === e.hostname && h.port === e.port);
      try {
        const answer = await this.dns.resolve(e.hostname);
        if (answer.ttlS > 0) ttlS = ttlS === 0 ? answer.ttlS : Math.min(ttlS, answer.ttlS);
        // LOGICAL_DNS connects to the first address only; STRICT_DNS makes a host of every address.
        for (const address of this.type === 'LOGICAL_DNS' ? answer.addresses.slice(0, 1) : answer.addresses) {
          // A host that stays keeps its health flags.
          next.push(known.find((h) => h.ip === address) ?? upstreamHost(e, address, true, this.newHostFlags));
        }
      } catch (err) {
        failed = true;
        log.warn(`cluster '${this.name}': DNS resolution of '${e.hostname}' failed: ${(err as Error).message}; keeping ${known.length} known address(es)`);
        next.push(...known);
      }
    }
    if (this.closed) return;
    this.lastTtlS = failed ? 0 : ttlS;
    (failed ? u.failure : u.success).inc();
    const hosts = this.withPassingRemoved(next);
    const same = hosts.length === this.hostList.length && hosts.every((h, i) => h === this.hostList[i]);
    if (same) u.noRebuild.inc();
    else this.hosts = hosts;
    u.durationMs.record(Math.round(performance.now() - started));
  }

  /**
   * A new version's warm-up, before it serves (Envoy's cluster warming): an EDS cluster's first
   * assignment (waited for at most `edsTimeoutMs`; undefined: for ever), then start(): the first
   * DNS answer, and a first round of health checks.
   */
  async warm(edsTimeoutMs: number | undefined): Promise<void> {
    this.stats.update.warming.set(1);
    try {
      await this.warmUp(edsTimeoutMs);
    } finally {
      this.stats.update.warming.set(0);
    }
  }

  private async warmUp(edsTimeoutMs: number | undefined): Promise<void> {
    if (this.type === 'EDS') {
      let timer: NodeJS.Timeout | undefined;
      const timeout = edsTimeoutMs === undefined ? undefined : new Promise<void>((resolve) => (timer = setTimeout(resolve, edsTimeoutMs)));
      await (timeout ? Promise.race([this.firstAssignment, timeout]) : this.firstAssignment);
      clearTimeout(timer);
    }
    await this.start();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.refreshTimer);
    this.checker?.stop();
    this.detector?.stop();
  }
}

/** The same hosts at the same addresses (flags aside). */
function sameHosts(a: readonly UpstreamHost[], b: readonly UpstreamHost[]): boolean {
  return a.length === b.length && a.every((h, i) => h.address === b[i]!.address);
}

export class UpstreamMembership {
  readonly clusters = new Map<string, ClusterMembership>();
  private started = false;

  constructor(
    configs: ClusterConfig[],
    private readonly publish: Publish,
    tls: Record<string, TlsContext>,
  ) {
    for (const c of configs) {
      const name = String(c.name);
      this.clusters.set(name, new ClusterMembership(c, publish, tls[name], (c.transport_socket_matches ?? []).map((_, i) => tls[clusterMatchKey(name, i)])));
    }
  }

  /**
   * A cluster added or changed by the cluster discovery service: its membership starts afresh
   * (DNS resolution and health checks begin; `publish` follows every change). Returns its hosts now.
   */
  upsert(config: ClusterConfig, tls?: TlsContext, matchTls?: (TlsContext | undefined)[]): readonly UpstreamHost[] {
    const membership = this.prepare(config, tls, matchTls);
    this.install(membership);
    if (this.started) void membership.start(); // else start() starts it with the others
    return membership.hosts;
  }

  /**
   * A membership for a new version of a cluster, not serving yet (it warms first; see
   * ClusterMembership.warm): its hosts are published only once it is installed.
   */
  prepare(config: ClusterConfig, tls?: TlsContext, matchTls?: (TlsContext | undefined)[]): ClusterMembership {
    // Its constructor publishes the first hosts already: `membership` is not set then, and nothing goes out.
    let membership: ClusterMembership | undefined;
    membership = new ClusterMembership(config, (name, hosts) => {
      if (membership !== undefined && this.clusters.get(name) === membership) this.publish(name, hosts);
    }, tls, matchTls);
    return membership;
  }

  /** `membership` serves in place of the cluster's earlier one (whose checks and timers stop). */
  install(membership: ClusterMembership): void {
    const earlier = this.clusters.get(membership.name);
    if (earlier !== membership) earlier?.close();
    this.clusters.set(membership.name, membership);
  }

  remove(name: string): void {
    this.clusters.get(name)?.close();
    this.clusters.delete(name);
  }

  /** Resolves once every DNS cluster has had its first resolution. */
  async start(): Promise<void> {
    this.started = true;
    await Promise.all([...this.clusters.values()].map((c) => c.start()));
  }

  /** A worker saw the cluster's first upstream connection: health checks leave no_traffic_interval. */
  trafficSeen(cluster: string): void {
    const checker = this.clusters.get(cluster)?.checker;
    if (checker) checker.hadTraffic = true;
  }

  /** An upstream said x-envoy-immediate-health-check-fail: the cluster's health checker (if it has one) fails the host now. */
  immediateHealthCheckFail(cluster: string, address: string): void {
    this.clusters.get(cluster)?.checker?.passiveFailure(address);
  }

  /** A worker's outcomes batch, for the cluster's outlier detector. */
  outcomes(cluster: string, hosts: [string, OutcomeRuns][]): void {
    this.clusters.get(cluster)?.detector?.onOutcomes(hosts);
  }

  snapshot(): Record<string, UpstreamHost[]> {
    return Object.fromEntries([...this.clusters].map(([name, c]) => [name, [...c.hosts]]));
  }

  close(): void {
    for (const c of this.clusters.values()) c.close();
  }
}
