import { list, obj } from '../../../../config/access.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import type { MutableHeaders } from '../../../../header-mutation.js';
import { compileStringMatcher, requestHeader } from '../../../../matchers.js';
import { compileRuntimeFraction } from '../../../../runtime.js';
import { stats } from '../../../../stats/process.js';
import type { Counter } from '../../../../stats/store.js';
import type { FilterRequest, HttpFilter, HttpFilterFactory } from '../../../../http/filter-api.js';

/**
 * envoy.filters.http.cors, as Envoy's: the policies are the route's and its virtual host's
 * (typed_per_filter_config CorsPolicy, else the deprecated `cors` fields), each setting taken
 * from the most specific policy that has it. A request with an allowed Origin counts
 * `cors.origin_valid` (else `origin_invalid`); a preflight (OPTIONS with
 * Access-Control-Request-Method) is answered here with 200 and the Access-Control-Allow-*
 * headers; a response to an allowed origin gets Access-Control-Allow-Origin (and -Credentials,
 * -Expose-Headers). Direct responses and redirects are left alone, as Envoy leaves them.
 */

interface Policy {
  allowOrigins: ((origin: string) => boolean)[] | undefined;
  allowMethods: string | undefined;
  allowHeaders: string | undefined;
  exposeHeaders: string | undefined;
  maxAge: string | undefined;
  allowCredentials: boolean | undefined;
  allowPrivateNetworkAccess: boolean | undefined;
  forwardNotMatchingPreflights: boolean | undefined;
  enabled: () => boolean;
  shadowEnabled: () => boolean;
}

const compiled = new WeakMap<JsonObject, Policy>();

const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
const flag = (v: unknown) => (typeof v === 'boolean' ? v : undefined);

function policyOf(config: JsonObject): Policy {
  let policy = compiled.get(config);
  if (policy) return policy;
  const origins = list(config.allow_origin_string_match).map((m) => compileStringMatcher(obj(m)));
  policy = {
    allowOrigins: origins.length ? origins : undefined,
    allowMethods: text(config.allow_methods),
    allowHeaders: text(config.allow_headers),
    exposeHeaders: text(config.expose_headers),
    maxAge: text(config.max_age),
    allowCredentials: flag(config.allow_credentials),
    allowPrivateNetworkAccess: flag(config.allow_private_network_access),
    forwardNotMatchingPreflights: flag(config.forward_not_matching_preflights),
    enabled: config.filter_enabled !== undefined ? compileRuntimeFraction(obj(config.filter_enabled)) : () => true,
    shadowEnabled: config.shadow_enabled !== undefined ? compileRuntimeFraction(obj(config.shadow_enabled)) : () => false,
  };
  compiled.set(config, policy);
  return policy;
}

/** The first policy (most specific first) that sets it. */
function first<K extends keyof Policy>(policies: Policy[], key: K): Policy[K] | undefined {
  for (const p of policies) if (p[key] !== undefined) return p[key];
  return undefined;
}

class CorsFilter implements HttpFilter {
  private policies: Policy[] = [];
  /** The allowed Origin of a CORS request, answered with on the response. */
  private origin: string | undefined;

  constructor(
    private readonly valid: Counter,
    private readonly invalid: Counter,
  ) {}

  decodeHeaders(request: FilterRequest): 'continue' | 'stop' {
    const route = request.route;
    if (!route || route.action.kind !== 'route') return 'continue';
    const configs = request.perRoute.length ? request.perRoute : route.legacyCors;
    this.policies = configs.map(policyOf);
    const [top] = this.policies;
    const enabled = top?.enabled() ?? false;
    const shadow = !enabled && (top?.shadowEnabled() ?? false);
    if (!enabled && !shadow) return 'continue';
    const origin = requestHeader(request.rq, 'origin');
    if (!origin) return 'continue';
    const allowed = (first(this.policies, 'allowOrigins') ?? []).some((m) => m('*') || m(origin));
    (allowed ? this.valid : this.invalid).inc();
    if (shadow) return 'continue';
    if (allowed) this.origin = origin;
    const requestedMethod = requestHeader(request.rq, 'access-control-request-method');
    if (request.rq.method !== 'OPTIONS' || !requestedMethod) return 'continue';
    // A preflight.
    if (!allowed && first(this.policies, 'forwardNotMatchingPreflights') !== false) return 'continue';
    const headers: MutableHeaders = {};
    if (allowed) headers['access-control-allow-origin'] = origin;
    if (first(this.policies, 'allowCredentials')) headers['access-control-allow-credentials'] = 'true';
    const methods = first(this.policies, 'allowMethods');
    if (methods) headers['access-control-allow-methods'] = methods === '*' ? requestedMethod : methods;
    const allowHeaders = first(this.policies, 'allowHeaders');
    if (allowHeaders) headers['access-control-allow-headers'] = allowHeaders === '*' ? (requestHeader(request.rq, 'access-control-request-headers') ?? '') : allowHeaders;
    const maxAge = first(this.policies, 'maxAge');
    if (maxAge) headers['access-control-max-age'] = maxAge;
    if (first(this.policies, 'allowPrivateNetworkAccess') && requestHeader(request.rq, 'access-control-request-private-network') === 'true') {
      headers['access-control-allow-private-network'] = 'true';
    }
    // The preflight's answer is not a CORS response to decorate again.
    this.origin = undefined;
    request.reply(200, headers);
    return 'stop';
  }

  encodeHeaders(_status: number, headers: MutableHeaders): void {
    if (this.origin === undefined) return;
    headers['access-control-allow-origin'] = this.origin;
    if (first(this.policies, 'allowCredentials')) headers['access-control-allow-credentials'] = 'true';
    const expose = first(this.policies, 'exposeHeaders');
    if (expose) headers['access-control-expose-headers'] = expose;
  }
}

export function corsFactory(name: string, statPrefix: string): HttpFilterFactory {
  const valid = stats.counter(`http.${statPrefix}.cors.origin_valid`);
  const invalid = stats.counter(`http.${statPrefix}.cors.origin_invalid`);
  return { name, create: () => new CorsFilter(valid, invalid) };
}
