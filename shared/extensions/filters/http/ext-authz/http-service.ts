import type { IncomingHttpHeaders } from 'node:http';
import { list, obj } from '../../../../config/access.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import { durationMs } from '../../../../config/wkt.js';
import { compileHeadersToAdd, type HeaderToAdd } from '../../../../header-mutation.js';
import { AsyncRequestError } from '../../../../upstream/async-request.js';
import type { FilterClusters } from '../../../../http/filter-api.js';
import { compileListMatcher, okDecision, type AuthzDecision, type AuthzService, type CheckInput, type HeaderPair } from './check.js';

/**
 * ext_authz with an HTTP authorization service (HttpService), as Envoy asks it: the request's
 * method, `path_prefix` + its path (query included), its Host, and only some of its headers
 * (`authorization`, those `allowed_headers` matches, not those `disallowed_headers` does) plus
 * `headers_to_add`; its body if one was read. A 200 allows the request (with the headers
 * `authorization_response` lets through); a 5xx, or no answer, is an error; anything else denies
 * it, and the client gets that status, body and headers.
 */

/** Response headers the client never gets from a denial as they came (the local reply sets its own). */
const NOT_FOR_CLIENT = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'upgrade', 'proxy-connection', 'te', 'trailer']);
/** With allowed_client_headers configured, these still go to the client. */
const ALWAYS_FOR_CLIENT = new Set(['www-authenticate', 'location']);

export class HttpAuthzService implements AuthzService {
  readonly cluster: string;
  private readonly timeoutMs: number;
  private readonly pathPrefix: string;
  private readonly allowed: ((name: string) => boolean) | undefined;
  private readonly disallowed: ((name: string) => boolean) | undefined;
  private readonly headersToAdd: HeaderToAdd[];
  private readonly upstreamSet: ((name: string) => boolean) | undefined;
  private readonly upstreamAppend: ((name: string) => boolean) | undefined;
  private readonly clientOnDenial: ((name: string) => boolean) | undefined;
  private readonly clientOnSuccess: ((name: string) => boolean) | undefined;
  private readonly toMetadata: ((name: string) => boolean) | undefined;

  constructor(
    service: JsonObject,
    filter: JsonObject,
    private readonly clusters: FilterClusters,
  ) {
    const uri = obj(service.server_uri);
    this.cluster = String(uri.cluster);
    this.timeoutMs = typeof uri.timeout === 'string' ? durationMs(uri.timeout) : 200;
    this.pathPrefix = String(service.path_prefix ?? '');
    const rq = obj(service.authorization_request);
    this.allowed = compileListMatcher(filter.allowed_headers ?? rq.allowed_headers);
    this.disallowed = compileListMatcher(filter.disallowed_headers);
    this.headersToAdd = compileHeadersToAdd(list(rq.headers_to_add).map((h) => ({ header: h, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' })));
    const rs = obj(service.authorization_response);
    this.upstreamSet = compileListMatcher(rs.allowed_upstream_headers);
    this.upstreamAppend = compileListMatcher(rs.allowed_upstream_headers_to_append);
    this.clientOnDenial = compileListMatcher(rs.allowed_client_headers);
    this.clientOnSuccess = compileListMatcher(rs.allowed_client_headers_on_success);
    this.toMetadata = compileListMatcher(rs.dynamic_metadata_from_headers);
  }

  async check(input: CheckInput): Promise<AuthzDecision> {
    const cluster = this.clusters.get(this.cluster);
    if (!cluster) return { kind: 'error', message: `unknown cluster '${this.cluster}'` };
    const { rq } = input.request;
    const headers: string[] = ['host', rq.authority];
    const sent = new Set(['host', 'content-length']);
    for (const name in rq.headers) {
      if (sent.has(name) || name.startsWith(':')) continue;
      const always = name === 'authorization';
      if (!always && !this.allowed?.(name)) continue;
      if (this.disallowed?.(name)) continue;
      const v = rq.headers[name];
      if (v === undefined) continue;
      headers.push(name, Array.isArray(v) ? v.join(',') : v);
    }
    // headers_to_add replace what the request had of the same name.
    const entry = this.headersToAdd.length ? input.request.entry() : undefined;
    for (const h of this.headersToAdd) {
      for (let i = headers.length - 2; i >= 0; i -= 2) if (headers[i] === h.name) headers.splice(i, 2);
      headers.push(h.name, h.value.format(entry!));
    }
    headers.push('content-length', String(input.body?.length ?? 0));
    if (input.body) headers.push('x-envoy-auth-partial-body', 'false');
    headers.push('x-envoy-expected-rq-timeout-ms', String(this.timeoutMs));
    let response;
    try {
      response = await cluster.send({ method: rq.method, path: this.pathPrefix + rq.path, headers, body: input.body ?? null, timeoutMs: this.timeoutMs });
    } catch (err) {
      if (err instanceof AsyncRequestError) return { kind: 'error', message: err.message };
      throw err;
    }
    if (response.status >= 500) return { kind: 'error', message: `the authorization service answered ${response.status}` };
    if (response.status === 200) return this.allowedBy(response.headers);
    return { kind: 'denied', status: response.status, headers: this.forClient(response.headers), body: response.body.toString('utf8') };
  }

  private allowedBy(headers: IncomingHttpHeaders): AuthzDecision {
    const out = okDecision();
    for (const [name, value] of pairs(headers)) {
      if (name === 'x-envoy-auth-headers-to-remove') {
        for (const h of value.split(',')) if (h.trim()) out.remove.push(h.trim().toLowerCase());
        continue;
      }
      if (this.upstreamSet?.(name)) out.set.push([name, value]);
      if (this.upstreamAppend?.(name)) out.append.push([name, value]);
      if (this.clientOnSuccess?.(name)) out.responseHeaders.push({ name, value, action: 'APPEND_IF_EXISTS_OR_ADD' });
      if (this.toMetadata?.(name)) (out.metadata ??= {})[name] = value;
    }
    return out;
  }

  /** A denial's headers for the client: all of them by default, else those allowed_client_headers matches (and a few always). */
  private forClient(headers: IncomingHttpHeaders): HeaderPair[] {
    return pairs(headers).filter(([name]) => !NOT_FOR_CLIENT.has(name) && (this.clientOnDenial === undefined || this.clientOnDenial(name) || ALWAYS_FOR_CLIENT.has(name)));
  }
}

function pairs(headers: IncomingHttpHeaders): HeaderPair[] {
  const out: HeaderPair[] = [];
  for (const name in headers) {
    const v = headers[name];
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const item of v) out.push([name, item]);
    else out.push([name, v]);
  }
  return out;
}
