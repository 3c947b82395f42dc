import { checkHeadersToAdd } from '../../header-mutation.js';
import { list, obj } from '../access.js';
import { durationMs, typeNameOfUrl } from '../wkt.js';
import { checkCorsPolicy } from '../../extensions/filters/http/cors/descriptor.js';
import { httpFilterByTypeName } from '../../extensions/registry.js';
import { checkRegex } from '../../matchers.js';
import type { Obj } from './common.js';
import { configError, type ConfigError } from '../config-error.js';

/** A route configuration's semantic checks (static or from RDS): clusters named, header mutations, upgrades, retry policies, regexes. */

/**
 * A level's header mutations: values must format; as in Envoy, pseudo-headers (`:path`, …) and
 * `host` may be neither added nor removed on requests, nor pseudo-headers on responses.
 */
function checkHeaderMutations(scope: Obj, path: string, errors: ConfigError[]): void {
  for (const direction of ['request', 'response'] as const) {
    const forbidden = (name: string) => name.startsWith(':') || (direction === 'request' && name.toLowerCase() === 'host');
    checkHeadersToAdd(scope[`${direction}_headers_to_add`], `${path}.${direction}_headers_to_add`, errors);
    list(scope[`${direction}_headers_to_add`]).forEach((o, i) => {
      const key = String(obj(o.header).key ?? '');
      if (forbidden(key)) errors.push(configError('invalid', `${path}.${direction}_headers_to_add[${i}].header.key`, `':-prefixed' or host headers may not be modified ('${key}')`));
    });
    ((scope[`${direction}_headers_to_remove`] as string[] | undefined) ?? []).forEach((name, i) => {
      if (forbidden(name)) errors.push(configError('invalid', `${path}.${direction}_headers_to_remove[${i}]`, `':-prefixed' or host headers may not be removed ('${name}')`));
    });
  }
}

/** A route's upgrade_configs, as Envoy's route table refuses them: a type twice, connect_config on a type other than CONNECT, CONNECT-UDP. */
function checkRouteUpgrades(action: Obj, path: string, errors: ConfigError[]): void {
  const seen = new Set<string>();
  list(action.upgrade_configs).forEach((u, i) => {
    const type = String(u.upgrade_type ?? '');
    const uPath = `${path}.upgrade_configs[${i}]`;
    if (seen.has(type.toLowerCase())) errors.push(configError('duplicate', `${uPath}.upgrade_type`, `Duplicate upgrade ${type}`));
    seen.add(type.toLowerCase());
    if (type.toLowerCase() === 'connect-udp') errors.push(configError('unsupported', `${uPath}.upgrade_type`, 'CONNECT-UDP (RFC 9298) is not supported by this proxy'));
    else if (u.connect_config !== undefined && type.toLowerCase() !== 'connect') errors.push(configError('conflict', `${uPath}.connect_config`, 'Cannot create a connect config for a non-CONNECT upgrade type'));
  });
}

/** A retry_policy as Envoy's RetryPolicyImpl refuses it: a back-off maximum below its base; matchers' regexes compile. */
function checkRetryPolicy(policy: unknown, path: string, errors: ConfigError[]): void {
  if (policy === undefined) return;
  const p = obj(policy);
  const backOff = obj(p.retry_back_off);
  const ms = (d: unknown) => Math.max(1, durationMs(String(d)));
  if (typeof backOff.base_interval === 'string' && typeof backOff.max_interval === 'string' && ms(backOff.max_interval) < ms(backOff.base_interval)) {
    errors.push(configError('invalid', `${path}.retry_back_off.max_interval`, 'retry_policy.max_interval must greater than or equal to the base_interval'));
  }
  for (const field of ['retriable_headers', 'retriable_request_headers']) {
    list(p[field]).forEach((h, i) => {
      checkRegex(obj(h.safe_regex_match).regex, `${path}.${field}[${i}].safe_regex_match.regex`, errors);
      checkRegex(obj(obj(h.string_match).safe_regex).regex, `${path}.${field}[${i}].string_match.safe_regex.regex`, errors);
    });
  }
}

/**
 * A route's or virtual host's typed_per_filter_config, each entry (unwrapped from a FilterConfig)
 * checked by its filter's descriptor, and the deprecated `cors` policy as a CorsPolicy.
 */
function checkPerFilterConfigs(scope: Obj, path: string, legacyCors: [unknown, string], errors: ConfigError[]): void {
  for (const [name, any] of Object.entries(obj(scope.typed_per_filter_config))) {
    const a = obj(any);
    const at = `${path}.typed_per_filter_config["${name}"]`;
    const wrapped = typeof a['@type'] === 'string' && typeNameOfUrl(a['@type']) === 'envoy.config.route.v3.FilterConfig';
    // As Envoy's PerFilterConfigs: a disabling FilterConfig's config is not read; one that neither disables nor configures is an error.
    if (wrapped && a.disabled === true) continue;
    if (wrapped && a.config === undefined) {
      errors.push(configError('missing', `${at}.config`, `Empty route/virtual host per filter configuration for ${name} filter`));
      continue;
    }
    const inner = wrapped ? obj(a.config) : a;
    const type = typeof inner['@type'] === 'string' ? typeNameOfUrl(inner['@type']) : '';
    httpFilterByTypeName(type)?.validatePerRoute?.(inner, at, errors);
  }
  if (legacyCors[0] !== undefined) checkCorsPolicy(obj(legacyCors[0]), legacyCors[1], errors);
}

export function checkRouteConfig(rc: Obj, path: string, clusters: Set<string>, errors: ConfigError[]): void {
  const vhostNames = new Map<string, number>();
  checkHeaderMutations(rc, path, errors);
  list(rc.virtual_hosts).forEach((vh, v) => {
    const vhPath = `${path}.virtual_hosts[${v}]`;
    checkHeaderMutations(vh, vhPath, errors);
    checkPerFilterConfigs(vh, vhPath, [vh.cors, `${vhPath}.cors`], errors);
    checkRetryPolicy(vh.retry_policy, `${vhPath}.retry_policy`, errors);
    const name = String(vh.name);
    if (vhostNames.has(name)) errors.push(configError('duplicate', `${vhPath}.name`, `duplicate virtual host name '${name}' (also virtual_hosts[${vhostNames.get(name)}])`));
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
        if (action.prefix_rewrite !== undefined) errors.push(configError('conflict', `${rPath}.route`, 'cannot specify both prefix_rewrite and regex_rewrite'));
      }
      checkRouteUpgrades(action, `${rPath}.route`, errors);
      checkRetryPolicy(action.retry_policy, `${rPath}.route.retry_policy`, errors);
      const validate = rc.validate_clusters !== false;
      if (validate && typeof action.cluster === 'string' && !clusters.has(action.cluster)) {
        errors.push(configError('unknown_reference', `${rPath}.route.cluster`, `route: unknown cluster '${action.cluster}'`));
      }
      list(action.request_mirror_policies).forEach((m, i) => {
        const mPath = `${rPath}.route.request_mirror_policies[${i}]`;
        if (!m.cluster && !m.cluster_header) errors.push(configError('missing', mPath, 'one of cluster and cluster_header is required'));
        if (validate && typeof m.cluster === 'string' && m.cluster && !clusters.has(m.cluster)) errors.push(configError('unknown_reference', `${mPath}.cluster`, `route: unknown mirror cluster '${m.cluster}'`));
      });
      list(obj(action.weighted_clusters).clusters).forEach((wc, i) => {
        if (validate && typeof wc.name === 'string' && !clusters.has(wc.name)) {
          errors.push(configError('unknown_reference', `${rPath}.route.weighted_clusters.clusters[${i}].name`, `route: unknown weighted cluster '${wc.name}'`));
        }
      });
    });
  });
}
