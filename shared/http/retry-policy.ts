import { list, obj } from '../config/access.js';
import type { JsonObject } from '../config/proto-json.js';
import { durationMs } from '../config/wkt.js';
import { compileHeaderMatcher, type HeaderMatcher } from '../matchers.js';
import type { RetryHostPredicate, RetryPriority } from './retry-plugins.js';
import { retryHostPredicate, retryPriority } from '../extensions/retry/lookup.js';

/**
 * A route's retry_policy as Envoy reads it (router/retry_policy_impl.cc): the conditions as bits,
 * the limits, back-off, retriable codes and headers, and the host predicates and priority. The
 * workers' RetryState (worker/http/retry-state.ts) applies it to one request.
 */

/** retry_on conditions (x-envoy-retry-on), as bits. */
export const RETRY_ON: Readonly<Record<string, number>> = {
  '5xx': 1 << 0,
  'gateway-error': 1 << 1,
  'connect-failure': 1 << 2,
  'retriable-4xx': 1 << 3,
  'refused-stream': 1 << 4,
  'retriable-status-codes': 1 << 5,
  'retriable-headers': 1 << 6,
  reset: 1 << 7,
  'reset-before-request': 1 << 8,
  'envoy-ratelimited': 1 << 9,
  // Only an HTTP/3 upstream with TCP fallback fails so; this proxy's clusters are TCP, so it never applies (as in Envoy for such a cluster).
  'http3-post-connect-failure': 1 << 10,
};

/** gRPC conditions (retry_on and x-envoy-retry-grpc-on), as bits, with the grpc-status each retries. */
export const RETRY_GRPC_ON: Readonly<Record<string, number>> = {
  cancelled: 1 << 11,
  'deadline-exceeded': 1 << 12,
  internal: 1 << 13,
  'resource-exhausted': 1 << 14,
  unavailable: 1 << 15,
};

export const GRPC_STATUS_BIT: Readonly<Record<number, number>> = {
  1: RETRY_GRPC_ON.cancelled!,
  4: RETRY_GRPC_ON['deadline-exceeded']!,
  13: RETRY_GRPC_ON.internal!,
  8: RETRY_GRPC_ON['resource-exhausted']!,
  14: RETRY_GRPC_ON.unavailable!,
};
export const ANY_GRPC = Object.values(RETRY_GRPC_ON).reduce((a, b) => a | b, 0);

/** Envoy's split: comma-separated, blanks trimmed, empty tokens skipped. */
export function tokens(value: string): string[] {
  return value.split(',').map((t) => t.trim()).filter((t) => t.length > 0);
}

/** The bits of a retry_on list in `table`, and the tokens it does not know (Envoy ignores them). */
export function parseConditions(value: string, table: Readonly<Record<string, number>>): { bits: number; unknown: string[] } {
  let bits = 0;
  const unknown: string[] = [];
  for (const t of tokens(value)) {
    const bit = table[t];
    if (bit === undefined) unknown.push(t);
    else bits |= bit;
  }
  return { bits, unknown };
}

export interface ResetHeader {
  name: string;
  /** UNIX_TIMESTAMP: the header is the time the limit resets; SECONDS: the seconds until then. */
  unixTimestamp: boolean;
}

/** A route's (or virtual host's) retry_policy, compiled once. */
export interface RetryPolicy {
  retryOn: number;
  /** num_retries: 1 when unset. */
  numRetries: number;
  /** 0: none. */
  perTryTimeoutMs: number;
  perTryIdleTimeoutMs: number;
  retriableStatusCodes: readonly number[];
  /** retriable_headers: matched against a try's response headers (`:status` included). */
  retriableHeaders: readonly HeaderMatcher[];
  /** retriable_request_headers: when set, a request matching none of them is not retried. */
  retriableRequestHeaders: readonly HeaderMatcher[];
  /** retry_back_off; unset, the runtime's upstream.base_retry_backoff_ms (25) and ten times it. */
  backOff?: { baseMs: number; maxMs?: number };
  rateLimitedBackOff?: { resetHeaders: readonly ResetHeader[]; maxMs: number };
  /** retry_host_predicate: each makes one request's predicate (shared/extensions/retry/host/). */
  hostPredicates: readonly (() => RetryHostPredicate)[];
  /** retry_priority: makes one request's priority (shared/extensions/retry/priority/). */
  priority?: () => RetryPriority;
  /** host_selection_retry_max_attempts: how often a host a predicate rejects is picked again (1 when unset). */
  hostSelectionMaxAttempts: number;
}

/** What an empty retry_policy (or none, for a request that asks for retries by header) means: Envoy's defaults. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  retryOn: 0,
  numRetries: 1,
  perTryTimeoutMs: 0,
  perTryIdleTimeoutMs: 0,
  retriableStatusCodes: [],
  retriableHeaders: [],
  retriableRequestHeaders: [],
  hostPredicates: [],
  hostSelectionMaxAttempts: 1,
};

/** Duration to milliseconds, sub-millisecond values raised to 1 (as Envoy rounds them). */
function atLeastOneMs(duration: unknown): number | undefined {
  if (typeof duration !== 'string') return undefined;
  return Math.max(1, durationMs(duration));
}

export function compileRetryPolicy(p: JsonObject): RetryPolicy {
  const retryOn = String(p.retry_on ?? '');
  const backOff = p.retry_back_off === undefined ? undefined : obj(p.retry_back_off);
  const limited = p.rate_limited_retry_back_off === undefined ? undefined : obj(p.rate_limited_retry_back_off);
  const predicates = list(p.retry_host_predicate).flatMap((e) => retryHostPredicate(e) ?? []);
  const priority = p.retry_priority === undefined ? undefined : retryPriority(obj(p.retry_priority));
  const attempts = Number(p.host_selection_retry_max_attempts ?? 0);
  return {
    retryOn: parseConditions(retryOn, RETRY_ON).bits | parseConditions(retryOn, RETRY_GRPC_ON).bits,
    numRetries: typeof p.num_retries === 'number' ? p.num_retries : 1,
    perTryTimeoutMs: typeof p.per_try_timeout === 'string' ? durationMs(p.per_try_timeout) : 0,
    perTryIdleTimeoutMs: typeof p.per_try_idle_timeout === 'string' ? durationMs(p.per_try_idle_timeout) : 0,
    retriableStatusCodes: ((p.retriable_status_codes as number[] | undefined) ?? []).map(Number),
    retriableHeaders: list(p.retriable_headers).map(compileHeaderMatcher),
    retriableRequestHeaders: list(p.retriable_request_headers).map(compileHeaderMatcher),
    ...(backOff ? { backOff: { baseMs: atLeastOneMs(backOff.base_interval) ?? 25, ...(backOff.max_interval !== undefined ? { maxMs: atLeastOneMs(backOff.max_interval) } : {}) } } : {}),
    ...(limited
      ? {
          rateLimitedBackOff: {
            resetHeaders: list(limited.reset_headers).map((h) => ({ name: String(h.name).toLowerCase(), unixTimestamp: h.format === 'UNIX_TIMESTAMP' })),
            maxMs: atLeastOneMs(limited.max_interval) ?? 300_000,
          },
        }
      : {}),
    hostPredicates: predicates,
    ...(priority ? { priority } : {}),
    hostSelectionMaxAttempts: attempts > 0 ? attempts : 1,
  };
}

