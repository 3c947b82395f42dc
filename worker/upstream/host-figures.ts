import { HostStats, type ClusterStats } from '../../shared/stats/scopes.js';
import { http1CodecStats } from '../../shared/stats/codec-stats.js';
import type { ConnectionClosed, ConnectionLimit, ConnectionObserver, ConnectionOpened } from './h2.js';

/** What a host's connection figures need of its cluster. */
export interface FiguresCluster {
  readonly name: string;
  readonly stats: ClusterStats;
  readonly openSockets: Set<NonNullable<ConnectionOpened['socket']>>;
  noteTraffic(): void;
}

/**
 * A host's connections as Envoy counts them, in the host's figures and its cluster's: made,
 * connected, closed, failed, retired by a limit (every pool and session of the host reports here).
 */
export class HostConnectionFigures implements ConnectionObserver {
  private readonly hostStats: HostStats;

  constructor(
    private readonly figuresCluster: FiguresCluster,
    address: string,
  ) {
    this.hostStats = new HostStats(figuresCluster.name, address);
  }

  get stats(): HostStats {
    return this.hostStats;
  }

  /**
   * An upstream connection is being made: it counts in upstream_cx_total and _active (and the
   * host's) from now, connected or not, as Envoy's pool counts a connection when it creates it
   * (conn_pool_base.cc), so a host that refuses every connection shows its attempts.
   */
  connectionStarted(protocol?: 'http1' | 'http2'): void {
    this.figuresCluster.noteTraffic();
    this.stats.cxTotal.inc();
    this.stats.cxActive.inc();
    const cs = this.figuresCluster.stats;
    cs.cxTotal.inc();
    cs.cxActive.inc();
    if (protocol) (protocol === 'http2' ? cs.cxHttp2Total : cs.cxHttp1Total).inc();
  }

  /** The connection connected (and handshook): its connect time, its codec's figures, its socket. */
  connectionOpened(info?: ConnectionOpened): void {
    if (!info) return;
    const cs = this.figuresCluster.stats;
    cs.cxConnectMs.record(Math.round(info.connectMs));
    if (info.protocol === 'http1') http1CodecStats(`cluster.${this.figuresCluster.name}.`);
    if (info.socket) this.figuresCluster.openSockets.add(info.socket);
  }

  connectionClosed(info?: ConnectionClosed): void {
    this.stats.cxActive.dec();
    const cs = this.figuresCluster.stats;
    cs.cxActive.dec();
    cs.cxDestroy.inc();
    if (info) {
      (info.remote ? cs.cxDestroyRemote : cs.cxDestroyLocal).inc();
      if (info.socket) this.figuresCluster.openSockets.delete(info.socket);
      cs.cxLengthMs.record(Math.round(info.lengthMs));
      cs.cxRxBytes.inc(info.rxBytes);
      cs.cxTxBytes.inc(info.txBytes);
      if (info.requests !== undefined) cs.rqPerCx.record(info.requests);
    }
  }

  /** A connection retired by the cluster's common_http_protocol_options. */
  limitReached(limit: ConnectionLimit): void {
    const cs = this.figuresCluster.stats;
    (limit === 'idle_timeout' ? cs.cxIdleTimeout : limit === 'max_requests' ? cs.cxMaxRequests : cs.cxMaxDurationReached).inc();
  }

  /** A connection that never connected (refused, unreachable, its handshake failed, connect_timeout): counted once, whatever waited on it; it is destroyed, locally if it timed out. */
  connectionFailed(timedOut = false): void {
    this.stats.cxConnectFail.inc();
    this.stats.cxActive.dec();
    const cs = this.figuresCluster.stats;
    cs.cxConnectFail.inc();
    if (timedOut) cs.cxConnectTimeout.inc();
    cs.cxActive.dec();
    cs.cxDestroy.inc();
    (timedOut ? cs.cxDestroyLocal : cs.cxDestroyRemote).inc();
  }

  /** auto_config: a connection counted without its protocol now speaks one (ConnectionObserver.negotiated). */
  negotiated(protocol: 'http1' | 'http2'): void {
    const cs = this.figuresCluster.stats;
    (protocol === 'http2' ? cs.cxHttp2Total : cs.cxHttp1Total).inc();
  }
}
