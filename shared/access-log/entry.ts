import { connectionOrigin } from '../network/connection-origin.js';
import { requestHeader, type RequestView } from '../matchers.js';

/**
 * What an access log sees of one finished request (or, for the TCP proxy, one connection):
 * Envoy's StreamInfo, reduced to what this proxy records. Absent values print as `-` in text
 * formats and `null` in JSON ones, as Envoy's do.
 */
export interface AccessLogEntry {
  /** Wall-clock start, ms since the epoch. */
  startTime: number;
  /** `HTTP/1.0`, `HTTP/1.1`, `HTTP/2`; absent for TCP. */
  protocol?: string;
  /** The downstream request as it arrived (an empty one for TCP connections). */
  request: RequestView;
  /** The path sent upstream when a prefix rewrite changed it (Envoy's `:path` after the rewrite). */
  rewrittenPath?: string;
  /** A response header by lower-case name. */
  responseHeader(name: string): string | undefined;
  /** 0 when no response was sent. */
  responseCode: number;
  responseCodeDetails?: string;
  /** A bitmask of RESPONSE_FLAGS (see `ResponseFlag`). */
  responseFlags: number;
  bytesReceived: number;
  bytesSent: number;
  /** Milliseconds from the start: to the last request byte, the first upstream response byte, the end. */
  requestDurationMs?: number;
  responseDurationMs?: number;
  durationMs?: number;
  /** `ip:port` of the upstream host of the last try. */
  upstreamHost?: string;
  upstreamCluster?: string;
  attemptCount?: number;
  /** The client's address as the connection manager found it (x-forwarded-for's, port 0, when trusted so). */
  downstreamRemoteAddress?: string;
  /** The peer's, when it differs (%DOWNSTREAM_DIRECT_REMOTE_ADDRESS%). */
  downstreamDirectRemoteAddress?: string;
  downstreamLocalAddress?: string;
  routeName?: string;
  filterChainName?: string;
  localReplyBody?: string;
  /** The server name the client asked for: its TLS SNI, as the TLS inspector or the handshake read it. */
  requestedServerName?: string;
  /** Why the upstream connection failed before it was established (see shared/upstream/transport-failure.ts). */
  upstreamTransportFailureReason?: string;
  /** The health-check filter answered or passed this request as a health check. */
  healthCheck: boolean;
  /** Dynamic metadata the HTTP filters set, by namespace (header_to_metadata, ext_authz, …). */
  dynamicMetadata?: Record<string, Record<string, unknown>>;
}

/**
 * Envoy's response flags, in the order `%RESPONSE_FLAGS%` prints them (comma-separated; `-`
 * when none). Only the flags this proxy can raise have names in `ResponseFlag`; the others are
 * still known, so that a response_flag_filter naming them is valid.
 */
export const RESPONSE_FLAG_NAMES = [
  'LH', 'UH', 'UT', 'LR', 'UR', 'UF', 'UC', 'UO', 'NR', 'DI', 'FI', 'RL', 'UAEX', 'RLSE', 'DC', 'URX', 'SI', 'IH', 'DPE',
  'UMSDR', 'RFCF', 'NFCF', 'DT', 'UPE', 'NC', 'OM', 'DF', 'DO', 'DR', 'UDO',
] as const;

const bit = (name: (typeof RESPONSE_FLAG_NAMES)[number]) => 1 << RESPONSE_FLAG_NAMES.indexOf(name);

export const ResponseFlag = {
  /** Health checks are failed (/healthcheck/fail) and the health-check filter answered 503. */
  failedLocalHealthCheck: bit('LH'),
  noHealthyUpstream: bit('UH'),
  upstreamRequestTimeout: bit('UT'),
  upstreamRemoteReset: bit('UR'),
  upstreamConnectionFailure: bit('UF'),
  upstreamConnectionTermination: bit('UC'),
  noRouteFound: bit('NR'),
  /** The overload manager's stop_accepting_requests answered 503. */
  overloadManager: bit('OM'),
  downstreamConnectionTermination: bit('DC'),
  upstreamRetryLimitExceeded: bit('URX'),
  streamIdleTimeout: bit('SI'),
  noClusterFound: bit('NC'),
  upstreamOverflow: bit('UO'),
  downstreamProtocolError: bit('DPE'),
  /** max_stream_duration was reached. */
  durationTimeout: bit('DT'),
  /** The cluster's max_stream_duration cut the upstream try. */
  upstreamMaxStreamDurationReached: bit('UMSDR'),
  /** The fault filter delayed the request / aborted it. */
  delayInjected: bit('DI'),
  faultInjected: bit('FI'),
  /** A rate limit (local_ratelimit) refused the request. */
  rateLimited: bit('RL'),
  /** The rate-limit service could not be asked, and the filter fails closed (failure_mode_deny). */
  rateLimitServiceError: bit('RLSE'),
  /** The external authorization service refused the request, or could not be asked. */
  unauthorizedExternalService: bit('UAEX'),
} as const;

export function responseFlagBit(name: string): number {
  const i = (RESPONSE_FLAG_NAMES as readonly string[]).indexOf(name);
  return i < 0 ? 0 : 1 << i;
}

export function responseFlagsText(flags: number): string {
  if (flags === 0) return '-';
  const out: string[] = [];
  for (let i = 0; i < RESPONSE_FLAG_NAMES.length; i++) if (flags & (1 << i)) out.push(RESPONSE_FLAG_NAMES[i]!);
  return out.join(',');
}

/** A connection has no request: TCP proxy entries match header formats and filters as if every header were absent. */
export const NO_REQUEST: RequestView = { method: '', path: '', authority: '', headers: {} };

/**
 * A request header by lower-case name, pseudo-headers included. After a prefix rewrite `:path`
 * is the rewritten path and `x-envoy-original-path` the one the client sent, as in Envoy.
 */
export function entryRequestHeader(e: AccessLogEntry, name: string): string | undefined {
  if (e.request === NO_REQUEST) return undefined;
  if (e.rewrittenPath !== undefined) {
    if (name === ':path') return e.rewrittenPath;
    if (name === 'x-envoy-original-path') return requestHeader(e.request, name) ?? e.request.path;
  }
  return requestHeader(e.request, name);
}

/** `ip:port` as Envoy prints addresses (`[v6]:port`; IPv4-mapped IPv6 as plain IPv4). */
export function addressText(ip: string | undefined, port: number | undefined): string | undefined {
  if (ip === undefined) return undefined;
  const bare = ip.startsWith('::ffff:') ? ip.slice(7) : ip;
  return bare.includes(':') ? `[${bare}]:${port}` : `${bare}:${port}`;
}

/** What a connection entry reads of a socket. */
export interface ConnectionAddresses {
  remoteAddress?: string;
  remotePort?: number;
  localAddress?: string;
  localPort?: number;
  /** A TLS socket's SNI (Node's TLSSocket: false when none). */
  servername?: string | false | null;
}

/** The SNI the TLS inspector read from a connection it passed on without terminating TLS (a TCP proxy of TLS). */
const inspectedServerNames = new WeakMap<object, string>();

export function noteInspectedServerName(connection: object, name: string | undefined): void {
  if (name) inspectedServerNames.set(connection, name);
}

/** %REQUESTED_SERVER_NAME%: the handshake's SNI where this proxy terminates TLS, else the TLS inspector's. */
export function requestedServerName(connection: ConnectionAddresses): string | undefined {
  if (typeof connection.servername === 'string' && connection.servername) return connection.servername;
  return inspectedServerNames.get(connection);
}

/** A connection's access-log entry (a TCP proxy's, or a listener's): no request or response, just addresses, bytes and time. */
export function connectionEntry(downstream: ConnectionAddresses, cluster?: string, upstreamHost?: string): AccessLogEntry {
  const origin = connectionOrigin(downstream);
  return {
    startTime: Date.now(),
    request: NO_REQUEST,
    responseHeader: () => undefined,
    responseCode: 0,
    responseFlags: 0,
    bytesReceived: 0,
    bytesSent: 0,
    upstreamHost,
    upstreamCluster: cluster,
    attemptCount: upstreamHost ? 1 : 0,
    downstreamRemoteAddress: origin ? addressText(origin.remote.ip, origin.remote.port) : addressText(downstream.remoteAddress, downstream.remotePort),
    downstreamDirectRemoteAddress: addressText(downstream.remoteAddress, downstream.remotePort),
    downstreamLocalAddress: origin ? addressText(origin.local.ip, origin.local.port) : addressText(downstream.localAddress, downstream.localPort),
    ...(origin?.metadata ? { dynamicMetadata: origin.metadata } : {}),
    requestedServerName: requestedServerName(downstream),
    healthCheck: false,
  };
}
