import type { IncomingHttpHeaders } from 'node:http';
import { compileCidrRange } from '../../shared/address.js';
import { list, obj } from '../../shared/config/access.js';
import type { JsonObject } from '../../shared/config/proto-json.js';

/**
 * Whether a request comes from inside the trusted network, as Envoy's connection manager decides
 * it (conn_manager_utility.cc, mutateRequestHeaders): the client's address, when it may be
 * trusted (request-headers.ts), must be one that internal_address_config names. Unset, no address is internal (Envoy since 1.33).
 *
 * An internal request is marked `x-envoy-internal: true`. Any other request has the x-envoy
 * headers that steer this proxy (retries, timeouts, forced tracing …) removed before anything
 * reads them, so that only a trusted client can set them; an edge request (use_remote_address)
 * also loses the ones that name the calling service.
 */

/** The headers an external request may not set (Envoy's cleanInternalHeaders). */
const EXTERNAL_REMOVED = [
  'x-envoy-retriable-status-codes',
  'x-envoy-retriable-header-names',
  'x-envoy-retry-on',
  'x-envoy-retry-grpc-on',
  'x-envoy-max-retries',
  'x-envoy-upstream-alt-stat-name',
  'x-envoy-upstream-rq-timeout-ms',
  'x-envoy-upstream-rq-per-try-timeout-ms',
  'x-envoy-upstream-rq-timeout-alt-response',
  'x-envoy-expected-rq-timeout-ms',
  'x-envoy-force-trace',
  'x-envoy-ip-tags',
  'x-envoy-original-url',
  'x-envoy-hedge-on-per-try-timeout',
];

/** Removed from an edge request too (a client does not name the service it calls from). */
const EDGE_REMOVED = ['x-envoy-decorator-operation', 'x-envoy-downstream-service-cluster', 'x-envoy-downstream-service-node'];

export interface InternalAddresses {
  /** Whether an IP address is internal. */
  ip(address: string): boolean;
  /** unix_sockets: a client on a pipe listener is internal. */
  unixSockets: boolean;
}

/** HttpConnectionManager.internal_address_config; undefined (unset) trusts no address. */
export function compileInternalAddresses(config: JsonObject | undefined): InternalAddresses {
  const c = config === undefined ? {} : obj(config);
  const ranges = list(c.cidr_ranges).map(compileCidrRange);
  return { ip: ranges.length ? (a) => ranges.some((r) => r(a)) : () => false, unixSockets: c.unix_sockets === true };
}

/**
 * Marks or cleans the request's headers; returns whether the request is internal, and whether it
 * is an edge request (external, with use_remote_address). `client` is the address the connection
 * manager found (undefined for a pipe peer), `trusted` whether it may decide (Envoy's
 * allow_trusted_address_checks: with use_remote_address, a request that came without
 * x-forwarded-for; otherwise what the detection said, x-forwarded-for's when it held one address).
 */
export function classifyRequest(headers: IncomingHttpHeaders, client: string | undefined, trusted: boolean, useRemoteAddress: boolean, internal: InternalAddresses): { internal: boolean; edge: boolean } {
  const isInternal = trusted && (client === undefined ? internal.unixSockets : internal.ip(client));
  delete headers['x-envoy-internal'];
  const edge = !isInternal && useRemoteAddress;
  if (isInternal) headers['x-envoy-internal'] = 'true';
  else {
    for (const h of EXTERNAL_REMOVED) delete headers[h];
    if (edge) for (const h of EDGE_REMOVED) delete headers[h];
  }
  return { internal: isInternal, edge };
}
