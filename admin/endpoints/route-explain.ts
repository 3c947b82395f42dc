import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import { list, obj } from '../../shared/config/access.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import type { ConnectionFacts } from '../../shared/chain-match.js';
import { chooseChain } from '../../shared/http/listener-routes.js';
import { normalizePath, pathNormalizationOf } from '../../shared/http/path-normalization.js';
import { perFilterConfigs } from '../../shared/http/per-filter-config.js';
import { decideRoute, explainDecision } from '../../shared/http/route-explain.js';
import { RouteTable, type Route } from '../../shared/http/route-table.js';
import type { RequestView } from '../../shared/matchers.js';
import type { HttpConnectionManager } from '../../shared/config/envoy-types.js';
import { appendHeaderValue, type MutableHeaders } from '../../shared/header-mutation.js';
import { JSON_TYPE, protoJson, TEXT, type AdminEndpoint, type AdminRequest, type AdminResponse } from '../endpoint.js';
import type { AdminState } from '../state.js';

/**
 * /route_explain (beyond Envoy): how the configuration in force would handle one request, told
 * step by step with the workers' own code (shared/http/route-explain.ts): the filter chain a
 * connection takes, its connection manager and route configuration (inline, or RDS's version),
 * path normalization, the virtual host and the domain that chose it, each route tried and why,
 * and the chosen route's action, timeouts, retry policy, per-filter configuration and header
 * mutations. The HTTP filters are listed with whether each runs on the route; what they do to a
 * request (a Lua script's header, an RBAC denial) is not simulated.
 */

/** The route tables of RDS and inline configurations, compiled once per configuration object. */
const tables = new WeakMap<object, RouteTable>();

function tableOf(config: JsonObject): RouteTable {
  let table = tables.get(config);
  if (!table) tables.set(config, (table = new RouteTable(config)));
  return table;
}

export function routeExplainEndpoints(state: AdminState): AdminEndpoint[] {
  return [
    {
      path: '/route_explain',
      help: 'explain how the configuration in force routes a request (JSON): filter chain, virtual host, each route tried and why, and the action',
      mutates: false,
      params: [
        { name: 'listener', help: 'The listener the request arrives on (optional when there is one)' },
        { name: 'method', help: 'The request method (GET)' },
        { name: 'authority', help: 'The Host (:authority) of the request' },
        { name: 'path', help: 'The request path, with its query (/)' },
        { name: 'header', help: 'A request header as name:value (repeat for more)' },
        { name: 'random', help: 'The stream random value that runtime fractions and weighted clusters draw on (random otherwise)' },
        { name: 'tls', help: 'The connection is TLS (true/false; false)' },
        { name: 'sni', help: 'The TLS server name the client sent' },
        { name: 'alpn', help: 'The application protocols the client offered, comma-separated' },
        { name: 'source', help: 'The client address, ip or ip:port (127.0.0.1)' },
      ],
      handle: (rq) => explain(state, rq),
    },
  ];
}

const bad = (message: string, status = 400): AdminResponse => ({ status, contentType: TEXT, body: `${message}\n` });

function explain(state: AdminState, rq: AdminRequest): AdminResponse {
  const q = rq.query;
  const listeners = state.server.listeners.filter((l) => !l.stopped);
  const name = q.get('listener');
  const listener = name !== undefined ? listeners.find((l) => l.name === name) : listeners.length === 1 ? listeners[0] : undefined;
  if (!listener) {
    const names = listeners.map((l) => `'${l.name}'`).join(', ') || 'none';
    return name !== undefined ? bad(`no listener named '${name}' (listeners: ${names})`, 404) : bad(`listener: name the listener the request arrives on (listeners: ${names})`);
  }
  const request = requestOf(rq);
  if (typeof request === 'string') return bad(request);
  const facts = connectionFacts(q, listener.address);
  if (typeof facts === 'string') return bad(facts);
  // As a connection manager that is not the edge: x-forwarded-proto as the client sent it, else the connection's scheme.
  request.headers['x-forwarded-proto'] ??= facts.transportProtocol === 'tls' ? 'https' : 'http';
  const out: JsonObject = { request: { method: request.method, authority: request.authority, path: request.path, headers: request.headers, random_value: String(request.random) } };
  out.listener = { name: listener.name, address: listener.address };
  const chain = chooseChain(obj(listener.config), facts);
  if (!chain) return json({ ...out, filter_chain: null, result: 'no filter chain matches the connection: it is closed (no_filter_chain_found)' });
  out.filter_chain = { key: chain.key, ...(chain.chain.name ? { name: chain.chain.name } : {}), ...(chain.chain.filter_chain_match ? { filter_chain_match: chain.chain.filter_chain_match } : {}), connection: { tls: facts.transportProtocol === 'tls', ...(facts.serverName ? { sni: facts.serverName } : {}), ...(facts.applicationProtocols.length ? { alpn: facts.applicationProtocols } : {}) } };
  if (!chain.hcm) return json({ ...out, result: 'the filter chain has no HTTP connection manager: the connection is not HTTP here' });
  const hcm = chain.hcm as HttpConnectionManager & JsonObject;
  const manager: JsonObject = { stat_prefix: hcm.stat_prefix };
  out.connection_manager = manager;
  let config: JsonObject | undefined;
  if (hcm.route_config !== undefined) {
    config = obj(hcm.route_config);
    manager.route_config = { source: 'inline', ...(config.name ? { name: config.name } : {}) };
  } else {
    const rdsName = String(obj(hcm.rds).route_config_name);
    const resource = state.server.routes[rdsName];
    manager.route_config = { source: 'rds', name: rdsName, ...(resource ? { version_info: resource.versionInfo } : { version_info: null }) };
    if (!resource) return json({ ...out, result: `route configuration '${rdsName}' has not arrived from RDS yet: every request gets a 404` });
    config = obj(resource.config);
  }
  const normalized = normalizePath(request.path, pathNormalizationOf(hcm));
  if (normalized.action !== 'continue') {
    manager.path_normalization = { action: normalized.action, path: normalized.path };
    return json({ ...out, result: normalized.action === 'redirect' ? `path normalization redirects: 307 to ${normalized.path}` : 'path normalization refuses the path: 400 (path_normalization_failed)' });
  }
  if (normalized.path !== request.path) manager.path_normalization = { normalized_path: normalized.path };
  request.path = normalized.path;
  const decision = decideRoute(tableOf(config), request);
  Object.assign(out, explainDecision(decision));
  if (decision.route) out.http_filters = httpFilters(hcm, decision.route);
  return json(out);
}

const json = (body: JsonObject): AdminResponse => ({ status: 200, contentType: JSON_TYPE, body: protoJson(body) });

function requestOf(rq: AdminRequest): (RequestView & { random: bigint }) | string {
  const q = rq.query;
  const method = q.get('method') || 'GET';
  const authority = q.get('authority') ?? '';
  const path = q.get('path') || '/';
  if (!path.startsWith('/')) return `path: '${path}' is not a path (it starts with '/')`;
  const headers: MutableHeaders = {};
  for (const [key, value] of rq.params) {
    if (key !== 'header') continue;
    const colon = value.indexOf(':', 1);
    if (colon < 0) return `header: '${value}' is not name:value`;
    appendHeaderValue(headers, value.slice(0, colon).trim().toLowerCase(), value.slice(colon + 1).trim());
  }
  let random: bigint;
  const given = q.get('random');
  if (given !== undefined) {
    if (!/^\d{1,20}$/.test(given) || BigInt(given) >= 2n ** 64n) return `random: '${given}' is not an unsigned 64-bit integer`;
    random = BigInt(given);
  } else random = randomBytes(8).readBigUInt64BE();
  return { method, authority, path, headers: headers as IncomingHttpHeaders, random };
}

function connectionFacts(q: Map<string, string>, address: string): ConnectionFacts | string {
  const tls = q.get('tls');
  if (tls !== undefined && tls !== 'true' && tls !== 'false') return `tls: '${tls}' is neither true nor false`;
  const local = endpointOf(address) ?? { ip: '127.0.0.1', port: 0 };
  const source = endpointOf(q.get('source') ?? '127.0.0.1');
  if (!source) return `source: '${q.get('source') ?? ''}' is not an IP address (ip or ip:port)`;
  return {
    destinationPort: local.port,
    serverName: q.get('sni') || undefined,
    transportProtocol: tls === 'true' ? 'tls' : 'raw_buffer',
    applicationProtocols: (q.get('alpn') ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    addresses: { local, remote: source, directRemote: source },
  };
}

/** `1.2.3.4`, `1.2.3.4:80`, `[::1]:80` or `::1` as an endpoint (port 0 when none); undefined when it is no IP address. */
function endpointOf(text: string): { ip: string; port: number } | undefined {
  if (isIP(text)) return { ip: text, port: 0 };
  const m = /^\[([^\]]+)\]:(\d+)$|^([^:]+):(\d+)$/.exec(text);
  const ip = m?.[1] ?? m?.[3];
  return ip !== undefined && isIP(ip) ? { ip, port: Number(m![2] ?? m![4]) } : undefined;
}

/** The connection manager's HTTP filters in order, each with whether it runs on this route and the per-route configuration it gets. */
function httpFilters(hcm: JsonObject, route: Route): JsonObject[] {
  return list(hcm.http_filters).map((f) => {
    const name = String(f.name);
    const perRoute = perFilterConfigs(route.perFilter.get(name), f.disabled === true);
    return {
      name,
      ...(f.disabled === true ? { disabled_by_default: true } : {}),
      runs: perRoute !== 'disabled',
      ...(perRoute !== 'disabled' && perRoute.length ? { per_route_config: perRoute } : {}),
    };
  });
}
