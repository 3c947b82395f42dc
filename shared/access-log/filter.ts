import { list, obj } from '../config/access.js';
import type { JsonObject } from '../config/proto-json.js';
import { compileHeaderMatcher } from '../matchers.js';
import { runtimeValue } from '../runtime.js';
import { entryRequestHeader, responseFlagBit, type AccessLogEntry } from './entry.js';
import { ConfigFault } from '../config/config-error.js';

/**
 * An AccessLog's `filter` (config.accesslog.v3.AccessLogFilter), compiled to a predicate:
 * status code and duration comparisons (with their runtime overrides), not-health-check,
 * runtime sampling, header matchers, response flags, and `and` / `or` of these. The others
 * (traceable, gRPC status, metadata, log type, extensions) depend on features this proxy does
 * not have; the schema allowlist refuses them, naming the field.
 */

type Obj = JsonObject;
export type AccessLogFilter = (e: AccessLogEntry) => boolean;

const DENOMINATORS: Record<string, number> = { HUNDRED: 100, TEN_THOUSAND: 10_000, MILLION: 1_000_000 };

function comparison(c: Obj, value: (e: AccessLogEntry) => number): AccessLogFilter {
  const rv = obj(c.value);
  const defaultValue = Number(rv.default_value ?? 0);
  const key = typeof rv.runtime_key === 'string' ? rv.runtime_key : undefined;
  const threshold = () => {
    const v = key === undefined ? undefined : Number(runtimeValue(key));
    return v !== undefined && Number.isInteger(v) && v >= 0 ? v : defaultValue;
  };
  switch (String(c.op ?? 'EQ')) {
    case 'GE':
      return (e) => value(e) >= threshold();
    case 'LE':
      return (e) => value(e) <= threshold();
    default:
      return (e) => value(e) === threshold();
  }
}

/** FNV-1a of the request id: the same request samples the same way in every log (Envoy uses the x-request-id too). */
function requestIdHash(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

function runtimeSampling(f: Obj): AccessLogFilter {
  const key = String(f.runtime_key);
  const pct = obj(f.percent_sampled);
  const denominator = DENOMINATORS[String(pct.denominator ?? 'HUNDRED')] ?? 100;
  const defaultNumerator = Number(pct.numerator ?? 0);
  const independent = f.use_independent_randomness === true;
  return (e) => {
    const v = Number(runtimeValue(key));
    const numerator = Number.isFinite(v) && runtimeValue(key) !== undefined ? v : defaultNumerator;
    const id = independent ? undefined : entryRequestHeader(e, 'x-request-id');
    const draw = id !== undefined ? requestIdHash(id) % denominator : Math.floor(Math.random() * denominator);
    return draw < numerator;
  };
}

export function compileAccessLogFilter(f: Obj): AccessLogFilter {
  if (f.status_code_filter) return comparison(obj(obj(f.status_code_filter).comparison), (e) => e.responseCode);
  if (f.duration_filter) return comparison(obj(obj(f.duration_filter).comparison), (e) => e.durationMs ?? 0);
  if (f.not_health_check_filter) return (e) => !e.healthCheck;
  if (f.runtime_filter) return runtimeSampling(obj(f.runtime_filter));
  if (f.and_filter) {
    const all = list(obj(f.and_filter).filters).map(compileAccessLogFilter);
    return (e) => all.every((p) => p(e));
  }
  if (f.or_filter) {
    const any = list(obj(f.or_filter).filters).map(compileAccessLogFilter);
    return (e) => any.some((p) => p(e));
  }
  if (f.header_filter) {
    const match = compileHeaderMatcher(obj(obj(f.header_filter).header));
    return (e) => match(e.request);
  }
  if (f.response_flag_filter) {
    const flags = (obj(f.response_flag_filter).flags as string[] | undefined) ?? [];
    // No flags listed: any response flag passes.
    const mask = flags.length ? flags.reduce((m, name) => m | responseFlagBit(name), 0) : ~0;
    return (e) => (e.responseFlags & mask) !== 0;
  }
  throw new ConfigFault('unsupported', `access log filter ${Object.keys(f).join(', ')} is not supported`);
}
