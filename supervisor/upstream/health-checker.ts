import type { Agent } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { httpModule, httpsModule } from '../../shared/builtins.js';
import type { UpstreamTls } from '../../shared/extensions/transport-sockets/tls/upstream.js';
import type { envoy } from '../../shared/config/envoy-types.js';

type HealthCheck = envoy.config.core.v3.HealthCheck;
type HttpHealthCheck = envoy.config.core.v3.HealthCheck.HttpHealthCheck;
import { durationMs } from '../../shared/config/wkt.js';
import { getLogger } from '../../shared/log/logger.js';
import { Level } from '../../shared/log/levels.js';
import { connectionTag } from '../../shared/log/log-tags.js';
import { stats } from '../../shared/stats/process.js';
import { HealthFlag, healthFlagsText } from '../../shared/upstream/health.js';
import type { UpstreamHost } from '../../shared/upstream/hosts.js';
import { presentAtZero } from '../../shared/stats/always-present.js';
import { connectProxied } from '../../shared/upstream/proxied-socket.js';
import { tcpCheck, type Outcome } from './tcp-health-check.js';
import { applyTcpKeepaliveOnConnect, type TcpKeepalive } from '../../shared/upstream/tcp-keepalive.js';
import type { UpstreamProxyHeader } from '../../shared/extensions/transport-sockets/proxy-protocol/upstream-proxy-protocol.js';

/**
 * Active health checking (a cluster's `health_checks`), one checker per cluster for the whole
 * tree, in the supervisor as on Envoy's main thread. Each host has a session: a check every
 * `interval` (+ jitter; `unhealthy_interval` while it fails, the edge intervals right after a
 * change, `no_traffic_interval` while the cluster has carried no traffic), `timeout` per check.
 * A healthy host turns unhealthy after `unhealthy_threshold` network failures (refused, reset,
 * timed out) in a row, or at once on an answer that fails (as Envoy: the threshold is for the
 * network); an unhealthy one healthy after `healthy_threshold` successes; a host's first check
 * decides alone. An HTTP check that fails with `x-envoy-immediate-health-check-fail` also leaves
 * the host out of the panic arithmetic (excluded_via_immediate_hc_fail), as does a passive
 * failure. Verdicts set FAILED_ACTIVE_HC (and ACTIVE_HC_TIMEOUT) on the membership, which every
 * worker follows.
 *
 * HTTP: GET `path` with Host `host` (or the cluster's name) and `user-agent: Envoy/HC` over a
 * kept-alive connection; a status in `expected_statuses` (default [200, 201)) passes.
 * TCP: connect, write `send`, pass once every `receive` payload was seen (tcp-health-check.ts).
 */

const log = getLogger('hc', import.meta.url);

export type SetFlags = (address: string, bits: number, on: boolean) => void;

class HealthCheckStats {
  readonly attempt;
  readonly success;
  readonly failure;
  readonly networkFailure;
  /** Failures an upstream announced itself (x-envoy-immediate-health-check-fail on a response). */
  readonly passiveFailure;
  readonly healthy;

  constructor(cluster: string) {
    const p = `cluster.${cluster}.health_check.`;
    presentAtZero('healthCheck', p);
    this.attempt = stats.counter(`${p}attempt`);
    this.success = stats.counter(`${p}success`);
    this.failure = stats.counter(`${p}failure`);
    this.networkFailure = stats.counter(`${p}network_failure`);
    this.passiveFailure = stats.counter(`${p}passive_failure`);
    // Reported by this supervisor only; a hot-restart parent's own are not added.
    this.healthy = stats.gauge(`${p}healthy`, 'local');
  }
}


export class ClusterHealthChecker {
  private readonly timeoutMs: number;
  private readonly intervalMs: number;
  private readonly unhealthyIntervalMs: number;
  private readonly unhealthyEdgeIntervalMs: number;
  private readonly healthyEdgeIntervalMs: number;
  private readonly noTrafficIntervalMs: number;
  private readonly noTrafficHealthyIntervalMs: number;
  readonly reuseConnection: boolean;
  private readonly jitterMs: number;
  private readonly jitterPercent: number;
  private readonly initialJitterMs: number;
  private readonly unhealthyThreshold: number;
  private readonly healthyThreshold: number;
  private readonly sessions = new Map<string, Session>();
  readonly stats: HealthCheckStats;
  /** Whether the cluster has carried traffic (until then, checks run every no_traffic_interval). */
  hadTraffic = false;

  /** The TLS a host's checks connect with: its transport_socket_matches entry's, else the cluster's (Envoy: the host's own transport socket). */
  tlsFor(host: UpstreamHost): UpstreamTls | undefined {
    const match = host.transportSocketMatch ?? -1;
    return match >= 0 ? this.matchTls[match] : this.tls;
  }

  /** upstream_proxy_protocol: the cluster's PROXY header, and each transport_socket_matches entry's (a check has no downstream: v1 names its own addresses, v2 sends LOCAL). */
  proxyHeaders: { own: UpstreamProxyHeader | undefined; matches: (UpstreamProxyHeader | undefined)[] } = { own: undefined, matches: [] };

  /** The cluster's upstream_connection_options.tcp_keepalive: a check's connection gets it, as Envoy's cluster socket options reach them. */
  tcpKeepalive: TcpKeepalive | undefined = undefined;

  proxyHeaderFor(host: UpstreamHost): UpstreamProxyHeader | undefined {
    const match = host.transportSocketMatch ?? -1;
    return match >= 0 ? this.proxyHeaders.matches[match] : this.proxyHeaders.own;
  }

  constructor(
    readonly cluster: string,
    readonly config: HealthCheck,
    readonly setFlags: SetFlags,
    /** Every passing check (an outlier ejection may end with it). */
    readonly onPass: (address: string) => void = () => {},
    /** The cluster's TLS: checks connect as its traffic does (a new one when its SDS secrets change). */
    public tls?: UpstreamTls,
    /** Its transport_socket_matches entries' TLS: a host's checks use the one its traffic uses. */
    readonly matchTls: (UpstreamTls | undefined)[] = [],
  ) {
    const d = (v: string | undefined, fallback: number) => (v === undefined ? fallback : durationMs(v));
    this.timeoutMs = d(config.timeout, 1000);
    this.intervalMs = Math.max(1, d(config.interval, 1000));
    this.unhealthyIntervalMs = d(config.unhealthy_interval, this.intervalMs);
    this.unhealthyEdgeIntervalMs = d(config.unhealthy_edge_interval, this.unhealthyIntervalMs);
    this.healthyEdgeIntervalMs = d(config.healthy_edge_interval, this.intervalMs);
    this.noTrafficIntervalMs = d(config.no_traffic_interval, 60_000);
    this.jitterMs = d(config.interval_jitter, 0);
    this.jitterPercent = config.interval_jitter_percent ?? 0;
    this.initialJitterMs = d(config.initial_jitter, 0);
    this.noTrafficHealthyIntervalMs = d(config.no_traffic_healthy_interval, this.noTrafficIntervalMs);
    this.unhealthyThreshold = Math.max(1, config.unhealthy_threshold ?? 1);
    this.healthyThreshold = Math.max(1, config.healthy_threshold ?? 1);
    this.reuseConnection = config.reuse_connection !== false;
    this.stats = new HealthCheckStats(cluster);
  }

  /**
   * The hosts changed: new ones get a session (their first check at once), gone ones stop, and a
   * host whose health_check_config now points elsewhere is checked there from now on.
   */
  sync(hosts: readonly UpstreamHost[]): void {
    const live = new Map(hosts.map((h) => [h.address, h]));
    for (const [address, s] of this.sessions) {
      const now = live.get(address);
      if (!now || now.healthCheckIp !== s.host.healthCheckIp || now.healthCheckPort !== s.host.healthCheckPort) {
        s.stop();
        this.sessions.delete(address);
      }
    }
    for (const h of hosts) if (!this.sessions.has(h.address)) this.sessions.set(h.address, new Session(this, h));
    this.countHealthy();
  }

  /** Resolves once every current host has had its first check (each is bounded by `timeout`). */
  firstRound(): Promise<void> {
    return Promise.all([...this.sessions.values()].map((s) => s.firstCheck)).then(() => undefined);
  }

  /**
   * A response through the proxy carried `x-envoy-immediate-health-check-fail` (an upstream
   * Envoy's health-check filter failing, say while it drains): as Envoy's passive failure, the
   * host is unhealthy at once, without waiting for unhealthy_threshold, and left out of load
   * balancing and the panic arithmetic (excluded_via_immediate_hc_fail) until a check passes.
   */
  passiveFailure(address: string): void {
    this.sessions.get(address)?.passiveFailure();
  }

  countHealthy(): void {
    this.stats.healthy.set([...this.sessions.values()].filter((s) => s.healthy).length);
  }

  /**
   * How long until a session's next check, as Envoy picks it: before the cluster carried any
   * traffic, no_traffic_interval (no_traffic_healthy_interval for a healthy host); then, while a
   * change is pending (some successes of an unhealthy host, some failures of a healthy one), the
   * edge interval toward it; otherwise interval, or unhealthy_interval for an unhealthy host.
   */
  nextDelay(healthy: boolean, pending: boolean): number {
    let base: number;
    if (!this.hadTraffic) base = healthy ? this.noTrafficHealthyIntervalMs : this.noTrafficIntervalMs;
    else if (pending) base = healthy ? this.unhealthyEdgeIntervalMs : this.healthyEdgeIntervalMs;
    else base = healthy ? this.intervalMs : this.unhealthyIntervalMs;
    let jitter = 0;
    if (this.jitterPercent > 0) jitter += Math.random() * (base * this.jitterPercent) / 100;
    if (this.jitterMs > 0) jitter += Math.random() * this.jitterMs;
    return base + jitter;
  }

  get initialDelay(): number {
    return this.initialJitterMs > 0 ? Math.random() * this.initialJitterMs : 0;
  }

  get thresholds(): { healthy: number; unhealthy: number; timeoutMs: number } {
    return { healthy: this.healthyThreshold, unhealthy: this.unhealthyThreshold, timeoutMs: this.timeoutMs };
  }

  stop(): void {
    for (const s of this.sessions.values()) s.stop();
    this.sessions.clear();
  }
}

class Session {
  healthy = false;
  private first = true;
  private successes = 0;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private agent: Agent | HttpsAgent | undefined;
  /** The TLS the agent connects with (a new context takes a new agent). */
  private agentTls: UpstreamTls | undefined;

  /** With a PROXY header, the agent's connections begin with it (proxied-socket.ts). */
  private withProxyHeader<A extends Agent | HttpsAgent>(agent: A, tls: UpstreamTls | undefined): A {
    const header = this.checker.proxyHeaderFor(this.host);
    const keepalive = this.checker.tcpKeepalive;
    if (header) (agent as unknown as { createConnection: () => Socket }).createConnection = () => connectProxied({ ip: this.host.healthCheckIp, port: this.host.healthCheckPort, tls, proxy: { header, origin: undefined }, ...(keepalive ? { keepalive } : {}) });
    else if (keepalive) keepConnectionsAlive(agent, keepalive);
    return agent;
  }
  /** The last HTTP check's answer carried x-envoy-immediate-health-check-fail. */
  private immediateFailHeader = false;
  private resolveFirst!: () => void;
  readonly firstCheck = new Promise<void>((resolve) => (this.resolveFirst = resolve));

  constructor(
    private readonly checker: ClusterHealthChecker,
    readonly host: UpstreamHost,
  ) {
    this.healthy = (host.healthFlags & HealthFlag.FAILED_ACTIVE_HC) === 0;
    this.timer = setTimeout(() => void this.run(), checker.initialDelay);
    this.timer.unref();
  }

  private async run(): Promise<void> {
    if (this.stopped) return;
    const c = this.checker;
    c.stats.attempt.inc();
    const outcome = await this.check();
    if (this.stopped) return;
    const was = this.healthy;
    const { healthy: healthyThreshold, unhealthy: unhealthyThreshold } = c.thresholds;
    if (outcome === 'success') {
      c.stats.success.inc();
      this.failures = 0;
      this.successes++;
      c.setFlags(this.host.address, HealthFlag.ACTIVE_HC_TIMEOUT | HealthFlag.EXCLUDED_VIA_IMMEDIATE_HC_FAIL, false);
      c.onPass(this.host.address);
      if (!this.healthy && (this.first || this.successes >= healthyThreshold)) {
        this.healthy = true;
        c.setFlags(this.host.address, HealthFlag.FAILED_ACTIVE_HC, false);
        log.info(`cluster '${c.cluster}': host ${this.host.address} is now healthy`);
      }
    } else {
      c.stats.failure.inc();
      if (outcome !== 'failure') c.stats.networkFailure.inc();
      this.successes = 0;
      this.failures++;
      if (outcome === 'failure' && this.immediateFailHeader) c.setFlags(this.host.address, HealthFlag.EXCLUDED_VIA_IMMEDIATE_HC_FAIL, true);
      if (this.healthy && (this.first || outcome === 'failure' || this.failures >= unhealthyThreshold)) {
        this.healthy = false;
        c.setFlags(this.host.address, HealthFlag.FAILED_ACTIVE_HC, true);
        log.warn(`cluster '${c.cluster}': host ${this.host.address} is now unhealthy (${outcome === 'failure' ? 'check failed' : outcome === 'timeout' ? 'check timed out' : 'connection failed'})`);
      }
      if (!this.healthy) c.setFlags(this.host.address, HealthFlag.ACTIVE_HC_TIMEOUT, outcome === 'timeout');
    }
    if (this.first) {
      this.first = false;
      this.resolveFirst();
    }
    if (was !== this.healthy) c.countHealthy();
    const pending = this.healthy ? this.failures > 0 : this.successes > 0;
    this.timer = setTimeout(() => void this.run(), c.nextDelay(this.healthy, pending));
    this.timer.unref();
  }

  /** See ClusterHealthChecker.passiveFailure. */
  passiveFailure(): void {
    if (this.stopped) return;
    const c = this.checker;
    c.stats.failure.inc();
    c.stats.passiveFailure.inc();
    this.successes = 0;
    c.setFlags(this.host.address, HealthFlag.EXCLUDED_VIA_IMMEDIATE_HC_FAIL, true);
    if (!this.healthy) return;
    this.healthy = false;
    c.setFlags(this.host.address, HealthFlag.FAILED_ACTIVE_HC, true);
    log.warn(`cluster '${c.cluster}': host ${this.host.address} is now unhealthy (it answered with x-envoy-immediate-health-check-fail)`);
    c.countHealthy();
  }

  private check(): Promise<Outcome> {
    const config = this.checker.config;
    if (config.http_health_check) return this.httpCheck(config.http_health_check);
    return tcpCheck(this.checker, this.host, config.tcp_health_check ?? {});
  }

  private httpCheck(http: HttpHealthCheck): Promise<Outcome> {
    const ranges = http.expected_statuses ?? [];
    const expected = (status: number) =>
      ranges.length === 0 ? status === 200 : ranges.some((r) => status >= Number(r.start ?? 0) && status < Number(r.end ?? 0));
    // A kept-alive connection per host (reuse_connection, true by default).
    const tls = this.checker.tlsFor(this.host);
    if (this.agentTls !== tls) {
      this.agent?.destroy();
      this.agent = undefined;
      this.agentTls = tls;
    }
    this.agent ??= this.withProxyHeader(tls ? new (httpsModule().Agent)({ keepAlive: this.checker.reuseConnection, maxSockets: 1, maxCachedSessions: tls.maxSessions, ...tls.options }) : new (httpModule().Agent)({ keepAlive: this.checker.reuseConnection, maxSockets: 1 }), tls);
    const { timeoutMs } = this.checker.thresholds;
    return new Promise((resolve) => {
      let done = false;
      const finish = (o: Outcome) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve(o);
      };
      const rq = (tls ? httpsModule().request : httpModule().request)(
        {
          host: this.host.healthCheckIp,
          port: this.host.healthCheckPort,
          path: http.path ?? '/',
          method: 'GET',
          agent: this.agent,
          headers: { host: http.host || this.checker.cluster, 'user-agent': 'Envoy/HC' },
        },
        (res) => {
          // As Envoy's HTTP health checker tells it at debug, with the host's flags before this answer counts.
          if (log.enabled(Level.debug)) log.debug(`${connectionTag(res.socket)}hc response_code=${res.statusCode ?? 0} health_flags=${healthFlagsText(this.host.healthFlags)}`);
          this.immediateFailHeader = res.headers['x-envoy-immediate-health-check-fail'] !== undefined;
          res.resume();
          res.on('end', () => finish(expected(res.statusCode ?? 0) ? 'success' : 'failure'));
          res.on('error', () => finish('network'));
        },
      );
      const timer = setTimeout(() => {
        rq.destroy();
        finish('timeout');
      }, timeoutMs);
      rq.on('error', (err) => {
        tls?.outcome(err);
        if (log.enabled(Level.debug)) log.debug(`${connectionTag(rq.socket)}connection/stream error health_flags=${healthFlagsText(this.host.healthFlags)}`);
        finish('network');
      });
      if (tls) rq.on('socket', (s) => s.connecting && tls.guard(s).once('secureConnect', () => tls.outcome(null, s as TLSSocket)));
      rq.end();
    });
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.agent?.destroy();
    this.resolveFirst();
  }
}

/** Each connection an agent makes gets the cluster's TCP keepalive once it is connected. */
function keepConnectionsAlive(agent: Agent | HttpsAgent, keepalive: TcpKeepalive): void {
  const a = agent as unknown as { createConnection: (...args: unknown[]) => Socket };
  const create = a.createConnection.bind(agent);
  a.createConnection = (...args: unknown[]) => {
    const socket = create(...args);
    applyTcpKeepaliveOnConnect(socket, keepalive);
    return socket;
  };
}
