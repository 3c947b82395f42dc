import { innerTransportSocket } from '../../extensions/transport-sockets/proxy-protocol/upstream-proxy-protocol.js';
import { checkOverloadManager } from '../../overload/config.js';
import { existsSync } from 'node:fs';
import { checkAccessLogs } from '../../access-log/loggers.js';
import { list, obj } from '../access.js';
import { rdsUsers } from '../resources.js';
import { secretRefsOf } from '../../extensions/transport-sockets/tls/secrets.js';
import { typeNameOfUrl } from '../wkt.js';
import { UPSTREAM_HTTP_OPTIONS } from '../../extensions/upstreams/http/protocol.js';
import { stdRegex } from '../../std-regex.js';
import { checkLiteralAddress, filterExtension, type Obj } from './common.js';
import { HCM_TYPE_NAME, checkTracingProvider } from './connection-manager.js';
import { checkListeners } from './listeners.js';
import { checkClusters } from './clusters.js';
import { configError, type ConfigError } from '../config-error.js';

/**
 * Checks that need the whole bootstrap, after every field has passed the schema: names that
 * must be unique, references between listeners, routes and clusters, addresses that must
 * parse, and the parts of Envoy's API this proxy does not serve (so that they fail here, at
 * load time, instead of being accepted and ignored).
 */

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

export function checkBootstrapSemantics(bootstrap: Obj, errors: ConfigError[]): void {
  if (bootstrap.watchdog !== undefined && bootstrap.watchdogs !== undefined) errors.push(configError('conflict', 'watchdogs', 'only one of watchdog or watchdogs should be set'));
  const sr = obj(bootstrap.static_resources);
  const clusterNames = checkClusters(list(sr.clusters), errors);
  checkListeners(list(sr.listeners), clusterNames, errors);
  const admin = obj(bootstrap.admin);
  if (admin.address !== undefined) checkLiteralAddress(admin.address, 'admin.address', errors);
  if (obj(admin.address).pipe) errors.push(configError('unsupported', 'admin.address.pipe', 'the admin interface listens on a TCP address only (socket_address), not on a Unix socket'));
  checkAccessLogs(admin.access_log, 'admin.access_log', errors);
  checkStatsSinks(bootstrap, errors);
  checkDynamicResources(bootstrap, clusterNames, errors);
  const tracing = obj(bootstrap.tracing);
  if (tracing.http !== undefined) checkTracingProvider(obj(tracing.http), 'tracing.http', clusterNames, errors);
  checkOverloadManager(bootstrap, errors);
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

function checkStatsTags(statsConfig: Obj, errors: ConfigError[]): void {
  const names = new Set<string>();
  list(statsConfig.stats_tags).forEach((t, i) => {
    const path = `stats_config.stats_tags[${i}]`;
    const name = String(t.tag_name ?? '');
    if (names.has(name)) errors.push(configError('duplicate', `${path}.tag_name`, `Tag name '${name}' specified twice.`));
    names.add(name);
    if (typeof t.regex === 'string') {
      try {
        if (ecmaScriptGroups(t.regex) < 1) errors.push(configError('invalid', `${path}.regex`, 'a tag\'s regex needs a capture group (the part of the name the tag takes out)'));
      } catch (err) {
        errors.push(configError('invalid', `${path}.regex`, `${(err as Error).message}`));
      }
    }
  });
}

/**
 * xDS sources: a file must exist when the configuration loads; a gRPC source must be state of the
 * world over v3, through one static cluster, from a node with an id and a cluster (Envoy's rules).
 */
function checkDynamicResources(bootstrap: Obj, staticClusters: Set<string>, errors: ConfigError[]): void {
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
  for (const [path, ref] of staticSdsRefs(bootstrap)) sources.push([`${path}.sds_config`, obj(ref.sds_config)]);
  for (const [path, source] of sources) {
    if (source.ads !== undefined && !hasAds) errors.push(configError('missing', `${path}.ads`, 'an ads source needs dynamic_resources.ads_config'));
    if (source.api_config_source !== undefined) {
      grpc = true;
      checkApiConfigSource(obj(source.api_config_source), `${path}.api_config_source`, staticClusters, errors);
    }
    const pcs = obj(source.path_config_source);
    for (const [p, file] of [[`${path}.path_config_source.path`, pcs.path], [`${path}.path`, source.path]] as const) {
      if (typeof file === 'string' && !existsSync(file)) errors.push(configError('unknown_reference', p, `paths must refer to an existing path in the system: '${file}' does not exist`));
    }
    const watched = obj(pcs.watched_directory).path;
    if (typeof watched === 'string' && !existsSync(watched)) {
      errors.push(configError('unknown_reference', `${path}.path_config_source.watched_directory.path`, `paths must refer to an existing path in the system: '${watched}' does not exist`));
    }
  }
  const node = obj(bootstrap.node);
  if (grpc && (!node.id || !node.cluster)) errors.push(configError('missing', 'node', 'xDS over gRPC needs a node id and cluster (node.id, node.cluster, or --service-node and --service-cluster)'));
}

/** The SdsSecretConfigs with an sds_config of the bootstrap's listeners and clusters, by path. */
function staticSdsRefs(bootstrap: Obj): [string, Obj][] {
  const resources = obj(bootstrap.static_resources);
  const sockets: [string, unknown][] = [];
  list(resources.listeners).forEach((l, li) => {
    list(l.filter_chains).forEach((c, ci) => sockets.push([`static_resources.listeners[${li}].filter_chains[${ci}]`, c.transport_socket]));
    if (l.default_filter_chain !== undefined) sockets.push([`static_resources.listeners[${li}].default_filter_chain`, obj(l.default_filter_chain).transport_socket]);
  });
  list(resources.clusters).forEach((c, i) => sockets.push([`static_resources.clusters[${i}]`, innerTransportSocket(c.transport_socket)]));
  return sockets.flatMap(([path, ts]) => secretRefsOf(obj(obj(ts).typed_config), `${path}.transport_socket.typed_config`).filter((r) => r.ref.sds_config !== undefined).map((r) => [r.path, r.ref] as [string, Obj]));
}

/** A gRPC xDS source: state of the world or incremental, over v3, through one static cluster. */
export function checkApiConfigSource(api: Obj, path: string, staticClusters: Set<string>, errors: ConfigError[]): void {
  const apiType = String(api.api_type ?? 'DEPRECATED_AND_UNAVAILABLE_DO_NOT_USE');
  if (apiType === 'REST') errors.push(configError('unsupported', `${path}.api_type`, 'REST xDS is not supported; use GRPC'));
  else if (apiType !== 'GRPC' && apiType !== 'DELTA_GRPC') errors.push(configError('unsupported', `${path}.api_type`, `${apiType} is not an xDS transport this proxy speaks; use GRPC or DELTA_GRPC`));
  if (String(api.transport_api_version ?? 'AUTO') !== 'V3') errors.push(configError('unsupported', `${path}.transport_api_version`, 'only V3 is supported'));
  const services = list(api.grpc_services);
  if (services.length !== 1) errors.push(configError('unsupported', `${path}.grpc_services`, `only singleton gRPC service lists are supported (as in Envoy), got ${services.length}`));
  const cluster = obj(obj(services[0]).envoy_grpc).cluster_name;
  if (services.length >= 1 && (typeof cluster !== 'string' || !staticClusters.has(cluster))) {
    errors.push(configError('unknown_reference', `${path}.grpc_services[0].envoy_grpc.cluster_name`, `the xDS cluster must be a cluster of static_resources, not '${String(cluster ?? '')}'`));
  }
}

/** Each stats sink must be one this proxy implements (only the Hystrix sink behind /dashboard_event_stream), once. */
function checkStatsSinks(bootstrap: Obj, errors: ConfigError[]): void {
  let hystrix = 0;
  list(bootstrap.stats_sinks).forEach((sink, i) => {
    const ext = filterExtension(sink);
    if (!ext) {
      if (sink.typed_config === undefined) errors.push(configError('unsupported_extension', `stats_sinks[${i}]`, `unknown stats sink '${String(sink.name ?? '')}' (implemented: envoy.stat_sinks.hystrix, envoy.stat_sinks.statsd, envoy.stat_sinks.dog_statsd)`));
      return;
    }
    if (ext.category !== 'envoy.stats_sinks') errors.push(configError('wrong_extension', `stats_sinks[${i}]`, `'${ext.name}' is not a stats sink`));
    else if (ext.name === 'envoy.stat_sinks.hystrix') {
      if (++hystrix > 1) errors.push(configError('duplicate', `stats_sinks[${i}]`, 'only a single HystrixSink may be configured'));
    } else {
      const config = obj(sink.typed_config);
      const tcpCluster = config.tcp_cluster_name;
      if (typeof tcpCluster === 'string' && tcpCluster) {
        // As Envoy's TcpStatsdSink (Config::Utility::checkCluster): a cluster of static_resources.
        if (!list(obj(bootstrap.static_resources).clusters).some((c) => c.name === tcpCluster)) errors.push(configError('unknown_reference', `stats_sinks[${i}].typed_config.tcp_cluster_name`, `tcp statsd: unknown cluster '${tcpCluster}' (it must be a cluster of static_resources)`));
      } else if (config.address === undefined) errors.push(configError('missing', `stats_sinks[${i}].typed_config.address`, `${ext.name} needs the UDP address to send to, or (statsd) tcp_cluster_name`));
      else checkLiteralAddress(config.address, `stats_sinks[${i}].typed_config.address`, errors, true);
    }
  });
}
