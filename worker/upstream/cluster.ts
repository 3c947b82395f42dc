import { clusterLbPolicy } from '../../shared/extensions/load-balancing-policies/lookup.js';
import { bufferLimitOf } from '../../shared/config/buffer-limit.js';
import { bufferedBytesGauges } from '../../shared/stats/buffered-bytes.js';
import { http2CodecStats } from '../../shared/stats/codec-stats.js';
import { obj } from '../../shared/config/access.js';
import { durationMs } from '../../shared/config/wkt.js';
import { clusterStats, type ClusterStats } from '../../shared/stats/scopes.js';
import { HostConnectionFigures } from './host-figures.js';
import { clusterOptionalStats, type ClusterOptionalStats } from '../../shared/stats/cluster-optional-stats.js';
import type { UpstreamHost } from '../../shared/upstream/hosts.js';
import { sendToParent, type FromWorker } from '../../shared/ipc.js';
import type { OutcomeKind, ResponseOutcome } from '../../shared/upstream/outcomes.js';
import { OutcomeRecorder } from './outcomes.js';
import type { BreakerCounts, BreakerPriority } from '../../shared/upstream/breaker-counts.js';
import { CircuitBreaker, overflowStats } from './circuit-breaker.js';
import { H2Connection, type ConnectionOpened } from './h2.js';
import { Http1Pool } from './http1-pool.js';
import { KeyedPools } from './keyed-pools.js';
import { connectProxied, downstreamConnectionOf, downstreamOrigin, type DownstreamOfRequest } from '../../shared/upstream/proxied-socket.js';
import { proxyHeaderOf, UpstreamProxyHeader, type ProxyHeaderSource } from '../../shared/extensions/transport-sockets/proxy-protocol/upstream-proxy-protocol.js';
import type { TlsContext } from '../../shared/extensions/transport-sockets/tls/context.js';
import { isIP } from 'node:net';
import { clusterAutoHttp, clusterServerNaming, clusterConnectionLimits, clusterHttp2Options, clusterSpeaksHttp2, type UpstreamConnectionLimits } from '../../shared/extensions/upstreams/http/protocol.js';
import type { Socket } from 'node:net';
import { upstreamTcpKeepalive, type TcpKeepalive } from '../../shared/upstream/tcp-keepalive.js';
import { http2Tuning, type Http2Tuning } from '../../shared/config/http2-options.js';
import { stats as processStats } from '../../shared/stats/process.js';
import type { Counter } from '../../shared/stats/store.js';
import { UpstreamTls } from '../../shared/extensions/transport-sockets/tls/upstream.js';
import { loadBalancerFor, type LoadBalancer } from './load-balancer.js';
import { PrioritySet, type PrioritySteering } from './priority-set.js';
import { hashBalancerFor, type HashBalancer } from './hash-balancers.js';
import type { Cluster as ClusterConfig } from '../../shared/config/envoy-types.js';

/**
 * An upstream cluster as one worker sees it: the hosts the supervisor sends (membership and
 * health are the tree's, see supervisor/upstream/membership.ts), its load balancer over the
 * healthy ones, and one keep-alive connection pool per host. No request waits on another process.
 */

/** What a retry asks of host selection (worker/http/retry-state.ts's RetryState). */
export interface RetrySelection extends PrioritySteering {
  readonly policy: { hostSelectionMaxAttempts: number };
  shouldSelectAnotherHost(host: Host): boolean;
}

export class Host extends HostConnectionFigures {
  activeRequests = 0;
  /** TCP proxy connections to this host from this worker, connecting or open. */
  tcpConnections = 0;
  /** Connections by priority (DEFAULT, HIGH): each priority's count against its own breaker, as Envoy's pools. */
  private readonly pools: [Http1Pool | undefined, Http1Pool | undefined] = [undefined, undefined];
  private readonly h2: [H2Connection | undefined, H2Connection | undefined] = [undefined, undefined];
  /** Pools and sessions of their own, by `<priority>|<server name>|<downstream>` (auto_sni; a PROXY header). */
  private readonly keyedPools = new KeyedPools<Http1Pool>();
  private readonly keyedH2 = new KeyedPools<H2Connection>();
  /** auto_config: a connection to it negotiated h2 by ALPN; its requests go over HTTP/2. */
  negotiatedH2 = false;

  constructor(
    readonly cluster: Cluster,
    /** As the supervisor last described it (the address never changes; weight and health may). */
    public info: UpstreamHost,
  ) {
    super(cluster, info.address);
  }

  /** The address connections go to (an IP literal). */
  get ip(): string {
    return this.info.ip;
  }

  get port(): number {
    return this.info.port;
  }

  get weight(): number {
    return this.info.weight;
  }

  get address(): string {
    return this.info.address;
  }

  /** Endpoint metadata envoy.lb canary: true (omit_canary_hosts). */
  get canary(): boolean {
    return this.info.canary;
  }

  /** Its connections' TLS: the cluster's transport_socket_matches entry the supervisor matched it to, else the cluster's own (undefined: plaintext). */
  get tls(): UpstreamTls | undefined {
    const match = this.info.transportSocketMatch ?? -1;
    return match >= 0 ? this.cluster.matchTls[match] : this.cluster.tls;
  }

  /** The PROXY header its connections begin with (upstream_proxy_protocol), per its transport socket as tls. */
  get proxyHeader(): UpstreamProxyHeader | undefined {
    const match = this.info.transportSocketMatch ?? -1;
    return match >= 0 ? this.cluster.matchProxyHeaders[match] : this.cluster.proxyHeader;
  }

  /** The membership this host's last x-envoy-immediate-health-check-fail was reported under (one report per membership update). */
  private immediateFailReported: UpstreamHost | undefined;

  /**
   * The host answered with `x-envoy-immediate-health-check-fail`: the supervisor's health checker
   * fails it (Envoy's passive failure), if the cluster has health checks. Sent without waiting,
   * and once until the membership next changes, so a draining host's every answer is not a message.
   */
  immediateHealthCheckFail(): void {
    if (!this.cluster.healthChecked || this.immediateFailReported === this.info) return;
    this.immediateFailReported = this.info;
    sendToParent<FromWorker>({ type: 'immediate_hc_fail', cluster: this.cluster.name, address: this.address });
  }

  /** A response on a connection a try was given (the connection had, with split_external_local_origin_errors), for the outlier detector. */
  responded(kind: ResponseOutcome): void {
    this.cluster.outcomes?.record(this.info.address, this.cluster.splitLocalOrigin ? (kind.toLowerCase() as OutcomeKind) : kind);
  }

  /** A response whose connection was reported already (an upgrade's, see connected()). */
  respondedOnReportedConnection(kind: ResponseOutcome): void {
    this.cluster.outcomes?.record(this.info.address, kind);
  }

  /** A local failure (connect failure, timeout, reset): Envoy's 503/504 without the split, a local-origin failure with it. */
  localFailure(hadConnection: boolean): void {
    this.cluster.outcomes?.record(this.info.address, !this.cluster.splitLocalOrigin ? 'G' : hadConnection ? 'l' : 'L');
  }

  /** A connection of its own made (host-connection.ts); `final` for a TCP proxy's (Envoy's LocalOriginConnectSuccessFinal, a success without the split). */
  connected(final: boolean): void {
    if (this.cluster.splitLocalOrigin) this.cluster.outcomes?.record(this.info.address, 'C');
    else if (final) this.cluster.outcomes?.record(this.info.address, 'S');
  }

  /**
   * The keep-alive pool to this host at a priority, created on first use; with `sni` (auto_sni,
   * see Cluster.sniFor), one of its own whose connections name that server, as Envoy keys its
   * pools by their transport socket options.
   */
  connectionPool(priority: BreakerPriority, sni?: string, request?: DownstreamOfRequest): Http1Pool {
    const downstream = this.proxyHeader && request ? downstreamConnectionOf(request) : undefined;
    const origin = downstreamOrigin(downstream?.socket);
    if (sni === undefined && !origin) return (this.pools[priority] ??= this.newPool(priority, undefined, undefined));
    return this.keyedPools.get(`${priority}|${sni ?? ''}|${UpstreamProxyHeader.originKey(origin)}`, () => this.newPool(priority, sni, origin), downstream?.closing);
  }

  /** The TLS a connection made now uses: the host's (read at each connection, so one its SDS secrets rebuilt serves new handshakes), naming `sni` if given. */
  private tlsFor(sni: string | undefined): UpstreamTls | undefined {
    const tls = this.tls;
    const naming = this.cluster.serverNaming;
    return tls && sni !== undefined && naming ? tls.forServerName(sni, naming.sni && isIP(sni) === 0, naming.verifySan) : tls;
  }

  /** With a PROXY header, how its connections are made (proxied-socket.ts); undefined: as any other. */
  private proxiedConnect(sni: string | undefined, origin: ProxyHeaderSource['origin'], tlsExtra?: object): (() => Socket) | undefined {
    const header = this.proxyHeader;
    if (!header) return undefined;
    return () => connectProxied({ ip: this.ip, port: this.port, tls: this.tlsFor(sni), proxy: { header, origin, hostTlvs: this.info.proxyTlvs }, ...(this.cluster.tcpKeepalive ? { keepalive: this.cluster.tcpKeepalive } : {}), ...(tlsExtra ? { tlsExtra } : {}) });
  }

  private newPool(priority: BreakerPriority, sni: string | undefined, origin: ProxyHeaderSource['origin']): Http1Pool {
    const host = this;
    const connect = this.proxiedConnect(sni, origin);
    const target = {
      ...(connect ? { connect } : {}),
      ip: this.ip, port: this.port, address: this.address, connectTimeoutMs: this.cluster.connectTimeoutMs, limits: this.cluster.limits,
      get tls() {
        return host.tlsFor(sni);
      },
      ...(this.cluster.tcpKeepalive ? { keepalive: this.cluster.tcpKeepalive } : {}),
      // auto_config: a connection whose ALPN said h2 becomes one of this host's HTTP/2 sessions.
      ...(this.cluster.autoHttp ? { auto: { toH2: (socket: Socket, connectMs: number) => this.switchedToH2(priority, socket, connectMs, sni) } } : {}),
    };
    return new Http1Pool(target, this.cluster.breakers[priority], this);
  }

  /** auto_config: this host answered h2 (see Http1Pool's auto): the socket is one of its sessions, and its requests go over HTTP/2 from now. */
  private switchedToH2(priority: BreakerPriority, socket: Socket, connectMs: number, sni: string | undefined): H2Connection {
    this.negotiatedH2 = true;
    const h2 = this.h2Connection(priority, sni);
    h2.adopt(socket, connectMs);
    return h2;
  }

  /** The HTTP/2 session to this host at a priority (clusters that speak HTTP/2 upstream); it counts as one connection. With `sni`, one of its own (see connectionPool). */
  h2Connection(priority: BreakerPriority, sni?: string, request?: DownstreamOfRequest): H2Connection {
    const downstream = this.proxyHeader && request ? downstreamConnectionOf(request) : undefined;
    const origin = downstreamOrigin(downstream?.socket);
    if (sni === undefined && !origin) return (this.h2[priority] ??= this.newH2(priority, undefined, undefined));
    return this.keyedH2.get(`${priority}|${sni ?? ''}|${UpstreamProxyHeader.originKey(origin)}`, () => this.newH2(priority, sni, origin), downstream?.closing);
  }

  private newH2(priority: BreakerPriority, sni: string | undefined, origin: ProxyHeaderSource['origin']): H2Connection {
    const breaker = this.cluster.breakers[priority];
    const host = this;
    const connect = this.proxiedConnect(sni, origin, { ALPNProtocols: ['h2'] });
    return new H2Connection(
      {
        ...(connect ? { connect } : {}),
        authority: this.address,
        connectTimeoutMs: this.cluster.connectTimeoutMs,
        get tls() {
          return host.tlsFor(sni);
        },
        ...(this.cluster.h2Tuning ? { tuning: this.cluster.h2Tuning, onKeepaliveTimeout: () => this.cluster.h2KeepaliveTimeouts?.inc() } : {}),
        codec: http2CodecStats(`cluster.${this.cluster.name}.`),
        limits: this.cluster.limits,
        ...(this.cluster.tcpKeepalive ? { keepalive: this.cluster.tcpKeepalive } : {}),
      },
      {
        connectionStarted: () => {
          breaker.acquire('cx');
          this.connectionStarted('http2');
        },
        // An HTTP/1.1 pool's connection whose ALPN said h2: counted as a connection there, it holds a max_connections unit here.
        connectionAdopted: () => {
          breaker.acquire('cx');
          this.negotiated('http2');
        },
        connectionOpened: (info) => this.connectionOpened(info),
        connectionClosed: (info) => {
          this.connectionClosed(info);
          breaker.release('cx');
        },
        connectionFailed: (timedOut) => {
          this.connectionFailed(timedOut);
          breaker.release('cx');
        },
        limitReached: (limit) => this.limitReached(limit),
      },
    );
  }

  close(): Promise<void> {
    const closing = [...this.pools, ...this.keyedPools.values()].map((p) => p?.close());
    for (const h2 of [...this.h2, ...this.keyedH2.values()]) h2?.close();
    this.pools.fill(undefined);
    this.h2.fill(undefined);
    this.keyedPools.clear();
    this.keyedH2.clear();
    return Promise.all(closing).then(() => undefined);
  }
}

export class Cluster {
  readonly name: string;
  readonly connectTimeoutMs: number;
  /** per_connection_buffer_limit_bytes: what an upstream connection may hold unwritten before the downstream's reading pauses. */
  readonly bufferLimit: number;
  /** common_http_protocol_options: idle timeout, requests and lifetime per connection, and each try's max_stream_duration. */
  readonly limits: UpstreamConnectionLimits;
  /** The cluster has health_checks (an upstream's x-envoy-immediate-health-check-fail then fails its host). */
  readonly healthChecked: boolean;
  /** The runtime key of its maintenance mode (upstream.maintenance_mode.<name>), read on every request. */
  readonly maintenanceModeKey: string;
  readonly http2: boolean;
  /** auto_config: each connection speaks what ALPN says (h2 or http/1.1), a host that said h2 being reached over HTTP/2 from then on. */
  readonly autoHttp: boolean;
  /** auto_sni / auto_san_validation: each connection names the request's server (see serverNameFor). */
  readonly serverNaming: ReturnType<typeof clusterServerNaming>;
  /** upstream_connection_options.tcp_keepalive, for each upstream connection. */
  readonly tcpKeepalive: TcpKeepalive | undefined;
  /** http2_protocol_options, as node:http2 takes them (an HTTP/2 cluster's). */
  readonly h2Tuning: Http2Tuning | undefined;
  /** cluster.<name>.http2.keepalive_timeout, for a cluster with connection_keepalive. */
  readonly h2KeepaliveTimeouts: Counter | undefined;
  /** The cluster's transport socket, when it is TLS (a new one when its SDS secrets change: updateTls). */
  tls: UpstreamTls | undefined;
  /** Each transport_socket_matches entry's TLS, in order (undefined: plaintext); a host says which it uses. */
  readonly matchTls: (UpstreamTls | undefined)[];
  /** upstream_proxy_protocol: the PROXY header of its transport socket, and of each transport_socket_matches entry's. */
  readonly proxyHeader: UpstreamProxyHeader | undefined;
  readonly matchProxyHeaders: (UpstreamProxyHeader | undefined)[];
  readonly stats: ClusterStats;
  /** track_cluster_stats: timeout budget and request/response size histograms, when it keeps them. */
  readonly optionalStats: ClusterOptionalStats | undefined;
  /** Its upstream connections' sockets, for upstream_cx_rx/tx_bytes_buffered (summed at each collection). */
  readonly openSockets = new Set<NonNullable<ConnectionOpened['socket']>>();
  private readonly stopBufferedBytes: () => void;
  private hostList: Host[] = [];
  /** The hosts by priority, and each priority's share (see PrioritySet). */
  private readonly priorities: PrioritySet<Host>;
  private readonly balancer: LoadBalancer<Host>;
  /** RING_HASH and MAGLEV: hosts picked by the request's hash. */
  private readonly hashBalancer: HashBalancer<Host> | undefined;
  /** With outlier_detection: where this worker's outcomes go. */
  readonly outcomes: OutcomeRecorder | undefined;
  /** outlier_detection.split_external_local_origin_errors: local failures are told apart from responses. */
  readonly splitLocalOrigin: boolean;

  /** Circuit breakers by priority (DEFAULT, HIGH), counted across the tree. */
  readonly breakers: [CircuitBreaker, CircuitBreaker];

  constructor(readonly config: ClusterConfig, hosts: UpstreamHost[], breakers: { counts: BreakerCounts; worker: number }, tls?: TlsContext, matchTls: readonly (TlsContext | null | undefined)[] = []) {
    this.name = String(config.name);
    this.connectTimeoutMs = typeof config.connect_timeout === 'string' ? durationMs(config.connect_timeout) : 5000;
    this.bufferLimit = bufferLimitOf(config);
    this.limits = clusterConnectionLimits(config);
    this.healthChecked = Array.isArray(config.health_checks) && config.health_checks.length > 0;
    this.maintenanceModeKey = `upstream.maintenance_mode.${this.name}`;
    this.http2 = clusterSpeaksHttp2(config);
    this.autoHttp = clusterAutoHttp(config);
    this.tcpKeepalive = upstreamTcpKeepalive(config);
    this.serverNaming = clusterServerNaming(config);
    const h2Options = clusterHttp2Options(config);
    this.h2Tuning = h2Options ? http2Tuning(h2Options) : undefined;
    this.h2KeepaliveTimeouts = this.h2Tuning?.keepalive ? processStats.counter(`cluster.${String(config.name)}.http2.keepalive_timeout`) : undefined;
    this.tls = tls ? new UpstreamTls(tls, this.name, this.alpn) : undefined;
    this.matchTls = matchTls.map((m) => (m ? new UpstreamTls(m, this.name, this.alpn) : undefined));
    this.proxyHeader = proxyHeaderOf(config.transport_socket, this.name);
    this.matchProxyHeaders = (config.transport_socket_matches ?? []).map((m) => proxyHeaderOf(m.transport_socket, this.name));
    this.stats = clusterStats(this.name);
    this.optionalStats = clusterOptionalStats(config, `cluster.${this.name}.`);
    this.stopBufferedBytes = bufferedBytesGauges(`cluster.${this.name}.upstream_cx_rx_bytes_buffered`, `cluster.${this.name}.upstream_cx_tx_bytes_buffered`, this.openSockets);
    const panic = obj(config.common_lb_config).healthy_panic_threshold;
    // common_lb_config.healthy_panic_threshold, in percent (0 turns panic routing off).
    const panicThreshold = panic === undefined ? 50 : Math.round(Number(obj(panic).value ?? 0));
    const policy = clusterLbPolicy(config);
    this.priorities = new PrioritySet<Host>(panicThreshold, policy.localityWeighted);
    const overflow = overflowStats(this.name);
    this.breakers = [0, 1].map((p) => new CircuitBreaker(breakers.counts, breakers.worker, this.name, config, p as 0 | 1, overflow)) as [CircuitBreaker, CircuitBreaker];
    this.outcomes = config.outlier_detection !== undefined ? new OutcomeRecorder(this.name) : undefined;
    this.splitLocalOrigin = config.outlier_detection?.split_external_local_origin_errors === true;
    this.balancer = loadBalancerFor<Host>(policy);
    this.hashBalancer = hashBalancerFor<Host>(policy, this.name);
    this.update(hosts);
  }

  get hosts(): readonly Host[] {
    return this.hostList;
  }

  /**
   * auto_sni / auto_san_validation: the server a request's connection names, as Envoy's router
   * takes it: the override_auto_sni_header's value if the request has one, else its authority,
   * without the port. Undefined without either option or TLS (the pools then are the host's own).
   */
  serverNameFor(authority: string, headers: Record<string, string | string[] | undefined>): string | undefined {
    const naming = this.serverNaming;
    if (!naming || (!this.tls && !this.matchTls.some(Boolean))) return undefined;
    const given = naming.header !== undefined ? headers[naming.header] : undefined;
    const value = (Array.isArray(given) ? given[0] : given) || authority;
    const host = value.startsWith('[') ? value.slice(1, value.indexOf(']')) : value.replace(/:\d*$/, '');
    return host || undefined;
  }

  /** What its TLS offers by ALPN when its context names nothing. */
  get alpn(): boolean | 'auto' {
    return this.autoHttp ? 'auto' : this.http2;
  }

  private trafficNoted = false;

  /** The first upstream connection: the supervisor's health checker learns the cluster carries traffic. */
  noteTraffic(): void {
    if (this.trafficNoted) return;
    this.trafficNoted = true;
    sendToParent<FromWorker>({ type: 'cluster_traffic', cluster: this.name });
  }

  /** The supervisor's list: hosts that stay keep their pools; hosts gone close theirs. */
  update(hosts: UpstreamHost[]): void {
    const previous = new Map(this.hostList.map((h) => [h.address, h]));
    this.hostList = hosts.map((info) => {
      const known = previous.get(info.address);
      previous.delete(info.address);
      if (known) {
        known.info = info;
        return known;
      }
      return new Host(this, info);
    });
    for (const gone of previous.values()) void gone.close();
    this.priorities.update(this.hostList);
  }

  /**
   * Envoy's choice: a priority by the levels' health (see PrioritySet), then its healthy or
   * degraded hosts (in panic, all of its hosts), then the cluster's load balancer among them.
   */
  pickHost(hash?: bigint, retry?: RetrySelection): Host | undefined {
    if (this.hostList.length === 0) return undefined;
    // A retry picks again while its predicates reject the host, host_selection_retry_max_attempts times at most, then takes the last pick (as Envoy's chooseHost).
    const picks = retry ? retry.policy.hostSelectionMaxAttempts + 1 : 1;
    let host: Host | undefined;
    for (let i = 0; i < picks; i++) {
      const { hosts, panic } = this.priorities.choose(hash, retry);
      if (panic) this.stats.lbHealthyPanic.inc();
      host = this.hashBalancer ? this.hashBalancer.pick(hosts, hash) : this.balancer.pick(hosts);
      if (!host || !retry?.shouldSelectAnotherHost(host)) return host;
    }
    return host;
  }

  async close(): Promise<void> {
    await Promise.all(this.hostList.map((h) => h.close()));
    this.stopBufferedBytes();
  }
}
