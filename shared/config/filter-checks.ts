import { LOCAL_RATE_LIMIT_TYPE } from '../ratelimit/bucket-slots.js';
import { list, obj } from './access.js';
import { extensionByTypeName } from './extensions.js';
import type { JsonObject } from './proto-json.js';
import { typeNameOfUrl } from './wkt.js';
import { checkRegex } from '../matchers.js';

/**
 * The HTTP filters' configurations checked beyond their protos, as Envoy checks them when it
 * builds each filter: on the filter (checkHttpFilterConfig) and per route or virtual host
 * (checkPerFilterConfigs). Each error names the field.
 */

type Obj = JsonObject;

/** A filter's own configuration, by the filter's extension name. */
export function checkHttpFilterConfig(name: string, config: Obj, path: string, errors: string[]): void {
  if (name === 'envoy.filters.http.csrf') checkCsrfPolicy(config, path, errors);
  if (name === 'envoy.filters.http.rbac') checkRbacRules(config, path, errors);
  if (name === 'envoy.filters.http.local_ratelimit') checkLocalRateLimit(config, path, false, errors);
  if (name === 'envoy.filters.http.ext_authz') checkExtAuthz(config, path, errors);
  if (name === 'envoy.filters.http.ratelimit') checkRateLimit(config, path, errors);
  if (name === 'envoy.filters.http.header_to_metadata') checkHeaderToMetadata(config, path, errors);
  if (name === 'envoy.filters.http.compressor') checkLibrary(config.compressor_library, 'envoy.compression.compressor', `${path}.compressor_library`, errors);
  if (name === 'envoy.filters.http.decompressor') checkLibrary(config.decompressor_library, 'envoy.compression.decompressor', `${path}.decompressor_library`, errors);
}

/**
 * A route's or virtual host's typed_per_filter_config, by filter: CORS policies (and the
 * deprecated `cors`) must have origin regexes that compile, CSRF and RBAC as their filters', a
 * local rate limit needs its own token bucket.
 */
export function checkPerFilterConfigs(scope: Obj, path: string, legacy: [unknown, string], errors: string[]): void {
  const policies: [Obj, string][] = [];
  if (legacy[0] !== undefined) policies.push([obj(legacy[0]), legacy[1]]);
  for (const [name, any] of Object.entries(obj(scope.typed_per_filter_config))) {
    const a = obj(any);
    const inner = typeof a['@type'] === 'string' && typeNameOfUrl(a['@type']) === 'envoy.config.route.v3.FilterConfig' ? obj(a.config) : a;
    const type = typeof inner['@type'] === 'string' ? typeNameOfUrl(inner['@type']) : '';
    if (type === 'envoy.extensions.filters.http.cors.v3.CorsPolicy') policies.push([inner, `${path}.typed_per_filter_config["${name}"]`]);
    if (type === 'envoy.extensions.filters.http.csrf.v3.CsrfPolicy') checkCsrfPolicy(inner, `${path}.typed_per_filter_config["${name}"]`, errors);
    if (type === 'envoy.extensions.filters.http.rbac.v3.RBACPerRoute') checkRbacRules(obj(inner.rbac), `${path}.typed_per_filter_config["${name}"].rbac`, errors);
    if (type === LOCAL_RATE_LIMIT_TYPE) checkLocalRateLimit(inner, `${path}.typed_per_filter_config["${name}"]`, true, errors);
    if (type === 'envoy.extensions.filters.http.header_to_metadata.v3.Config') checkHeaderToMetadata(inner, `${path}.typed_per_filter_config["${name}"]`, errors);
  }
  for (const [policy, pPath] of policies) {
    list(policy.allow_origin_string_match).forEach((m, i) => checkRegex(obj(m.safe_regex).regex, `${pPath}.allow_origin_string_match[${i}].safe_regex.regex`, errors));
  }
}

/** An RBAC filter's rules (the filter's, or a route's): LOG would need dynamic metadata, which nothing here reads. */
function checkRbacRules(rbac: Obj, path: string, errors: string[]): void {
  for (const key of ['rules', 'shadow_rules']) {
    if (obj(rbac[key]).action === 'LOG') errors.push(`${path}.${key}.action: LOG is not supported (it reports through dynamic metadata, which nothing in this proxy reads); use ALLOW or DENY, or shadow_rules to count`);
  }
}

/** A local rate limit (the filter's, or a route's, which must have a bucket): each descriptor once. */
function checkLocalRateLimit(config: Obj, path: string, perRoute: boolean, errors: string[]): void {
  if (perRoute && config.token_bucket === undefined) errors.push(`${path}.token_bucket: a local rate limit in typed_per_filter_config must have its own token bucket`);
  const seen = new Map<string, number>();
  list(config.descriptors).forEach((d, i) => {
    const entries = list(d.entries).map((e) => `${String(e.key)}=${String(e.value ?? '')}`).join(', ');
    const first = seen.get(entries);
    if (first !== undefined) errors.push(`${path}.descriptors[${i}]: duplicate descriptor {${entries}} (also descriptors[${first}])`);
    else seen.set(entries, i);
  });
}

/** header_to_metadata's rules, as Envoy checks them (and PROTOBUF_VALUE, not done here). */
function checkHeaderToMetadata(config: Obj, path: string, errors: string[]): void {
  for (const side of ['request_rules', 'response_rules']) {
    list(config[side]).forEach((r, i) => {
      const rPath = `${path}.${side}[${i}]`;
      const header = typeof r.header === 'string' && r.header !== '';
      const cookie = typeof r.cookie === 'string' && r.cookie !== '';
      if (header === cookie) errors.push(`${rPath}: one of header and cookie must be set`);
      if (cookie && r.remove === true) errors.push(`${rPath}: cannot specify remove for a cookie`);
      if (r.on_header_present === undefined && r.on_header_missing === undefined) errors.push(`${rPath}: one of on_header_present and on_header_missing must be set`);
      if (r.on_header_missing !== undefined && !obj(r.on_header_missing).value) errors.push(`${rPath}.on_header_missing: cannot be used without a non-empty value`);
      for (const kv of ['on_header_present', 'on_header_missing']) {
        const pair = obj(r[kv]);
        if (pair.value !== undefined && pair.value !== '' && pair.regex_value_rewrite !== undefined) errors.push(`${rPath}.${kv}: cannot specify both value and regex_value_rewrite`);
        if (pair.regex_value_rewrite !== undefined) checkRegex(obj(obj(pair.regex_value_rewrite).pattern).regex, `${rPath}.${kv}.regex_value_rewrite.pattern.regex`, errors);
        if (pair.type === 'PROTOBUF_VALUE') errors.push(`${rPath}.${kv}.type: PROTOBUF_VALUE is not supported by this proxy; use STRING or NUMBER`);
      }
    });
  }
}

/** A compressor's or decompressor's library must be one of its kind. */
function checkLibrary(library: unknown, category: string, path: string, errors: string[]): void {
  const typed = obj(obj(library).typed_config)['@type'];
  if (typeof typed !== 'string') return;
  const ext = extensionByTypeName(typeNameOfUrl(typed));
  if (ext && ext.category !== category) errors.push(`${path}.typed_config: '${ext.name}' is not a ${category.slice('envoy.compression.'.length)} library`);
}

/** ext_authz: one service, the v3 API, and the allowed headers said once. */
function checkExtAuthz(config: Obj, path: string, errors: string[]): void {
  if ((config.grpc_service === undefined) === (config.http_service === undefined)) errors.push(`${path}: exactly one of grpc_service and http_service must be set`);
  if (config.transport_api_version === 'V2') errors.push(`${path}.transport_api_version: V2 is not supported; use V3`);
  if (config.allowed_headers !== undefined && obj(obj(config.http_service).authorization_request).allowed_headers !== undefined) {
    errors.push(`${path}: allowed_headers and http_service.authorization_request.allowed_headers cannot both be set`);
  }
  if (config.http_service !== undefined && typeof obj(obj(config.http_service).server_uri).cluster !== 'string') errors.push(`${path}.http_service.server_uri.cluster: the authorization service's cluster is required`);
}

/** The global rate limit filter: a domain, and a service reached over gRPC with the v3 API. */
function checkRateLimit(config: Obj, path: string, errors: string[]): void {
  if (typeof config.domain !== 'string' || config.domain === '') errors.push(`${path}.domain: a rate limit domain is required`);
  const service = obj(config.rate_limit_service);
  if (config.rate_limit_service === undefined || obj(service.grpc_service).envoy_grpc === undefined) errors.push(`${path}.rate_limit_service.grpc_service: the rate-limit service (envoy_grpc with its cluster) is required`);
  if (service.transport_api_version === 'V2') errors.push(`${path}.rate_limit_service.transport_api_version: V2 is not supported; use V3`);
}

/** A CSRF policy (the filter's, or a route's): its additional origins' regexes must compile. */
function checkCsrfPolicy(policy: Obj, path: string, errors: string[]): void {
  list(policy.additional_origins).forEach((m, i) => checkRegex(obj(m.safe_regex).regex, `${path}.additional_origins[${i}].safe_regex.regex`, errors));
}
