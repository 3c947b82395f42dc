import { listenerChainKey, type LoadedTls } from '../../shared/extensions/transport-sockets/tls/context.js';
import { certificatesJson } from '../../shared/extensions/transport-sockets/tls/certificates.js';
import { JSON_TYPE, protoJson, type AdminEndpoint } from '../endpoint.js';
import type { AdminState } from '../state.js';

/**
 * /certs: envoy.admin.v3.Certificates, one entry per TLS context of the listeners and clusters
 * (those from the listener and cluster discovery services too) (each with its CA and its certificates: file,
 * serial number, SANs, days until expiration), from the certificates the supervisor loaded. Days
 * are counted at each request.
 */
export function certsEndpoints(state: AdminState): AdminEndpoint[] {
  const loaded = (): LoadedTls => ({
    listeners: Object.fromEntries(state.server.listeners.flatMap((l) => Object.entries(l.tls).map(([chain, context]) => [listenerChainKey(l.name, chain), context]))),
    clusters: { ...state.server.tls.clusters, ...Object.fromEntries(state.server.clusters.flatMap((c) => (c.tls ? [[c.name, c.tls]] : []))) },
  });
  return [
    {
      path: '/certs',
      help: 'print certs on machine',
      mutates: false,
      handle: () => ({ status: 200, contentType: JSON_TYPE, body: protoJson(certificatesJson(loaded(), Date.now())) }),
    },
  ];
}
