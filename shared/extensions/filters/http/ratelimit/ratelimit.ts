import { ResponseFlag } from '../../../../access-log/entry.js';
import { list, obj } from '../../../../config/access.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import { durationMs, httpStatusCode } from '../../../../config/wkt.js';
import { applyHeadersToAdd, compileHeadersToAdd, type HeaderToAdd, type MutableHeaders } from '../../../../header-mutation.js';
import { requestHeader } from '../../../../matchers.js';
import { featureEnabled } from '../../../../runtime.js';
import { stats } from '../../../../stats/process.js';
import type { Counter } from '../../../../stats/store.js';
import { GrpcCallError } from '../../../../upstream/async-request.js';
import { descriptorsOf, type Descriptor, type VhRateLimits } from '../../../../http/rate-limit-policy.js';
import type { FilterContext, FilterDecision, FilterRequest, HttpFilter, HttpFilterFactory } from '../../../../http/filter-api.js';
import { isGrpcContentType } from '../../../../http/grpc.js';

/**
 * envoy.filters.http.ratelimit, as Envoy's: a routed request's descriptors (the route's and
 * virtual host's `rate_limits` of the filter's `stage`) go to a rate-limit service
 * (envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit, the API envoyproxy/ratelimit
 * implements) for the filter's `domain`, and the request waits for the answer (`timeout`, 20 ms by
 * default).
 * - OK: it goes on, with the service's request_headers_to_add.
 * - OVER_LIMIT: 429 (`rate_limited_status`) with `x-envoy-ratelimited: true`, the service's
 *   response headers and body, response flag RL; a gRPC request gets RESOURCE_EXHAUSTED or
 *   UNAVAILABLE. The runtime's `ratelimit.http_filter_enforcing` at 0 only counts it.
 * - Error (no answer, no host): the request goes on (`failure_mode_allowed`) unless
 *   `failure_mode_deny`, then 500 (`status_on_error`), response flag RLSE.
 * With `enable_x_ratelimit_headers: DRAFT_VERSION_03`, responses carry X-RateLimit-Limit,
 * -Remaining and -Reset from the service's descriptor statuses. Counted under the route's cluster:
 * cluster.<name>.ratelimit.{ok,over_limit,error,failure_mode_allowed}.
 */

const METHOD = '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit';
const REQUEST = 'envoy.service.ratelimit.v3.RateLimitRequest';
const RESPONSE = 'envoy.service.ratelimit.v3.RateLimitResponse';
const METADATA_NAMESPACE = 'envoy.filters.http.ratelimit';

const UNIT_SECONDS: Record<string, number> = { SECOND: 1, MINUTE: 60, HOUR: 3600, DAY: 86400 };

interface Settings {
  domain: string;
  stage: number;
  requestType: 'internal' | 'external' | 'both';
  timeoutMs: number;
  failureModeDeny: boolean;
  grpcStatus: number;
  xRateLimitHeaders: boolean;
  envoyRateLimitedHeader: boolean;
  rateLimitedStatus: number;
  statusOnError: number;
  responseHeaders: HeaderToAdd[];
  serviceCluster: string;
  statPrefix: string;
}

interface Counters {
  ok: Counter;
  overLimit: Counter;
  error: Counter;
  failureModeAllowed: Counter;
}

const clusterCounters = new Map<string, Counters>();
function countersFor(prefix: string): Counters {
  let c = clusterCounters.get(prefix);
  if (!c) {
    const n = (name: string) => stats.counter(`${prefix}${name}`);
    clusterCounters.set(prefix, (c = { ok: n('ok'), overLimit: n('over_limit'), error: n('error'), failureModeAllowed: n('failure_mode_allowed') }));
  }
  return c;
}

/** The draft-03 X-RateLimit headers from the descriptor statuses: the one with the least remaining decides. */
function xRateLimitHeaders(statuses: JsonObject[]): MutableHeaders {
  let min: JsonObject | undefined;
  let policy = '';
  for (const s of statuses) {
    if (s.current_limit === undefined) continue;
    if (!min || Number(s.limit_remaining ?? 0) < Number(min.limit_remaining ?? 0)) min = s;
    const limit = obj(s.current_limit);
    const window = UNIT_SECONDS[String(limit.unit ?? 'UNKNOWN')] ?? 0;
    if (window) policy += `, ${Number(limit.requests_per_unit ?? 0)};w=${window}${typeof limit.name === 'string' && limit.name ? `;name="${limit.name}"` : ''}`;
  }
  if (!min) return {};
  const reset = typeof min.duration_until_reset === 'string' ? Math.floor(durationMs(min.duration_until_reset) / 1000) : 0;
  return {
    'x-ratelimit-limit': `${Number(obj(min.current_limit).requests_per_unit ?? 0)}${policy}`,
    'x-ratelimit-remaining': String(Number(min.limit_remaining ?? 0)),
    'x-ratelimit-reset': String(reset),
  };
}

/** HeaderValue lists from the service, as headers (several values of a name accumulate). */
function addHeaderValues(target: MutableHeaders, values: unknown): void {
  for (const h of list(values)) {
    const name = String(h.key ?? '').toLowerCase();
    if (!name) continue;
    const value = String(h.value ?? '');
    const present = target[name];
    target[name] = present === undefined ? value : ([] as (string | number)[]).concat(present, value).map(String);
  }
}

class RateLimitFilter implements HttpFilter {
  private responseHeaders: MutableHeaders | undefined;

  constructor(
    private readonly s: Settings,
    private readonly ctx: FilterContext,
  ) {}

  decodeHeaders(request: FilterRequest): FilterDecision | Promise<FilterDecision> {
    const s = this.s;
    if (!featureEnabled('ratelimit.http_filter_enabled', 100)) return 'continue';
    const internal = requestHeader(request.rq, 'x-envoy-internal') === 'true';
    if ((internal && s.requestType === 'external') || (!internal && s.requestType === 'internal')) return 'continue';
    // A route (and virtual host) without rate_limits asks nothing: no descriptor to build.
    if (!request.route?.rateLimits || request.clusterName === undefined) return 'continue';
    const perRoute = request.perRoute[0];
    const vh = (perRoute?.vh_rate_limits ?? 'OVERRIDE') as VhRateLimits;
    const domain = typeof perRoute?.domain === 'string' && perRoute.domain ? perRoute.domain : s.domain;
    const descriptors = descriptorsOf(
      request.route.rateLimits,
      s.stage,
      vh,
      { rq: request.rq, remoteIp: request.connection.remoteIp, clusterName: request.clusterName, localCluster: this.ctx.localCluster },
      (key) => featureEnabled(`ratelimit.${key}.http_filter_enabled`, 100),
    );
    if (descriptors.length === 0) return 'continue';
    const counters = countersFor(`cluster.${request.clusterName}.ratelimit.${s.statPrefix}`);
    return this.ask(domain, descriptors).then(
      (response) => this.apply(request, response, counters),
      (err: Error) => {
        if (!(err instanceof GrpcCallError)) throw err;
        return this.failed(request, counters);
      },
    );
  }

  encodeHeaders(_status: number, headers: MutableHeaders): void {
    // As Envoy's populateResponseHeaders: added beside what the upstream sent, never over it.
    for (const [name, value] of Object.entries(this.responseHeaders ?? {})) {
      const had = headers[name];
      headers[name] = had === undefined ? value : [...[had].flat().map(String), ...[value].flat().map(String)];
    }
  }

  private ask(domain: string, descriptors: Descriptor[]): Promise<JsonObject> {
    const cluster = this.ctx.clusters.get(this.s.serviceCluster);
    if (!cluster) return Promise.reject(new GrpcCallError(`unknown cluster '${this.s.serviceCluster}'`, false));
    const message = { domain, descriptors: descriptors.map((d) => ({ entries: d.map(([key, value]) => ({ key, value })) })), hits_addend: 1 };
    return cluster.grpcUnary(METHOD, REQUEST, RESPONSE, message, this.s.timeoutMs);
  }

  private apply(request: FilterRequest, response: JsonObject, counters: Counters): FilterDecision {
    const s = this.s;
    const code = String(response.overall_code ?? 'UNKNOWN');
    if (code !== 'OK' && code !== 'OVER_LIMIT') return this.failed(request, counters);
    const metadata = obj(response.dynamic_metadata);
    if (Object.keys(metadata).length) Object.assign((request.metadata()[METADATA_NAMESPACE] ??= {}), metadata);
    const headers: MutableHeaders = s.xRateLimitHeaders ? xRateLimitHeaders(list(response.statuses)) : {};
    addHeaderValues(headers, response.response_headers_to_add);
    if (code === 'OK') {
      counters.ok.inc();
      addHeaderValues(request.rq.headers as MutableHeaders, response.request_headers_to_add);
      if (Object.keys(headers).length) this.responseHeaders = headers;
      return 'continue';
    }
    counters.overLimit.inc();
    // Envoy charges the rate_limited_status (429 unless set) to the route's cluster as if it had answered.
    this.ctx.clusters.get(request.clusterName!)?.charge(s.rateLimitedStatus);
    if (s.envoyRateLimitedHeader) headers['x-envoy-ratelimited'] = 'true';
    if (!featureEnabled('ratelimit.http_filter_enforcing', 100)) {
      addHeaderValues(request.rq.headers as MutableHeaders, response.request_headers_to_add);
      return 'continue';
    }
    if (s.responseHeaders.length) applyHeadersToAdd(headers, s.responseHeaders, request.entry());
    request.flag(ResponseFlag.rateLimited, 'request_rate_limited');
    if (isGrpcContentType(requestHeader(request.rq, 'content-type'))) {
      request.reply(200, { ...headers, 'content-type': 'application/grpc', 'grpc-status': String(s.grpcStatus) });
    } else {
      const body = typeof response.raw_body === 'string' ? Buffer.from(response.raw_body, 'base64').toString('utf8') : '';
      request.reply(s.rateLimitedStatus, headers, body);
    }
    return 'stop';
  }

  private failed(request: FilterRequest, counters: Counters): FilterDecision {
    counters.error.inc();
    if (!this.s.failureModeDeny) {
      counters.failureModeAllowed.inc();
      return 'continue';
    }
    request.flag(ResponseFlag.rateLimitServiceError, 'rate_limiter_error');
    request.reply(this.s.statusOnError, {}, '');
    return 'stop';
  }
}

export function rateLimitFactory(name: string, config: JsonObject, ctx: FilterContext): HttpFilterFactory {
  const limited = config.rate_limited_status !== undefined ? httpStatusCode(obj(config.rate_limited_status).code) : 429;
  const onError = config.status_on_error !== undefined ? httpStatusCode(obj(config.status_on_error).code) : 500;
  const s: Settings = {
    domain: String(config.domain),
    stage: Number(config.stage ?? 0),
    requestType: (config.request_type === 'internal' || config.request_type === 'external' ? config.request_type : 'both') as Settings['requestType'],
    timeoutMs: typeof config.timeout === 'string' ? durationMs(config.timeout) : 20,
    failureModeDeny: config.failure_mode_deny === true,
    grpcStatus: config.rate_limited_as_resource_exhausted === true ? 8 : 14,
    xRateLimitHeaders: config.enable_x_ratelimit_headers === 'DRAFT_VERSION_03',
    envoyRateLimitedHeader: config.disable_x_envoy_ratelimited_header !== true,
    // Envoy: a status that does not say "refused" (under 400) gives way to 429.
    rateLimitedStatus: limited >= 400 ? limited : 429,
    statusOnError: onError >= 100 && onError <= 511 ? onError : 500,
    responseHeaders: compileHeadersToAdd(config.response_headers_to_add),
    serviceCluster: String(obj(obj(obj(config.rate_limit_service).grpc_service).envoy_grpc).cluster_name),
    statPrefix: typeof config.stat_prefix === 'string' && config.stat_prefix ? `${config.stat_prefix}.` : '',
  };
  ctx.clusters.prepareGrpcTypes(REQUEST, RESPONSE);
  return { name, create: () => new RateLimitFilter(s, ctx) };
}
