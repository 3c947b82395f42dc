import type { Socket } from 'node:net';
import { stats } from './process.js';
import type { Counter, Gauge, Histogram } from './store.js';
import { presentAtZero } from './always-present.js';

/** A downstream connection's requests in flight, and its user-agent figures once its first request named one. */
export interface ConnectionRequests {
  active: number;
  /** Its first request came: the user agent is decided. */
  seen: boolean;
  userAgent: { cxTotal: Counter; rqTotal: Counter; cxDestroyRemoteActiveRq: Counter } | undefined;
}

const CONNECTION_REQUESTS = Symbol('connection requests');

/** `http.<stat_prefix>.*`: the connection manager's and the router's figures. */
export class HttpStats {
  readonly cxTotal: Counter;
  readonly cxActive: Gauge;
  readonly cxHttp1Total: Counter;
  readonly cxHttp2Total: Counter;
  readonly rqTotal: Counter;
  readonly rqActive: Gauge;
  readonly rqHttp1Total: Counter;
  readonly rqHttp2Total: Counter;
  readonly rqCompleted: Counter;
  /** downstream_rq_1xx … downstream_rq_5xx, by the status's first digit. */
  readonly rqClass: Counter[];
  readonly rqTime: Histogram;
  readonly noRoute: Counter;
  readonly noCluster: Counter;
  readonly rqDirectResponse: Counter;
  /** The router's own: requests it routed to a cluster, and upstream resets after the response began. */
  readonly rqRouted: Counter;
  readonly rqResetAfterResponseStarted: Counter;
  /** A client's request body held back because its upstream connection is backed up, and let go again. */
  readonly flowPausedReading: Counter;
  readonly flowResumedReading: Counter;
  readonly rqRedirect: Counter;
  /** downstream_rq_ws_on_non_ws_route: an upgrade (WebSocket…) refused on a route that does not allow it. */
  readonly rqWsOnNonWsRoute: Counter;
  /** Upgrades (WebSocket and others) allowed, and those still open. */
  readonly cxUpgradesTotal: Counter;
  readonly cxUpgradesActive: Gauge;
  readonly headersTooLarge: Counter;
  readonly cxDrainClose: Counter;
  readonly cxProtocolError: Counter;
  readonly rqRxReset: Counter;
  readonly tooManyPrematureResets: Counter;
  /** common_http_protocol_options: max_connection_duration, max_requests_per_connection, max_stream_duration reached. */
  readonly cxMaxDurationReached: Counter;
  /** HTTP/1 connections past max_connection_duration that still carry a request: they close once it is answered. */
  readonly cxHttp1SoftDrain: Gauge;
  readonly cxMaxRequestsReached: Counter;
  readonly rqMaxDurationReached: Counter;
  /** Connections' ends, lengths and bytes; TLS and per-codec connections open now. */
  readonly cxDestroy: Counter;
  readonly cxDestroyLocal: Counter;
  readonly cxDestroyRemote: Counter;
  readonly cxLengthMs: Histogram;
  readonly cxRxBytes: Counter;
  readonly cxTxBytes: Counter;
  readonly cxSslTotal: Counter;
  readonly cxSslActive: Gauge;
  readonly cxHttp1Active: Gauge;
  readonly cxHttp2Active: Gauge;
  /** Connections that ended with requests in flight: any, by the proxy, by the peer. */
  readonly cxDestroyActiveRq: Counter;
  readonly cxDestroyLocalActiveRq: Counter;
  readonly cxDestroyRemoteActiveRq: Counter;
  /**
   * Streams this side reset (the router cutting a response short when its upstream reset),
   * responses finished before their request had, and connections closed for idle_timeout.
   */
  readonly rqTxReset: Counter;
  /** Requests whose path is not relative (answered 404). */
  readonly rqNonRelativePath: Counter;
  readonly rqFailedPathNormalization: Counter;
  readonly rqOverloadClose: Counter;
  readonly cxOverloadDisableKeepalive: Counter;
  readonly rqRedirectedWithNormalizedPath: Counter;
  readonly rqRejectedViaIpDetection: Counter;
  /** Requests refused 413 for a body over a buffer limit (the buffer filter counts them here). */
  readonly rqTooLarge: Counter;
  readonly rqResponseBeforeRqComplete: Counter;
  readonly cxIdleTimeout: Counter;
  /** stream_idle_timeout and request_timeout answered (408). */
  readonly rqIdleTimeout: Counter;
  readonly rqTimeout: Counter;
  /** request_headers_timeout passed before the request's head was whole. */
  readonly rqHeaderTimeout: Counter;
  /** listener.<address>.http.<prefix>.downstream_rq_<class> and _completed: the connection manager's figures on its listener. */
  private readonly listenerRqClass: Counter[] | undefined;
  private readonly listenerRqCompleted: Counter | undefined;

  private readonly prefix: string;
  private readonly userAgents = new Map<string, { cxTotal: Counter; rqTotal: Counter; cxDestroyRemoteActiveRq: Counter }>();

  /** `listenerPrefix`: the listener's stat prefix (`listener.127.0.0.1_10000.`), for Envoy's per-listener figures. */
  constructor(statPrefix: string, listenerPrefix?: string) {
    const p = `http.${statPrefix}.`;
    if (listenerPrefix !== undefined) {
      const lp = `${listenerPrefix}http.${statPrefix}.`;
      this.listenerRqClass = [1, 1, 2, 3, 4, 5].map((d) => stats.counter(`${lp}downstream_rq_${d}xx`));
      this.listenerRqCompleted = stats.counter(`${lp}downstream_rq_completed`);
    }
    this.cxTotal = stats.counter(`${p}downstream_cx_total`);
    this.cxActive = stats.gauge(`${p}downstream_cx_active`);
    this.cxHttp1Total = stats.counter(`${p}downstream_cx_http1_total`);
    this.cxHttp2Total = stats.counter(`${p}downstream_cx_http2_total`);
    this.rqTotal = stats.counter(`${p}downstream_rq_total`);
    this.rqActive = stats.gauge(`${p}downstream_rq_active`);
    this.rqHttp1Total = stats.counter(`${p}downstream_rq_http1_total`);
    this.rqHttp2Total = stats.counter(`${p}downstream_rq_http2_total`);
    this.rqCompleted = stats.counter(`${p}downstream_rq_completed`);
    this.rqClass = [0, 1, 2, 3, 4, 5].map((d) => stats.counter(`${p}downstream_rq_${d === 0 ? 1 : d}xx`));
    this.rqTime = stats.histogram(`${p}downstream_rq_time`);
    this.noRoute = stats.counter(`${p}no_route`);
    this.noCluster = stats.counter(`${p}no_cluster`);
    this.rqDirectResponse = stats.counter(`${p}rq_direct_response`);
    this.rqRouted = stats.counter(`${p}rq_total`);
    this.rqResetAfterResponseStarted = stats.counter(`${p}rq_reset_after_downstream_response_started`);
    this.flowPausedReading = stats.counter(`${p}downstream_flow_control_paused_reading_total`);
    this.flowResumedReading = stats.counter(`${p}downstream_flow_control_resumed_reading_total`);
    this.rqRedirect = stats.counter(`${p}rq_redirect`);
    this.rqWsOnNonWsRoute = stats.counter(`${p}downstream_rq_ws_on_non_ws_route`);
    this.cxUpgradesTotal = stats.counter(`${p}downstream_cx_upgrades_total`);
    this.cxUpgradesActive = stats.gauge(`${p}downstream_cx_upgrades_active`);
    this.headersTooLarge = stats.counter(`${p}downstream_rq_header_size_exceeded`);
    this.cxDrainClose = stats.counter(`${p}downstream_cx_drain_close`);
    this.cxProtocolError = stats.counter(`${p}downstream_cx_protocol_error`);
    this.rqRxReset = stats.counter(`${p}downstream_rq_rx_reset`);
    this.tooManyPrematureResets = stats.counter(`${p}downstream_rq_too_many_premature_resets`);
    this.cxMaxDurationReached = stats.counter(`${p}downstream_cx_max_duration_reached`);
    this.cxHttp1SoftDrain = stats.gauge(`${p}downstream_cx_http1_soft_drain`);
    this.cxMaxRequestsReached = stats.counter(`${p}downstream_cx_max_requests_reached`);
    this.rqMaxDurationReached = stats.counter(`${p}downstream_rq_max_duration_reached`);
    this.cxDestroy = stats.counter(`${p}downstream_cx_destroy`);
    this.cxDestroyLocal = stats.counter(`${p}downstream_cx_destroy_local`);
    this.cxDestroyRemote = stats.counter(`${p}downstream_cx_destroy_remote`);
    this.cxLengthMs = stats.histogram(`${p}downstream_cx_length_ms`);
    this.cxRxBytes = stats.counter(`${p}downstream_cx_rx_bytes_total`);
    this.cxTxBytes = stats.counter(`${p}downstream_cx_tx_bytes_total`);
    this.cxSslTotal = stats.counter(`${p}downstream_cx_ssl_total`);
    this.cxSslActive = stats.gauge(`${p}downstream_cx_ssl_active`);
    this.cxHttp1Active = stats.gauge(`${p}downstream_cx_http1_active`);
    this.cxHttp2Active = stats.gauge(`${p}downstream_cx_http2_active`);
    this.cxDestroyActiveRq = stats.counter(`${p}downstream_cx_destroy_active_rq`);
    this.cxDestroyLocalActiveRq = stats.counter(`${p}downstream_cx_destroy_local_active_rq`);
    this.cxDestroyRemoteActiveRq = stats.counter(`${p}downstream_cx_destroy_remote_active_rq`);
    this.prefix = p;
    this.rqTxReset = stats.counter(`${p}downstream_rq_tx_reset`);
    this.rqTooLarge = stats.counter(`${p}downstream_rq_too_large`);
    this.rqNonRelativePath = stats.counter(`${p}downstream_rq_non_relative_path`);
    this.rqFailedPathNormalization = stats.counter(`${p}downstream_rq_failed_path_normalization`);
    this.rqOverloadClose = stats.counter(`${p}downstream_rq_overload_close`);
    this.cxOverloadDisableKeepalive = stats.counter(`${p}downstream_cx_overload_disable_keepalive`);
    this.rqRedirectedWithNormalizedPath = stats.counter(`${p}downstream_rq_redirected_with_normalized_path`);
    this.rqRejectedViaIpDetection = stats.counter(`${p}downstream_rq_rejected_via_ip_detection`);
    this.rqResponseBeforeRqComplete = stats.counter(`${p}downstream_rq_response_before_rq_complete`);
    this.cxIdleTimeout = stats.counter(`${p}downstream_cx_idle_timeout`);
    this.rqIdleTimeout = stats.counter(`${p}downstream_rq_idle_timeout`);
    this.rqTimeout = stats.counter(`${p}downstream_rq_timeout`);
    this.rqHeaderTimeout = stats.counter(`${p}downstream_rq_header_timeout`);
    presentAtZero('connectionManager', p);
  }

  /**
   * A downstream connection: counted open (and as TLS), then at its end Envoy's figures: who ended
   * it (the peer's FIN first: remote), how long it lived and what it carried.
   */
  connection(socket: Socket): void {
    const started = performance.now();
    const tls = (socket as { encrypted?: boolean }).encrypted === true;
    this.cxTotal.inc();
    this.cxActive.inc();
    if (tls) {
      this.cxSslTotal.inc();
      this.cxSslActive.inc();
    }
    let remote = false;
    const requests: ConnectionRequests = { active: 0, seen: false, userAgent: undefined };
    (socket as unknown as Record<symbol, ConnectionRequests>)[CONNECTION_REQUESTS] = requests;
    socket.once('end', () => (remote = true));
    socket.once('close', () => {
      this.cxActive.dec();
      if (tls) this.cxSslActive.dec();
      this.cxDestroy.inc();
      (remote ? this.cxDestroyRemote : this.cxDestroyLocal).inc();
      if (requests.active > 0) {
        this.cxDestroyActiveRq.inc();
        (remote ? this.cxDestroyRemoteActiveRq : this.cxDestroyLocalActiveRq).inc();
        if (remote) requests.userAgent?.cxDestroyRemoteActiveRq.inc();
      }
      this.cxLengthMs.record(Math.round(performance.now() - started));
      this.cxRxBytes.inc(socket.bytesRead);
      this.cxTxBytes.inc(socket.bytesWritten);
    });
  }

  /**
   * A request on a connection counted by connection() (`socket`: the request's, which for HTTP/2
   * reads through to the session's): in flight until the caller takes one off `active` of what
   * this returns (no closure per request). As Envoy's user-agent figures, a
   * connection whose first request says iOS or Android counts under `user_agent.ios.` /
   * `user_agent.android.` (the connection once, each request).
   */
  request(socket: unknown, userAgent: string | string[] | undefined): ConnectionRequests | undefined {
    const requests = (socket as Record<symbol, ConnectionRequests | undefined> | undefined)?.[CONNECTION_REQUESTS];
    if (!requests) return undefined;
    if (!requests.seen && typeof userAgent === 'string') {
      const type = userAgent.includes('iOS') ? 'ios' : userAgent.includes('android') ? 'android' : undefined;
      if (type) {
        requests.userAgent = this.userAgentStats(type);
        requests.userAgent.cxTotal.inc();
      }
    }
    requests.seen = true;
    requests.userAgent?.rqTotal.inc();
    requests.active++;
    return requests;
  }

  /** An HTTP/1 connection's socket timed out (Node's keep-alive timer, set to idle_timeout): idle if no request is in flight. */
  socketTimedOut(socket: Socket): void {
    const requests = (socket as unknown as Record<symbol, ConnectionRequests | undefined>)[CONNECTION_REQUESTS];
    if (requests && requests.active === 0) this.cxIdleTimeout.inc();
  }

  private userAgentStats(type: string): { cxTotal: Counter; rqTotal: Counter; cxDestroyRemoteActiveRq: Counter } {
    let s = this.userAgents.get(type);
    if (!s) {
      const p = `${this.prefix}user_agent.${type}.`;
      s = { cxTotal: stats.counter(`${p}downstream_cx_total`), rqTotal: stats.counter(`${p}downstream_rq_total`), cxDestroyRemoteActiveRq: stats.counter(`${p}downstream_cx_destroy_remote_active_rq`) };
      this.userAgents.set(type, s);
    }
    return s;
  }

  /** A response went out: its class counter, completion, and the time since the request began. */
  completed(status: number, startedMs: number): void {
    const d = Math.floor(status / 100);
    const klass = d >= 1 && d <= 5 ? d : 5;
    (this.rqClass[klass] as Counter).inc();
    this.rqCompleted.inc();
    if (this.listenerRqClass) {
      (this.listenerRqClass[klass] as Counter).inc();
      this.listenerRqCompleted!.inc();
    }
    this.rqTime.record(Math.round(performance.now() - startedMs));
  }
}
