import { list, obj } from '../../../../config/access.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import { compileStringMatcher, requestHeader } from '../../../../matchers.js';
import { compileRuntimeFraction } from '../../../../runtime.js';
import { stats } from '../../../../stats/process.js';
import type { Counter } from '../../../../stats/store.js';
import type { FilterRequest, HttpFilter, HttpFilterFactory } from '../../../../http/filter-api.js';

/**
 * envoy.filters.http.csrf, as Envoy's: a request that changes state (POST, PUT, DELETE, PATCH)
 * must come from its own origin: Origin (else Referer), as host and port, must equal Host, or
 * match one of `additional_origins`; otherwise 403 "Invalid origin" (only counted when shadow
 * enabled). The policy is the route's, else its virtual host's, else the filter's.
 * Counted in http.<prefix>.csrf.{missing_source_origin,request_invalid,request_valid}.
 */

const MODIFYING = new Set(['POST', 'PUT', 'DELETE', 'PATCH']);

interface Policy {
  enabled: () => boolean;
  shadowEnabled: () => boolean;
  additionalOrigins: ((origin: string) => boolean)[];
}

const compiled = new WeakMap<JsonObject, Policy>();

function policyOf(config: JsonObject): Policy {
  let policy = compiled.get(config);
  if (!policy) {
    policy = {
      enabled: config.filter_enabled !== undefined ? compileRuntimeFraction(obj(config.filter_enabled)) : () => false,
      shadowEnabled: config.shadow_enabled !== undefined ? compileRuntimeFraction(obj(config.shadow_enabled)) : () => false,
      additionalOrigins: list(config.additional_origins).map((m) => compileStringMatcher(obj(m))),
    };
    compiled.set(config, policy);
  }
  return policy;
}

/** An Origin or Referer as host and port (`https://a.example:8443/x` → `a.example:8443`); a value that is no URL, as it is. */
function hostAndPort(value: string | undefined): string {
  if (!value) return '';
  const m = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(value);
  return m ? m[1]!.replace(/^[^@]*@/, '') : value;
}

class CsrfFilter implements HttpFilter {
  constructor(
    private readonly policy: Policy,
    private readonly counters: { missing: Counter; invalid: Counter; valid: Counter },
  ) {}

  decodeHeaders(request: FilterRequest): 'continue' | 'stop' {
    const policy = request.perRoute.length ? policyOf(request.perRoute[0]!) : this.policy;
    const enabled = policy.enabled();
    if (!enabled && !policy.shadowEnabled()) return 'continue';
    if (!MODIFYING.has(request.rq.method)) return 'continue';
    const source = hostAndPort(requestHeader(request.rq, 'origin')) || hostAndPort(requestHeader(request.rq, 'referer'));
    let valid = true;
    if (source === '') {
      valid = false;
      this.counters.missing.inc();
    }
    const target = hostAndPort(request.rq.authority);
    if (source !== target && !policy.additionalOrigins.some((m) => m(source))) {
      valid = false;
      this.counters.invalid.inc();
    }
    if (valid) {
      this.counters.valid.inc();
      return 'continue';
    }
    if (!enabled) return 'continue'; // shadow mode: counted, not enforced
    request.reply(403, {}, 'Invalid origin');
    return 'stop';
  }
}

export function csrfFactory(name: string, config: JsonObject, statPrefix: string): HttpFilterFactory {
  const policy = policyOf(config);
  const counters = {
    missing: stats.counter(`http.${statPrefix}.csrf.missing_source_origin`),
    invalid: stats.counter(`http.${statPrefix}.csrf.request_invalid`),
    valid: stats.counter(`http.${statPrefix}.csrf.request_valid`),
  };
  return { name, create: () => new CsrfFilter(policy, counters) };
}
