import { connectionOrigin, remoteOf } from '../../shared/network/connection-origin.js';
import { appendVia } from './server-header.js';
import { networkInterfaces } from 'node:os';
import { obj } from '../../shared/config/access.js';
import type { DownstreamRequest } from './downstream.js';
import { classifyRequest, compileInternalAddresses, type InternalAddresses } from './internal-request.js';
import { requestId } from './request-id.js';
import type { HttpConnectionManager } from '../../shared/config/envoy-types.js';
import { isLoopback } from '../../shared/address.js';
import { lastAddressFromXff, type OriginalIpDetection } from '../../shared/http/original-ip.js';
import { originalIpDetections } from '../../shared/extensions/http/original-ip-detection/lookup.js';

/**
 * What the connection manager does to a request's headers before its filters see it, as Envoy's
 * ConnectionManagerUtility::mutateRequestHeaders: an external request loses its x-envoy control
 * headers (internal_address_config decides which are external), gets a request id of its own
 * (unless preserve_external_request_id) and names its client (x-envoy-external-address);
 * use_remote_address appends the peer to X-Forwarded-For (unless skip_xff_append);
 * X-Forwarded-Proto says the connection's scheme; add_user_agent names this proxy's service
 * cluster and node. It also finds the client's address, which filters, hash policies and access
 * logs see: the peer's with use_remote_address (or the entry xff_num_trusted_hops − 1 from the end
 * of X-Forwarded-For), else what the original IP detection extensions find.
 */

export interface RequestHeaderSettings {
  useRemoteAddress: boolean;
  xffTrustedHops: number;
  /** Without use_remote_address: original_ip_detection_extensions, or x-forwarded-for's. */
  detections: OriginalIpDetection[];
  skipXffAppend: boolean;
  internalAddresses: InternalAddresses;
  generateRequestId: boolean;
  preserveRequestId: boolean;
  /** The server's own address, appended to X-Forwarded-For for a peer on loopback or a pipe. */
  localAddress: string;
  /** add_user_agent: the service cluster to name. */
  userAgent: string | undefined;
  nodeId: string;
  /** The connection manager's `via`, appended to the request's Via. */
  via: string | undefined;
}

/** The server's own address of the chosen IP version, which Envoy appends to X-Forwarded-For for loopback and pipe clients. */
export function serverLocalAddress(version: 'v4' | 'v6'): string {
  const family = version === 'v4' ? 'IPv4' : 'IPv6';
  for (const addrs of Object.values(networkInterfaces())) {
    for (const a of addrs ?? []) if (a.family === family && !a.internal) return a.address;
  }
  return version === 'v4' ? '127.0.0.1' : '::1';
}

/** A connection manager's settings for them, read once. */
export function requestHeaderSettings(config: HttpConnectionManager, localAddress: string, node: { id: string; cluster: string }): RequestHeaderSettings {
  return {
    useRemoteAddress: config.use_remote_address === true,
    xffTrustedHops: config.xff_num_trusted_hops ?? 0,
    detections: config.use_remote_address === true ? [] : originalIpDetections(config),
    skipXffAppend: config.skip_xff_append === true,
    internalAddresses: compileInternalAddresses(obj(config.internal_address_config)),
    generateRequestId: config.generate_request_id !== false,
    preserveRequestId: config.preserve_external_request_id === true,
    localAddress,
    userAgent: config.add_user_agent === true ? node.cluster : undefined,
    nodeId: node.id,
    via: typeof config.via === 'string' && config.via ? config.via : undefined,
  };
}

/** Envoy's remote address: a PROXY header's, else the peer's (undefined: a pipe's). */
function peerAddress(req: DownstreamRequest): string | undefined {
  const origin = connectionOrigin(req.socket);
  if (origin) return origin.remote.ip;
  const a = req.socket.remoteAddress;
  return a?.startsWith('::ffff:') ? a.slice(7) : a;
}

/** The client's address as the connection manager found it (port 0 when read from a header); ip undefined for a pipe peer. */
export interface ClientAddress {
  ip: string | undefined;
  port: number;
}

/**
 * Mutates the headers as Envoy does, and returns the client's address, or the status to answer
 * with when an original IP detection extension refuses the request (reject_with_status).
 */
export function mutateRequestHeaders(req: DownstreamRequest, headers: DownstreamRequest['headers'], s: RequestHeaderSettings): ClientAddress | { rejectStatus: number } {
  const peer = peerAddress(req);
  const scheme = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  let client: string | undefined;
  let trusted = false;
  let appendXff = false;
  if (s.useRemoteAddress) {
    trusted = headers['x-forwarded-for'] === undefined;
    if (s.xffTrustedHops > 0) client = lastAddressFromXff(headers['x-forwarded-for'], s.xffTrustedHops - 1).ip;
    appendXff = !s.skipXffAppend;
    // The prior hop is not trusted to say the scheme unless it is a trusted proxy that said it.
    if (s.xffTrustedHops === 0) headers['x-forwarded-proto'] = scheme;
  } else {
    for (const d of s.detections) {
      const r = d.detect(headers, peer, req.rawHeaders);
      if (r.rejectStatus !== undefined) return { rejectStatus: r.rejectStatus };
      if (r.ip !== undefined) {
        client = r.ip;
        trusted = r.trusted;
        appendXff = r.appendXff === true;
        break;
      }
    }
  }
  if (appendXff) {
    const hop = peer === undefined || isLoopback(peer) ? s.localAddress : peer;
    const xff = headers['x-forwarded-for'];
    headers['x-forwarded-for'] = xff ? `${Array.isArray(xff) ? xff.join(',') : xff},${hop}` : hop;
  }
  headers['x-forwarded-proto'] ??= scheme;
  const found: ClientAddress = client !== undefined ? { ip: client, port: 0 } : { ip: peer, port: remoteOf(req.socket).port };
  // Internal or external (internal_address_config): an external request's x-envoy control headers go now.
  const { edge } = classifyRequest(headers, client ?? peer, trusted, s.useRemoteAddress, s.internalAddresses);
  // An edge request gets its own request id unless preserve_external_request_id, and names its client.
  if (s.generateRequestId && (headers['x-request-id'] === undefined || (edge && !s.preserveRequestId))) {
    headers['x-request-id'] = requestId();
  }
  if (edge && found.ip !== undefined) headers['x-envoy-external-address'] = found.ip;
  if (s.via !== undefined) headers.via = appendVia(headers.via, s.via);
  // add_user_agent: this proxy's service cluster and node go upstream, as Envoy sends them.
  if (s.userAgent !== undefined) {
    headers['x-envoy-downstream-service-cluster'] = s.userAgent;
    headers['user-agent'] ??= s.userAgent;
    if (s.nodeId) headers['x-envoy-downstream-service-node'] = s.nodeId;
  }
  return found;
}
