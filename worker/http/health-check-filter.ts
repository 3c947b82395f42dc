import { list } from '../../shared/config/access.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import { compileHeaderMatcher, type RequestView } from '../../shared/matchers.js';

/**
 * The health-check HTTP filter (envoy.filters.http.health_check). A request whose headers match
 * is a health check. Without pass-through it is answered here: 200, or 503 while
 * `POST /healthcheck/fail` is in effect. With pass-through it goes upstream, except while
 * failing: then every health check fails, whatever the configuration says (the seed, §3).
 */

type Obj = JsonObject;

export interface HealthCheckDecision {
  /** The request is a health check (access logs' not_health_check_filter leaves it out). */
  healthCheck: boolean;
  /** Answer locally with this status (200 or 503), or undefined to let the request through. */
  status?: number;
}

export class HealthCheckFilter {
  private readonly matchers: ((rq: RequestView) => boolean)[];
  private readonly passThrough: boolean;

  constructor(config: Obj) {
    this.passThrough = config.pass_through_mode === true;
    this.matchers = list(config.headers).map(compileHeaderMatcher);
  }

  /** As Envoy's HeaderUtility::matchHeaders: every header matcher matches (none configured: every request is one). */
  isHealthCheck(rq: RequestView): boolean {
    return this.matchers.every((m) => m(rq));
  }

  decide(rq: RequestView, failing: boolean): HealthCheckDecision {
    if (!this.isHealthCheck(rq)) return { healthCheck: false };
    if (failing) return { healthCheck: true, status: 503 };
    return this.passThrough ? { healthCheck: true } : { healthCheck: true, status: 200 };
  }
}
