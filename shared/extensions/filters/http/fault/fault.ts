import { ResponseFlag } from '../../../../access-log/entry.js';
import { list, obj } from '../../../../config/access.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import { durationMs } from '../../../../config/wkt.js';
import { compileHeaderMatcher, requestHeader, type HeaderMatcher } from '../../../../matchers.js';
import { runtimeValue } from '../../../../runtime.js';
import { stats } from '../../../../stats/process.js';
import type { Counter, Gauge } from '../../../../stats/store.js';
import type { FilterDecision, FilterRequest, HttpFilter, HttpFilterFactory } from '../../../../http/filter-api.js';

/**
 * envoy.filters.http.fault, as Envoy's: a delay (fixed, or from `x-envoy-fault-delay-request`
 * with `header_delay`) and then an abort (a status, a gRPC status, or from
 * `x-envoy-fault-abort-request` / `-abort-grpc-request` with `header_abort`), each for a share of
 * requests (the `percentage`, or the request's `…-percentage` header with header faults), limited
 * to requests matching `headers`, `upstream_cluster` and `downstream_nodes`, and to
 * `max_active_faults` at once. Runtime keys override each figure, as Envoy's do
 * (fault.http.delay.fixed_delay_percent, …), also per downstream cluster
 * (`x-envoy-downstream-service-cluster`). A route's HTTPFault replaces the filter's.
 * Counted in http.<prefix>.fault.{delays_injected,aborts_injected,faults_overflow,active_faults}.
 */

const DENOMINATORS: Record<string, number> = { HUNDRED: 100, TEN_THOUSAND: 10_000, MILLION: 1_000_000 };

interface Percent {
  numerator: number;
  denominator: number;
}

interface Settings {
  headers: HeaderMatcher[];
  upstreamCluster: string | undefined;
  downstreamNodes: Set<string>;
  maxActiveFaults: number | undefined;
  delay: { fixedMs: number | undefined; fromHeader: boolean; percent: Percent } | undefined;
  abort: { httpStatus: number | undefined; grpcStatus: number | undefined; fromHeader: boolean; percent: Percent } | undefined;
  keys: { delayPercent: string; abortPercent: string; delayDuration: string; abortStatus: string; maxActive: string };
}

function percentOf(p: unknown): Percent {
  const pct = obj(p);
  return { numerator: Number(pct.numerator ?? 0), denominator: DENOMINATORS[String(pct.denominator ?? 'HUNDRED')] ?? 100 };
}

const compiled = new WeakMap<JsonObject, Settings>();

function settingsOf(config: JsonObject): Settings {
  let s = compiled.get(config);
  if (s) return s;
  const delay = config.delay !== undefined ? obj(config.delay) : undefined;
  const abort = config.abort !== undefined ? obj(config.abort) : undefined;
  const key = (field: string, fallback: string) => (typeof config[field] === 'string' && config[field] ? (config[field] as string) : fallback);
  s = {
    headers: list(config.headers).map(compileHeaderMatcher),
    upstreamCluster: typeof config.upstream_cluster === 'string' && config.upstream_cluster ? config.upstream_cluster : undefined,
    downstreamNodes: new Set((config.downstream_nodes as string[] | undefined) ?? []),
    maxActiveFaults: typeof config.max_active_faults === 'number' ? config.max_active_faults : undefined,
    delay: delay && { fixedMs: typeof delay.fixed_delay === 'string' ? durationMs(delay.fixed_delay) : undefined, fromHeader: delay.header_delay !== undefined, percent: percentOf(delay.percentage) },
    abort: abort && {
      httpStatus: typeof abort.http_status === 'number' ? abort.http_status : undefined,
      grpcStatus: typeof abort.grpc_status === 'number' ? abort.grpc_status : undefined,
      fromHeader: abort.header_abort !== undefined,
      percent: percentOf(abort.percentage),
    },
    keys: {
      delayPercent: key('delay_percent_runtime', 'fault.http.delay.fixed_delay_percent'),
      abortPercent: key('abort_percent_runtime', 'fault.http.abort.abort_percent'),
      delayDuration: key('delay_duration_runtime', 'fault.http.delay.fixed_duration_ms'),
      abortStatus: key('abort_http_status_runtime', 'fault.http.abort.http_status'),
      maxActive: key('max_active_faults_runtime', 'fault.http.max_active_faults'),
    },
  };
  compiled.set(config, s);
  return s;
}

/** A runtime integer under `key`, else `fallback`. */
function runtimeInteger(key: string, fallback: number): number {
  const v = Number(runtimeValue(key));
  return runtimeValue(key) !== undefined && Number.isFinite(v) ? v : fallback;
}

/** Envoy's featureEnabled(key, percent): the runtime's numerator (over the same denominator) or the configured one. */
function enabled(key: string, percent: Percent): boolean {
  return Math.floor(Math.random() * percent.denominator) < runtimeInteger(key, percent.numerator);
}

interface Counters {
  delays: Counter;
  aborts: Counter;
  overflow: Counter;
  active: Gauge;
  prefix: string;
}

class FaultFilter implements HttpFilter {
  private active = false;

  constructor(
    private readonly filterSettings: Settings,
    private readonly counters: Counters,
  ) {}

  decodeHeaders(request: FilterRequest): FilterDecision | Promise<FilterDecision> {
    const s = request.perRoute.length ? settingsOf(request.perRoute[0]!) : this.filterSettings;
    if (!s.delay && !s.abort) return 'continue';
    const max = runtimeInteger(s.keys.maxActive, s.maxActiveFaults ?? Number.POSITIVE_INFINITY);
    if (this.counters.active.value >= max) {
      this.counters.overflow.inc();
      return 'continue';
    }
    if (s.upstreamCluster !== undefined && request.clusterName !== s.upstreamCluster) return 'continue';
    if (s.downstreamNodes.size && !s.downstreamNodes.has(requestHeader(request.rq, 'x-envoy-downstream-service-node') ?? '')) return 'continue';
    if (!s.headers.every((m) => m(request.rq))) return 'continue';
    const downstream = requestHeader(request.rq, 'x-envoy-downstream-service-cluster') || undefined;

    const delayMs = this.delayMs(s, request, downstream);
    if (delayMs === undefined) return this.maybeAbort(s, request, downstream);
    this.count(this.counters.delays, 'delays_injected', downstream, request);
    request.flag(ResponseFlag.delayInjected);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(this.maybeAbort(s, request, downstream)), delayMs);
      // A client that goes away meanwhile ends the wait.
      request.finished(() => clearTimeout(timer));
    });
  }

  private delayMs(s: Settings, request: FilterRequest, downstream: string | undefined): number | undefined {
    const delay = s.delay;
    if (!delay) return undefined;
    const percent = headerPercent(request, 'x-envoy-fault-delay-request-percentage', delay.fromHeader, delay.percent);
    let on = enabled(s.keys.delayPercent, percent);
    if (downstream) on ||= enabled(`fault.http.${downstream}.delay.fixed_delay_percent`, percent);
    if (!on) return undefined;
    let ms = delay.fixedMs;
    if (delay.fromHeader) {
      const header = Number(requestHeader(request.rq, 'x-envoy-fault-delay-request'));
      ms = Number.isFinite(header) && header > 0 ? header : undefined;
    }
    if (ms === undefined) return undefined;
    ms = runtimeInteger(s.keys.delayDuration, ms);
    if (downstream) ms = runtimeInteger(`fault.http.${downstream}.delay.fixed_duration_ms`, ms);
    return ms > 0 ? ms : undefined;
  }

  private maybeAbort(s: Settings, request: FilterRequest, downstream: string | undefined): FilterDecision {
    const abort = s.abort;
    if (!abort) return 'continue';
    const percent = headerPercent(request, 'x-envoy-fault-abort-request-percentage', abort.fromHeader, abort.percent);
    let on = enabled(s.keys.abortPercent, percent);
    if (downstream) on ||= enabled(`fault.http.${downstream}.abort.abort_percent`, percent);
    if (!on) return 'continue';
    let status = abort.httpStatus;
    let grpc = abort.grpcStatus;
    if (abort.fromHeader) {
      const http = Number(requestHeader(request.rq, 'x-envoy-fault-abort-request'));
      const g = Number(requestHeader(request.rq, 'x-envoy-fault-abort-grpc-request'));
      status = Number.isInteger(http) && http >= 200 && http < 600 ? http : undefined;
      grpc = requestHeader(request.rq, 'x-envoy-fault-abort-grpc-request') !== undefined && Number.isInteger(g) && g >= 0 ? g : undefined;
    }
    if (status !== undefined) {
      status = runtimeInteger(s.keys.abortStatus, status);
      if (downstream) status = runtimeInteger(`fault.http.${downstream}.abort.http_status`, status);
    }
    if (status === undefined && grpc === undefined) return 'continue';
    this.count(this.counters.aborts, 'aborts_injected', downstream, request);
    request.flag(ResponseFlag.faultInjected, 'fault_filter_abort');
    if (grpc !== undefined) request.reply(200, { 'content-type': 'application/grpc', 'grpc-status': String(grpc), 'grpc-message': 'fault filter abort' });
    else request.reply(status!, {}, 'fault filter abort');
    return 'stop';
  }

  /** A fault injected: its counter (and the downstream cluster's), and one active fault for the request's life. */
  private count(counter: Counter, name: string, downstream: string | undefined, request: FilterRequest): void {
    counter.inc();
    if (downstream) stats.counter(`${this.counters.prefix}${downstream}.${name}`).inc();
    if (this.active) return;
    this.active = true;
    this.counters.active.inc();
    request.finished(() => this.counters.active.dec());
  }
}

/** With a header-controlled fault, the request's percentage header (capped at the configured one) replaces it. */
function headerPercent(request: FilterRequest, header: string, fromHeader: boolean, configured: Percent): Percent {
  if (!fromHeader) return configured;
  const v = Number(requestHeader(request.rq, header));
  if (requestHeader(request.rq, header) === undefined || !Number.isInteger(v) || v < 0) return configured;
  return { numerator: Math.min(v, configured.numerator), denominator: configured.denominator };
}

export function faultFactory(name: string, config: JsonObject, statPrefix: string): HttpFilterFactory {
  const settings = settingsOf(config);
  const prefix = `http.${statPrefix}.fault.`;
  const counters: Counters = {
    delays: stats.counter(`${prefix}delays_injected`),
    aborts: stats.counter(`${prefix}aborts_injected`),
    overflow: stats.counter(`${prefix}faults_overflow`),
    active: stats.gauge(`${prefix}active_faults`),
    prefix,
  };
  return { name, create: () => new FaultFilter(settings, counters) };
}
