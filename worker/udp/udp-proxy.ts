import type { RemoteInfo, Socket as DgramSocket } from 'node:dgram';
import { dgramModule } from '../../shared/builtins.js';
import { isIPv6 } from 'node:net';
import { connectionEntry, type AccessLogEntry } from '../../shared/access-log/entry.js';
import { AccessLogs } from '../../shared/access-log/loggers.js';
import { list } from '../../shared/config/access.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import { udpProxyCluster } from '../../shared/extensions/filters/udp/udp-proxy/config.js';
import { durationMs } from '../../shared/config/wkt.js';
import { stats } from '../../shared/stats/process.js';
import type { Counter, Gauge } from '../../shared/stats/store.js';
import type { Cluster, Host } from '../upstream/cluster.js';
import type { ClusterManager } from '../upstream/cluster-manager.js';
import { xxHash64 } from '../../shared/hashing.js';

/**
 * The UDP proxy (envoy.filters.udp_listener.udp_proxy) of one UDP listener in one worker. A
 * session is a downstream address (ip:port): its first datagram picks a host of the cluster (the
 * cluster's load balancer, by the hash of `hash_policies` for RING_HASH and MAGLEV), and the
 * session gets a socket of its own (its own port) for that host; datagrams go there, and the host's
 * datagrams come back to the client from the listener's address. A session with no datagram
 * either way for `idle_timeout` (default 1 min) ends. With `use_per_packet_load_balancing` each
 * datagram picks its host (the session keeps a socket per host). Sessions count against the
 * cluster's max_connections. Envoy's figures: `udp.<stat_prefix>.downstream_sess_*`,
 * `idle_timeout`, and `cluster.<name>.udp.sess_*`.
 *
 * Each worker serves its own SO_REUSEPORT socket of the listener: the kernel sends all of a
 * client's datagrams to the same socket (by the hash of their addresses), so a session lives in
 * one worker. The supervisor holds every socket, so a replaced worker's successor, or the next
 * epoch, reads the same one: datagrams that arrive meanwhile wait in its queue.
 */

const DEFAULT_IDLE_MS = 60_000;

interface UdpProxyStats {
  sessTotal: Counter;
  sessActive: Gauge;
  noRoute: Counter;
  rxBytes: Counter;
  rxDatagrams: Counter;
  txBytes: Counter;
  txDatagrams: Counter;
  rxErrors: Counter;
  txErrors: Counter;
  idleTimeout: Counter;
}

function proxyStats(prefix: string): UdpProxyStats {
  const p = `udp.${prefix}.`;
  return {
    sessTotal: stats.counter(`${p}downstream_sess_total`),
    sessActive: stats.gauge(`${p}downstream_sess_active`),
    noRoute: stats.counter(`${p}downstream_sess_no_route`),
    rxBytes: stats.counter(`${p}downstream_sess_rx_bytes`),
    rxDatagrams: stats.counter(`${p}downstream_sess_rx_datagrams`),
    txBytes: stats.counter(`${p}downstream_sess_tx_bytes`),
    txDatagrams: stats.counter(`${p}downstream_sess_tx_datagrams`),
    rxErrors: stats.counter(`${p}downstream_sess_rx_errors`),
    txErrors: stats.counter(`${p}downstream_sess_tx_errors`),
    idleTimeout: stats.counter(`${p}idle_timeout`),
  };
}

/** cluster.<name>.udp.*: what the sessions' upstream sockets sent and received. */
interface ClusterUdpStats {
  rxDatagrams: Counter;
  txDatagrams: Counter;
  rxErrors: Counter;
  txErrors: Counter;
}

const clusterUdpStats = new Map<string, ClusterUdpStats>();
function clusterUdp(cluster: string): ClusterUdpStats {
  let s = clusterUdpStats.get(cluster);
  if (!s) {
    const p = `cluster.${cluster}.udp.`;
    s = { rxDatagrams: stats.counter(`${p}sess_rx_datagrams`), txDatagrams: stats.counter(`${p}sess_tx_datagrams`), rxErrors: stats.counter(`${p}sess_rx_errors`), txErrors: stats.counter(`${p}sess_tx_errors`) };
    clusterUdpStats.set(cluster, s);
  }
  return s;
}

/** One upstream socket of a session: connected to its host. */
interface Upstream {
  host: Host;
  socket: DgramSocket;
}

class Session {
  private readonly upstreams = new Map<string, Upstream>();
  private timer: NodeJS.Timeout;
  readonly entry: AccessLogEntry | undefined;
  closed = false;

  constructor(
    private readonly proxy: UdpProxy,
    readonly key: string,
    readonly peer: RemoteInfo,
    private readonly listener: DgramSocket,
    readonly cluster: Cluster,
    /** The host its first datagram picked (every datagram's, without per-packet load balancing). */
    readonly host: Host,
    logged: boolean,
  ) {
    this.timer = setTimeout(() => proxy.idle(this), proxy.idleMs);
    const local = listener.address();
    this.entry = logged ? connectionEntry({ remoteAddress: peer.address, remotePort: peer.port, localAddress: local.address, localPort: local.port }, cluster.name) : undefined;
  }

  private touch(): void {
    this.timer.refresh();
  }

  /** A datagram from the client: to the session's host (with per-packet load balancing, to the host picked for it). */
  send(data: Buffer, host: Host = this.host): void {
    this.touch();
    const up = this.upstreamFor(host);
    const s = this.proxy.stats;
    const cs = clusterUdp(this.cluster.name);
    s.rxDatagrams.inc();
    s.rxBytes.inc(data.length);
    if (this.entry) this.entry.bytesReceived += data.length;
    up.socket.send(data, host.port, host.ip, (err) => {
      if (err) cs.txErrors.inc();
      else cs.txDatagrams.inc();
    });
  }

  private upstreamFor(host: Host): Upstream {
    const known = this.upstreams.get(host.address);
    if (known) return known;
    const socket = dgramModule().createSocket({ type: isIPv6(host.ip) ? 'udp6' : 'udp4' });
    const up = { host, socket };
    this.upstreams.set(host.address, up);
    if (this.entry) this.entry.upstreamHost = host.address;
    host.activeRequests++;
    host.connectionStarted();
    const cs = clusterUdp(this.cluster.name);
    socket.on('message', (data: Buffer, from: RemoteInfo) => {
      // Only the host's datagrams are the session's (the socket is not connected: sends may start at once).
      if (from.port !== host.port || from.address !== host.ip) return;
      cs.rxDatagrams.inc();
      this.touch();
      const s = this.proxy.stats;
      try {
        this.listener.send(data, this.peer.port, this.peer.address, (err) => {
          if (err) s.txErrors.inc();
          else {
            s.txDatagrams.inc();
            s.txBytes.inc(data.length);
            if (this.entry) this.entry.bytesSent += data.length;
          }
        });
      } catch {
        s.txErrors.inc(); // the listener's socket closed under the session
      }
    });
    socket.on('error', () => cs.rxErrors.inc());
    return up;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    for (const { host, socket } of this.upstreams.values()) {
      host.activeRequests--;
      host.connectionClosed();
      socket.close();
    }
    this.upstreams.clear();
  }
}

export class UdpProxy {
  readonly stats: UdpProxyStats;
  readonly idleMs: number;
  private readonly sessions = new Map<string, Session>();
  private readonly clusterName: string | undefined;
  private readonly perPacket: boolean;
  /** hash_policies: the client's address, or a fixed key (for RING_HASH and MAGLEV clusters). */
  private readonly hash: ((peer: RemoteInfo) => bigint) | undefined;
  private readonly accessLogs: AccessLogs | undefined;

  constructor(
    config: JsonObject,
    private readonly clusters: ClusterManager,
  ) {
    this.stats = proxyStats(String(config.stat_prefix));
    this.idleMs = typeof config.idle_timeout === 'string' ? durationMs(config.idle_timeout) : DEFAULT_IDLE_MS;
    this.clusterName = udpProxyCluster(config);
    this.perPacket = config.use_per_packet_load_balancing === true;
    const policy = list(config.hash_policies)[0];
    if (policy?.source_ip === true) this.hash = (peer) => xxHash64(peer.address);
    else if (typeof policy?.key === 'string') {
      const fixed = xxHash64(policy.key);
      this.hash = () => fixed;
    }
    this.accessLogs = AccessLogs.from(config.access_log);
  }

  /** A datagram on the listener's socket `listener` from `peer`. */
  onDatagram(listener: DgramSocket, data: Buffer, peer: RemoteInfo): void {
    const key = `${peer.address}:${peer.port}`;
    let session = this.sessions.get(key);
    let host: Host | undefined;
    if (!session) {
      const cluster = this.clusterName !== undefined ? this.clusters.get(this.clusterName) : undefined;
      host = cluster?.pickHost(this.hash?.(peer));
      if (!cluster || !host) {
        this.stats.noRoute.inc();
        if (cluster) cluster.stats.cxNoneHealthy.inc();
        return;
      }
      // Sessions are the cluster's connections, against its max_connections.
      const breaker = cluster.breakers[0];
      if (!breaker.tryAcquire('cx')) {
        breaker.overflow.cx.inc();
        return;
      }
      session = new Session(this, key, peer, listener, cluster, host, this.accessLogs !== undefined);
      this.sessions.set(key, session);
      this.stats.sessTotal.inc();
      this.stats.sessActive.inc();
    } else if (this.perPacket) {
      host = session.cluster.pickHost(this.hash?.(peer));
      if (!host) {
        this.stats.noRoute.inc();
        return;
      }
    }
    session.send(data, host);
  }

  /** No datagram either way for idle_timeout. */
  idle(session: Session): void {
    this.stats.idleTimeout.inc();
    this.end(session);
  }

  private end(session: Session): void {
    if (session.closed) return;
    session.close();
    this.sessions.delete(session.key);
    this.stats.sessActive.dec();
    session.cluster.breakers[0].release('cx');
    if (session.entry && this.accessLogs) {
      session.entry.durationMs = Date.now() - session.entry.startTime;
      this.accessLogs.log(session.entry);
    }
  }

  /** Every session ends (the listener is gone, or drained). */
  close(): void {
    for (const session of [...this.sessions.values()]) this.end(session);
  }
}
