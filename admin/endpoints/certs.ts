import { JSON_TYPE, protoJson, type AdminEndpoint } from '../endpoint.js';

/**
 * /certs: envoy.admin.v3.Certificates, one entry per TLS context of the listeners and clusters.
 * No TLS context can be configured yet (the schema allowlist refuses `transport_socket`, naming
 * it), so the list is empty, which is what Envoy prints for a server without TLS.
 */
export function certsEndpoints(): AdminEndpoint[] {
  return [
    {
      path: '/certs',
      help: 'print certs on machine',
      mutates: false,
      handle: () => ({ status: 200, contentType: JSON_TYPE, body: protoJson({ certificates: [] }) }),
    },
  ];
}
