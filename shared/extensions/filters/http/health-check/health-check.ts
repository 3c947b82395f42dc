import { ResponseFlag } from '../../../../access-log/entry.js';
import { list } from '../../../../config/access.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import type { MutableHeaders } from '../../../../header-mutation.js';
import type { FilterContext, FilterDecision, FilterRequest, HttpFilter, HttpFilterFactory } from '../../../../http/filter-api.js';
import { compileHeaderMatcher, type RequestView } from '../../../../matchers.js';

/**
 * The health-check HTTP filter (envoy.filters.http.health_check), at its place in the chain, as
 * Envoy's runs. A request whose headers all match is a health check: access logs'
 * not_health_check_filter leaves it out and its span is not reported. Without pass-through it is
 * answered here, 200 (`health_check_ok`), or 503 while `POST /healthcheck/fail` is in effect
 * (`health_check_failed`, flag LH); with pass-through it goes upstream, except while failing
 * (the seed, §3). A health check's answer, its own or the upstream's, carries
 * `x-envoy-upstream-healthchecked-cluster` (this proxy's service cluster); while failing, every
 * other response carries `x-envoy-immediate-health-check-fail: true`, so that the Envoys in
 * front take this host out at once.
 */

const HEALTHCHECKED_CLUSTER = 'x-envoy-upstream-healthchecked-cluster';
const IMMEDIATE_FAIL = 'x-envoy-immediate-health-check-fail';

interface Settings {
  matchers: ((rq: RequestView) => boolean)[];
  passThrough: boolean;
  localCluster: string;
  failing: () => boolean;
}

class HealthCheckFilter implements HttpFilter {
  private healthCheck = false;

  constructor(private readonly s: Settings) {}

  decodeHeaders(request: FilterRequest): FilterDecision {
    const s = this.s;
    // As Envoy's HeaderUtility::matchHeaders: every matcher matches (none configured: every request is one).
    for (const m of s.matchers) if (!m(request.rq)) return 'continue';
    this.healthCheck = true;
    request.markHealthCheck();
    const failing = s.failing();
    if (s.passThrough && !failing) return 'continue';
    if (failing) request.flag(ResponseFlag.failedLocalHealthCheck, 'health_check_failed');
    else request.flag(0, 'health_check_ok');
    request.reply(failing ? 503 : 200, { [HEALTHCHECKED_CLUSTER]: s.localCluster });
    return 'stop';
  }

  encodeHeaders(_status: number, headers: MutableHeaders): void {
    if (this.healthCheck) headers[HEALTHCHECKED_CLUSTER] = this.s.localCluster;
    else if (this.s.failing()) headers[IMMEDIATE_FAIL] = 'true';
  }
}

export function healthCheckFactory(name: string, config: JsonObject, ctx: FilterContext): HttpFilterFactory {
  const s: Settings = { matchers: list(config.headers).map(compileHeaderMatcher), passThrough: config.pass_through_mode === true, localCluster: ctx.localCluster, failing: ctx.healthCheckFailing };
  return { name, create: () => new HealthCheckFilter(s) };
}
