import { obj } from '../config/access.js';
import type { JsonObject } from '../config/proto-json.js';
import { formatDuration } from '../config/wkt.js';
import { requestHeader, type RequestView } from '../matchers.js';
import { redirectLocation, rewrittenPath } from './route-rewrite.js';
import { chooseClusterName, pathWithoutQuery, routeConditions, RouteTable, SSL_REDIRECT, type DomainMatch, type RouteCondition, type Route } from './route-table.js';

/**
 * How a route table handles one request, decided by the code the workers run (RouteTable's
 * compiled matchers, chooseClusterName, the rewrites) and told condition by condition: the virtual
 * host and the domain that chose it, each route tried in order and why it did or did not match, and
 * what the chosen route does. /route_explain prints it; `proxy route-check` checks it.
 */

/** One route tried: whether it matched, and the first reason it did not (or every reason it did). */
export interface RouteTrial {
  index: number;
  route: Route;
  matched: boolean;
  why: string[];
}

export interface RouteDecision {
  request: RequestView;
  /** The RouteConfiguration decided with. */
  routeConfig: JsonObject;
  /** The virtual host, and the domain that chose it; undefined when no domain matches. */
  domain?: DomainMatch;
  /** The virtual host requires TLS and the request came without it: a 301 to https. */
  tlsRedirect: boolean;
  tried: RouteTrial[];
  /** The route that matched (SSL_REDIRECT for tlsRedirect); undefined: a 404. */
  route?: Route;
  /** Where the route forwards: the cluster chosen (with the request's random value), the path and authority the upstream gets. */
  clusterName?: string;
  upstreamPath?: string;
  upstreamAuthority?: string;
  /** A redirect's Location; for a direct response, the request's own URI (Envoy's newUri). */
  location?: string;
}

/** Decides the request's route, trying each route of its virtual host in order. Its random draws are the request's (`rq.random`). */
export function decideRoute(table: RouteTable, rq: RequestView): RouteDecision {
  const domain = table.domainMatch(rq.authority);
  const decision: RouteDecision = { request: rq, routeConfig: obj(table.config), tlsRedirect: false, tried: [], ...(domain ? { domain } : {}) };
  if (!domain) return decision;
  if (RouteTable.redirectsToTls(domain.host, rq)) {
    decision.tlsRedirect = true;
    decision.route = SSL_REDIRECT;
    decision.location = redirectLocation({ kind: 'redirect', status: 301, stripQuery: false, sslRedirect: true }, rq, undefined);
    return decision;
  }
  const path = pathWithoutQuery(rq.path);
  for (const [index, route] of domain.host.routes.entries()) {
    const trial = tryRoute(route, index, path, rq);
    decision.tried.push(trial);
    if (!trial.matched) continue;
    decision.route = route;
    const a = route.action;
    if (a.kind === 'route') {
      decision.clusterName = chooseClusterName(a, rq);
      decision.upstreamPath = rewrittenPath(route, a, rq.path) ?? rq.path;
      decision.upstreamAuthority = a.hostRewriteLiteral ?? rq.authority;
    } else decision.location = redirectLocation(a.kind === 'redirect' ? a : { kind: 'redirect', status: a.status, stripQuery: false }, rq, route.prefix);
    break;
  }
  return decision;
}

function tryRoute(route: Route, index: number, path: string, rq: RequestView): RouteTrial {
  const match = obj(route.config.match);
  const pathWhy = pathReason(match, path);
  if (!route.matchPath(path)) return { index, route, matched: false, why: [`${pathWhy}: no`] };
  const why = [`${pathWhy}: yes`];
  const conditions = routeConditions(match);
  for (let i = 0; i < route.matchHeaders.length; i++) {
    const ok = route.matchHeaders[i]!(rq);
    why.push(`${conditionReason(conditions[i]!, rq)}: ${ok ? 'yes' : 'no'}`);
    if (!ok) return { index, route, matched: false, why };
  }
  return { index, route, matched: true, why };
}

function pathReason(match: JsonObject, path: string): string {
  const caseNote = match.case_sensitive === false ? ' (ignoring case)' : '';
  if (typeof match.prefix === 'string') return `path '${path}' starts with prefix '${match.prefix}'${caseNote}`;
  if (typeof match.path === 'string') return `path '${path}' is '${match.path}'${caseNote}`;
  if (match.safe_regex !== undefined) return `path '${path}' matches regex '${String(obj(match.safe_regex).regex)}' whole`;
  if (typeof match.path_separated_prefix === 'string') return `path '${path}' is '${match.path_separated_prefix}' or below it${caseNote}`;
  if (match.connect_matcher !== undefined) return 'connect_matcher: any path';
  return `path '${path}': the match names no path matcher this proxy knows`;
}

function conditionReason(c: RouteCondition, rq: RequestView): string {
  switch (c.kind) {
    case 'header': {
      const name = String(c.config.name);
      const value = requestHeader(rq, name.toLowerCase());
      const { name: _name, ...matcher } = c.config;
      return `header '${name}' (${value === undefined ? 'absent' : `'${value}'`}) matches ${JSON.stringify(matcher)}`;
    }
    case 'query_parameter': {
      const { name, ...matcher } = c.config;
      return `query parameter '${String(name)}' matches ${Object.keys(matcher).length ? JSON.stringify(matcher) : 'present'}`;
    }
    case 'grpc':
      return `grpc: content-type (${requestHeader(rq, 'content-type') ?? 'absent'}) is gRPC's`;
    case 'runtime_fraction': {
      const pct = obj(c.config.default_value);
      const key = typeof c.config.runtime_key === 'string' ? `, runtime key '${c.config.runtime_key}'` : '';
      return `runtime_fraction ${Number(pct.numerator ?? 0)}/${String(pct.denominator ?? 'HUNDRED')}${key} with random value ${rq.random ?? 'drawn per request'}`;
    }
    case 'connect_matcher':
      return `method ${rq.method} is CONNECT`;
  }
}

/** A duration in ms as Envoy's JSON prints it ("15s", "0.250s"). */
export function durationText(ms: number): string {
  return formatDuration(Math.floor(ms / 1000), Math.round((ms % 1000) * 1e6));
}

/** The decision as JSON, for /route_explain: the virtual host and why, each route tried and why, and the action with its policies. */
export function explainDecision(d: RouteDecision): JsonObject {
  const out: JsonObject = {};
  if (!d.domain) {
    out.virtual_host = null;
    out.result = 'no virtual host has a domain that matches the authority: 404 (route_not_found)';
    return out;
  }
  out.virtual_host = { name: d.domain.host.name, domain: d.domain.domain, matched_by: DOMAIN_KINDS[d.domain.kind] };
  if (d.tlsRedirect) {
    out.result = `the virtual host has require_tls ${d.domain.host.requireTls} and the request came without TLS (x-forwarded-proto is not https${d.domain.host.requireTls === 'EXTERNAL_ONLY' ? ' and x-envoy-internal is not true' : ''})`;
    out.action = { redirect: { status: 301, location: d.location } };
    return out;
  }
  out.routes_tried = d.tried.map((t) => ({ index: t.index, ...(t.route.name ? { name: t.route.name } : {}), match: obj(t.route.config.match), matched: t.matched, why: t.why }));
  const route = d.route;
  if (!route) {
    out.result = 'no route of the virtual host matches: 404 (route_not_found)';
    return out;
  }
  out.route = { index: d.tried.at(-1)!.index, ...(route.name ? { name: route.name } : {}) };
  out.action = actionJson(d, route);
  const perFilter: JsonObject = {};
  for (const [name, configs] of route.perFilter) perFilter[name] = configs;
  if (route.perFilter.size) out.typed_per_filter_config = perFilter;
  const mutations = headerMutations([['route', route.config], ['virtual_host', d.domain.host.config], ['route_configuration', d.routeConfig]]);
  if (Object.keys(mutations).length) out.header_mutations = mutations;
  return out;
}

const DOMAIN_KINDS: Record<DomainMatch['kind'], string> = {
  exact: 'the exact domain',
  suffix: 'the longest matching suffix wildcard',
  prefix: 'the longest matching prefix wildcard',
  any: "the catch-all '*' (no exact or wildcard domain matched)",
};

function actionJson(d: RouteDecision, route: Route): JsonObject {
  const a = route.action;
  if (a.kind === 'direct_response') return { direct_response: { status: a.status, ...(a.body ? { body_bytes: a.body.length } : {}) } };
  if (a.kind === 'redirect') return { redirect: { status: a.status, location: d.location } };
  const rc = obj(route.config.route);
  const vh = d.domain!.host.config;
  const forward: JsonObject = {
    ...(a.cluster !== undefined ? { cluster: a.cluster } : {}),
    ...(a.clusterHeader !== undefined ? { cluster_header: a.clusterHeader } : {}),
    ...(a.runtimeKeyPrefix !== undefined ? { runtime_key_prefix: a.runtimeKeyPrefix } : {}),
    ...(a.weightedClusters ? { weighted_clusters: a.weightedClusters, total_weight: a.totalWeight } : {}),
    cluster_chosen: d.clusterName ?? null,
    ...(a.weightedClusters ? { chosen_with: `random value ${d.request.random ?? 'drawn per request'} % ${a.totalWeight}` } : {}),
    cluster_not_found_response_code: a.clusterNotFoundStatus,
    upstream_path: d.upstreamPath,
    upstream_authority: d.upstreamAuthority,
    priority: a.priority === 1 ? 'HIGH' : 'DEFAULT',
    timeouts: {
      timeout: a.timeoutMs === 0 ? 'disabled' : durationText(a.timeoutMs),
      ...(a.idleTimeoutMs !== undefined ? { idle_timeout: a.idleTimeoutMs === 0 ? 'disabled' : durationText(a.idleTimeoutMs) } : {}),
      ...(a.streamDuration?.maxMs !== undefined ? { max_stream_duration: durationText(a.streamDuration.maxMs) } : {}),
      ...(a.retry && a.retry.perTryTimeoutMs > 0 ? { per_try_timeout: durationText(a.retry.perTryTimeoutMs) } : {}),
    },
  };
  if (a.retry) {
    forward.retry_policy = {
      from: rc.retry_policy !== undefined ? 'route' : 'virtual_host',
      config: obj(rc.retry_policy ?? vh.retry_policy),
      num_retries: a.retry.numRetries,
      ...(a.retry.backOff ? { back_off: { base_interval: durationText(a.retry.backOff.baseMs), ...(a.retry.backOff.maxMs !== undefined ? { max_interval: durationText(a.retry.backOff.maxMs) } : {}) } } : {}),
    };
  }
  for (const field of ['hash_policy', 'request_mirror_policies', 'upgrade_configs', 'rate_limits'] as const) if (rc[field] !== undefined) forward[field] = rc[field];
  return { route: forward };
}

/** The header mutations that apply, by level (most specific first, as configured). */
function headerMutations(levels: [string, JsonObject][]): JsonObject {
  const out: JsonObject = {};
  for (const [level, config] of levels) {
    const fields: JsonObject = {};
    for (const f of ['request_headers_to_add', 'request_headers_to_remove', 'response_headers_to_add', 'response_headers_to_remove']) {
      const v = config[f];
      if (Array.isArray(v) && v.length) fields[f] = v;
    }
    if (Object.keys(fields).length) out[level] = fields;
  }
  return out;
}
