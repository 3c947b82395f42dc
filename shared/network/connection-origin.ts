import type { Endpoint, Tlv } from './proxy-protocol.js';

/**
 * A downstream connection's addresses as a proxy in front of this one said them (the PROXY
 * protocol listener filter; Envoy's restored local address and its remote address that is not the
 * direct one), and what else it said: TLVs to pass on upstream (Envoy's ProxyProtocolFilterState)
 * and dynamic metadata from them. Kept on the socket itself, so that the TLS socket over it and
 * an HTTP/2 session's socket proxy (which forwards property reads) see it too.
 */
export interface ConnectionOrigin {
  /** The client, as the header named it (the peer when the header had no addresses). */
  remote: Endpoint;
  /** The address the client connected to, as the header named it. */
  local: Endpoint;
  /** Whether the header named them (not LOCAL or UNKNOWN). */
  restored: boolean;
  /** The TLVs its pass_through_tlvs keeps, for an upstream PROXY header. */
  tlvs: readonly Tlv[];
  /** Dynamic metadata of the connection, by namespace (the filter's rules). */
  metadata: Record<string, Record<string, string>> | undefined;
}

const ORIGIN = Symbol.for('proxy.connection-origin');

interface Carrier {
  [ORIGIN]?: ConnectionOrigin;
  remoteAddress?: string;
  remotePort?: number;
  localAddress?: string;
  localPort?: number;
}

export function setConnectionOrigin(socket: object, origin: ConnectionOrigin): void {
  (socket as Carrier)[ORIGIN] = origin;
}

export function connectionOrigin(socket: object): ConnectionOrigin | undefined {
  return (socket as Carrier)[ORIGIN];
}

/** A TLS socket made over a raw one carries the raw one's origin. */
export function carryConnectionOrigin(from: object, to: object): void {
  const origin = (from as Carrier)[ORIGIN];
  if (origin) (to as Carrier)[ORIGIN] = origin;
}

const bare = (ip: string | undefined): string => (ip === undefined ? '' : ip.startsWith('::ffff:') ? ip.slice(7) : ip);

/** The peer's address, IPv4-mapped IPv6 as plain IPv4: Envoy's direct remote address. */
export function directRemoteOf(socket: object): Endpoint {
  const s = socket as Carrier;
  return { ip: bare(s.remoteAddress), port: s.remotePort ?? 0 };
}

/** Envoy's remote address: the one a PROXY header named, else the peer's. */
export function remoteOf(socket: object): Endpoint {
  const s = socket as Carrier;
  return s[ORIGIN]?.remote ?? { ip: bare(s.remoteAddress), port: s.remotePort ?? 0 };
}

/** Envoy's local address: the one a PROXY header named (restored), else the socket's own. */
export function localOf(socket: object): Endpoint {
  const s = socket as Carrier;
  return s[ORIGIN]?.local ?? { ip: bare(s.localAddress), port: s.localPort ?? 0 };
}

export type { Endpoint, Tlv };
