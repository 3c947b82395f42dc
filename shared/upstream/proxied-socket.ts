import { connect, type Socket } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { tlsModule } from '../builtins.js';
import type { UpstreamTls } from '../extensions/transport-sockets/tls/upstream.js';
import type { HostTlv, UpstreamProxyHeader, ProxyHeaderSource } from '../extensions/transport-sockets/proxy-protocol/upstream-proxy-protocol.js';
import { applyTcpKeepaliveOnConnect, type TcpKeepalive } from './tcp-keepalive.js';
import { connectionOrigin, localOf, remoteOf } from '../network/connection-origin.js';

/**
 * An upstream connection whose cluster's transport socket is upstream_proxy_protocol: the PROXY
 * header is the first thing written on the TCP connection, then the wrapped socket speaks (a TLS
 * handshake over it, or plaintext). Connections of clusters without it are made as before.
 */
export interface ProxiedTarget {
  ip: string;
  port: number;
  tls: UpstreamTls | undefined;
  /** The cluster's header settings, the downstream it names, and the endpoint's own TLVs. */
  proxy: { header: UpstreamProxyHeader; origin: ProxyHeaderSource['origin']; hostTlvs?: readonly HostTlv[] | undefined };
  keepalive?: TcpKeepalive;
  timeoutMs?: number;
  /** TLS options beyond the cluster's (ALPN for one use). */
  tlsExtra?: ConnectionOptions;
}

export function connectProxied(t: ProxiedTarget): Socket {
  const raw = connect({ host: t.ip, port: t.port, ...(t.timeoutMs !== undefined ? { timeout: t.timeoutMs } : {}) });
  const { header, origin, hostTlvs } = t.proxy;
  if (origin || header.version === 'v2') raw.write(header.header(origin, () => ownAddresses(raw), hostTlvs));
  // Version 1 without a downstream names the connection's own addresses, known once it connects;
  // this listener comes before anything else written (and before a TLS handshake starts).
  else raw.once('connect', () => raw.write(header.header(undefined, () => ownAddresses(raw))));
  if (t.keepalive) applyTcpKeepaliveOnConnect(raw, t.keepalive);
  if (!t.tls) return raw;
  return t.tls.guard(tlsModule().connect({ socket: raw, host: t.ip, ...t.tls.connectOptions(), ...t.tlsExtra }));
}

function ownAddresses(s: Socket) {
  return { local: localOf(s), remote: remoteOf(s) };
}

/**
 * The downstream a PROXY header names (Envoy's ProxyProtocolFilterState, which the connection
 * manager and the TCP proxy set from the downstream connection when the listener did not): a PROXY
 * header's addresses and TLVs when the listener read one, else the connection's own.
 */
export function downstreamOrigin(socket: object | undefined): ProxyHeaderSource['origin'] {
  if (!socket) return undefined;
  const origin = connectionOrigin(socket);
  return origin ?? { remote: remoteOf(socket), local: localOf(socket), tlvs: [] };
}

/** A request's downstream connection: its socket, and what closes with the connection (an HTTP/2 stream's session). */
export interface DownstreamConnection {
  socket: object;
  closing: { once(event: 'close', f: () => void): unknown };
}

/** What a request tells of its downstream connection (a DownstreamRequest). */
export interface DownstreamOfRequest {
  socket: object;
  stream?: unknown;
}

export function downstreamConnectionOf(req: DownstreamOfRequest): DownstreamConnection {
  const session = (req.stream as { session?: DownstreamConnection['closing'] } | undefined)?.session;
  return { socket: req.socket, closing: session ?? (req.socket as DownstreamConnection['closing']) };
}
