import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import { compileAccessLogFilter } from '../access-log/filter.js';
import { compileSubstitutionFormat } from '../access-log/format.js';
import { checkAccessLogs } from '../access-log/loggers.js';
import { checkHeadersToAdd } from '../header-mutation.js';
import { list, obj } from './access.js';
import { rdsUsers } from './resources.js';
import { extensionByName, extensionByTypeName, type Extension } from './extensions.js';
import type { JsonObject } from './proto-json.js';
import { durationMs, typeNameOfUrl } from './wkt.js';
import { chainMatchOf, matchKey } from '../chain-match.js';
import { checkHttpFilterConfig, checkPerFilterConfigs } from './filter-checks.js';
import { checkRegex } from '../matchers.js';
import { checkHttp2Options } from './http2-options.js';
import { clusterHttp2Options, UPSTREAM_HTTP_OPTIONS } from '../upstream/protocol.js';
import { stdRegex } from '../std-regex.js';

const HCM_TYPE_NAME = 'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';

/**
 * Checks that need the whole bootstrap, after every field has passed the schema: names that
 * must be unique, references between listeners, routes and clusters, addresses that must
 * parse, and the parts of Envoy's API this proxy does not serve (so that they fail here, at
 * load time, instead of being accepted and ignored).
 */

type Obj = JsonObject;

const SUPPORTED_CLUSTER_TYPES = ['STATIC', 'STRICT_DNS', 'LOGICAL_DNS', 'EDS'];
const SUPPORTED_LB_POLICIES = ['ROUND_ROBIN', 'LEAST_REQUEST', 'RANDOM', 'RING_HASH', 'MAGLEV'];
export const MAX_ENDPOINT_WEIGHT = 100;

function isPrime(n: number): boolean {
  if (!Number.isInteger(n) || n < 2) return false;
  for (let d = 2; d * d <= n; d++) if (n % d === 0) return false;
  return true;
}

function addressText(address: Obj): string {
  const sa = obj(address.socket_address);
  if (address.pipe) return `unix:${obj(address.pipe).path}`;
  const host = String(sa.address ?? '');
  return `${host.includes(':') ? `[${host}]` : host}:${sa.port_value ?? 0}`;
}

/** An address that must be a literal (listeners, admin, STATIC endpoints); UDP only where `udp` allows it (a listener's). */
function checkLiteralAddress(address: unknown, path: string, errors: string[], udp = false): void {
  const a = obj(address);
  if (a.pipe) return; // Pipe.path is required by the schema already
  const sa = a.socket_address;
  if (!sa) {
    errors.push(`${path}: an address needs socket_address or pipe`);
    return;
  }
  const s = obj(sa);
  if (isIP(String(s.address ?? '')) === 0) errors.push(`${path}.socket_address.address: malformed IP address: ${String(s.address ?? '')}`);
  if (s.protocol === 'UDP' && !udp) errors.push(`${path}.socket_address.protocol: UDP is not supported here`);
}

/** The extension a filter entry resolves to: by its typed_config type, else by name. */
function filterExtension(filter: Obj): Extension | undefined {
  const typed = obj(filter.typed_config)['@type'];
  if (typeof typed === 'string') return extensionByTypeName(typeNameOfUrl(typed));
  return extensionByName(String(filter.name ?? ''));
}

/**
 * A level's header mutations: values must format; as in Envoy, pseudo-headers (`:path`, …) and
 * `host` may be neither added nor removed on requests, nor pseudo-headers on responses.
 */
function checkHeaderMutations(scope: Obj, path: string, errors: string[]): void {
  for (const direction of ['request', 'response'] as const) {
    const forbidden = (name: string) => name.startsWith(':') || (direction === 'request' && name.toLowerCase() === 'host');
    checkHeadersToAdd(scope[`${direction}_headers_to_add`], `${path}.${direction}_headers_to_add`, errors);
    list(scope[`${direction}_headers_to_add`]).forEach((o, i) => {
      const key = String(obj(o.header).key ?? '');
      if (forbidden(key)) errors.push(`${path}.${direction}_headers_to_add[${i}].header.key: ':-prefixed' or host headers may not be modified ('${key}')`);
    });
    ((scope[`${direction}_headers_to_remove`] as string[] | undefined) ?? []).forEach((name, i) => {
      if (forbidden(name)) errors.push(`${path}.${direction}_headers_to_remove[${i}]: ':-prefixed' or host headers may not be removed ('${name}')`);
    });
  }
}

/** A route's upgrade_configs, as Envoy's route table refuses them: a type twice, connect_config on a type other than CONNECT, CONNECT-UDP. */
function checkRouteUpgrades(action: Obj, path: string, errors: string[]): void {
  const seen = new Set<string>();
  list(action.upgrade_configs).forEach((u, i) => {
    const type = String(u.upgrade_type ?? '');
    const uPath = `${path}.upgrade_configs[${i}]`;
    if (seen.has(type.toLowerCase())) errors.push(`${uPath}.upgrade_type: Duplicate upgrade ${type}`);
    seen.add(type.toLowerCase());
    if (type.toLowerCase() === 'connect-udp') errors.push(`${uPath}.upgrade_type: CONNECT-UDP (RFC 9298) is not supported by this proxy`);
    else if (u.connect_config !== undefined && type.toLowerCase() !== 'connect') errors.push(`${uPath}.connect_config: Cannot create a connect config for a non-CONNECT upgrade type`);
  });
}

/** A retry_policy as Envoy's RetryPolicyImpl refuses it: a back-off maximum below its base; matchers' regexes compile. */
function checkRetryPolicy(policy: unknown, path: string, errors: string[]): void {
  if (policy === undefined) return;
  const p = obj(policy);
  const backOff = obj(p.retry_back_off);
  const ms = (d: unknown) => Math.max(1, durationMs(String(d)));
  if (typeof backOff.base_interval === 'string' && typeof backOff.max_interval === 'string' && ms(backOff.max_interval) < ms(backOff.base_interval)) {
    errors.push(`${path}.retry_back_off.max_interval: retry_policy.max_interval must greater than or equal to the base_interval`);
  }
  for (const field of ['retriable_headers', 'retriable_request_headers']) {
    list(p[field]).forEach((h, i) => {
      checkRegex(obj(h.safe_regex_match).regex, `${path}.${field}[${i}].safe_regex_match.regex`, errors);
      checkRegex(obj(obj(h.string_match).safe_regex).regex, `${path}.${field}[${i}].string_match.safe_regex.regex`, errors);
    });
  }
}

export function checkRouteConfig(rc: Obj, path: string, clusters: Set<string>, errors: string[]): void {
  const vhostNames = new Map<string, number>();
  checkHeaderMutations(rc, path, errors);
  list(rc.virtual_hosts).forEach((vh, v) => {
    const vhPath = `${path}.virtual_hosts[${v}]`;
    checkHeaderMutations(vh, vhPath, errors);
    checkPerFilterConfigs(vh, vhPath, [vh.cors, `${vhPath}.cors`], errors);
    checkRetryPolicy(vh.retry_policy, `${vhPath}.retry_policy`, errors);
    const name = String(vh.name);
    if (vhostNames.has(name)) errors.push(`${vhPath}.name: duplicate virtual host name '${name}' (also virtual_hosts[${vhostNames.get(name)}])`);
    vhostNames.set(name, v);
    list(vh.routes).forEach((route, r) => {
      const rPath = `${vhPath}.routes[${r}]`;
      checkHeaderMutations(route, rPath, errors);
      checkPerFilterConfigs(route, rPath, [obj(route.route).cors, `${rPath}.route.cors`], errors);
      const match = obj(route.match);
      checkRegex(obj(match.safe_regex).regex, `${rPath}.match.safe_regex.regex`, errors);
      list(match.headers).forEach((h, i) => {
        checkRegex(obj(h.safe_regex_match).regex, `${rPath}.match.headers[${i}].safe_regex_match.regex`, errors);
        checkRegex(obj(obj(h.string_match).safe_regex).regex, `${rPath}.match.headers[${i}].string_match.safe_regex.regex`, errors);
      });
      list(match.query_parameters).forEach((q, i) => checkRegex(obj(obj(q.string_match).safe_regex).regex, `${rPath}.match.query_parameters[${i}].string_match.safe_regex.regex`, errors));
      const action = obj(route.route);
      if (action.regex_rewrite !== undefined) {
        checkRegex(obj(obj(action.regex_rewrite).pattern).regex, `${rPath}.route.regex_rewrite.pattern.regex`, errors);
        if (action.prefix_rewrite !== undefined) errors.push(`${rPath}.route: cannot specify both prefix_rewrite and regex_rewrite`);
      }
      checkRouteUpgrades(action, `${rPath}.route`, errors);
      checkRetryPolicy(action.retry_policy, `${rPath}.route.retry_policy`, errors);
      const validate = rc.validate_clusters !== false;
      if (validate && typeof action.cluster === 'string' && !clusters.has(action.cluster)) {
        errors.push(`${rPath}.route.cluster: route: unknown cluster '${action.cluster}'`);
      }
      list(action.request_mirror_policies).forEach((m, i) => {
        const mPath = `${rPath}.route.request_mirror_policies[${i}]`;
        if (!m.cluster && !m.cluster_header) errors.push(`${mPath}: one of cluster and cluster_header is required`);
        if (validate && typeof m.cluster === 'string' && m.cluster && !clusters.has(m.cluster)) errors.push(`${mPath}.cluster: route: unknown mirror cluster '${m.cluster}'`);
      });
      list(obj(action.weighted_clusters).clusters).forEach((wc, i) => {
        if (validate && typeof wc.name === 'string' && !clusters.has(wc.name)) {
          errors.push(`${rPath}.route.weighted_clusters.clusters[${i}].name: route: unknown weighted cluster '${wc.name}'`);
        }
      });
    });
  });
}

/** local_reply_config: each mapper's filter, headers and body format must compile (the errors name the mapper). */
function checkLocalReplyConfig(config: Obj, path: string, errors: string[]): void {
  const format = (sfs: unknown, p: string) => {
    if (sfs === undefined) return;
    try {
      compileSubstitutionFormat(obj(sfs));
    } catch (err) {
      errors.push(`${p}: ${(err as Error).message}`);
    }
  };
  list(config.mappers).forEach((m, i) => {
    const mPath = `${path}.mappers[${i}]`;
    try {
      compileAccessLogFilter(obj(m.filter));
    } catch (err) {
      errors.push(`${mPath}.filter: ${(err as Error).message}`);
    }
    checkHeadersToAdd(m.headers_to_add, `${mPath}.headers_to_add`, errors);
    format(m.body_format_override, `${mPath}.body_format_override`);
  });
  format(config.body_format, `${path}.body_format`);
}

/** An HTTP filter list (http_filters, an upgrade's filters): known filters, valid configurations, the router last. */
function checkHttpFilters(filters: Obj[], path: string, errors: string[]): void {
  filters.forEach((f, i) => {
    const ext = filterExtension(f);
    const fPath = `${path}[${i}]`;
    if (!ext) {
      if (f.typed_config === undefined) errors.push(`${fPath}: unknown HTTP filter '${String(f.name)}' (no typed_config, and no implemented filter has that name)`);
      return;
    }
    if (ext.category !== 'envoy.filters.http') errors.push(`${fPath}: '${ext.name}' is not an HTTP filter`);
    checkHttpFilterConfig(ext.name, obj(f.typed_config), `${fPath}.typed_config`, errors);
    const terminal = ext.name === 'envoy.filters.http.router';
    if (terminal && i !== filters.length - 1) errors.push(`${fPath}: the router filter is terminal but is not the last filter in the chain`);
    if (!terminal && i === filters.length - 1) errors.push(`${fPath}: the last HTTP filter must be the router (envoy.filters.http.router), not '${ext.name}'`);
  });
}

function checkHttpConnectionManager(hcm: Obj, path: string, clusters: Set<string>, errors: string[]): void {
  if (hcm.route_config !== undefined) checkRouteConfig(obj(hcm.route_config), `${path}.route_config`, clusters, errors);
  if (hcm.local_reply_config !== undefined) checkLocalReplyConfig(obj(hcm.local_reply_config), `${path}.local_reply_config`, errors);
  if (hcm.http2_protocol_options !== undefined) checkHttp2Options(hcm.http2_protocol_options, `${path}.http2_protocol_options`, errors);
  checkHttpFilters(list(hcm.http_filters), `${path}.http_filters`, errors);
  // Envoy's own words; an HTTP connection manager here is always on a TCP listener (no QUIC in Node 20).
  if (hcm.codec_type === 'HTTP3') errors.push(`${path}.codec_type: HTTP/3 codec configured on non-QUIC listener (HTTP/3 needs QUIC, which Node 20 does not have)`);
  const upgradeTypes = new Set<string>();
  list(hcm.upgrade_configs).forEach((u, i) => {
    const uPath = `${path}.upgrade_configs[${i}]`;
    const type = String(u.upgrade_type ?? '');
    if (upgradeTypes.has(type.toLowerCase())) errors.push(`${uPath}.upgrade_type: Error: multiple upgrade configs with the same name: '${type}'`);
    upgradeTypes.add(type.toLowerCase());
    if (type.toLowerCase() === 'connect-udp') errors.push(`${uPath}.upgrade_type: CONNECT-UDP (RFC 9298) is not supported by this proxy`);
    if (u.filters !== undefined) checkHttpFilters(list(u.filters), `${uPath}.filters`, errors);
  });
  // An empty list is Envoy's too (no filter answers: a request waits for the stream idle timeout); the loader warns.
  checkAccessLogs(hcm.access_log, `${path}.access_log`, errors);
  const tracing = obj(hcm.tracing);
  if (tracing.provider !== undefined) checkTracingProvider(obj(tracing.provider), `${path}.tracing.provider`, clusters, errors);
}

const ZIPKIN_CONFIG = 'envoy.config.trace.v3.ZipkinConfig';
const OTEL_CONFIG = 'envoy.config.trace.v3.OpenTelemetryConfig';
const RESOURCE_DETECTORS = new Set([
  'envoy.extensions.tracers.opentelemetry.resource_detectors.v3.EnvironmentResourceDetectorConfig',
  'envoy.extensions.tracers.opentelemetry.resource_detectors.v3.StaticConfigResourceDetectorConfig',
]);

/**
 * A tracer (a connection manager's tracing.provider, the bootstrap's tracing.http): Zipkin to a
 * static cluster over HTTP JSON or proto, or OpenTelemetry over gRPC or HTTP to a static cluster.
 */
function checkTracingProvider(provider: Obj, path: string, clusters: Set<string>, errors: string[]): void {
  const config = obj(provider.typed_config);
  const type = typeNameOfUrl(String(config['@type'] ?? ''));
  const cPath = `${path}.typed_config`;
  if (type === ZIPKIN_CONFIG) {
    const cluster = String(config.collector_cluster ?? '');
    if (!clusters.has(cluster)) errors.push(`${cPath}.collector_cluster: envoy.tracers.zipkin: unknown cluster '${cluster}'`);
    const version = config.collector_endpoint_version;
    if (version !== 'HTTP_JSON' && version !== 'HTTP_PROTO') errors.push(`${cPath}.collector_endpoint_version: set HTTP_JSON or HTTP_PROTO (${version === 'GRPC' ? 'GRPC is not implemented, as in Envoy' : 'the default is not usable, as in Envoy'})`);
    return;
  }
  if (type === OTEL_CONFIG) {
    const grpc = config.grpc_service !== undefined;
    const http = config.http_service !== undefined;
    if (grpc === http) errors.push(`${cPath}: the OpenTelemetry tracer exports over one of grpc_service and http_service`);
    const cluster = grpc ? obj(obj(config.grpc_service).envoy_grpc).cluster_name : http ? obj(obj(config.http_service).http_uri).cluster : undefined;
    const field = grpc ? 'grpc_service.envoy_grpc.cluster_name' : 'http_service.http_uri.cluster';
    if ((grpc || http) && !clusters.has(String(cluster ?? ''))) errors.push(`${cPath}.${field}: unknown cluster '${String(cluster ?? '')}'`);
    list(config.resource_detectors).forEach((d, i) => {
      const t = typeNameOfUrl(String(obj(d.typed_config)['@type'] ?? ''));
      if (!RESOURCE_DETECTORS.has(t)) errors.push(`${cPath}.resource_detectors[${i}]: resource detector '${String(d.name ?? '')}' (${t}) is not supported (the environment and static_config detectors are)`);
    });
    return;
  }
  errors.push(`${path}: tracer '${String(provider.name ?? '')}' (${type || 'no typed_config'}) is not supported (envoy.tracers.zipkin and envoy.tracers.opentelemetry are)`);
}

function checkListeners(listeners: Obj[], clusters: Set<string>, errors: string[]): void {
  const names = new Map<string, number>();
  const addresses = new Map<string, number>();
  listeners.forEach((l, i) => {
    const path = `static_resources.listeners[${i}]`;
    if (typeof l.name === 'string') {
      if (names.has(l.name)) errors.push(`${path}.name: duplicate listener name '${l.name}' (also listeners[${names.get(l.name)}])`);
      names.set(l.name, i);
    }
    const key = sharedAddressKey(l);
    if (key !== undefined) {
      if (addresses.has(key)) errors.push(`${path}.address: listener address '${key}' is already used by listeners[${addresses.get(key)}]`);
      addresses.set(key, i);
    }
    checkListener(l, path, clusters, errors);
  });
}

/** What Envoy accepts and an operator should still hear of: a connection manager with no HTTP filter answers no request. */
export function bootstrapWarnings(bootstrap: Obj): string[] {
  const out: string[] = [];
  list(obj(bootstrap.static_resources).listeners).forEach((l, i) => {
    list(l.filter_chains).forEach((chain, c) => {
      list(chain.filters).forEach((f, n) => {
        const hcm = obj(f.typed_config);
        if (typeNameOfUrl(String(hcm['@type'] ?? '')) === HCM_TYPE_NAME && list(hcm.http_filters).length === 0) {
          out.push(`static_resources.listeners[${i}].filter_chains[${c}].filters[${n}].typed_config.http_filters is empty: no request on it is answered until stream_idle_timeout (as in Envoy); add envoy.filters.http.router`);
        }
      });
    });
  });
  list(obj(bootstrap.static_resources).clusters).forEach((c, i) => {
    if (obj(c.typed_extension_protocol_options)[UPSTREAM_HTTP_OPTIONS] !== undefined && c.common_http_protocol_options !== undefined) {
      out.push(`static_resources.clusters[${i}].common_http_protocol_options is not used, as in Envoy: typed_extension_protocol_options["${UPSTREAM_HTTP_OPTIONS}"] takes its place (move the settings to its common_http_protocol_options)`);
    }
  });
  return out;
}

/**
 * The address two listeners may not share, as text (`127.0.0.1:80`, `unix:/path`); none for
 * port 0, which asks the kernel for a free port (two of them never clash).
 */
export function sharedAddressKey(l: Obj): string | undefined {
  if (l.address === undefined) return undefined;
  const sa = obj(obj(l.address).socket_address);
  if (Number(sa.port_value ?? 0) === 0 && !obj(l.address).pipe) return undefined;
  // A UDP port is not a TCP port: a TCP and a UDP listener may share a number.
  return sa.protocol === 'UDP' ? `udp:${addressText(obj(l.address))}` : addressText(obj(l.address));
}

/**
 * One listener alone (a bootstrap's, or one from the listener discovery service). A dynamic
 * listener's TCP proxy may name a cluster that is not there yet (Envoy closes such connections
 * until it is); an inline route_config validates its clusters either way, as Envoy's does.
 */
/** A listener on a UDP address (socket_address.protocol: UDP). */
export function isUdpListener(l: Obj): boolean {
  return obj(obj(l.address).socket_address).protocol === 'UDP';
}

const UDP_PROXY = 'envoy.filters.udp_listener.udp_proxy';
const UDP_ROUTE = 'envoy.extensions.filters.udp.udp_proxy.v3.Route';

/**
 * A UDP listener: no filter chains (Envoy's are for QUIC), one `udp_proxy` listener filter, and
 * that filter's route: `cluster`, or a `matcher` whose on_no_match action is a Route.
 */
function checkUdpListener(l: Obj, path: string, clusters: Set<string>, errors: string[], dynamic: boolean): void {
  if (list(l.filter_chains).length > 0 || l.default_filter_chain !== undefined) errors.push(`${path}.filter_chains: a UDP listener's filter chains are for QUIC, which Node 20 does not have; a UDP listener takes the udp_proxy listener filter`);
  const filters = list(l.listener_filters);
  filters.forEach((f, j) => {
    if (filterExtension(f)?.name !== UDP_PROXY) errors.push(`${path}.listener_filters[${j}]: a UDP listener takes only the listener filter ${UDP_PROXY}`);
  });
  if (filters.length !== 1) {
    errors.push(`${path}.listener_filters: a UDP listener needs exactly one ${UDP_PROXY} listener filter`);
    return;
  }
  const fPath = `${path}.listener_filters[0].typed_config`;
  const config = obj(filters[0]!.typed_config);
  const route = udpProxyCluster(config);
  if (config.cluster !== undefined && config.matcher !== undefined) errors.push(`${fPath}: give cluster or matcher, not both`);
  if (route === undefined) errors.push(`${fPath}: the UDP proxy needs cluster, or matcher.on_no_match.action with a ${UDP_ROUTE}`);
  else if (!dynamic && !clusters.has(route)) errors.push(`${fPath}: unknown cluster '${route}'`);
  checkAccessLogs(config.access_log, `${fPath}.access_log`, errors);
}

/** The cluster a UDP proxy sends its sessions to: its `cluster`, or its matcher's on_no_match route. */
export function udpProxyCluster(config: Obj): string | undefined {
  if (typeof config.cluster === 'string' && config.cluster) return config.cluster;
  const action = obj(obj(obj(config.matcher).on_no_match).action);
  const typed = obj(action.typed_config);
  if (typeNameOfUrl(String(typed['@type'] ?? '')) !== UDP_ROUTE) return undefined;
  return typeof typed.cluster === 'string' && typed.cluster ? typed.cluster : undefined;
}

export function checkListener(l: Obj, path: string, clusters: Set<string>, errors: string[], dynamic = false): void {
  if (l.address === undefined) errors.push(`${path}.address: a listener needs an address`);
  else checkLiteralAddress(l.address, `${path}.address`, errors, true);
  checkAccessLogs(l.access_log, `${path}.access_log`, errors);
  if (isUdpListener(l)) {
    checkUdpListener(l, path, clusters, errors, dynamic);
    return;
  }
  if (l.udp_listener_config !== undefined) errors.push(`${path}.udp_listener_config: only for a listener whose address has protocol UDP`);
  if (list(l.filter_chains).length === 0 && l.default_filter_chain === undefined) errors.push(`${path}.filter_chains: a listener needs at least one filter chain`);
  const matches = new Map<string, number>();
  list(l.filter_chains).forEach((c, j) => {
    const match = chainMatchOf(c);
    const key = matchKey(match);
    if (matches.has(key)) {
      errors.push(`${path}.filter_chains[${j}]: error adding listener '${String(l.name ?? '')}': multiple filter chains with the same matching rules are defined (also filter_chains[${matches.get(key)}])`);
    }
    matches.set(key, j);
    if (match.transportProtocol !== undefined && match.transportProtocol !== 'tls' && match.transportProtocol !== 'raw_buffer') {
      errors.push(`${path}.filter_chains[${j}].filter_chain_match.transport_protocol: '${match.transportProtocol}' is neither 'tls' nor 'raw_buffer'`);
    }
  });
  list(l.listener_filters).forEach((f, j) => {
    const ext = filterExtension(f);
    if (ext?.name === UDP_PROXY) errors.push(`${path}.listener_filters[${j}]: ${UDP_PROXY} is for a listener whose address has protocol UDP`);
    else if (ext?.name !== 'envoy.filters.listener.tls_inspector') {
      errors.push(`${path}.listener_filters[${j}]: listener filter '${String(f.name ?? '')}' is not supported by this proxy (only envoy.filters.listener.tls_inspector, and udp_proxy on UDP listeners)`);
    }
  });
  const chains: [Obj, string][] = list(l.filter_chains).map((c, j) => [c, `${path}.filter_chains[${j}]`]);
  if (l.default_filter_chain !== undefined) chains.push([obj(l.default_filter_chain), `${path}.default_filter_chain`]);
  for (const [chain, cPath] of chains) {
    const filters = list(chain.filters);
    if (filters.length === 0) errors.push(`${cPath}.filters: a filter chain needs a terminal network filter`);
    filters.forEach((f, j) => {
      const fPath = `${cPath}.filters[${j}]`;
      const ext = filterExtension(f);
      if (!ext) {
        if (f.typed_config === undefined) errors.push(`${fPath}: unknown network filter '${String(f.name)}' (no typed_config, and no implemented filter has that name)`);
        return;
      }
      if (ext.category !== 'envoy.filters.network') errors.push(`${fPath}: '${ext.name}' is not a network filter`);
      if (j !== filters.length - 1) errors.push(`${fPath}: '${ext.name}' is a terminal filter but is not the last filter in the chain`);
      const config = obj(f.typed_config);
      if (ext.name === 'envoy.filters.network.http_connection_manager') checkHttpConnectionManager(config, `${fPath}.typed_config`, clusters, errors);
      if (ext.name === 'envoy.filters.network.tcp_proxy') {
        if (!dynamic && typeof config.cluster === 'string' && !clusters.has(config.cluster)) errors.push(`${fPath}.typed_config.cluster: unknown cluster '${config.cluster}'`);
        list(obj(config.weighted_clusters).clusters).forEach((wc, k) => {
          if (!dynamic && !clusters.has(String(wc.name))) errors.push(`${fPath}.typed_config.weighted_clusters.clusters[${k}].name: unknown cluster '${String(wc.name)}'`);
        });
        if (config.cluster === undefined && config.weighted_clusters === undefined) errors.push(`${fPath}.typed_config: tcp_proxy needs cluster or weighted_clusters`);
        checkAccessLogs(config.access_log, `${fPath}.typed_config.access_log`, errors);
        if (config.tunneling_config !== undefined) {
          const t = obj(config.tunneling_config);
          const tPath = `${fPath}.typed_config.tunneling_config`;
          const postPath = typeof t.post_path === 'string' ? t.post_path : '';
          if (postPath && t.use_post !== true) errors.push(`${tPath}.post_path: Can't set a post path when POST method isn't used`);
          else if (postPath && !postPath.startsWith('/')) errors.push(`${tPath}.post_path: Path must start with '/'`);
          checkHeadersToAdd(t.headers_to_add, `${tPath}.headers_to_add`, errors);
          if (typeof config.max_connect_attempts === 'number' && config.max_connect_attempts > 1) {
            errors.push(`${fPath}.typed_config.max_connect_attempts: more than one attempt with tunneling_config is not supported by this proxy (a tunnel is one HTTP request, not retried)`);
          }
        }
      }
    });
  }
}

function checkClusters(clusters: Obj[], errors: string[]): Set<string> {
  const names = new Map<string, number>();
  clusters.forEach((c, i) => {
    const path = `static_resources.clusters[${i}]`;
    const name = String(c.name);
    if (names.has(name)) errors.push(`${path}.name: cluster manager: duplicate cluster '${name}' (also clusters[${names.get(name)}])`);
    names.set(name, i);
    checkCluster(c, path, errors);
  });
  return new Set(names.keys());
}

/** One cluster alone (a bootstrap's, or one from the cluster discovery service). */
export function checkCluster(c: Obj, path: string, errors: string[]): void {
  const type = String(c.type ?? 'STATIC');
  if (!SUPPORTED_CLUSTER_TYPES.includes(type)) {
    errors.push(`${path}.type: cluster type ${type} is not supported by this proxy (supported: ${SUPPORTED_CLUSTER_TYPES.join(', ')})`);
  }
  const lb = String(c.lb_policy ?? 'ROUND_ROBIN');
  if (!SUPPORTED_LB_POLICIES.includes(lb)) errors.push(`${path}.lb_policy: ${lb} is not supported by this proxy (supported: ${SUPPORTED_LB_POLICIES.join(', ')})`);
  const ring = obj(c.ring_hash_lb_config);
  if (ring.hash_function !== undefined && ring.hash_function !== 'XX_HASH') errors.push(`${path}.ring_hash_lb_config.hash_function: ${String(ring.hash_function)} is not supported by this proxy (XX_HASH is)`);
  if (Number(ring.minimum_ring_size ?? 1024) > Number(ring.maximum_ring_size ?? 8 * 1024 * 1024)) errors.push(`${path}.ring_hash_lb_config: minimum_ring_size must not be above maximum_ring_size`);
  if ((lb === 'RING_HASH' || lb === 'MAGLEV') && obj(c.common_lb_config).locality_weighted_lb_config !== undefined) {
    errors.push(`${path}.common_lb_config.locality_weighted_lb_config: locality weights with ${lb} are not supported by this proxy (ROUND_ROBIN, LEAST_REQUEST and RANDOM take them)`);
  }
  const table = obj(c.maglev_lb_config).table_size;
  if (table !== undefined && !isPrime(Number(table))) errors.push(`${path}.maglev_lb_config.table_size: ${String(table)} is not a prime number`);
  for (const key of Object.keys(obj(c.typed_extension_protocol_options))) {
    if (key !== 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions') {
      errors.push(`${path}.typed_extension_protocol_options["${key}"]: no protocol options extension is named '${key}' (use envoy.extensions.upstreams.http.v3.HttpProtocolOptions)`);
    }
  }
  const h1 = obj(obj(obj(obj(c.typed_extension_protocol_options)[UPSTREAM_HTTP_OPTIONS]).explicit_http_config).http_protocol_options);
  for (const field of Object.keys(h1)) {
    errors.push(`${path}.typed_extension_protocol_options["${UPSTREAM_HTTP_OPTIONS}"].explicit_http_config.http_protocol_options.${field}: not applied to upstream connections by this proxy (it is on a connection manager's http_protocol_options)`);
  }
  const extensionCommon = obj(obj(obj(c.typed_extension_protocol_options)[UPSTREAM_HTTP_OPTIONS]).common_http_protocol_options);
  const commonPath = obj(c.typed_extension_protocol_options)[UPSTREAM_HTTP_OPTIONS] !== undefined
    ? `${path}.typed_extension_protocol_options["${UPSTREAM_HTTP_OPTIONS}"].common_http_protocol_options`
    : `${path}.common_http_protocol_options`;
  for (const field of ['max_headers_count', 'headers_with_underscores_action']) {
    const common = obj(c.typed_extension_protocol_options)[UPSTREAM_HTTP_OPTIONS] !== undefined ? extensionCommon : obj(c.common_http_protocol_options);
    if (common[field] !== undefined) errors.push(`${commonPath}.${field}: not applied to upstream responses by this proxy (it is on a connection manager's common_http_protocol_options)`);
  }
  const h2 = clusterHttp2Options(c);
  if (h2) {
    const h2Path = c.http2_protocol_options !== undefined && obj(obj(obj(c.typed_extension_protocol_options)[UPSTREAM_HTTP_OPTIONS]).explicit_http_config).http2_protocol_options === undefined
      ? `${path}.http2_protocol_options`
      : `${path}.typed_extension_protocol_options["${UPSTREAM_HTTP_OPTIONS}"].explicit_http_config.http2_protocol_options`;
    checkHttp2Options(h2, h2Path, errors);
  }
  const checks = list(c.health_checks);
  if (checks.length > 1) errors.push(`${path}.health_checks: one health check per cluster is supported, got ${checks.length}`);
  checks.forEach((hc, i) => {
    if (!hc.http_health_check && !hc.tcp_health_check) errors.push(`${path}.health_checks[${i}]: needs http_health_check or tcp_health_check`);
  });
  if (type === 'EDS') {
    const eds = obj(obj(c.eds_cluster_config).eds_config);
    if (eds.ads === undefined && eds.path === undefined && eds.path_config_source === undefined && eds.api_config_source === undefined) {
      errors.push(`${path}.eds_cluster_config.eds_config: an EDS cluster needs a source for its endpoints (ads, path_config_source or api_config_source)`);
    }
    if (c.load_assignment !== undefined) errors.push(`${path}.load_assignment: an EDS cluster takes its endpoints from eds_config, not from load_assignment`);
  } else if (c.eds_cluster_config !== undefined) {
    errors.push(`${path}.eds_cluster_config: only a cluster of type EDS takes eds_cluster_config`);
  }
  const localities = list(obj(c.load_assignment).endpoints);
  let endpointCount = 0;
  localities.forEach((loc, l) => {
    list(loc.lb_endpoints).forEach((ep, e) => {
      endpointCount++;
      const ePath = `${path}.load_assignment.endpoints[${l}].lb_endpoints[${e}]`;
      const weight = ep.load_balancing_weight;
      if (typeof weight === 'number' && weight > MAX_ENDPOINT_WEIGHT) {
        errors.push(`${ePath}.load_balancing_weight: host weight must be between 1 and ${MAX_ENDPOINT_WEIGHT}, got ${weight}`);
      }
      const endpoint = obj(ep.endpoint);
      const hcAddress = obj(endpoint.health_check_config).address;
      if (hcAddress !== undefined) {
        if (obj(hcAddress).pipe !== undefined) errors.push(`${ePath}.endpoint.health_check_config.address: health checks go to an IP address, not a pipe`);
        else checkLiteralAddress(hcAddress, `${ePath}.endpoint.health_check_config.address`, errors);
      }
      if (endpoint.address === undefined) {
        errors.push(`${ePath}.endpoint.address: an endpoint needs an address`);
      } else if (type === 'STATIC') {
        checkLiteralAddress(endpoint.address, `${ePath}.endpoint.address`, errors);
      } else if (obj(endpoint.address).socket_address === undefined) {
        errors.push(`${ePath}.endpoint.address: ${type} clusters resolve socket_address hostnames; pipes are not allowed`);
      }
    });
  });
  if (type === 'LOGICAL_DNS' && endpointCount !== 1) {
    errors.push(`${path}.load_assignment: LOGICAL_DNS clusters must have a single locality_lb_endpoint and a single lb_endpoint`);
  }
}

export function checkBootstrapSemantics(bootstrap: Obj, errors: string[]): void {
  if (bootstrap.watchdog !== undefined && bootstrap.watchdogs !== undefined) errors.push('watchdogs: only one of watchdog or watchdogs should be set');
  const sr = obj(bootstrap.static_resources);
  const clusterNames = checkClusters(list(sr.clusters), errors);
  checkListeners(list(sr.listeners), clusterNames, errors);
  const admin = obj(bootstrap.admin);
  if (admin.address !== undefined) checkLiteralAddress(admin.address, 'admin.address', errors);
  if (obj(admin.address).pipe) errors.push('admin.address.pipe: the admin interface listens on a TCP address only (socket_address), not on a Unix socket');
  checkAccessLogs(admin.access_log, 'admin.access_log', errors);
  checkStatsSinks(bootstrap, errors);
  checkDynamicResources(bootstrap, clusterNames, errors);
  const tracing = obj(bootstrap.tracing);
  if (tracing.http !== undefined) checkTracingProvider(obj(tracing.http), 'tracing.http', clusterNames, errors);
  checkStatsTags(obj(bootstrap.stats_config), errors);
}

/**
 * stats_config.stats_tags: a name once; a regex with a group to take out of the name. Envoy
 * compiles these with std::regex (ECMAScript), not RE2: Istio's bootstraps use lookaheads.
 */
/** The capture groups of an ECMAScript regex (throws its syntax error). */
function ecmaScriptGroups(source: string): number {
  return stdRegex(`${source}|`).exec('')!.length - 1;
}

function checkStatsTags(statsConfig: Obj, errors: string[]): void {
  const names = new Set<string>();
  list(statsConfig.stats_tags).forEach((t, i) => {
    const path = `stats_config.stats_tags[${i}]`;
    const name = String(t.tag_name ?? '');
    if (names.has(name)) errors.push(`${path}.tag_name: Tag name '${name}' specified twice.`);
    names.add(name);
    if (typeof t.regex === 'string') {
      try {
        if (ecmaScriptGroups(t.regex) < 1) errors.push(`${path}.regex: a tag's regex needs a capture group (the part of the name the tag takes out)`);
      } catch (err) {
        errors.push(`${path}.regex: ${(err as Error).message}`);
      }
    }
  });
}

/**
 * xDS sources: a file must exist when the configuration loads; a gRPC source must be state of the
 * world over v3, through one static cluster, from a node with an id and a cluster (Envoy's rules).
 */
function checkDynamicResources(bootstrap: Obj, staticClusters: Set<string>, errors: string[]): void {
  const dynamic = obj(bootstrap.dynamic_resources);
  const hasAds = dynamic.ads_config !== undefined;
  let grpc = hasAds;
  if (hasAds) checkApiConfigSource(obj(dynamic.ads_config), 'dynamic_resources.ads_config', staticClusters, errors);
  const sources: [string, Obj][] = [];
  if (dynamic.cds_config !== undefined) sources.push(['dynamic_resources.cds_config', obj(dynamic.cds_config)]);
  if (dynamic.lds_config !== undefined) sources.push(['dynamic_resources.lds_config', obj(dynamic.lds_config)]);
  list(obj(bootstrap.static_resources).clusters).forEach((c, i) => {
    if (c.type === 'EDS') sources.push([`static_resources.clusters[${i}].eds_cluster_config.eds_config`, obj(obj(c.eds_cluster_config).eds_config)]);
  });
  for (const user of rdsUsers(bootstrap)) sources.push([`the rds.config_source of route configuration '${user.name}' (http.${user.statPrefix})`, user.source]);
  for (const [path, source] of sources) {
    if (source.ads !== undefined && !hasAds) errors.push(`${path}.ads: an ads source needs dynamic_resources.ads_config`);
    if (source.api_config_source !== undefined) {
      grpc = true;
      checkApiConfigSource(obj(source.api_config_source), `${path}.api_config_source`, staticClusters, errors);
    }
    const pcs = obj(source.path_config_source);
    for (const [p, file] of [[`${path}.path_config_source.path`, pcs.path], [`${path}.path`, source.path]] as const) {
      if (typeof file === 'string' && !existsSync(file)) errors.push(`${p}: paths must refer to an existing path in the system: '${file}' does not exist`);
    }
    const watched = obj(pcs.watched_directory).path;
    if (typeof watched === 'string' && !existsSync(watched)) {
      errors.push(`${path}.path_config_source.watched_directory.path: paths must refer to an existing path in the system: '${watched}' does not exist`);
    }
  }
  const node = obj(bootstrap.node);
  if (grpc && (!node.id || !node.cluster)) errors.push('node: xDS over gRPC needs a node id and cluster (node.id, node.cluster, or --service-node and --service-cluster)');
}

/** A gRPC xDS source: state of the world or incremental, over v3, through one static cluster. */
export function checkApiConfigSource(api: Obj, path: string, staticClusters: Set<string>, errors: string[]): void {
  const apiType = String(api.api_type ?? 'DEPRECATED_AND_UNAVAILABLE_DO_NOT_USE');
  if (apiType === 'REST') errors.push(`${path}.api_type: REST xDS is not supported; use GRPC`);
  else if (apiType !== 'GRPC' && apiType !== 'DELTA_GRPC') errors.push(`${path}.api_type: ${apiType} is not an xDS transport this proxy speaks; use GRPC or DELTA_GRPC`);
  if (String(api.transport_api_version ?? 'AUTO') !== 'V3') errors.push(`${path}.transport_api_version: only V3 is supported`);
  const services = list(api.grpc_services);
  if (services.length !== 1) errors.push(`${path}.grpc_services: only singleton gRPC service lists are supported (as in Envoy), got ${services.length}`);
  const cluster = obj(obj(services[0]).envoy_grpc).cluster_name;
  if (services.length >= 1 && (typeof cluster !== 'string' || !staticClusters.has(cluster))) {
    errors.push(`${path}.grpc_services[0].envoy_grpc.cluster_name: the xDS cluster must be a cluster of static_resources, not '${String(cluster ?? '')}'`);
  }
}

/** Each stats sink must be one this proxy implements (only the Hystrix sink behind /dashboard_event_stream), once. */
function checkStatsSinks(bootstrap: Obj, errors: string[]): void {
  let hystrix = 0;
  list(bootstrap.stats_sinks).forEach((sink, i) => {
    const ext = filterExtension(sink);
    if (!ext) {
      if (sink.typed_config === undefined) errors.push(`stats_sinks[${i}]: unknown stats sink '${String(sink.name ?? '')}' (implemented: envoy.stat_sinks.hystrix, envoy.stat_sinks.statsd, envoy.stat_sinks.dog_statsd)`);
      return;
    }
    if (ext.category !== 'envoy.stats_sinks') errors.push(`stats_sinks[${i}]: '${ext.name}' is not a stats sink`);
    else if (ext.name === 'envoy.stat_sinks.hystrix') {
      if (++hystrix > 1) errors.push(`stats_sinks[${i}]: only a single HystrixSink may be configured`);
    } else {
      const address = obj(sink.typed_config).address;
      if (address === undefined) errors.push(`stats_sinks[${i}].typed_config.address: ${ext.name} needs the UDP address to send to`);
      else checkLiteralAddress(address, `stats_sinks[${i}].typed_config.address`, errors, true);
    }
  });
}
