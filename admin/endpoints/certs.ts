import type { LoadedTls } from '../../shared/tls/context.js';
import { certificatesJson } from '../../shared/tls/certificates.js';
import { JSON_TYPE, protoJson, type AdminEndpoint } from '../endpoint.js';

/**
 * /certs: envoy.admin.v3.Certificates, one entry per TLS context of the listeners and clusters
 * (each with its CA and its certificates: file, serial number, SANs, days until expiration),
 * from the certificates the supervisor loaded. Days are counted at each request.
 */
export function certsEndpoints(tls: LoadedTls): AdminEndpoint[] {
  return [
    {
      path: '/certs',
      help: 'print certs on machine',
      mutates: false,
      handle: () => ({ status: 200, contentType: JSON_TYPE, body: protoJson(certificatesJson(tls, Date.now())) }),
    },
  ];
}
