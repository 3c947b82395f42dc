import { compileRouteTracing, type RouteTracing } from '../tracing/route-tracing.js';
import { re2 } from '../re2.js';
import { list, obj } from '../config/access.js';
import type { JsonObject } from '../config/proto-json.js';
import { readDataSource } from '../config/data-source.js';
import { durationMs } from '../config/wkt.js';
import { compileHeaderMatcher, compileQueryParameterMatcher, compileRegexSubstitution, requestHeader, type HeaderMatcher, type RequestView } from '../matchers.js';
import { compileRuntimeFraction, runtimeInteger } from '../runtime.js';
import { compileHeaderMutations, type HeaderMutations } from '../header-mutation.js';
import { compileRateLimitPolicy, type RateLimitPolicy } from './rate-limit-policy.js';
import { compileHashPolicy, type HashPolicy } from './hash-policy.js';
import { compileMirrorPolicies, type MirrorPolicy } from './mirror-policy.js';
import { isGrpcContentType } from './grpc.js';
import { compileRetryPolicy, type RetryPolicy } from './retry-policy.js';
import type { RouteConfiguration } from '../config/envoy-types.js';

export type { RequestView } from '../matchers.js';

/**
 * An HCM `route_config`, compiled once per worker (and by the admin, to explain a route with the
 * same code): virtual hosts chosen by Envoy's domain
 * precedence (exact, then the longest `*.suffix`, then the longest `prefix*`, then `*`), and
 * within one, the first route whose path and header matchers all match.
 */

type Obj = JsonObject;

export interface WeightedCluster {
  name: string;
  weight: number;
}

/** RouteAction.MaxStreamDuration, in ms; a field left out is undefined. */
export interface StreamDurationPolicy {
  /** max_stream_duration (0: none). */
  maxMs?: number;
  /** grpc_timeout_header_max: a gRPC request's grpc-timeout sets the limit, capped by this (0: not capped). */
  grpcHeaderMaxMs?: number;
  grpcHeaderOffsetMs?: number;
}

export interface ForwardAction {
  kind: 'route';
  cluster?: string;
  /** cluster_header (lower-cased): the request header whose first value names the cluster. */
  clusterHeader?: string;
  weightedClusters?: WeightedCluster[];
  /** The weights' sum (WeightedCluster.total_weight is deprecated: Envoy uses the sum too). */
  totalWeight: number;
  /** WeightedCluster.runtime_key_prefix: each cluster's weight is the runtime's `<prefix>.<name>`, its configured weight the default. */
  runtimeKeyPrefix?: string;
  prefixRewrite?: string;
  /** RouteAction.regex_rewrite: the path (without its query) rewritten by a regex and a substitution. */
  regexRewrite?: (path: string) => string;
  hostRewriteLiteral?: string;
  /** 0 disables the timeout. */
  timeoutMs: number;
  /** RouteAction.idle_timeout: the stream's idle timeout from the moment it is routed here, in place of stream_idle_timeout (0 disables it). */
  idleTimeoutMs?: number;
  /** RouteAction.max_stream_duration: the stream's duration limit, in place of the connection manager's (worker/http/stream-duration.ts). */
  streamDuration?: StreamDurationPolicy;
  /** cluster_not_found_response_code: 503 (default), 404 or 500. */
  clusterNotFoundStatus: number;
  retry?: RetryPolicy;
  /** RouteAction.priority: which circuit-breaker thresholds apply (0 DEFAULT, 1 HIGH). */
  priority: 0 | 1;
  /** request_mirror_policies: clusters that get a copy of each request. */
  mirrors?: MirrorPolicy[];
  /** upgrade_configs: upgrade types (lower-cased) this route enables or disables. */
  upgrades?: Map<string, boolean>;
  /** upgrade_configs' CONNECT entry with connect_config: CONNECT (and with allow_post, POST) is terminated here, its payload sent to the cluster as TCP. */
  terminateConnect?: { allowPost: boolean };
}

export interface DirectResponseAction {
  kind: 'direct_response';
  status: number;
  body?: Buffer;
}

export interface RedirectAction {
  kind: 'redirect';
  status: number;
  scheme?: string;
  host?: string;
  port?: number;
  path?: string;
  prefixRewrite?: string;
  stripQuery: boolean;
  /** A virtual host's require_tls: to `https://` + the Host as sent + the path, as Envoy's SslRedirector. */
  sslRedirect?: true;
}

export type RouteAction = ForwardAction | DirectResponseAction | RedirectAction;

type PathMatcher = (path: string) => boolean;

export interface Route {
  /** Route.name, for %ROUTE_NAME%. */
  name?: string;
  /** The Route as configured, for the tools that explain a route (shared/http/route-explain.ts). */
  config: JsonObject;
  /** The matched prefix (for prefix_rewrite), when the route matches by prefix. */
  prefix?: string;
  matchPath: PathMatcher;
  /** Every condition of the match beyond its path (routeConditions), compiled. */
  matchHeaders: HeaderMatcher[];
  action: RouteAction;
  /** request_/response_headers_to_add/_to_remove of the route, its virtual host and the configuration, if any. */
  headers?: HeaderMutations;
  /** typed_per_filter_config by filter name: the route's entry, then its virtual host's (each an Any, as configured). */
  perFilter: Map<string, JsonObject[]>;
  /** The deprecated `cors` policies (RouteAction's, then the virtual host's), for a CORS filter given no typed_per_filter_config. */
  legacyCors: JsonObject[];
  /** rate_limits of the route and its virtual host, for the rate-limit filters. */
  rateLimits?: RateLimitPolicy;
  /** Route.metadata (filter_metadata by filter name), for filters that read it (Lua's handle:metadata()). */
  metadata?: JsonObject;
  /** RouteAction.hash_policy: the request's hash for RING_HASH and MAGLEV clusters. */
  hashPolicy?: HashPolicy;
  /** Route.decorator and Route.tracing, for a connection manager that traces. */
  tracing?: RouteTracing;
}

export interface VirtualHost {
  name: string;
  /** The VirtualHost as configured (see Route.config). */
  config: JsonObject;
  routes: Route[];
  /** require_tls: ALL, or EXTERNAL_ONLY (a request with x-envoy-internal: true may stay in plaintext). */
  requireTls?: 'ALL' | 'EXTERNAL_ONLY';
}

/** Envoy's SslRedirectRoute: the answer of a virtual host that requires TLS to a request without it (301). */
export const SSL_REDIRECT: Route = {
  name: undefined,
  config: {},
  matchPath: () => true,
  matchHeaders: [],
  action: { kind: 'redirect', status: 301, stripQuery: false, sslRedirect: true },
  perFilter: new Map(),
  legacyCors: [],
};

const CLUSTER_NOT_FOUND_CODES: Record<string, number> = { SERVICE_UNAVAILABLE: 503, NOT_FOUND: 404, INTERNAL_SERVER_ERROR: 500 };
const REDIRECT_CODES: Record<string, number> = { MOVED_PERMANENTLY: 301, FOUND: 302, SEE_OTHER: 303, TEMPORARY_REDIRECT: 307, PERMANENT_REDIRECT: 308 };

/**
 * The cluster a request routed by `action` goes to, chosen once when it is routed (filters and the
 * router see the same one): its cluster; the first value of the request header `cluster_header`
 * names (none when it is absent or empty: cluster_not_found, as Envoy); or one of its weighted
 * clusters by weight, the weights read from the runtime under `runtime_key_prefix.<name>` when it
 * is set. Given the stream's random value (a tool explaining a request), chosen as Envoy chooses
 * with it: the cluster whose span of the total weight holds `random % total`.
 */
export function chooseClusterName(action: ForwardAction, rq: RequestView): string | undefined {
  if (action.cluster) return action.cluster;
  if (action.clusterHeader !== undefined) {
    const v = action.clusterHeader.startsWith(':') ? requestHeader(rq, action.clusterHeader) : rq.headers[action.clusterHeader];
    const first = Array.isArray(v) ? v[0] : v;
    return first ? first : undefined;
  }
  const weighted = action.weightedClusters ?? [];
  const prefix = action.runtimeKeyPrefix;
  const weights = prefix === undefined ? undefined : weighted.map((c) => runtimeInteger(`${prefix}.${c.name}`, c.weight));
  const total = weights ? weights.reduce((s, w) => s + w, 0) : action.totalWeight;
  let r = rq.random !== undefined && total > 0 ? Number(rq.random % BigInt(total)) : Math.random() * total;
  for (const [i, c] of weighted.entries()) {
    r -= weights ? weights[i]! : c.weight;
    if (r < 0) return c.name;
  }
  return weighted.at(-1)?.name;
}

function compileAction(route: Obj, vhostRetry: Obj | undefined): RouteAction {
  if (route.direct_response) {
    const d = obj(route.direct_response);
    return { kind: 'direct_response', status: Number(d.status), body: d.body === undefined ? undefined : readDataSource(obj(d.body)) };
  }
  if (route.redirect) {
    const r = obj(route.redirect);
    return {
      kind: 'redirect',
      status: REDIRECT_CODES[String(r.response_code ?? 'MOVED_PERMANENTLY')] ?? 301,
      scheme: r.https_redirect === true ? 'https' : (r.scheme_redirect as string | undefined),
      host: r.host_redirect as string | undefined,
      port: r.port_redirect as number | undefined,
      path: r.path_redirect as string | undefined,
      prefixRewrite: r.prefix_rewrite as string | undefined,
      stripQuery: r.strip_query === true,
    };
  }
  const a = obj(route.route);
  const mirrors = compileMirrorPolicies(a);
  const weighted = a.weighted_clusters ? list(obj(a.weighted_clusters).clusters).map((c) => ({ name: String(c.name), weight: Number(c.weight ?? 0) })) : undefined;
  const runtimeKeyPrefix = obj(a.weighted_clusters).runtime_key_prefix;
  return {
    kind: 'route',
    cluster: a.cluster as string | undefined,
    ...(typeof a.cluster_header === 'string' && a.cluster_header ? { clusterHeader: a.cluster_header.toLowerCase() } : {}),
    weightedClusters: weighted,
    ...(typeof runtimeKeyPrefix === 'string' && runtimeKeyPrefix ? { runtimeKeyPrefix } : {}),
    totalWeight: weighted ? weighted.reduce((s, c) => s + c.weight, 0) : 0,
    prefixRewrite: a.prefix_rewrite as string | undefined,
    ...(a.regex_rewrite ? { regexRewrite: compileRegexSubstitution(obj(a.regex_rewrite)) } : {}),
    hostRewriteLiteral: a.host_rewrite_literal as string | undefined,
    timeoutMs: typeof a.timeout === 'string' ? durationMs(a.timeout) : 15_000,
    ...(typeof a.idle_timeout === 'string' ? { idleTimeoutMs: durationMs(a.idle_timeout) } : {}),
    ...(a.max_stream_duration !== undefined ? { streamDuration: streamDurationPolicy(obj(a.max_stream_duration)) } : {}),
    priority: a.priority === 'HIGH' ? 1 : 0,
    clusterNotFoundStatus: CLUSTER_NOT_FOUND_CODES[String(a.cluster_not_found_response_code ?? 'SERVICE_UNAVAILABLE')] ?? 503,
    ...retryPolicyOf(a.retry_policy ?? vhostRetry),
    ...(mirrors ? { mirrors } : {}),
    ...(a.upgrade_configs !== undefined ? { upgrades: routeUpgrades(a.upgrade_configs) } : {}),
    ...connectTermination(a.upgrade_configs),
  };
}

/** The route's retry_policy (else its virtual host's), compiled; none when neither has one. */
function retryPolicyOf(policy: unknown): { retry?: RetryPolicy } {
  return policy === undefined ? {} : { retry: compileRetryPolicy(obj(policy)) };
}

/** The route's CONNECT entry with connect_config, if it has one (see ForwardAction.terminateConnect). */
function connectTermination(configs: unknown): { terminateConnect?: { allowPost: boolean } } {
  const entry = list(configs).find((c) => String(c.upgrade_type).toLowerCase() === 'connect' && c.connect_config !== undefined);
  return entry ? { terminateConnect: { allowPost: obj(entry.connect_config).allow_post === true } } : {};
}

/** One condition of a RouteMatch beyond its path, as configured. */
export type RouteCondition =
  | { kind: 'header'; config: Obj }
  | { kind: 'query_parameter'; config: Obj }
  | { kind: 'grpc' }
  | { kind: 'runtime_fraction'; config: Obj }
  | { kind: 'connect_matcher' };

/**
 * A RouteMatch's conditions beyond its path, in the order a request is tried against them: each of
 * `headers`, each of `query_parameters` (by its first value, or present), `grpc` (a gRPC content
 * type), `runtime_fraction` (a share of requests, from the runtime key when it is set) and
 * `connect_matcher`. Route.matchHeaders holds them compiled, in this order (route-explain.ts reads both).
 */
export function routeConditions(match: Obj): RouteCondition[] {
  const out: RouteCondition[] = [];
  for (const h of list(match.headers)) out.push({ kind: 'header', config: h });
  for (const q of list(match.query_parameters)) out.push({ kind: 'query_parameter', config: q });
  if (match.grpc !== undefined) out.push({ kind: 'grpc' });
  if (match.runtime_fraction !== undefined) out.push({ kind: 'runtime_fraction', config: obj(match.runtime_fraction) });
  if (match.connect_matcher !== undefined) out.push({ kind: 'connect_matcher' });
  return out;
}

function compileCondition(c: RouteCondition): (rq: RequestView) => boolean {
  switch (c.kind) {
    case 'header': return compileHeaderMatcher(c.config);
    case 'query_parameter': return compileQueryParameterMatcher(c.config);
    case 'grpc': return (rq) => isGrpcContentType(requestHeader(rq, 'content-type'));
    case 'runtime_fraction': return compileRuntimeFraction(c.config);
    // CONNECT requests only (an HTTP/2 extended CONNECT is routed as the GET upgrade it stands for).
    case 'connect_matcher': return (rq) => rq.method === 'CONNECT';
  }
}

function compilePathMatcher(match: Obj): { matchPath: PathMatcher; prefix?: string } {
  const caseSensitive = match.case_sensitive !== false;
  const norm = (s: string) => (caseSensitive ? s : s.toLowerCase());
  if (typeof match.prefix === 'string') {
    const prefix = norm(match.prefix);
    return { prefix: match.prefix, matchPath: (p) => norm(p).startsWith(prefix) };
  }
  if (typeof match.path === 'string') {
    const path = norm(match.path);
    return { matchPath: (p) => norm(p) === path };
  }
  if (match.safe_regex) {
    const re = re2().compile(String(obj(match.safe_regex).regex));
    return { matchPath: (p) => re.matches(p) };
  }
  if (typeof match.path_separated_prefix === 'string') {
    const prefix = norm(match.path_separated_prefix);
    return { prefix: match.path_separated_prefix, matchPath: (p) => norm(p) === prefix || norm(p).startsWith(prefix + '/') };
  }
  // A CONNECT has no path: connect_matcher matches on the method (see routeConditions).
  if (match.connect_matcher !== undefined) return { matchPath: () => true };
  return { matchPath: () => false };
}

/** A virtual host as one of its domains chose it: the domain as configured, and how it matched. */
export interface DomainMatch {
  host: VirtualHost;
  domain: string;
  kind: 'exact' | 'suffix' | 'prefix' | 'any';
}

export class RouteTable {
  private readonly exact = new Map<string, DomainMatch>();
  private readonly suffixes: [string, DomainMatch][] = [];
  private readonly prefixes: [string, DomainMatch][] = [];
  private catchAll: DomainMatch | undefined;
  /** ignore_port_in_host_matching: a Host's port is left out when its virtual host is chosen. */
  readonly ignorePort: boolean;
  readonly virtualHosts: VirtualHost[] = [];

  constructor(readonly config: RouteConfiguration) {
    this.ignorePort = config.ignore_port_in_host_matching === true;
    for (const vh of list(config.virtual_hosts)) {
      const vhostRetry = vh.retry_policy === undefined ? undefined : obj(vh.retry_policy);
      const host: VirtualHost = {
        name: String(vh.name),
        config: vh,
        ...(vh.require_tls === 'ALL' || vh.require_tls === 'EXTERNAL_ONLY' ? { requireTls: vh.require_tls } : {}),
        routes: list(vh.routes).map((r) => {
          const match = obj(r.match);
          const headers = compileHeaderMutations(r, vh, obj(config));
          const perFilter = new Map<string, JsonObject[]>();
          for (const scope of [obj(r.typed_per_filter_config), obj(vh.typed_per_filter_config)]) {
            for (const [name, any] of Object.entries(scope)) perFilter.set(name, [...(perFilter.get(name) ?? []), obj(any)]);
          }
          const legacyCors = [obj(r.route).cors, vh.cors].filter((c) => c !== undefined).map(obj);
          const rateLimits = compileRateLimitPolicy(r, vh);
          const hashPolicy = compileHashPolicy(obj(r.route).hash_policy);
          const tracing = compileRouteTracing(r);
          return {
            config: r,
            perFilter,
            legacyCors,
            ...(rateLimits ? { rateLimits } : {}),
            ...(r.metadata !== undefined ? { metadata: obj(r.metadata) } : {}),
            ...(hashPolicy ? { hashPolicy } : {}),
            ...(tracing ? { tracing } : {}),
            name: typeof r.name === 'string' && r.name ? r.name : undefined,
            ...compilePathMatcher(match),
            matchHeaders: routeConditions(match).map(compileCondition),
            action: compileAction(r, vhostRetry),
            ...(headers ? { headers } : {}),
          };
        }),
      };
      this.virtualHosts.push(host);
      for (const domain of (vh.domains as string[] | undefined) ?? []) {
        const d = domain.toLowerCase();
        if (d === '*') this.catchAll ??= { host, domain, kind: 'any' };
        else if (d.startsWith('*')) this.suffixes.push([d.slice(1), { host, domain, kind: 'suffix' }]);
        else if (d.endsWith('*')) this.prefixes.push([d.slice(0, -1), { host, domain, kind: 'prefix' }]);
        else if (!this.exact.has(d)) this.exact.set(d, { host, domain, kind: 'exact' });
      }
    }
    this.suffixes.sort((a, b) => b[0].length - a[0].length);
    this.prefixes.sort((a, b) => b[0].length - a[0].length);
  }

  virtualHost(authority: string): VirtualHost | undefined {
    return this.domainMatch(authority)?.host;
  }

  /** The virtual host a Host chooses, with the domain that chose it. */
  domainMatch(authority: string): DomainMatch | undefined {
    // Only `*` (the common one-host configuration): nothing to compare.
    if (this.exact.size === 0 && this.suffixes.length === 0 && this.prefixes.length === 0) return this.catchAll;
    const host = (this.ignorePort ? withoutPort(authority) : authority).toLowerCase();
    const exact = this.exact.get(host);
    if (exact) return exact;
    for (const [suffix, m] of this.suffixes) if (host.length > suffix.length && host.endsWith(suffix)) return m;
    for (const [prefix, m] of this.prefixes) if (host.length > prefix.length && host.startsWith(prefix)) return m;
    // As Envoy's findVirtualHost: a Host with a port matches a domain with that port, unless ignore_port_in_host_matching.
    return this.catchAll;
  }

  /** Whether a request to this virtual host is answered by its require_tls redirect (Envoy's SslRedirectRoute). */
  static redirectsToTls(vh: VirtualHost, rq: RequestView): boolean {
    // As Envoy's VirtualHostImpl: x-forwarded-proto (the connection manager's, for an edge request) says whether it came over TLS.
    return vh.requireTls !== undefined && rq.headers['x-forwarded-proto'] !== 'https' && (vh.requireTls === 'ALL' || rq.headers['x-envoy-internal'] !== 'true');
  }

  /** The first matching route of the request's virtual host. Path matchers see the path without its query. */
  route(rq: RequestView): Route | undefined {
    const vh = this.virtualHost(rq.authority);
    if (!vh) return undefined;
    if (vh.requireTls && RouteTable.redirectsToTls(vh, rq)) return SSL_REDIRECT;
    const path = pathWithoutQuery(rq.path);
    for (const r of vh.routes) {
      if (r.matchPath(path) && headersMatch(r.matchHeaders, rq)) return r;
    }
    return undefined;
  }
}

/**
 * A Host without its port, as Envoy's HeaderUtility::getPortStart cuts it: at the last colon,
 * unless a `]` follows it (`[::1]` keeps its colons). Whatever follows the colon goes, number or not.
 */
export function withoutPort(host: string): string {
  const colon = host.lastIndexOf(':');
  if (colon < 0) return host;
  const bracket = host.lastIndexOf(']');
  return bracket < 0 || bracket < colon ? host.slice(0, colon) : host;
}

/** What path matchers see: the path without its query. */
export function pathWithoutQuery(path: string): string {
  const q = path.indexOf('?');
  return q < 0 ? path : path.slice(0, q);
}

function headersMatch(matchers: readonly ((rq: RequestView) => boolean)[], rq: RequestView): boolean {
  for (let i = 0; i < matchers.length; i++) if (!matchers[i]!(rq)) return false;
  return true;
}

/** A route's `upgrade_configs`: whether each type (lower-cased) is enabled there. */
export function routeUpgrades(configs: unknown): Map<string, boolean> | undefined {
  const entries = list(configs);
  if (!entries.length) return undefined;
  return new Map(entries.map((c) => [String(c.upgrade_type).toLowerCase(), c.enabled !== false]));
}

function streamDurationPolicy(m: JsonObject): StreamDurationPolicy {
  const ms = (v: unknown) => (typeof v === 'string' ? durationMs(v) : undefined);
  const out: StreamDurationPolicy = {};
  if (ms(m.max_stream_duration) !== undefined) out.maxMs = ms(m.max_stream_duration);
  if (ms(m.grpc_timeout_header_max) !== undefined) out.grpcHeaderMaxMs = ms(m.grpc_timeout_header_max);
  if (ms(m.grpc_timeout_header_offset) !== undefined) out.grpcHeaderOffsetMs = ms(m.grpc_timeout_header_offset);
  return out;
}
