import { stats } from './process.js';
import type { Counter, Gauge, Histogram, TextReadout } from './store.js';
import { presentAtZero } from './always-present.js';

/**
 * Envoy's stat names for the parts of the data plane, resolved once per listener, connection
 * manager and cluster, so that a request only adds to fields of these objects (no name building
 * or map lookup per request, except the per-code upstream counter, created once per code).
 */

/** `listener.<address>.` with ':' as '_' (`listener.127.0.0.1_10000.`), or the listener's stat_prefix. */
export function listenerStatPrefix(address: string, statPrefix?: string): string {
  return `listener.${statPrefix || address.replace(/:/g, '_')}.`;
}

export class ListenerStats {
  readonly cxTotal: Counter;
  readonly cxActive: Gauge;
  readonly cxDestroy: Counter;
  /** `worker_<index>.downstream_cx_total` / `_active`: this worker's share, as Envoy keeps per worker thread. */
  private readonly workerCxTotal: Counter | undefined;
  private readonly workerCxActive: Gauge | undefined;
  /** server.total_connections: every worker's open downstream connections, added up by the admin process. */
  private readonly serverConnections: Gauge;

  readonly cxLengthMs: Histogram;
  /** Connections the listener filters (TLS inspector) hold before a filter chain has them; ones the peer closed, or that failed, meanwhile. */
  readonly preCxActive: Gauge;
  readonly listenerFilterRemoteClose: Counter;
  readonly listenerFilterError: Counter;

  constructor(prefix: string, workerIndex?: number) {
    this.listenerFilterRemoteClose = stats.counter(`${prefix}downstream_listener_filter_remote_close`);
    this.listenerFilterError = stats.counter(`${prefix}downstream_listener_filter_error`);
    this.cxLengthMs = stats.histogram(`${prefix}downstream_cx_length_ms`);
    this.preCxActive = stats.gauge(`${prefix}downstream_pre_cx_active`);
    this.cxTotal = stats.counter(`${prefix}downstream_cx_total`);
    this.cxActive = stats.gauge(`${prefix}downstream_cx_active`);
    this.cxDestroy = stats.counter(`${prefix}downstream_cx_destroy`);
    if (workerIndex !== undefined) {
      this.workerCxTotal = stats.counter(`${prefix}worker_${workerIndex}.downstream_cx_total`);
      this.workerCxActive = stats.gauge(`${prefix}worker_${workerIndex}.downstream_cx_active`);
    }
    this.serverConnections = stats.gauge('server.total_connections');
    presentAtZero('listener', prefix);
  }

  opened(): void {
    this.cxTotal.inc();
    this.cxActive.inc();
    this.workerCxTotal?.inc();
    this.workerCxActive?.inc();
    this.serverConnections.inc();
  }

  /** `lengthMs`: how long the connection lived (downstream_cx_length_ms). */
  closed(lengthMs: number): void {
    this.cxActive.dec();
    this.workerCxActive?.dec();
    this.cxDestroy.inc();
    this.serverConnections.dec();
    this.cxLengthMs.record(Math.round(lengthMs));
  }
}

/** A cluster's response codes under one scope (`cluster.<name>.external.` …). */
class ScopedCodes {
  private readonly byCode = new Map<number, [code: Counter, klass: Counter]>();
  private completed: Counter | undefined;
  private time: Histogram | undefined;

  constructor(private readonly prefix: string) {}

  charge(status: number, ms: number | undefined): void {
    let c = this.byCode.get(status);
    if (!c) {
      const d = Math.floor(status / 100);
      c = [stats.counter(`${this.prefix}upstream_rq_${status}`), stats.counter(`${this.prefix}upstream_rq_${d >= 1 && d <= 5 ? d : 5}xx`)];
      this.byCode.set(status, c);
    }
    c[0].inc();
    c[1].inc();
    // Envoy's chargeBasicResponseStat: every charged code completes a request; only a response that came has a time.
    (this.completed ??= stats.counter(`${this.prefix}upstream_rq_completed`)).inc();
    if (ms !== undefined) (this.time ??= stats.histogram(`${this.prefix}upstream_rq_time`)).record(ms);
  }
}

/** `cluster.<name>.*`: upstream connections and requests. */
export class ClusterStats {
  readonly cxTotal: Counter;
  readonly cxActive: Gauge;
  readonly rqTotal: Counter;
  readonly rqActive: Gauge;
  readonly rqCompleted: Counter;
  readonly rqClass: Counter[];
  readonly rqTime: Histogram;
  readonly rqTimeout: Counter;
  readonly rqPerTryTimeout: Counter;
  readonly rqRetry: Counter;
  readonly rqRetrySuccess: Counter;
  readonly cxConnectFail: Counter;
  /** Who ended an upstream connection (upstream_cx_destroy_local / _remote), and the ones that ended with a request on them. */
  readonly cxDestroyLocal: Counter;
  readonly cxDestroyRemote: Counter;
  readonly cxDestroyWithActiveRq: Counter;
  readonly cxDestroyLocalWithActiveRq: Counter;
  readonly cxDestroyRemoteWithActiveRq: Counter;
  /** An HTTP/1 upstream said `connection: close` (upstream_cx_close_notify). */
  readonly cxCloseNotify: Counter;
  /** upstream_cx_connect_ms / _length_ms histograms, and what each connection spoke and carried. */
  readonly cxConnectMs: Histogram;
  readonly cxLengthMs: Histogram;
  readonly cxHttp1Total: Counter;
  readonly cxHttp2Total: Counter;
  readonly cxDestroy: Counter;
  readonly cxRxBytes: Counter;
  readonly cxTxBytes: Counter;
  readonly cxConnectTimeout: Counter;
  /** Requests waiting for a connection (pending), cancelled while waiting, reset by either side, refused a retry past the limit. */
  readonly rqPendingTotal: Counter;
  readonly rqPendingActive: Gauge;
  readonly rqCancelled: Counter;
  readonly rqRxReset: Counter;
  /** Requests the upstream reset with NO_ERROR (an HTTP/2 RST_STREAM), apart from rqRxReset's. */
  readonly rqRxResetNoError: Counter;
  readonly rqTxReset: Counter;
  readonly rqRetryLimitExceeded: Counter;
  /** Retries that waited Envoy's default exponential back-off. */
  readonly rqRetryBackoffExponential: Counter;
  /** Retries that waited as the upstream's rate-limit reset header said (rate_limited_retry_back_off). */
  readonly rqRetryBackoffRatelimited: Counter;
  readonly rqPerTryIdleTimeout: Counter;
  /** Retries given up, and mirror copies dropped, for a body too long to keep (worker/http/mirror.ts counts the copies). */
  readonly retryOrShadowAbandoned: Counter;
  /** Upstream connections whose bytes were not valid HTTP (upstream_cx_protocol_error). */
  readonly cxProtocolError: Counter;
  /** Requests answered 503 for the cluster's maintenance mode (runtime upstream.maintenance_mode.<name>). */
  readonly rqMaintenanceMode: Counter;
  readonly lbHealthyPanic: Counter;
  readonly cxNoneHealthy: Counter;
  /** Upstream connections ended by the cluster's common_http_protocol_options: idle_timeout, max_connection_duration, max_requests_per_connection. */
  readonly cxIdleTimeout: Counter;
  readonly cxMaxDurationReached: Counter;
  readonly cxMaxRequests: Counter;
  /** TCP proxy connections given up after max_connect_attempts failed connects. */
  readonly cxConnectAttemptsExceeded: Counter;
  /** Requests failed while waiting for a connection that could not be made (Envoy purges its pending requests). */
  readonly rqPendingFailureEject: Counter;
  /** Tries cut by the cluster's max_stream_duration. */
  readonly rqMaxDurationReached: Counter;
  /** How many requests each upstream connection carried, recorded when it closes. */
  readonly rqPerCx: Histogram;
  /** upstream_flow_control_*: an upstream connection's buffer past its limit (backed up, drained), and its reading paused for a downstream that is. */
  readonly flow: { backedUp: Counter; drained: Counter; pausedReading: Counter; resumedReading: Counter };
  private readonly byCode = new Map<number, Counter>();

  constructor(private readonly prefix: string) {
    const p = prefix;
    this.cxTotal = stats.counter(`${p}upstream_cx_total`);
    this.cxActive = stats.gauge(`${p}upstream_cx_active`);
    this.rqTotal = stats.counter(`${p}upstream_rq_total`);
    this.rqActive = stats.gauge(`${p}upstream_rq_active`);
    this.rqCompleted = stats.counter(`${p}upstream_rq_completed`);
    this.rqClass = [0, 1, 2, 3, 4, 5].map((d) => stats.counter(`${p}upstream_rq_${d === 0 ? 1 : d}xx`));
    this.rqTime = stats.histogram(`${p}upstream_rq_time`);
    this.rqTimeout = stats.counter(`${p}upstream_rq_timeout`);
    this.rqPerTryTimeout = stats.counter(`${p}upstream_rq_per_try_timeout`);
    this.rqRetry = stats.counter(`${p}upstream_rq_retry`);
    this.rqRetrySuccess = stats.counter(`${p}upstream_rq_retry_success`);
    this.flow = {
      backedUp: stats.counter(`${p}upstream_flow_control_backed_up_total`),
      drained: stats.counter(`${p}upstream_flow_control_drained_total`),
      pausedReading: stats.counter(`${p}upstream_flow_control_paused_reading_total`),
      resumedReading: stats.counter(`${p}upstream_flow_control_resumed_reading_total`),
    };
    this.cxConnectFail = stats.counter(`${p}upstream_cx_connect_fail`);
    this.cxConnectMs = stats.histogram(`${p}upstream_cx_connect_ms`);
    this.cxLengthMs = stats.histogram(`${p}upstream_cx_length_ms`);
    this.cxHttp1Total = stats.counter(`${p}upstream_cx_http1_total`);
    this.cxHttp2Total = stats.counter(`${p}upstream_cx_http2_total`);
    this.cxDestroy = stats.counter(`${p}upstream_cx_destroy`);
    this.cxRxBytes = stats.counter(`${p}upstream_cx_rx_bytes_total`);
    this.cxTxBytes = stats.counter(`${p}upstream_cx_tx_bytes_total`);
    this.cxConnectTimeout = stats.counter(`${p}upstream_cx_connect_timeout`);
    this.rqPendingTotal = stats.counter(`${p}upstream_rq_pending_total`);
    this.rqPendingActive = stats.gauge(`${p}upstream_rq_pending_active`);
    this.rqCancelled = stats.counter(`${p}upstream_rq_cancelled`);
    this.rqRxReset = stats.counter(`${p}upstream_rq_rx_reset`);
    this.rqRxResetNoError = stats.counter(`${p}upstream_rq_rx_reset_no_error`);
    this.rqTxReset = stats.counter(`${p}upstream_rq_tx_reset`);
    this.rqRetryLimitExceeded = stats.counter(`${p}upstream_rq_retry_limit_exceeded`);
    this.rqRetryBackoffExponential = stats.counter(`${p}upstream_rq_retry_backoff_exponential`);
    this.rqRetryBackoffRatelimited = stats.counter(`${p}upstream_rq_retry_backoff_ratelimited`);
    this.rqPerTryIdleTimeout = stats.counter(`${p}upstream_rq_per_try_idle_timeout`);
    this.retryOrShadowAbandoned = stats.counter(`${p}retry_or_shadow_abandoned`);
    this.rqMaintenanceMode = stats.counter(`${p}upstream_rq_maintenance_mode`);
    this.cxProtocolError = stats.counter(`${p}upstream_cx_protocol_error`);
    this.cxDestroyLocal = stats.counter(`${p}upstream_cx_destroy_local`);
    this.cxDestroyRemote = stats.counter(`${p}upstream_cx_destroy_remote`);
    this.cxDestroyWithActiveRq = stats.counter(`${p}upstream_cx_destroy_with_active_rq`);
    this.cxDestroyLocalWithActiveRq = stats.counter(`${p}upstream_cx_destroy_local_with_active_rq`);
    this.cxDestroyRemoteWithActiveRq = stats.counter(`${p}upstream_cx_destroy_remote_with_active_rq`);
    this.cxCloseNotify = stats.counter(`${p}upstream_cx_close_notify`);
    this.lbHealthyPanic = stats.counter(`${p}lb_healthy_panic`);
    this.cxNoneHealthy = stats.counter(`${p}upstream_cx_none_healthy`);
    this.cxIdleTimeout = stats.counter(`${p}upstream_cx_idle_timeout`);
    this.cxMaxDurationReached = stats.counter(`${p}upstream_cx_max_duration_reached`);
    this.cxMaxRequests = stats.counter(`${p}upstream_cx_max_requests`);
    this.rqMaxDurationReached = stats.counter(`${p}upstream_rq_max_duration_reached`);
    this.cxConnectAttemptsExceeded = stats.counter(`${p}upstream_cx_connect_attempts_exceeded`);
    this.rqPendingFailureEject = stats.counter(`${p}upstream_rq_pending_failure_eject`);
    this.rqPerCx = stats.histogram(`${p}upstream_rq_per_cx`);
    presentAtZero('cluster', p);
  }

  /**
   * An upstream response: upstream_rq_<code>, its class, completion and time; as Envoy's router
   * charges it, also under `internal.` (the request carried `x-envoy-internal: true`) or
   * `external.`, under `canary.` when the upstream said `x-envoy-upstream-canary: true`, and the
   * codes of a retried try under `retry.`.
   */
  response(status: number, startedMs: number, split?: { internal: boolean; canary: boolean; retry: boolean }): void {
    this.charge(status);
    const ms = Math.round(performance.now() - startedMs);
    this.rqTime.record(ms);
    if (!split) return;
    this.chargeScoped(split.internal ? 'internal.' : 'external.', status, ms);
    if (split.canary) this.chargeScoped('canary.', status, ms);
    if (split.retry) this.chargeScoped('retry.', status, undefined);
  }

  /** The split figures by scope, each made at its first use; codes by number, so a response builds no name. */
  private readonly scopes = new Map<string, ScopedCodes>();

  /** `<scope>upstream_rq_<code>`, its class and `_completed`; with a time, `upstream_rq_time` (retry. and local replies have none). */
  private chargeScoped(scope: string, status: number, ms: number | undefined): void {
    let s = this.scopes.get(scope);
    if (!s) this.scopes.set(scope, (s = new ScopedCodes(`${this.prefix}${scope}`)));
    s.charge(status, ms);
  }

  /**
   * A reply the router made itself for a request to this cluster — a connect failure, a reset, a
   * timeout, an overflow, no healthy host, maintenance mode — charged as Envoy's router charges it
   * (chargeUpstreamCode): the code, its class and completion, also under `internal.` or
   * `external.`, and no time (nothing answered). Without it a cluster that fails every request
   * reads 0 % errors on every dashboard.
   */
  localReply(status: number, internal: boolean): void {
    this.charge(status);
    this.chargeScoped(internal ? 'internal.' : 'external.', status, undefined);
  }

  /** A response counted as the cluster's without its timing (upstream_rq_<code>, its class, completion): ext_authz's denials. */
  charge(status: number): void {
    let c = this.byCode.get(status);
    if (!c) this.byCode.set(status, (c = stats.counter(`${this.prefix}upstream_rq_${status}`)));
    c.inc();
    const d = Math.floor(status / 100);
    (this.rqClass[d >= 1 && d <= 5 ? d : 5] as Counter).inc();
    this.rqCompleted.inc();
  }
}

/**
 * `cluster.<name>.membership_*` and the host list /clusters prints, reported by the supervisor,
 * which owns membership and health for the whole tree ('local': a hot-restart parent's are not
 * added to its child's).
 */
export class MembershipStats {
  readonly total: Gauge;
  readonly healthy: Gauge;
  readonly degraded: Gauge;
  readonly excluded: Gauge;
  /** membership_change: hosts added or removed; max_host_weight. */
  readonly change: Counter;
  readonly maxHostWeight: Gauge;
  /** The hosts, as JSON, for /clusters: a hidden text readout `_hosts.<cluster>`. */
  readonly hosts: TextReadout;
  /**
   * Membership updates (a DNS resolution, an EDS assignment), as Envoy's cluster counts them:
   * attempts, successes, failures, empty ones, ones that changed no host, how long each took;
   * and whether the cluster is warming (1) or not.
   */
  readonly update: { attempt: Counter; success: Counter; failure: Counter; empty: Counter; noRebuild: Counter; durationMs: Histogram; warming: Gauge };

  constructor(name: string) {
    const p = `cluster.${name}.`;
    this.change = stats.counter(`${p}membership_change`);
    this.maxHostWeight = stats.gauge(`${p}max_host_weight`, 'local');
    this.total = stats.gauge(`${p}membership_total`, 'local');
    this.healthy = stats.gauge(`${p}membership_healthy`, 'local');
    this.degraded = stats.gauge(`${p}membership_degraded`, 'local');
    this.excluded = stats.gauge(`${p}membership_excluded`, 'local');
    this.hosts = stats.textReadout(`${HOSTS_READOUT_PREFIX}${name}`);
    this.update = {
      attempt: stats.counter(`${p}update_attempt`),
      success: stats.counter(`${p}update_success`),
      failure: stats.counter(`${p}update_failure`),
      empty: stats.counter(`${p}update_empty`),
      noRebuild: stats.counter(`${p}update_no_rebuild`),
      durationMs: stats.histogram(`${p}update_duration`),
      warming: stats.gauge(`${p}warming_state`, 'local'),
    };
    // An EDS cluster's subscription sets these too (supervisor/xds/subscription-stats.ts); every cluster has them, as in Envoy.
    stats.counter(`${p}config_reload`);
    stats.gauge(`${p}version`, 'local');
  }
}

export function clusterStats(name: string, altStatName?: string): ClusterStats {
  return new ClusterStats(`cluster.${altStatName || name}.`);
}

let memoryGauges: [allocated: Gauge, heapSize: Gauge, physicalSize: Gauge] | undefined;

/** Every process reports its own memory; the admin process adds them up (Envoy's are tcmalloc's figures). */
export function reportProcessMemory(): void {
  // Resolved once: a lookup by name on every flush would count as a stat-name lookup each time.
  memoryGauges ??= [stats.gauge('server.memory_allocated'), stats.gauge('server.memory_heap_size'), stats.gauge('server.memory_physical_size')];
  const m = process.memoryUsage();
  memoryGauges[0].set(m.heapUsed + m.external);
  memoryGauges[1].set(m.heapTotal);
  memoryGauges[2].set(m.rss);
}

/**
 * Per-host figures (what /clusters prints, seed §2.1). In Envoy they live outside the stats
 * store; here they are hidden stats named `_host.<cluster>.<address>.<stat>`, merged like any
 * other and left out of /stats unless `hidden=include` or `hidden=only`.
 */
export const HOST_STAT_PREFIX = '_host.';
/** `_hosts.<cluster>`: a cluster's host list (see ClusterStats.membership). */
export const HOSTS_READOUT_PREFIX = '_hosts.';

/**
 * Hidden stats (names starting with `_`: per-host figures, host lists, contention figures) stay
 * out of /stats unless asked for, and out of Prometheus.
 */
export function isHiddenStat(name: string): boolean {
  return name.charCodeAt(0) === 95; // '_'
}

export class HostStats {
  readonly cxTotal: Counter;
  readonly cxActive: Gauge;
  readonly cxConnectFail: Counter;
  readonly rqTotal: Counter;
  readonly rqTimeout: Counter;
  readonly rqSuccess: Counter;
  readonly rqError: Counter;
  readonly rqActive: Gauge;

  constructor(cluster: string, address: string) {
    const p = `${HOST_STAT_PREFIX}${cluster}.${address}.`;
    this.cxTotal = stats.counter(`${p}cx_total`);
    this.cxActive = stats.gauge(`${p}cx_active`);
    this.cxConnectFail = stats.counter(`${p}cx_connect_fail`);
    this.rqTotal = stats.counter(`${p}rq_total`);
    this.rqTimeout = stats.counter(`${p}rq_timeout`);
    this.rqSuccess = stats.counter(`${p}rq_success`);
    this.rqError = stats.counter(`${p}rq_error`);
    this.rqActive = stats.gauge(`${p}rq_active`);
  }
}

/** `_host.<cluster>.<address>.<stat>` → its parts (addresses are `a.b.c.d:port` or `[v6]:port`). */
export function parseHostStatName(name: string): { cluster: string; address: string; stat: string } | undefined {
  if (!name.startsWith(HOST_STAT_PREFIX)) return undefined;
  const m = /^(.*)\.((?:\d{1,3}\.){3}\d{1,3}:\d+|\[[^\]]+\]:\d+)\.([a-z_]+)$/.exec(name.slice(HOST_STAT_PREFIX.length));
  return m ? { cluster: m[1]!, address: m[2]!, stat: m[3]! } : undefined;
}
