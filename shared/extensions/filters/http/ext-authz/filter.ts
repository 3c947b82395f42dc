import { ResponseFlag } from '../../../../access-log/entry.js';
import { obj } from '../../../../config/access.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import { httpStatusCode } from '../../../../config/wkt.js';
import type { MutableHeaders } from '../../../../header-mutation.js';
import { compileRuntimeFraction, runtimeFeature } from '../../../../runtime.js';
import { stats } from '../../../../stats/process.js';
import type { Counter } from '../../../../stats/store.js';
import type { FilterContext, FilterDecision, FilterRequest, HttpFilter, HttpFilterFactory } from '../../../../http/filter-api.js';
import type { AuthzDecision, AuthzService, ResponseHeader } from './check.js';
import { GrpcAuthzService } from './grpc-service.js';
import { HttpAuthzService } from './http-service.js';

/**
 * envoy.filters.http.ext_authz, as Envoy's: every routed request is checked with an
 * authorization service (HTTP or gRPC) before it goes upstream.
 * - Allowed: it goes on with the headers the service adds, sets or removes (and query parameters
 *   for gRPC); the service's headers for the client are added to the response.
 * - Denied: the client gets the service's answer (HTTP: its status, body and headers; gRPC:
 *   denied_response, 403 by default), response flag UAEX, details `ext_authz_denied`.
 * - Error (no answer in time, a 5xx, no host): `status_on_error` (403), or with
 *   `failure_mode_allow` the request goes on (marked `x-envoy-auth-failure-mode-allowed` with
 *   `failure_mode_allow_header_add`).
 * `with_request_body` sends the body too (read whole, up to `max_request_bytes`; more is a 413).
 * `filter_enabled` checks only a share of requests (`deny_at_disable` refuses the others). A
 * route's ExtAuthzPerRoute switches it off, adds context_extensions (gRPC) or changes the body
 * settings. Counted in http.<prefix>.ext_authz.[<stat_prefix>.]{ok,denied,error,disabled,
 * failure_mode_allowed}, and the first four but disabled under the route's cluster too.
 */

interface Counters {
  ok: Counter;
  denied: Counter;
  error: Counter;
  failureModeAllowed: Counter;
}

interface Settings {
  service: AuthzService;
  failureModeAllow: boolean;
  failureModeHeader: boolean;
  statusOnError: number;
  body: { maxBytes: number } | undefined;
  enabled: () => boolean;
  denyAtDisable: () => boolean;
  chargeClusterResponseStats: boolean;
  /** metadata_context_namespaces: the dynamic metadata sent with a gRPC check. */
  metadataNamespaces: string[];
  /** enable_dynamic_metadata_ingestion: the service's dynamic metadata is kept. */
  ingestMetadata: boolean;
  /** http.<prefix>.ext_authz.[<stat_prefix>.] */
  filterStats: Counters & { disabled: Counter };
  /** The same names under cluster.<route's cluster>.ext_authz.[<stat_prefix>.] */
  clusterPrefix: string;
  tooLarge: Counter;
}

/** What the route's ExtAuthzPerRoute entries (route first, then virtual host) say. */
interface RouteSettings {
  disabled: boolean;
  contextExtensions: Record<string, string>;
  /** undefined: the filter's with_request_body; null: no body for this route. */
  body: { maxBytes: number } | null | undefined;
}

function routeSettings(perRoute: JsonObject[]): RouteSettings {
  const specific = perRoute[0];
  const contextExtensions: Record<string, string> = {};
  for (let i = perRoute.length - 1; i >= 0; i--) Object.assign(contextExtensions, obj(obj(perRoute[i]!.check_settings).context_extensions));
  const check = obj(specific?.check_settings);
  const body = check.disable_request_body_buffering === true ? null : check.with_request_body !== undefined ? { maxBytes: Number(obj(check.with_request_body).max_request_bytes) } : undefined;
  return { disabled: specific?.disabled === true, contextExtensions, body };
}

function counters(prefix: string): Counters {
  return { ok: stats.counter(`${prefix}ok`), denied: stats.counter(`${prefix}denied`), error: stats.counter(`${prefix}error`), failureModeAllowed: stats.counter(`${prefix}failure_mode_allowed`) };
}

const clusterCounters = new Map<string, Counters>();
function clusterCountersOf(prefix: string): Counters {
  let c = clusterCounters.get(prefix);
  if (!c) clusterCounters.set(prefix, (c = counters(prefix)));
  return c;
}

/** Where the service's dynamic metadata goes. */
const METADATA_NAMESPACE = 'envoy.filters.http.ext_authz';

/** Worker-wide: Envoy sends its stream id as the request's id. */
let nextId = 0;

class ExtAuthzFilter implements HttpFilter {
  private responseHeaders: ResponseHeader[] = [];

  constructor(
    private readonly s: Settings,
    private readonly ctx: FilterContext,
  ) {}

  decodeHeaders(request: FilterRequest): FilterDecision | Promise<FilterDecision> {
    // Envoy checks routed requests only.
    if (!request.route) return 'continue';
    const route = routeSettings(request.perRoute);
    if (route.disabled) return 'continue';
    const s = this.s;
    if (!s.enabled()) {
      s.filterStats.disabled.inc();
      if (!s.denyAtDisable()) return 'continue';
      this.refuse(request, s.statusOnError, 'ext_authz_error', {}, '');
      return 'stop';
    }
    const bodySettings = route.body === null ? undefined : (route.body ?? s.body);
    const startedAtMs = Date.now();
    const id = String(++nextId);
    const metadataContext: Record<string, Record<string, unknown>> = {};
    if (s.metadataNamespaces.length) {
      const metadata = request.metadata();
      for (const ns of s.metadataNamespaces) if (metadata[ns]) metadataContext[ns] = metadata[ns]!;
    }
    const base = { request, contextExtensions: route.contextExtensions, metadataContext, id, startedAtMs };
    if (!bodySettings) return s.service.check({ ...base, body: undefined }).then((d) => this.apply(request, d));
    return request.readBody(bodySettings.maxBytes).then((body) => {
      if (body === 'aborted') return 'stop';
      if (body === 'too_large') {
        s.tooLarge.inc();
        request.flag(0, 'request_payload_too_large');
        request.reply(413, {}, 'Payload Too Large');
        return 'stop';
      }
      return s.service.check({ ...base, body }).then((d) => this.apply(request, d));
    });
  }

  encodeHeaders(_status: number, headers: MutableHeaders): void {
    for (const h of this.responseHeaders) setHeader(headers, h);
  }

  private apply(request: FilterRequest, d: AuthzDecision): FilterDecision {
    const s = this.s;
    const cluster = request.clusterName !== undefined ? clusterCountersOf(`cluster.${request.clusterName}.${s.clusterPrefix}`) : undefined;
    if (d.kind !== 'error' && d.metadata && s.ingestMetadata) Object.assign((request.metadata()[METADATA_NAMESPACE] ??= {}), d.metadata);
    if (d.kind === 'ok') {
      s.filterStats.ok.inc();
      cluster?.ok.inc();
      const headers = request.rq.headers as MutableHeaders;
      for (const name of d.remove) delete headers[name];
      for (const [name, value] of d.set) headers[name] = value;
      for (const [name, value] of d.append) headers[name] = headers[name] === undefined ? value : `${String(headers[name])},${value}`;
      for (const [name, value] of d.appendIfPresent) if (headers[name] !== undefined) headers[name] = `${String(headers[name])},${value}`;
      if (d.setQuery.length || d.removeQuery.length) request.rq.path = withQuery(request.rq.path, d.setQuery, d.removeQuery);
      this.responseHeaders = d.responseHeaders;
      return 'continue';
    }
    if (d.kind === 'denied') {
      s.filterStats.denied.inc();
      cluster?.denied.inc();
      // Envoy charges the denial to the route's cluster as if it had answered.
      if (s.chargeClusterResponseStats && request.clusterName !== undefined) this.ctx.clusters.get(request.clusterName)?.charge(d.status);
      const headers: MutableHeaders = {};
      for (const [name, value] of d.headers) headers[name] = headers[name] === undefined ? value : ([] as string[]).concat(headers[name] as string | string[], value);
      this.refuse(request, d.status, 'ext_authz_denied', headers, d.body);
      return 'stop';
    }
    s.filterStats.error.inc();
    cluster?.error.inc();
    if (s.failureModeAllow) {
      s.filterStats.failureModeAllowed.inc();
      cluster?.failureModeAllowed.inc();
      if (s.failureModeHeader) {
        const headers = request.rq.headers as MutableHeaders;
        const v = headers['x-envoy-auth-failure-mode-allowed'];
        headers['x-envoy-auth-failure-mode-allowed'] = v === undefined ? 'true' : `${String(v)},true`;
      }
      return 'continue';
    }
    this.refuse(request, s.statusOnError, 'ext_authz_error', {}, '');
    return 'stop';
  }

  private refuse(request: FilterRequest, status: number, details: string, headers: MutableHeaders, body: string): void {
    request.flag(ResponseFlag.unauthorizedExternalService, details);
    request.reply(status, headers, body);
  }
}

function setHeader(headers: MutableHeaders, h: ResponseHeader): void {
  const present = headers[h.name] !== undefined;
  switch (h.action) {
    case 'ADD_IF_ABSENT':
      if (!present) headers[h.name] = h.value;
      return;
    case 'OVERWRITE_IF_EXISTS':
      if (present) headers[h.name] = h.value;
      return;
    case 'OVERWRITE_IF_EXISTS_OR_ADD':
      headers[h.name] = h.value;
      return;
    default:
      headers[h.name] = present ? ([] as (string | number)[]).concat(headers[h.name] as string | number, h.value).map(String) : h.value;
  }
}

/** The path with query parameters set (replacing any of the same name) and removed. */
function withQuery(path: string, set: [string, string][], remove: string[]): string {
  const q = path.indexOf('?');
  const base = q < 0 ? path : path.slice(0, q);
  const params = new URLSearchParams(q < 0 ? '' : path.slice(q + 1));
  for (const name of remove) params.delete(name);
  for (const [name, value] of set) params.set(name, value);
  const query = params.toString();
  return query ? `${base}?${query}` : base;
}

export function extAuthzFactory(name: string, config: JsonObject, ctx: FilterContext): HttpFilterFactory {
  const statPrefix = typeof config.stat_prefix === 'string' && config.stat_prefix ? `${config.stat_prefix}.` : '';
  const withBody = config.with_request_body !== undefined ? obj(config.with_request_body) : undefined;
  const status = config.status_on_error !== undefined ? httpStatusCode(obj(config.status_on_error).code) : 403;
  const denyAtDisable = obj(config.deny_at_disable);
  const service =
    config.grpc_service !== undefined
      ? new GrpcAuthzService(obj(config.grpc_service), config, ctx.clusters, config.include_peer_certificate === true, withBody?.pack_as_bytes === true)
      : new HttpAuthzService(obj(config.http_service), config, ctx.clusters);
  const filterPrefix = `http.${ctx.statPrefix}.ext_authz.${statPrefix}`;
  const settings: Settings = {
    service,
    failureModeAllow: config.failure_mode_allow === true,
    failureModeHeader: config.failure_mode_allow_header_add === true,
    statusOnError: status >= 100 && status <= 511 ? status : 403,
    body: withBody ? { maxBytes: Number(withBody.max_request_bytes) } : undefined,
    enabled: config.filter_enabled !== undefined ? compileRuntimeFraction(obj(config.filter_enabled)) : () => true,
    denyAtDisable: () => (typeof denyAtDisable.runtime_key === 'string' ? runtimeFeature(denyAtDisable.runtime_key, denyAtDisable.default_value === true) : denyAtDisable.default_value === true),
    chargeClusterResponseStats: config.charge_cluster_response_stats !== false,
    metadataNamespaces: (config.metadata_context_namespaces as string[] | undefined) ?? [],
    ingestMetadata: config.enable_dynamic_metadata_ingestion !== false,
    filterStats: { ...counters(filterPrefix), disabled: stats.counter(`${filterPrefix}disabled`) },
    clusterPrefix: `ext_authz.${statPrefix}`,
    tooLarge: stats.counter(`http.${ctx.statPrefix}.downstream_rq_too_large`),
  };
  return { name, create: () => new ExtAuthzFilter(settings, ctx) };
}
