import { list, obj } from '../config/access.js';
import type { JsonObject } from '../config/proto-json.js';
import { maskedAddress } from '../address.js';
import { compileHeaderMatcher, compileQueryParameterMatcher, requestHeader, type RequestView } from '../matchers.js';

/**
 * A route's rate-limit policy (RouteAction.rate_limits and its virtual host's rate_limits), as
 * Envoy's router builds it: each RateLimit turns a request into one descriptor, a list of
 * (key, value) entries, one per action, or none when an action cannot say (a header absent, a
 * match that fails). Rate-limit filters ask for the descriptors of their stage.
 */

export type DescriptorEntry = readonly [key: string, value: string];
export type Descriptor = DescriptorEntry[];

/** What the actions read. */
export interface DescriptorSource {
  rq: RequestView;
  /** The client's address as the connection manager determined it. */
  remoteIp: string;
  /** The cluster the route sends the request to. */
  clusterName: string | undefined;
  /** This proxy's service cluster (--service-cluster, or the bootstrap node's cluster). */
  localCluster: string;
}

/** An action's entry; 'skip' adds nothing (request_headers with skip_if_absent); undefined drops the descriptor. */
type Action = (src: DescriptorSource) => DescriptorEntry | 'skip' | undefined;

interface RateLimit {
  stage: number;
  /** disable_key ('' without): the filter decides whether the entry counts (see descriptorsOf). */
  disableKey: string;
  actions: Action[];
}

export interface RateLimitPolicy {
  route: RateLimit[];
  vhost: RateLimit[];
  /** RouteAction.include_vh_rate_limits: the virtual host's always count too. */
  includeVh: boolean;
}

/** VhRateLimitsOptions: OVERRIDE (the virtual host's only when the route has none), INCLUDE, IGNORE. */
export type VhRateLimits = 'OVERRIDE' | 'INCLUDE' | 'IGNORE';

function compileAction(a: JsonObject): Action {
  if (a.source_cluster !== undefined) return (src) => ['source_cluster', src.localCluster];
  if (a.destination_cluster !== undefined) return (src) => (src.clusterName !== undefined ? ['destination_cluster', src.clusterName] : undefined);
  if (a.request_headers !== undefined) {
    const h = obj(a.request_headers);
    const name = String(h.header_name).toLowerCase();
    const key = String(h.descriptor_key);
    const skip = h.skip_if_absent === true;
    return (src) => {
      const v = requestHeader(src.rq, name);
      if (v === undefined) return skip ? 'skip' : undefined;
      return [key, v];
    };
  }
  if (a.remote_address !== undefined) return (src) => (src.remoteIp ? ['remote_address', src.remoteIp] : undefined);
  if (a.masked_remote_address !== undefined) {
    const m = obj(a.masked_remote_address);
    const v4 = m.v4_prefix_mask_len === undefined ? 32 : Number(m.v4_prefix_mask_len);
    const v6 = m.v6_prefix_mask_len === undefined ? 128 : Number(m.v6_prefix_mask_len);
    return (src) => {
      const masked = maskedAddress(src.remoteIp, v4, v6);
      return masked === undefined ? undefined : ['masked_remote_address', masked];
    };
  }
  if (a.generic_key !== undefined) {
    const g = obj(a.generic_key);
    const entry: DescriptorEntry = [typeof g.descriptor_key === 'string' && g.descriptor_key ? g.descriptor_key : 'generic_key', String(g.descriptor_value)];
    return () => entry;
  }
  if (a.header_value_match !== undefined) {
    const m = obj(a.header_value_match);
    const matchers = list(m.headers).map(compileHeaderMatcher);
    const expect = m.expect_match !== false;
    const entry: DescriptorEntry = [typeof m.descriptor_key === 'string' && m.descriptor_key ? m.descriptor_key : 'header_match', String(m.descriptor_value)];
    return (src) => (matchers.every((f) => f(src.rq)) === expect ? entry : undefined);
  }
  if (a.query_parameter_value_match !== undefined) {
    const m = obj(a.query_parameter_value_match);
    const matchers = list(m.query_parameters).map(compileQueryParameterMatcher);
    const expect = m.expect_match !== false;
    const entry: DescriptorEntry = [typeof m.descriptor_key === 'string' && m.descriptor_key ? m.descriptor_key : 'query_match', String(m.descriptor_value)];
    return (src) => (matchers.every((f) => f(src.rq)) === expect ? entry : undefined);
  }
  // The loader refuses the other actions by name (shared/config/supported.ts).
  throw new Error(`rate limit action ${Object.keys(a).join(', ')} is not supported`);
}

function compileRateLimits(limits: unknown): RateLimit[] {
  return list(limits).map((l) => ({
    stage: l.stage === undefined ? 0 : Number(l.stage),
    disableKey: typeof l.disable_key === 'string' ? l.disable_key : '',
    actions: list(l.actions).map(compileAction),
  }));
}

export function compileRateLimitPolicy(route: JsonObject, vhost: JsonObject): RateLimitPolicy | undefined {
  const action = obj(route.route);
  const policy = { route: compileRateLimits(action.rate_limits), vhost: compileRateLimits(vhost.rate_limits), includeVh: action.include_vh_rate_limits === true };
  return policy.route.length || policy.vhost.length ? policy : undefined;
}

/**
 * The descriptors of `stage` for a request, the route's first, then its virtual host's as `vh`
 * says. An entry with a disable_key counts only if `enabled(key)` says so (the local rate limit
 * leaves them all out; the global one asks the runtime).
 */
export function descriptorsOf(policy: RateLimitPolicy | undefined, stage: number, vh: VhRateLimits, src: DescriptorSource, enabled: (disableKey: string) => boolean): Descriptor[] {
  if (!policy) return [];
  const out: Descriptor[] = [];
  populate(policy.route, stage, src, enabled, out);
  const mode = policy.includeVh ? 'INCLUDE' : vh;
  if (mode === 'INCLUDE' || (mode === 'OVERRIDE' && policy.route.length === 0)) populate(policy.vhost, stage, src, enabled, out);
  return out;
}

function populate(limits: RateLimit[], stage: number, src: DescriptorSource, enabled: (disableKey: string) => boolean, out: Descriptor[]): void {
  next: for (const limit of limits) {
    if (limit.stage !== stage || (limit.disableKey !== '' && !enabled(limit.disableKey))) continue;
    const descriptor: Descriptor = [];
    for (const action of limit.actions) {
      const entry = action(src);
      if (entry === undefined) continue next;
      if (entry !== 'skip') descriptor.push(entry);
    }
    if (descriptor.length) out.push(descriptor);
  }
}
