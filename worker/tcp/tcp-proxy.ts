import type { Socket } from 'node:net';
import { list, obj } from '../../shared/config/access.js';
import { bufferedBytesGauges } from '../../shared/stats/buffered-bytes.js';
import type { Duplex } from 'node:stream';
import { connectionEntry, ResponseFlag, type AccessLogEntry } from '../../shared/access-log/entry.js';
import { AccessLogs } from '../../shared/access-log/loggers.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import { durationMs } from '../../shared/config/wkt.js';
import { getLogger } from '../../shared/log/logger.js';
import { stats } from '../../shared/stats/process.js';
import type { Counter, Gauge } from '../../shared/stats/store.js';
import type { Cluster, Host } from '../upstream/cluster.js';
import type { ClusterManager } from '../upstream/cluster-manager.js';
import { TunnelingConfig } from './http-tunnel.js';
import { countRequestOverflow } from '../upstream/circuit-breaker.js';
import { DEFAULT_BUFFER_LIMIT } from '../../shared/config/buffer-limit.js';
import { pump } from './flow-control.js';
import { connectToHost } from '../upstream/host-connection.js';
import { transportFailureReason } from '../../shared/upstream/transport-failure.js';
import { CONNECT_TIMEOUT } from '../upstream/upstream-handler.js';
import { presentAtZero } from '../../shared/stats/always-present.js';
import { connectionTag } from '../../shared/log/log-tags.js';
import { Level } from '../../shared/log/levels.js';
import { logConnected, logConnecting } from '../upstream/pool-log.js';

/**
 * The TCP proxy network filter (envoy.filters.network.tcp_proxy): each downstream connection is
 * joined to a connection to one host of the cluster (or of a weighted cluster), bytes flow both
 * ways with backpressure at each side's per_connection_buffer_limit_bytes, and either side closing closes the other. `idle_timeout` (default 1 h)
 * closes a connection with no traffic either way; a connect failure closes the downstream.
 */

const log = getLogger('filter', import.meta.url);
type Obj = JsonObject;

export class TcpProxy {
  private readonly idleMs: number;
  private readonly sockets = new Set<Socket>();
  /** The downstream connections alone (`sockets` has their upstreams too). */
  private readonly downstreams = new Set<Socket>();
  private readonly cxTotal: Counter;
  private readonly noRoute: Counter;
  private readonly idleTimeout: Counter;
  private readonly rxBytes: Counter;
  private readonly txBytes: Counter;
  private readonly pausedReading: Counter;
  private readonly resumedReading: Counter;
  /** max_connect_attempts: connection attempts (to hosts the load balancer picks) before the client's connection is given up. */
  private readonly maxConnectAttempts: number;
  /** Connections whose client left with bytes still to write upstream (flushed, then closed). */
  private readonly upstreamFlushTotal: Counter;
  private readonly upstreamFlushActive: Gauge;
  private readonly accessLogs: AccessLogs | undefined;
  /** tunneling_config: connections carried in an HTTP request (CONNECT or POST) to the host. */
  private readonly tunneling: TunnelingConfig | undefined;
  /** downstream_cx_rx/tx_bytes_buffered: what the downstream sockets hold, summed at each collection. */
  private readonly stopBufferedBytes: () => void;

  /** `listenerBufferLimit`: the listener's per_connection_buffer_limit_bytes, for what the downstream may hold unwritten. */
  constructor(
    private readonly config: Obj,
    private readonly clusters: ClusterManager,
    private readonly listenerBufferLimit = DEFAULT_BUFFER_LIMIT,
  ) {
    this.idleMs = typeof config.idle_timeout === 'string' ? durationMs(config.idle_timeout) : 3_600_000;
    const p = `tcp.${String(config.stat_prefix)}.`;
    presentAtZero('tcpProxy', p);
    this.cxTotal = stats.counter(`${p}downstream_cx_total`);
    this.noRoute = stats.counter(`${p}downstream_cx_no_route`);
    this.idleTimeout = stats.counter(`${p}idle_timeout`);
    this.rxBytes = stats.counter(`${p}downstream_cx_rx_bytes_total`);
    this.txBytes = stats.counter(`${p}downstream_cx_tx_bytes_total`);
    this.pausedReading = stats.counter(`${p}downstream_flow_control_paused_reading_total`);
    this.resumedReading = stats.counter(`${p}downstream_flow_control_resumed_reading_total`);
    this.maxConnectAttempts = typeof config.max_connect_attempts === 'number' ? Math.max(1, config.max_connect_attempts) : 1;
    this.upstreamFlushTotal = stats.counter(`${p}upstream_flush_total`);
    this.upstreamFlushActive = stats.gauge(`${p}upstream_flush_active`);
    this.accessLogs = AccessLogs.from(config.access_log);
    this.tunneling = TunnelingConfig.from(config.tunneling_config);
    this.stopBufferedBytes = bufferedBytesGauges(`${p}downstream_cx_rx_bytes_buffered`, `${p}downstream_cx_tx_bytes_buffered`, this.downstreams);
  }

  private pickCluster(): Cluster | undefined {
    if (typeof this.config.cluster === 'string') return this.clusters.get(this.config.cluster);
    const weighted = list(obj(this.config.weighted_clusters).clusters);
    const total = weighted.reduce((s, c) => s + Number(c.weight ?? 0), 0);
    let r = Math.random() * total;
    for (const c of weighted) {
      r -= Number(c.weight ?? 0);
      if (r < 0) return this.clusters.get(String(c.name));
    }
    return undefined;
  }

  /** A connection the listener chose this filter chain for (plaintext, or TLS already handshaken). */
  accept(downstream: Socket): void {
    this.cxTotal.inc();
    if (log.enabled(Level.debug)) log.debug(`${connectionTag(downstream)}new tcp proxy session`);
    const cluster = this.pickCluster();
    const host = cluster?.pickHost();
    const entry = this.accessLogs ? connectionEntry(downstream, cluster?.name, host?.address) : undefined;
    downstream.once('close', () => {
      this.rxBytes.inc(downstream.bytesRead);
      this.txBytes.inc(downstream.bytesWritten);
      if (entry) {
        entry.bytesReceived = downstream.bytesRead;
        entry.bytesSent = downstream.bytesWritten;
        entry.durationMs = Date.now() - entry.startTime;
        this.accessLogs!.log(entry);
      }
    });
    if (!host) {
      this.noRoute.inc();
      cluster?.stats.cxNoneHealthy.inc();
      if (entry) entry.responseFlags |= cluster ? ResponseFlag.noHealthyUpstream : ResponseFlag.noClusterFound;
      downstream.destroy();
      return;
    }
    if (this.tunneling) {
      this.tunnel(downstream, host, entry);
      return;
    }
    // max_connections (DEFAULT priority): a host this worker has no connection to gets one anyway,
    // as Envoy's pools do; otherwise, at the limit, the connection is refused (UO) rather than held.
    const breaker = host.cluster.breakers[0];
    if (!breaker.hasRoom('cx') && host.tcpConnections > 0) {
      breaker.overflow.cx.inc();
      if (entry) entry.responseFlags |= ResponseFlag.upstreamOverflow;
      downstream.destroy();
      return;
    }
    downstream.pause();
    this.sockets.add(downstream);
    this.downstreams.add(downstream);
    /** The current attempt's upstream connection (another host's after a failed attempt). */
    const link: { upstream: Socket | undefined } = { upstream: undefined };
    downstream.on('timeout', () => {
      this.idleTimeout.inc();
      link.upstream?.destroy();
      downstream.destroy();
    });
    // A client that resets or fails: its 'close' follows, and the upstream gets what the proxy holds before it closes (as Envoy's FlushWrite).
    downstream.on('error', () => {});
    downstream.once('close', () => {
      const upstream = link.upstream;
      if (!upstream) return;
      // The client is gone with bytes still on their way upstream: they are flushed before the upstream closes, as Envoy's upstream_flush.
      if (!upstream.destroyed && upstream.writableLength > 0) {
        this.upstreamFlushTotal.inc();
        this.upstreamFlushActive.inc();
        upstream.once('close', () => this.upstreamFlushActive.dec());
      }
      upstream.end();
    });
    this.attempt(downstream, host, entry, link, 1);
  }

  /**
   * One attempt at the upstream connection. A failed one is followed by another, to a host the
   * load balancer picks again, until max_connect_attempts (default 1) have failed; then
   * `upstream_cx_connect_attempts_exceeded` and the client's connection closes (UF), as Envoy's.
   */
  private attempt(downstream: Socket, host: Host, entry: AccessLogEntry | undefined, link: { upstream: Socket | undefined }, attempt: number): void {
    const breaker = host.cluster.breakers[0];
    if (log.enabled(Level.debug)) log.debug(`${connectionTag(downstream)}Creating connection to cluster ${host.cluster.name}`);
    breaker.acquire('cx');
    host.tcpConnections++;
    host.activeRequests++;
    if (entry) {
      entry.upstreamHost = host.address;
      entry.attemptCount = attempt;
    }
    let connected = false;
    let retried = false;
    const upstream = connectToHost(host, {
      connected: () => {
        connected = true;
        logConnected(upstream, false, false);
        this.join(downstream, upstream, host);
      },
      failed: (err) => {
        log.debug(`tcp_proxy: connect to ${host.address} failed (attempt ${attempt} of ${this.maxConnectAttempts}): ${err.message}`);
        const next = attempt < this.maxConnectAttempts && !downstream.destroyed ? host.cluster.pickHost() : undefined;
        if (next) {
          retried = true;
          this.attempt(downstream, next, entry, link, attempt + 1);
          return;
        }
        host.cluster.stats.cxConnectAttemptsExceeded.inc();
        if (entry) {
          entry.responseFlags |= ResponseFlag.upstreamConnectionFailure;
          entry.upstreamTransportFailureReason = transportFailureReason(err, CONNECT_TIMEOUT);
        }
        downstream.destroy();
      },
      closed: () => {
        breaker.release('cx');
        host.tcpConnections--;
        host.activeRequests--;
        this.sockets.delete(upstream);
        if (retried) return; // the next attempt has the client's connection now
        downstream.end();
        this.sockets.delete(downstream);
        this.downstreams.delete(downstream);
      },
    }, true, downstream);
    logConnecting(upstream, host.address, false);
    link.upstream = upstream;
    this.sockets.add(upstream);
    // The idle timeout, once connected (before that, the socket's timeout is connect_timeout's).
    upstream.on('timeout', () => {
      if (!connected) return;
      upstream.destroy();
      downstream.destroy();
    });
    upstream.on('error', () => {
      if (connected) downstream.destroy();
    });
  }

  /** The connection's bytes both ways, once its upstream side is there: the idle timeout, and each side's buffer limit holding back the other side's reading (Envoy's flow control). */
  private join(downstream: Socket, upstream: Duplex, host: Host): void {
    if ('setTimeout' in upstream) (upstream as Socket).setTimeout(this.idleMs);
    downstream.setTimeout(this.idleMs);
    const flow = host.cluster.stats.flow;
    pump(downstream, upstream, host.cluster.bufferLimit, { backedUp: flow.backedUp, drained: flow.drained, pausedReading: this.pausedReading, resumedReading: this.resumedReading });
    pump(upstream, downstream, this.listenerBufferLimit, { pausedReading: flow.pausedReading, resumedReading: flow.resumedReading });
    downstream.resume();
  }

  /**
   * tunneling_config: the connection is carried in an HTTP request to the host (see
   * http-tunnel.ts), which counts as a request against the cluster's circuit breaker
   * (max_requests; refused with UO at the limit). Downstream bytes wait until the tunnel is
   * established, as Envoy's do.
   */
  private tunnel(downstream: Socket, host: Host, entry: AccessLogEntry | undefined): void {
    const breaker = host.cluster.breakers[0];
    if (!breaker.tryAcquire('rq')) {
      countRequestOverflow(breaker.overflow);
      if (entry) entry.responseFlags |= ResponseFlag.upstreamOverflow;
      downstream.destroy();
      return;
    }
    downstream.pause();
    this.sockets.add(downstream);
    this.downstreams.add(downstream);
    host.activeRequests++;
    // The tunnel's request, in the cluster's and host's request figures (as Envoy's connection pool counts it).
    const cs = host.cluster.stats;
    cs.rqTotal.inc();
    cs.rqActive.inc();
    host.stats.rqTotal.inc();
    host.stats.rqActive.inc();
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      breaker.release('rq');
      host.activeRequests--;
      cs.rqActive.dec();
      host.stats.rqActive.dec();
      this.sockets.delete(downstream);
      this.downstreams.delete(downstream);
    };
    let upstream: Duplex | undefined;
    const pending = this.tunneling!.open(host, entry ?? connectionEntry(downstream, host.cluster.name, host.address), {
      established: (up) => {
        upstream = up;
        up.on('error', () => downstream.destroy());
        up.once('close', () => {
          downstream.end();
          release();
        });
        this.join(downstream, up, host);
      },
      failed: (why, connectFailure) => {
        log.debug(`tcp_proxy: tunnel to ${host.address} failed: ${why}`);
        if (entry) entry.responseFlags |= connectFailure ? ResponseFlag.upstreamConnectionFailure : ResponseFlag.upstreamRemoteReset;
        downstream.destroy();
        release();
      },
    }, downstream);
    downstream.on('timeout', () => {
      this.idleTimeout.inc();
      upstream?.destroy();
      downstream.destroy();
    });
    downstream.on('error', () => (upstream ?? pending).destroy());
    downstream.once('close', () => {
      if (upstream) upstream.end();
      else pending.destroy();
    });
  }

  /** Nothing to wind down: a TCP connection has no request boundary, so the listener waits for each to close. */
  close(): Promise<void> {
    this.stopBufferedBytes();
    return Promise.resolve();
  }
}
