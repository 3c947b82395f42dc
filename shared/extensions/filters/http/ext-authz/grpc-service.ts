import { list, obj } from '../../../../config/access.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import { GrpcCallError } from '../../../../upstream/async-request.js';
import { durationMs, httpStatusCode } from '../../../../config/wkt.js';
import type { FilterClusters } from '../../../../http/filter-api.js';
import { compileListMatcher, okDecision, type AuthzDecision, type AuthzService, type CheckInput, type HeaderPair } from './check.js';

/**
 * ext_authz with a gRPC authorization service (envoy.service.auth.v3.Authorization/Check), over
 * @grpc/grpc-js (../../../upstream/grpc-unary.ts) to a host of the service's cluster. The CheckRequest
 * carries the connection's addresses (and the client's certificate names), the request's method,
 * path, host, scheme, protocol, size, headers (pseudo-headers too; `allowed_headers` narrows
 * them, `disallowed_headers` takes some out), its body if one was read, and the route's
 * context_extensions. An OK status allows the request with ok_response's changes; any other
 * status denies it (denied_response's status, 403 by default, headers and body); a failed call
 * is an error.
 */

const METHOD = '/envoy.service.auth.v3.Authorization/Check';
const REQUEST = 'envoy.service.auth.v3.CheckRequest';
const RESPONSE = 'envoy.service.auth.v3.CheckResponse';

export class GrpcAuthzService implements AuthzService {
  readonly cluster: string;
  private readonly timeoutMs: number;
  private readonly allowed: ((name: string) => boolean) | undefined;
  private readonly disallowed: ((name: string) => boolean) | undefined;

  constructor(
    service: JsonObject,
    filter: JsonObject,
    private readonly clusters: FilterClusters,
    private readonly includePeerCertificate: boolean,
    private readonly packAsBytes: boolean,
  ) {
    this.cluster = String(obj(service.envoy_grpc).cluster_name);
    this.timeoutMs = typeof service.timeout === 'string' ? durationMs(service.timeout) : 200;
    this.allowed = compileListMatcher(filter.allowed_headers);
    this.disallowed = compileListMatcher(filter.disallowed_headers);
    clusters.prepareGrpcTypes(REQUEST, RESPONSE);
  }

  async check(input: CheckInput): Promise<AuthzDecision> {
    const cluster = this.clusters.get(this.cluster);
    if (!cluster) return { kind: 'error', message: `unknown cluster '${this.cluster}'` };
    try {
      return decision(await cluster.grpcUnary(METHOD, REQUEST, RESPONSE, this.checkRequest(input), this.timeoutMs));
    } catch (err) {
      if (err instanceof GrpcCallError) return { kind: 'error', message: err.message };
      throw err;
    }
  }

  private checkRequest(input: CheckInput): JsonObject {
    const { rq, connection } = input.request;
    const headers: Record<string, string> = {};
    const all: [string, string][] = [
      [':authority', rq.authority],
      [':method', rq.method],
      [':path', rq.path],
      [':scheme', connection.tls ? 'https' : 'http'],
    ];
    for (const name in rq.headers) {
      const v = rq.headers[name];
      if (v !== undefined && name !== 'host' && name !== 'x-envoy-auth-partial-body') all.push([name, Array.isArray(v) ? v.join(',') : v]);
    }
    for (const [name, value] of all) {
      if (this.allowed && !this.allowed(name)) continue;
      if (this.disallowed?.(name)) continue;
      headers[name] = headers[name] === undefined ? value : `${headers[name]},${value}`;
    }
    const http: JsonObject = {
      id: input.id,
      method: rq.method,
      headers,
      path: rq.path,
      host: rq.authority,
      scheme: connection.tls ? 'https' : 'http',
      size: String(input.body?.length ?? (rq.headers['content-length'] !== undefined ? Number(rq.headers['content-length']) : -1)),
      protocol: connection.protocol,
    };
    if (input.body) {
      headers['x-envoy-auth-partial-body'] = 'false';
      if (this.packAsBytes) http.raw_body = input.body.toString('base64');
      else http.body = input.body.toString('utf8');
    }
    const peer = connection.peer();
    const source: JsonObject = { address: socketAddress(connection.directRemoteIp, connection.directRemotePort) };
    if (peer) source.principal = peer.uriSans[0] ?? peer.dnsSans[0] ?? peer.subject;
    if (peer && this.includePeerCertificate) source.certificate = encodeURIComponent(peer.pem());
    const service = rq.headers['x-envoy-downstream-service-cluster'];
    if (typeof service === 'string') source.service = service;
    return {
      attributes: {
        source,
        destination: { address: socketAddress(connection.localIp, connection.localPort) },
        request: { time: new Date(input.startedAtMs).toISOString(), http },
        context_extensions: input.contextExtensions,
        ...(Object.keys(input.metadataContext).length ? { metadata_context: { filter_metadata: input.metadataContext } } : {}),
      },
    };
  }
}

function socketAddress(address: string, port: number): JsonObject {
  return { socket_address: { address, port_value: port } };
}

/** A Struct of dynamic metadata, if it has anything. */
function metadataOf(struct: unknown): { metadata?: Record<string, unknown> } {
  const m = obj(struct);
  return Object.keys(m).length ? { metadata: m } : {};
}

/** HeaderValueOption's append: true only when set so (a BoolValue). */
function appends(option: JsonObject): boolean {
  return option.append === true || (typeof option.append === 'object' && obj(option.append).value === true);
}

function decision(reply: JsonObject): AuthzDecision {
  const code = Number(obj(reply.status).code ?? 0);
  if (code !== 0) {
    const denied = obj(reply.denied_response);
    const status = denied.status !== undefined ? httpStatusCode(obj(denied.status).code) : 0;
    const headers: HeaderPair[] = list(denied.headers).map((o) => [String(obj(o.header).key).toLowerCase(), String(obj(o.header).value ?? '')]);
    return { kind: 'denied', status: status > 0 ? status : 403, headers, body: String(denied.body ?? ''), ...metadataOf(reply.dynamic_metadata) };
  }
  const ok = obj(reply.ok_response);
  const out = okDecision();
  // The deprecated ok_response.dynamic_metadata wins over the response's own.
  Object.assign(out, metadataOf(ok.dynamic_metadata ?? reply.dynamic_metadata));
  for (const o of list(ok.headers)) {
    const pair: HeaderPair = [String(obj(o.header).key).toLowerCase(), String(obj(o.header).value ?? '')];
    (appends(o) ? out.appendIfPresent : out.set).push(pair);
  }
  for (const name of (ok.headers_to_remove as string[] | undefined) ?? []) {
    const n = name.toLowerCase();
    // Pseudo-headers and host are the request's own.
    if (!n.startsWith(':') && n !== 'host') out.remove.push(n);
  }
  for (const o of list(ok.response_headers_to_add)) {
    const action = typeof o.append_action === 'string' ? o.append_action : o.append === false || (typeof o.append === 'object' && obj(o.append).value === false) ? 'OVERWRITE_IF_EXISTS_OR_ADD' : 'APPEND_IF_EXISTS_OR_ADD';
    out.responseHeaders.push({ name: String(obj(o.header).key).toLowerCase(), value: String(obj(o.header).value ?? ''), action });
  }
  for (const q of list(ok.query_parameters_to_set)) out.setQuery.push([String(q.key), String(q.value ?? '')]);
  out.removeQuery.push(...((ok.query_parameters_to_remove as string[] | undefined) ?? []));
  return out;
}
