import { appendVia } from './server-header.js';
import { networkInterfaces } from 'node:os';
import { obj } from '../../shared/config/access.js';
import type { DownstreamRequest } from './downstream.js';
import { classifyRequest, compileInternalAddresses, type InternalAddresses } from './internal-request.js';
import { requestId } from './request-id.js';
import type { HttpConnectionManager } from '../../shared/config/envoy-types.js';

/**
 * What the connection manager does to a request's headers before its filters see it, as Envoy's
 * ConnectionManagerUtility::mutateRequestHeaders: an external request loses its x-envoy control
 * headers (internal_address_config decides which are external), gets a request id of its own
 * (unless preserve_external_request_id) and names its client (x-envoy-external-address);
 * use_remote_address appends the peer to X-Forwarded-For (unless skip_xff_append);
 * X-Forwarded-Proto says the connection's scheme; add_user_agent names this proxy's service
 * cluster and node.
 */

export interface RequestHeaderSettings {
  useRemoteAddress: boolean;
  skipXffAppend: boolean;
  internalAddresses: InternalAddresses;
  generateRequestId: boolean;
  preserveRequestId: boolean;
  /** The server's own address, appended to X-Forwarded-For for a client without one (a pipe). */
  localAddress: string;
  /** add_user_agent: the service cluster to name. */
  userAgent: string | undefined;
  nodeId: string;
  /** The connection manager's `via`, appended to the request's Via. */
  via: string | undefined;
}

/** The server's own address of the chosen IP version, which Envoy appends to X-Forwarded-For for pipe clients. */
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

function peerAddress(req: DownstreamRequest): string | undefined {
  const a = req.socket.remoteAddress;
  return a?.startsWith('::ffff:') ? a.slice(7) : a;
}

export function mutateRequestHeaders(req: DownstreamRequest, headers: DownstreamRequest['headers'], s: RequestHeaderSettings): void {
  // Internal or external (internal_address_config): an external request's x-envoy control headers go now.
  const peer = peerAddress(req);
  const { edge } = classifyRequest(headers, { useRemoteAddress: s.useRemoteAddress, peer }, s.internalAddresses);
  // An edge request gets its own request id unless preserve_external_request_id, and names its client.
  if (s.generateRequestId && (headers['x-request-id'] === undefined || (edge && !s.preserveRequestId))) {
    headers['x-request-id'] = requestId();
  }
  if (edge && peer !== undefined) headers['x-envoy-external-address'] = peer;
  if (s.via !== undefined) headers.via = appendVia(headers.via, s.via);
  if (s.useRemoteAddress && !s.skipXffAppend) {
    const client = peer ?? s.localAddress;
    const xff = headers['x-forwarded-for'];
    headers['x-forwarded-for'] = xff ? `${Array.isArray(xff) ? xff.join(',') : xff},${client}` : client;
  }
  headers['x-forwarded-proto'] ??= (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  // add_user_agent: this proxy's service cluster and node go upstream, as Envoy sends them.
  if (s.userAgent !== undefined) {
    headers['x-envoy-downstream-service-cluster'] = s.userAgent;
    headers['user-agent'] ??= s.userAgent;
    if (s.nodeId) headers['x-envoy-downstream-service-node'] = s.nodeId;
  }
}
