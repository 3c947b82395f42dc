import type { Socket } from 'node:net';
import type { Cluster } from '../config/envoy-types.js';
import { getLogger } from '../log/logger.js';
import { native } from '../native/index.js';

/**
 * A cluster's upstream_connection_options.tcp_keepalive, as Envoy applies it to each upstream
 * connection (SocketOptionFactory::buildTcpKeepaliveOptions): SO_KEEPALIVE, with TCP_KEEPCNT,
 * TCP_KEEPIDLE and TCP_KEEPINTVL from the fields given (the system's for those left out). A field
 * set to 0 turns keepalive off, as Envoy documents. Node's setKeepAlive sets only the idle time,
 * so the options go through the addon on the connected socket's descriptor.
 */

const log = getLogger('upstream', import.meta.url);

export interface TcpKeepalive {
  /** 0: the system's. */
  probes: number;
  idleS: number;
  intervalS: number;
}

const value = (v: unknown): number | undefined => (v === undefined || v === null ? undefined : Number(typeof v === 'object' ? (v as { value?: unknown }).value ?? 0 : v));

export function upstreamTcpKeepalive(cluster: Pick<Cluster, 'upstream_connection_options'>): TcpKeepalive | undefined {
  const ka = cluster.upstream_connection_options?.tcp_keepalive;
  if (ka === undefined) return undefined;
  const probes = value(ka.keepalive_probes);
  const idleS = value(ka.keepalive_time);
  const intervalS = value(ka.keepalive_interval);
  if (probes === 0 || idleS === 0 || intervalS === 0) return undefined;
  return { probes: probes ?? 0, idleS: idleS ?? 0, intervalS: intervalS ?? 0 };
}

let warned = false;

/** On a connected socket (TCP or TLS): its descriptor gets the options; a socket without one (closed meanwhile) is left alone. */
export function applyTcpKeepalive(socket: Socket, ka: TcpKeepalive): void {
  const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) return;
  try {
    native.tcpKeepalive(fd, ka.probes, ka.idleS, ka.intervalS);
  } catch (err) {
    if (!warned) log.warn(`tcp_keepalive could not be set on an upstream connection: ${(err as Error).message}`);
    warned = true;
  }
}

/** The options set on `socket` once it connects (an upstream connection, a health check's). */
export function applyTcpKeepaliveOnConnect(socket: Socket, ka: TcpKeepalive): void {
  socket.once('connect', () => applyTcpKeepalive(socket, ka));
}
