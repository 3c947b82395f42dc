import { extensionByName } from '../extensions/registry.js';
import type { JsonObject } from './proto-json.js';
import { v3Successors } from './schema.js';
import { TYPE_URL_PREFIX, typeNameOfUrl } from './wkt.js';

/**
 * v2 → v3 bootstrap upgrade, for the fields this proxy supports. It works on the raw document
 * (before validation) and rewrites only constructs that do not exist in v3, so a v3 document
 * passes through unchanged:
 *
 *  - `@type` URLs of v2 messages → their v3 successors, from the `previous_message_type`
 *    annotations that every v3 message in Envoy's API carries;
 *  - `config` (an untyped Struct beside `name`) → `typed_config` of the extension's v3 type;
 *  - `Cluster.hosts` → `load_assignment`; `tls_context` → `transport_socket`;
 *  - `RouteMatch.regex` and `HeaderMatcher.regex_match` → RE2 `safe_regex` forms;
 *  - HCM `idle_timeout` → `common_http_protocol_options.idle_timeout`;
 *  - the v2 `runtime` block → `layered_runtime`.
 *
 * Each rewrite is reported, so that the loader can tell the operator what it changed.
 */

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface UpgradeResult {
  document: JsonObject;
  changes: string[];
}

export function upgradeV2Bootstrap(document: JsonObject): UpgradeResult {
  const changes: string[] = [];
  const next = v3Successors();

  const rewrite = (value: unknown, path: string, key: string): unknown => {
    if (Array.isArray(value)) return value.map((v, i) => rewrite(v, `${path}[${i}]`, key));
    if (!isObject(value)) return value;
    let obj: JsonObject = {};
    for (const [k, v] of Object.entries(value)) obj[k] = rewrite(v, path ? `${path}.${k}` : k, k);

    const typeUrl = obj['@type'];
    if (typeof typeUrl === 'string') {
      const v3 = next.get(typeNameOfUrl(typeUrl));
      if (v3) {
        obj['@type'] = TYPE_URL_PREFIX + v3;
        changes.push(`${path}: @type ${typeNameOfUrl(typeUrl)} → ${v3}`);
      }
    }
    if (typeof obj.name === 'string' && isObject(obj.config) && obj.typed_config === undefined && obj.typedConfig === undefined) {
      const ext = extensionByName(obj.name);
      if (ext) {
        const { config, ...rest } = obj;
        obj = { ...rest, typed_config: { '@type': TYPE_URL_PREFIX + ext.typeName, ...config } };
        changes.push(`${path}: config (Struct) → typed_config ${ext.typeName}`);
      }
    }
    if (key === 'clusters' && Array.isArray(obj.hosts) && obj.load_assignment === undefined) {
      const { hosts, ...rest } = obj;
      obj = {
        ...rest,
        load_assignment: {
          cluster_name: obj.name,
          endpoints: [{ lb_endpoints: (hosts as unknown[]).map((address) => ({ endpoint: { address } })) }],
        },
      };
      changes.push(`${path}: hosts → load_assignment`);
    }
    if (isObject(obj.tls_context) && obj.transport_socket === undefined && (key === 'clusters' || key === 'filter_chains')) {
      const { tls_context, ...rest } = obj;
      const tlsType = key === 'clusters' ? 'UpstreamTlsContext' : 'DownstreamTlsContext';
      obj = {
        ...rest,
        transport_socket: {
          name: 'envoy.transport_sockets.tls',
          typed_config: { '@type': `${TYPE_URL_PREFIX}envoy.extensions.transport_sockets.tls.v3.${tlsType}`, ...tls_context },
        },
      };
      changes.push(`${path}: tls_context → transport_socket`);
    }
    if (key === 'match' && typeof obj.regex === 'string') {
      const { regex, ...rest } = obj;
      obj = { ...rest, safe_regex: { regex } };
      changes.push(`${path}: regex → safe_regex`);
    }
    if (key === 'headers' && typeof obj.regex_match === 'string') {
      const { regex_match, ...rest } = obj;
      obj = { ...rest, safe_regex_match: { regex: regex_match } };
      changes.push(`${path}: regex_match → safe_regex_match`);
    }
    if (key === 'typed_config' && obj.idle_timeout !== undefined && String(obj['@type']).endsWith('.HttpConnectionManager')) {
      const { idle_timeout, ...rest } = obj;
      const common = isObject(rest.common_http_protocol_options) ? rest.common_http_protocol_options : {};
      obj = { ...rest, common_http_protocol_options: { ...common, idle_timeout } };
      changes.push(`${path}: idle_timeout → common_http_protocol_options.idle_timeout`);
    }
    return obj;
  };

  let upgraded = rewrite(document, '', '') as JsonObject;
  if (isObject(upgraded.runtime) && upgraded.layered_runtime === undefined) {
    const { runtime, ...rest } = upgraded;
    const rt = runtime as JsonObject;
    const layers: JsonObject[] = [];
    if (rt.base !== undefined) layers.push({ name: 'base', static_layer: rt.base });
    if (typeof rt.symlink_root === 'string') {
      layers.push({ name: 'root', disk_layer: { symlink_root: rt.symlink_root, subdirectory: rt.subdirectory ?? '' } });
      if (typeof rt.override_subdirectory === 'string') {
        layers.push({ name: 'override', disk_layer: { symlink_root: rt.symlink_root, subdirectory: rt.override_subdirectory, append_service_cluster: true } });
      }
    }
    layers.push({ name: 'admin', admin_layer: {} });
    upgraded = { ...rest, layered_runtime: { layers } };
    changes.push('runtime → layered_runtime');
  }
  return { document: upgraded, changes };
}
