import { hostTlvsOf, innerTransportSocket } from '../../extensions/transport-sockets/proxy-protocol/upstream-proxy-protocol.js';
import { list, obj } from '../access.js';
import { checkHttp2Options } from '../http2-options.js';
import { clusterHttp2Options, UPSTREAM_HTTP_OPTIONS } from '../../extensions/upstreams/http/protocol.js';
import { checkLiteralAddress, type Obj } from './common.js';
import { configError, type ConfigError } from '../config-error.js';
import { EXTENSIONS, extensionByName } from '../../extensions/registry.js';
import { checkLoadBalancingPolicy } from '../../extensions/load-balancing-policies/lookup.js';
import { isPrime } from '../../decimal.js';
import { tlsContextConfig } from '../../extensions/transport-sockets/tls/context.js';

/** Clusters' semantic checks (static or from CDS): types, load-balancing policies, endpoints, protocol options. */

const SUPPORTED_CLUSTER_TYPES = ['STATIC', 'STRICT_DNS', 'LOGICAL_DNS', 'EDS'];
const SUPPORTED_LB_POLICIES = ['ROUND_ROBIN', 'LEAST_REQUEST', 'RANDOM', 'RING_HASH', 'MAGLEV', 'LOAD_BALANCING_POLICY_CONFIG'];
const MAX_ENDPOINT_WEIGHT = 100;

export function checkClusters(clusters: Obj[], errors: ConfigError[]): Set<string> {
  const names = new Map<string, number>();
  clusters.forEach((c, i) => {
    const path = `static_resources.clusters[${i}]`;
    const name = String(c.name);
    if (names.has(name)) errors.push(configError('duplicate', `${path}.name`, `cluster manager: duplicate cluster '${name}' (also clusters[${names.get(name)}])`));
    names.set(name, i);
    checkCluster(c, path, errors);
  });
  return new Set(names.keys());
}

/** One cluster alone (a bootstrap's, or one from the cluster discovery service). */
export function checkCluster(c: Obj, path: string, errors: ConfigError[]): void {
  const type = String(c.type ?? 'STATIC');
  if (!SUPPORTED_CLUSTER_TYPES.includes(type)) {
    errors.push(configError('unsupported', `${path}.type`, `cluster type ${type} is not supported by this proxy (supported: ${SUPPORTED_CLUSTER_TYPES.join(', ')})`));
  }
  const lb = String(c.lb_policy ?? 'ROUND_ROBIN');
  checkLoadBalancingPolicy(c, path, errors);
  // With a load_balancing_policy, Envoy sets lb_policy aside, whatever it says.
  if (c.load_balancing_policy === undefined && !SUPPORTED_LB_POLICIES.includes(lb)) errors.push(configError('unsupported', `${path}.lb_policy`, `${lb} is not supported by this proxy (supported: ${SUPPORTED_LB_POLICIES.join(', ')})`));
  const ring = obj(c.ring_hash_lb_config);
  if (ring.hash_function !== undefined && ring.hash_function !== 'XX_HASH') errors.push(configError('unsupported', `${path}.ring_hash_lb_config.hash_function`, `${String(ring.hash_function)} is not supported by this proxy (XX_HASH is)`));
  if (Number(ring.minimum_ring_size ?? 1024) > Number(ring.maximum_ring_size ?? 8 * 1024 * 1024)) errors.push(configError('invalid', `${path}.ring_hash_lb_config`, 'minimum_ring_size must not be above maximum_ring_size'));
  if ((lb === 'RING_HASH' || lb === 'MAGLEV') && obj(c.common_lb_config).locality_weighted_lb_config !== undefined) {
    errors.push(configError('unsupported', `${path}.common_lb_config.locality_weighted_lb_config`, `locality weights with ${lb} are not supported by this proxy (ROUND_ROBIN, LEAST_REQUEST and RANDOM take them)`));
  }
  const table = obj(c.maglev_lb_config).table_size;
  if (table !== undefined && !isPrime(Number(table))) errors.push(configError('invalid', `${path}.maglev_lb_config.table_size`, `${String(table)} is not a prime number`));
  for (const key of Object.keys(obj(c.typed_extension_protocol_options))) {
    if (extensionByName(key)?.category !== 'envoy.upstream_options') {
      const known = EXTENSIONS.filter((e) => e.category === 'envoy.upstream_options').map((e) => e.name).join(', ');
      errors.push(configError('unsupported_extension', `${path}.typed_extension_protocol_options["${key}"]`, `no protocol options extension is named '${key}' (use ${known})`));
    }
  }
  const httpOptions = obj(obj(c.typed_extension_protocol_options)[UPSTREAM_HTTP_OPTIONS]);
  for (const config of ['explicit_http_config', 'auto_config']) {
    for (const field of Object.keys(obj(obj(httpOptions[config]).http_protocol_options))) {
      errors.push(configError('unsupported', `${path}.typed_extension_protocol_options["${UPSTREAM_HTTP_OPTIONS}"].${config}.http_protocol_options.${field}`, 'not applied to upstream connections by this proxy (it is on a connection manager\'s http_protocol_options)'));
    }
  }
  // auto_config picks the protocol by ALPN: Envoy refuses it on a cluster whose transport socket cannot negotiate.
  if (httpOptions.auto_config !== undefined && tlsContextConfig(innerTransportSocket(c.transport_socket)) === undefined) {
    errors.push(configError('invalid', `${path}.typed_extension_protocol_options["${UPSTREAM_HTTP_OPTIONS}"].auto_config`, `ALPN configured for cluster ${String(c.name ?? '')} which has a non-ALPN transport socket`));
  }
  const extensionCommon = obj(obj(obj(c.typed_extension_protocol_options)[UPSTREAM_HTTP_OPTIONS]).common_http_protocol_options);
  const commonPath = obj(c.typed_extension_protocol_options)[UPSTREAM_HTTP_OPTIONS] !== undefined
    ? `${path}.typed_extension_protocol_options["${UPSTREAM_HTTP_OPTIONS}"].common_http_protocol_options`
    : `${path}.common_http_protocol_options`;
  for (const field of ['max_headers_count', 'headers_with_underscores_action']) {
    const common = obj(c.typed_extension_protocol_options)[UPSTREAM_HTTP_OPTIONS] !== undefined ? extensionCommon : obj(c.common_http_protocol_options);
    if (common[field] !== undefined) errors.push(configError('unsupported', `${commonPath}.${field}`, 'not applied to upstream responses by this proxy (it is on a connection manager\'s common_http_protocol_options)'));
  }
  const h2 = clusterHttp2Options(c);
  if (h2) {
    const source = ['explicit_http_config', 'auto_config'].find((k) => obj(httpOptions[k]).http2_protocol_options !== undefined);
    const h2Path = source === undefined ? `${path}.http2_protocol_options` : `${path}.typed_extension_protocol_options["${UPSTREAM_HTTP_OPTIONS}"].${source}.http2_protocol_options`;
    checkHttp2Options(h2, h2Path, errors);
  }
  const checks = list(c.health_checks);
  if (checks.length > 1) errors.push(configError('duplicate', `${path}.health_checks`, `one health check per cluster is supported, got ${checks.length}`));
  checks.forEach((hc, i) => {
    if (!hc.http_health_check && !hc.tcp_health_check) errors.push(configError('missing', `${path}.health_checks[${i}]`, 'needs http_health_check or tcp_health_check'));
  });
  if (type === 'EDS') {
    const eds = obj(obj(c.eds_cluster_config).eds_config);
    if (eds.ads === undefined && eds.path === undefined && eds.path_config_source === undefined && eds.api_config_source === undefined) {
      errors.push(configError('missing', `${path}.eds_cluster_config.eds_config`, 'an EDS cluster needs a source for its endpoints (ads, path_config_source or api_config_source)'));
    }
    if (c.load_assignment !== undefined) errors.push(configError('conflict', `${path}.load_assignment`, 'an EDS cluster takes its endpoints from eds_config, not from load_assignment'));
  } else if (c.eds_cluster_config !== undefined) {
    errors.push(configError('conflict', `${path}.eds_cluster_config`, 'only a cluster of type EDS takes eds_cluster_config'));
  }
  const localities = list(obj(c.load_assignment).endpoints);
  let endpointCount = 0;
  localities.forEach((loc, l) => {
    list(loc.lb_endpoints).forEach((ep, e) => {
      endpointCount++;
      const ePath = `${path}.load_assignment.endpoints[${l}].lb_endpoints[${e}]`;
      const weight = ep.load_balancing_weight;
      if (typeof weight === 'number' && weight > MAX_ENDPOINT_WEIGHT) {
        errors.push(configError('invalid', `${ePath}.load_balancing_weight`, `host weight must be between 1 and ${MAX_ENDPOINT_WEIGHT}, got ${weight}`));
      }
      hostTlvsOf(ep.metadata, ePath, errors);
      const endpoint = obj(ep.endpoint);
      const hcAddress = obj(endpoint.health_check_config).address;
      if (hcAddress !== undefined) {
        if (obj(hcAddress).pipe !== undefined) errors.push(configError('conflict', `${ePath}.endpoint.health_check_config.address`, 'health checks go to an IP address, not a pipe'));
        else checkLiteralAddress(hcAddress, `${ePath}.endpoint.health_check_config.address`, errors);
      }
      if (endpoint.address === undefined) {
        errors.push(configError('missing', `${ePath}.endpoint.address`, 'an endpoint needs an address'));
      } else if (type === 'STATIC') {
        checkLiteralAddress(endpoint.address, `${ePath}.endpoint.address`, errors);
      } else if (obj(endpoint.address).socket_address === undefined) {
        errors.push(configError('conflict', `${ePath}.endpoint.address`, `${type} clusters resolve socket_address hostnames; pipes are not allowed`));
      }
    });
  });
  if (type === 'LOGICAL_DNS' && endpointCount !== 1) {
    errors.push(configError('missing', `${path}.load_assignment`, 'LOGICAL_DNS clusters must have a single locality_lb_endpoint and a single lb_endpoint'));
  }
}
