import { applyTcpKeepaliveOnConnect } from '../../shared/upstream/tcp-keepalive.js';
import { connect, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { tlsModule } from '../../shared/builtins.js';
import type { Host } from './cluster.js';
import { connectProxied, downstreamOrigin } from '../../shared/upstream/proxied-socket.js';
import { CONNECT_TIMEOUT, connectTimeoutError } from './upstream-handler.js';

/**
 * A connection of its own to one upstream host (TCP proxy, an upgraded HTTP/1.1 stream), over
 * the cluster's TLS when it has one: established once connected (TLS: handshaken), within the
 * cluster's connect_timeout. The host's connection figures and the outlier detector hear of it;
 * the caller holds the circuit breaker's unit.
 */
export interface HostConnectionEvents {
  connected(): void;
  /** It never connected: refused, unreachable, the handshake failed, or connect_timeout passed. */
  failed(err: Error & { code?: string }): void;
  /** It closed, connected or not (after failed() if it never connected). */
  closed(connected: boolean): void;
}

/** An upgrade to an auto_config cluster goes over HTTP/1.1: its connection offers only that by ALPN. */
const HTTP1_ONLY = { ALPNProtocols: ['http/1.1'] };

/**
 * `final`: the connection is the whole exchange (a TCP proxy's), not the start of an HTTP one (an
 * upgrade's). `downstream`: the connection it is made for, which a PROXY header names.
 */
export function connectToHost(host: Host, events: HostConnectionEvents, final = true, downstream?: object): Socket {
  const cluster = host.cluster;
  const tls = host.tls;
  const proxy = host.proxyHeader;
  const socket = proxy
    ? connectProxied({ ip: host.ip, port: host.port, tls, proxy: { header: proxy, origin: downstreamOrigin(downstream), hostTlvs: host.info.proxyTlvs }, timeoutMs: cluster.connectTimeoutMs, ...(cluster.autoHttp && !final ? { tlsExtra: HTTP1_ONLY } : {}) })
    : tls
    ? tls.guard(tlsModule().connect({ host: host.ip, port: host.port, timeout: cluster.connectTimeoutMs, ...tls.connectOptions(), ...(cluster.autoHttp && !final ? HTTP1_ONLY : {}) }))
    : connect({ host: host.ip, port: host.port, timeout: cluster.connectTimeoutMs });
  host.connectionStarted();
  const keepalive = cluster.tcpKeepalive;
  if (keepalive) applyTcpKeepaliveOnConnect(socket, keepalive);
  let connected = false;
  let failed = false;
  const started = performance.now();
  let openedAt = 0;
  const fail = (err: Error & { code?: string }) => {
    if (connected || failed) return;
    failed = true;
    tls?.outcome(err);
    host.connectionFailed(err.code === CONNECT_TIMEOUT);
    host.localFailure(false);
    events.failed(err);
    socket.destroy();
  };
  socket.once(tls ? 'secureConnect' : 'connect', () => {
    tls?.outcome(null, socket as TLSSocket);
    connected = true;
    socket.setTimeout(0);
    openedAt = performance.now();
    host.connectionOpened({ connectMs: openedAt - started, socket });
    host.connected(final);
    events.connected();
  });
  socket.once('timeout', () => {
    if (!connected) fail(connectTimeoutError(host.address));
  });
  socket.on('error', (err) => fail(err));
  let remote = false;
  socket.once('end', () => (remote = true));
  socket.once('close', () => {
    if (connected) host.connectionClosed({ lengthMs: performance.now() - openedAt, rxBytes: socket.bytesRead, txBytes: socket.bytesWritten, remote, socket });
    events.closed(connected);
  });
  return socket;
}
