import { compileCidrRange as cidrMatcher } from '../../../../address.js';
import { list, obj } from '../../../../config/access.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import { compileHeaderMatcher, compileStringMatcher, type RequestView } from '../../../../matchers.js';
import { stats } from '../../../../stats/process.js';
import type { Counter } from '../../../../stats/store.js';
import type { ConnectionView, FilterDecision, FilterRequest, HttpFilter, HttpFilterFactory } from '../../../../http/filter-api.js';

/**
 * envoy.filters.http.rbac, as Envoy's: named policies, each matching when one of its permissions
 * (what is asked: headers, path, destination address, port and server name, and/or/not) and one
 * of its principals (who asks: source addresses, the client certificate, headers, and/or/not)
 * match. With action ALLOW a request no policy matches is refused, with DENY one that a policy
 * matches, with 403 "RBAC: access denied". Shadow rules are evaluated and counted only. A route's
 * RBACPerRoute replaces the filter's rules (an empty one switches the filter off there).
 * Counted in http.<prefix>.rbac.[<rules_stat_prefix>.]{allowed,denied} and
 * http.<prefix>.rbac.[<shadow_rules_stat_prefix>.]{shadow_allowed,shadow_denied}; the outcome and
 * the policy that decided go in the dynamic metadata (namespace envoy.filters.http.rbac:
 * <prefix>shadow_engine_result, <prefix>shadow_effective_policy_id, <prefix>enforced_engine_result,
 * <prefix>enforced_effective_policy_id; a route's prefixes, when set, replace the filter's there).
 */

const METADATA_NAMESPACE = 'envoy.filters.http.rbac';

/** Envoy's statPrefixJoin: `prefix` and `token` with one dot between them. */
function statPrefixJoin(prefix: string, token: string): string {
  if (prefix === '') return token;
  return prefix.endsWith('.') ? prefix + token : `${prefix}.${token}`;
}

interface Prefixes {
  rules: string;
  shadow: string;
}

function prefixesOf(config: JsonObject): Prefixes {
  return {
    rules: typeof config.rules_stat_prefix === 'string' ? config.rules_stat_prefix : '',
    shadow: typeof config.shadow_rules_stat_prefix === 'string' ? config.shadow_rules_stat_prefix : '',
  };
}

type Matcher = (rq: RequestView, conn: ConnectionView) => boolean;

interface Rules {
  allow: boolean;
  policies: [name: string, matches: Matcher][];
}


function pathOnly(path: string): string {
  const q = path.indexOf('?');
  return q < 0 ? path : path.slice(0, q);
}

/**
 * What permissions and principals share: `any`, and/or/not of their own kind (named `and_rules`,
 * `or_rules`, `not_rule` for permissions, `and_ids`, `or_ids`, `not_id` for principals),
 * `header` and `url_path`. Undefined for the rest.
 */
function compileShared(p: JsonObject, keys: { and: string; or: string; list: string; not: string }, self: (p: JsonObject) => Matcher): Matcher | undefined {
  if (p.any === true) return () => true;
  if (p[keys.and] !== undefined) {
    const all = list(obj(p[keys.and])[keys.list]).map(self);
    return (rq, c) => all.every((m) => m(rq, c));
  }
  if (p[keys.or] !== undefined) {
    const any = list(obj(p[keys.or])[keys.list]).map(self);
    return (rq, c) => any.some((m) => m(rq, c));
  }
  if (p[keys.not] !== undefined) {
    const inner = self(obj(p[keys.not]));
    return (rq, c) => !inner(rq, c);
  }
  if (p.header !== undefined) {
    const h = compileHeaderMatcher(obj(p.header));
    return (rq) => h(rq);
  }
  if (p.url_path !== undefined) {
    const m = compileStringMatcher(obj(obj(p.url_path).path));
    return (rq) => m(pathOnly(rq.path));
  }
  return undefined;
}

const PERMISSION_KEYS = { and: 'and_rules', or: 'or_rules', list: 'rules', not: 'not_rule' };
const PRINCIPAL_KEYS = { and: 'and_ids', or: 'or_ids', list: 'ids', not: 'not_id' };

function compilePermission(p: JsonObject): Matcher {
  const shared = compileShared(p, PERMISSION_KEYS, compilePermission);
  if (shared) return shared;
  if (p.destination_ip !== undefined) {
    const m = cidrMatcher(obj(p.destination_ip));
    return (_rq, c) => m(c.localIp);
  }
  if (typeof p.destination_port === 'number') return (_rq, c) => c.localPort === p.destination_port;
  if (p.destination_port_range !== undefined) {
    const r = obj(p.destination_port_range);
    const [start, end] = [Number(r.start ?? 0), Number(r.end ?? 0)];
    return (_rq, c) => c.localPort >= start && c.localPort < end;
  }
  if (p.requested_server_name !== undefined) {
    const m = compileStringMatcher(obj(p.requested_server_name));
    return (_rq, c) => m(c.serverName ?? '');
  }
  throw new Error(`RBAC permission ${Object.keys(p).join(', ')} is not supported`);
}

function compilePrincipal(p: JsonObject): Matcher {
  const shared = compileShared(p, PRINCIPAL_KEYS, compilePrincipal);
  if (shared) return shared;
  if (p.direct_remote_ip !== undefined || p.source_ip !== undefined) {
    const m = cidrMatcher(obj(p.direct_remote_ip ?? p.source_ip));
    return (_rq, c) => m(c.directRemoteIp);
  }
  if (p.remote_ip !== undefined) {
    const m = cidrMatcher(obj(p.remote_ip));
    return (_rq, c) => m(c.remoteIp);
  }
  if (p.authenticated !== undefined) {
    const name = obj(p.authenticated).principal_name;
    const m = name !== undefined ? compileStringMatcher(obj(name)) : undefined;
    return (_rq, c) => {
      const peer = c.peer();
      if (!peer) return false;
      if (!m) return true;
      // As Envoy: the URI SANs, else the DNS SANs, else the subject.
      const names = peer.uriSans.length ? peer.uriSans : peer.dnsSans.length ? peer.dnsSans : [peer.subject];
      return names.some(m);
    };
  }
  throw new Error(`RBAC principal ${Object.keys(p).join(', ')} is not supported`);
}

const compiled = new WeakMap<JsonObject, Rules>();

function rulesOf(rbac: JsonObject): Rules {
  let rules = compiled.get(rbac);
  if (!rules) {
    const policies = Object.entries(obj(rbac.policies)).map(([name, policy]): [string, Matcher] => {
      const permissions = list(obj(policy).permissions).map(compilePermission);
      const principals = list(obj(policy).principals).map(compilePrincipal);
      return [name, (rq, c) => permissions.some((m) => m(rq, c)) && principals.some((m) => m(rq, c))];
    });
    rules = { allow: (rbac.action ?? 'ALLOW') === 'ALLOW', policies };
    compiled.set(rbac, rules);
  }
  return rules;
}

/** Whether `rules` let the request through, and the policy that decided (if one matched). */
function evaluate(rules: Rules, rq: RequestView, conn: ConnectionView): { allowed: boolean; policy: string | undefined } {
  const matched = rules.policies.find(([, m]) => m(rq, conn))?.[0];
  return { allowed: rules.allow ? matched !== undefined : matched === undefined, policy: matched };
}

interface Counters {
  allowed: Counter;
  denied: Counter;
  shadowAllowed: Counter;
  shadowDenied: Counter;
}

class RbacFilter implements HttpFilter {
  constructor(
    private readonly rules: Rules | undefined,
    private readonly shadow: Rules | undefined,
    private readonly counters: Counters,
    private readonly prefixes: Prefixes,
  ) {}

  decodeHeaders(request: FilterRequest): FilterDecision {
    let rules = this.rules;
    let shadow = this.shadow;
    let keys = this.prefixes;
    if (request.perRoute.length) {
      const perRoute = request.perRoute[0]!;
      // An RBACPerRoute without rules switches the filter off for the route.
      if (perRoute.rbac === undefined) return 'continue';
      const rbac = obj(perRoute.rbac);
      rules = rbac.rules !== undefined ? rulesOf(obj(rbac.rules)) : undefined;
      shadow = rbac.shadow_rules !== undefined ? rulesOf(obj(rbac.shadow_rules)) : undefined;
      const route = prefixesOf(rbac);
      keys = { rules: route.rules || keys.rules, shadow: route.shadow || keys.shadow };
    }
    if (!rules && !shadow) return 'continue';
    const fields: Record<string, unknown> = {};
    if (shadow) {
      const verdict = evaluate(shadow, request.rq, request.connection);
      (verdict.allowed ? this.counters.shadowAllowed : this.counters.shadowDenied).inc();
      if (verdict.policy !== undefined) fields[`${keys.shadow}shadow_effective_policy_id`] = verdict.policy;
      fields[`${keys.shadow}shadow_engine_result`] = verdict.allowed ? 'allowed' : 'denied';
    }
    const metadata = request.metadata();
    if (!rules) {
      metadata[METADATA_NAMESPACE] = { ...metadata[METADATA_NAMESPACE], ...fields };
      return 'continue';
    }
    const verdict = evaluate(rules, request.rq, request.connection);
    if (verdict.policy !== undefined) fields[`${keys.rules}enforced_effective_policy_id`] = verdict.policy;
    fields[`${keys.rules}enforced_engine_result`] = verdict.allowed ? 'allowed' : 'denied';
    metadata[METADATA_NAMESPACE] = { ...metadata[METADATA_NAMESPACE], ...fields };
    if (verdict.allowed) {
      this.counters.allowed.inc();
      return 'continue';
    }
    this.counters.denied.inc();
    // As Envoy's responseDetail: white space in the policy's name becomes '_' (the access log splits on it).
    request.flag(0, `rbac_access_denied_matched_policy[${(verdict.policy ?? 'none').replace(/\s/g, '_')}]`);
    request.reply(403, {}, 'RBAC: access denied');
    return 'stop';
  }
}

export function rbacFactory(name: string, config: JsonObject, statPrefix: string): HttpFilterFactory {
  // As Envoy's generateStats: http.<prefix>.rbac., then each rules prefix joined with a dot.
  const base = `http.${statPrefix}.rbac.`;
  const prefixes = prefixesOf(config);
  const enforced = statPrefixJoin(base, prefixes.rules);
  const shadowed = statPrefixJoin(base, prefixes.shadow);
  const counters: Counters = {
    allowed: stats.counter(statPrefixJoin(enforced, 'allowed')),
    denied: stats.counter(statPrefixJoin(enforced, 'denied')),
    shadowAllowed: stats.counter(statPrefixJoin(shadowed, 'shadow_allowed')),
    shadowDenied: stats.counter(statPrefixJoin(shadowed, 'shadow_denied')),
  };
  const rules = config.rules !== undefined ? rulesOf(obj(config.rules)) : undefined;
  const shadow = config.shadow_rules !== undefined ? rulesOf(obj(config.shadow_rules)) : undefined;
  return { name, create: () => new RbacFilter(rules, shadow, counters, prefixes) };
}
