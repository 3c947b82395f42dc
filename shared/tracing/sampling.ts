import type { IncomingHttpHeaders } from 'node:http';
import { runtimeValue } from '../runtime.js';
import { stats } from '../stats/process.js';
import type { Counter } from '../stats/store.js';

/**
 * Envoy's tracing decision (ConnectionManagerUtility::mutateTracingRequestHeader), carried in the
 * x-request-id: a UUID's version character (index 14) is `4` as generated, `9` once sampled, `a`
 * when forced (x-envoy-force-trace), `b` when the client asked (x-client-trace-id). A request that
 * already carries a reason keeps it (an upstream proxy decided); otherwise x-client-trace-id (at
 * client_sampling), x-envoy-force-trace, then random_sampling by the request id (its first eight
 * hex digits mod 10000) decide; overall_sampling can still turn any of them off. A request id that
 * is not a UUID is never traced.
 */

export type TraceReason = 'sampling' | 'service_forced' | 'client_forced' | 'not_traceable';

const REASON_CHAR: Record<Exclude<TraceReason, 'not_traceable'>, string> = { sampling: '9', service_forced: 'a', client_forced: 'b' };
const TRACE_POSITION = 14;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** A share: `value % denominator < numerator` (Envoy's FractionalPercent). */
export interface Fraction {
  numerator: number;
  denominator: number;
}

/** The three sampling shares of a connection manager's tracing, or of a route's. */
export interface Sampling {
  client: Fraction;
  random: Fraction;
  overall: Fraction;
}

/** A connection manager's Percent fields as Envoy converts them: unset is 100 %; random and overall out of 10000 (percent × 100, truncated), client out of 100. */
export function samplingOfPercents(config: { client_sampling?: unknown; random_sampling?: unknown; overall_sampling?: unknown }): Sampling {
  const pct = (p: unknown) => (p === undefined ? 100 : Number((p as { value?: unknown }).value ?? 0));
  return {
    client: { numerator: Math.trunc(pct(config.client_sampling)), denominator: 100 },
    random: { numerator: Math.trunc(pct(config.random_sampling) * 100), denominator: 10000 },
    overall: { numerator: Math.trunc(pct(config.overall_sampling) * 100), denominator: 10000 },
  };
}

const DENOMINATORS: Record<string, number> = { HUNDRED: 100, TEN_THOUSAND: 10000, MILLION: 1000000 };

/** A route's `tracing` (FractionalPercent fields; an unset one is 100 %, not the connection manager's). */
export function samplingOfFractions(config: { client_sampling?: unknown; random_sampling?: unknown; overall_sampling?: unknown }): Sampling {
  const fraction = (f: unknown): Fraction => {
    if (f === undefined) return { numerator: 100, denominator: 100 };
    const o = f as { numerator?: unknown; denominator?: unknown };
    return { numerator: Number(o.numerator ?? 0), denominator: DENOMINATORS[String(o.denominator ?? 'HUNDRED')] ?? 100 };
  };
  return { client: fraction(config.client_sampling), random: fraction(config.random_sampling), overall: fraction(config.overall_sampling) };
}

/**
 * Whether `value` falls in the share, or in what the `tracing.*` runtime key says instead (an
 * integer there is a percent, over 100 always), as Envoy's featureEnabled reads it.
 */
function enabled(key: string, share: Fraction, value: number): boolean {
  const v = runtimeValue(key);
  if (v !== undefined && /^\d+$/.test(v)) {
    const percent = Number(v);
    return percent > 100 || value % 100 < percent;
  }
  return value % share.denominator < share.numerator;
}

/** http.<stat_prefix>.tracing.*: each request's reason, once. */
export class TracingStats {
  readonly randomSampling: Counter;
  readonly serviceForced: Counter;
  readonly clientEnabled: Counter;
  readonly notTraceable: Counter;
  readonly healthCheck: Counter;

  constructor(statPrefix: string) {
    const p = `http.${statPrefix}.tracing.`;
    this.randomSampling = stats.counter(`${p}random_sampling`);
    this.serviceForced = stats.counter(`${p}service_forced`);
    this.clientEnabled = stats.counter(`${p}client_enabled`);
    this.notTraceable = stats.counter(`${p}not_traceable`);
    this.healthCheck = stats.counter(`${p}health_check`);
  }

  charge(reason: TraceReason): void {
    (reason === 'sampling' ? this.randomSampling : reason === 'service_forced' ? this.serviceForced : reason === 'client_forced' ? this.clientEnabled : this.notTraceable).inc();
  }
}

function reasonOf(requestId: string): TraceReason {
  switch (requestId[TRACE_POSITION]) {
    case '9':
      return 'sampling';
    case 'a':
      return 'service_forced';
    case 'b':
      return 'client_forced';
    default:
      return 'not_traceable';
  }
}

/** Decides, writes the reason into x-request-id (a UUID), and returns it. */
export function decideTrace(headers: IncomingHttpHeaders, sampling: Sampling): TraceReason {
  const rid = headers['x-request-id'];
  if (typeof rid !== 'string' || !UUID.test(rid)) return 'not_traceable';
  const result = Number.parseInt(rid.slice(0, 8), 16) % 10000;
  const initial = reasonOf(rid);
  let reason = initial;
  if (reason === 'not_traceable') {
    if (headers['x-client-trace-id'] !== undefined && enabled('tracing.client_enabled', sampling.client, Math.floor(Math.random() * 1_000_000))) reason = 'client_forced';
    else if (headers['x-envoy-force-trace'] !== undefined) reason = 'service_forced';
    else if (enabled('tracing.random_sampling', sampling.random, result)) reason = 'sampling';
  }
  if (reason !== 'not_traceable' && !enabled('tracing.global_enabled', sampling.overall, result)) reason = 'not_traceable';
  if (reason !== initial) {
    const packed = reason === 'not_traceable' ? '4' : REASON_CHAR[reason];
    headers['x-request-id'] = rid.slice(0, TRACE_POSITION) + packed + rid.slice(TRACE_POSITION + 1);
  }
  return reason;
}
