import type { IncomingHttpHeaders } from 'node:http';
import { compileHeaderMatcher, type HeaderMatcher, type RequestView } from '../../shared/matchers.js';
import { featureEnabled, runtimeInteger } from '../../shared/runtime.js';
import { unsigned } from '../../shared/decimal.js';
import { ANY_GRPC, DEFAULT_RETRY_POLICY, GRPC_STATUS_BIT, parseConditions, RETRY_GRPC_ON, RETRY_ON, tokens, type RetryPolicy } from '../../shared/http/retry-policy.js';
import type { RetryHost, RetryHostPredicate, RetryPriority } from '../../shared/http/retry-plugins.js';

/**
 * A request's retries, as Envoy's retry_state_impl.cc decides them: the route's retry_policy
 * merged with the request's x-envoy-retry-on, x-envoy-retry-grpc-on, x-envoy-max-retries,
 * x-envoy-retriable-status-codes and x-envoy-retriable-header-names; whether a response or a
 * reset is retried; how long to back off before the next try (jittered exponential, or the
 * upstream's rate-limit reset header); and which hosts and priorities a retry avoids.
 *
 * The router (router.ts) asks `onHeaders` or `onReset` after each try and acts on the answer;
 * the circuit breaker's retry unit and the retry stats are counted here, as Envoy counts them.
 */

/** Why a try ended without a response, as the retry decision needs it (Envoy's StreamResetReason, grouped). */
export type ResetReason = 'connect' | 'refused' | 'reset' | 'overflow';

/** A retry decision's outcome, as Envoy's RetryStatus. */
export type RetryStatus = 'yes' | 'no' | 'limit' | 'overflow';

/** The circuit breaker's retry unit, and the cluster's retry figures (see router.ts). */
export interface RetryAccounting {
  /** The breaker's max_retries (or retry budget) has room for one more. */
  canRetry(): boolean;
  acquireRetry(): void;
  releaseRetry(): void;
  retry(): void;
  success(): void;
  limitExceeded(): void;
  overflow(): void;
  backoffExponential(): void;
  backoffRatelimited(): void;
}

export type { RetryHost } from '../../shared/http/retry-plugins.js';

function headerString(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

const ON = RETRY_ON as Record<string, number>;

export class RetryState {
  private retryOn: number;
  private retriesLeft: number;
  private readonly statusCodes: number[];
  private readonly headerMatchers: HeaderMatcher[];
  /** A retry was granted and its unit of the breaker is held, until the next decision (Envoy's armed callback). */
  private armed = false;
  private readonly baseMs: number;
  private readonly maxMs: number;
  /** The exponential back-off's next interval: base, doubled while under half the maximum, then the maximum. */
  private nextInterval: number;
  /** The next wait, when a rate-limited response named it (used once). */
  private ratelimitedMs: number | undefined;
  /** This request's retry plugins (shared/extensions/retry/), made when it first retries. */
  private predicates: readonly RetryHostPredicate[] | undefined;
  private priority: RetryPriority | undefined;

  /**
   * The request's retry state, or none when nothing could be retried. The request's retry
   * headers are consumed here either way (removed from `headers`), as Envoy consumes them.
   */
  static create(policy: RetryPolicy | undefined, headers: IncomingHttpHeaders, rq: RequestView, accounting: RetryAccounting): RetryState | undefined {
    const retryOn = headerString(headers, 'x-envoy-retry-on');
    const grpcOn = headerString(headers, 'x-envoy-retry-grpc-on');
    let state: RetryState | undefined;
    if (retryOn !== undefined || grpcOn !== undefined || (policy && policy.retryOn !== 0)) {
      state = new RetryState(policy ?? DEFAULT_RETRY_POLICY, headers, rq, accounting, retryOn, grpcOn);
    }
    for (const h of CONSUMED_HEADERS) delete headers[h];
    return state;
  }

  private constructor(
    readonly policy: RetryPolicy,
    headers: IncomingHttpHeaders,
    rq: RequestView,
    private readonly accounting: RetryAccounting,
    retryOnHeader: string | undefined,
    grpcOnHeader: string | undefined,
  ) {
    this.retryOn = policy.retryOn;
    this.retriesLeft = policy.numRetries;
    this.statusCodes = [...policy.retriableStatusCodes];
    this.headerMatchers = [...policy.retriableHeaders];
    this.baseMs = policy.backOff?.baseMs ?? runtimeInteger('upstream.base_retry_backoff_ms', 25);
    this.maxMs = policy.backOff?.maxMs ?? this.baseMs * 10;
    this.nextInterval = this.baseMs;
    if (retryOnHeader !== undefined) this.retryOn |= parseConditions(retryOnHeader, RETRY_ON).bits;
    if (grpcOnHeader !== undefined) this.retryOn |= parseConditions(grpcOnHeader, RETRY_GRPC_ON).bits;
    if (policy.retriableRequestHeaders.length && !policy.retriableRequestHeaders.some((m) => m(rq))) this.retryOn = 0;
    const max = unsigned(headerString(headers, 'x-envoy-max-retries'));
    if (this.retryOn !== 0 && max !== undefined) this.retriesLeft = max;
    const codes = headerString(headers, 'x-envoy-retriable-status-codes');
    if (codes !== undefined) {
      for (const c of codes.split(',')) {
        const n = unsigned(c);
        if (n !== undefined) this.statusCodes.push(n);
      }
    }
    const names = headerString(headers, 'x-envoy-retriable-header-names');
    if (names !== undefined) for (const name of tokens(names)) this.headerMatchers.push(compileHeaderMatcher({ name }));
  }

  /** Whether any condition is on (a request whose retriable_request_headers did not match has none). */
  get enabled(): boolean {
    return this.retryOn !== 0;
  }

  /** A try's response headers: retried, or not (and why not). `grpcStatus` is a headers-only (trailers-only) answer's. */
  onHeaders(status: number, headers: IncomingHttpHeaders): RetryStatus {
    return this.decide(this.wouldRetryHeaders(status, headers), headers);
  }

  /**
   * A try that ended with no response: retried, or not. `started`: a try's request reached its
   * connection (Envoy's upstream_request_started, sticky across tries). A per-try timeout is a
   * local reset here, as in Envoy.
   */
  onReset(reason: ResetReason, started: boolean): RetryStatus {
    return this.decide(this.wouldRetryReset(reason, started));
  }


  private wouldRetryHeaders(status: number, headers: IncomingHttpHeaders): boolean {
    // An upstream Envoy's rate limit: retried only under envoy-ratelimited, whatever else is on.
    if (headers['x-envoy-ratelimited'] !== undefined) return (this.retryOn & ON['envoy-ratelimited']!) !== 0;
    const on = this.retryOn;
    if (on & ON['5xx']! && status >= 500 && status < 600) return true;
    if (on & ON['gateway-error']! && status >= 502 && status <= 504) return true;
    if (on & ON['retriable-4xx']! && status === 409) return true;
    if (on & ON['retriable-status-codes']! && this.statusCodes.includes(status)) return true;
    if (on & ON['retriable-headers']! && this.headerMatchers.length) {
      const view: RequestView = { method: '', path: '', authority: '', headers: { ...headers, ':status': String(status) } };
      if (this.headerMatchers.some((m) => m(view))) return true;
    }
    if (on & ANY_GRPC) {
      const grpc = unsigned(headerString(headers, 'grpc-status'));
      const bit = grpc === undefined ? undefined : GRPC_STATUS_BIT[grpc];
      if (bit !== undefined && on & bit) return true;
    }
    return false;
  }

  private wouldRetryReset(reason: ResetReason, started: boolean): boolean {
    if (reason === 'overflow') return false;
    const on = this.retryOn;
    if (reason === 'connect' && on & ON['connect-failure']!) return true;
    if (on & ON['reset-before-request']! && !started) return true;
    if (on & (ON.reset! | ON['5xx']! | ON['gateway-error']!)) return true;
    return reason === 'refused' && (on & ON['refused-stream']!) !== 0;
  }

  /** Envoy's shouldRetry: the success of an earlier retry, the limit, then the breaker's retry unit. */
  private decide(wouldRetry: boolean, headers?: IncomingHttpHeaders): RetryStatus {
    if (this.armed && !wouldRetry) this.accounting.success();
    this.release();
    if (!wouldRetry) return 'no';
    if (this.retriesLeft <= 0) {
      this.accounting.limitExceeded();
      return 'limit';
    }
    this.retriesLeft--;
    if (!this.accounting.canRetry()) {
      this.accounting.overflow();
      return 'overflow';
    }
    // The runtime's upstream.use_retry percentage may turn retries off (no figure, no flag).
    if (!featureEnabled('upstream.use_retry', 100)) return 'no';
    this.accounting.acquireRetry();
    this.armed = true;
    this.accounting.retry();
    if (headers && this.policy.rateLimitedBackOff) this.ratelimitedMs = this.resetInterval(headers);
    return 'yes';
  }

  /** The breaker's retry unit, held from a granted retry to the next decision (or the request's end). */
  release(): void {
    if (!this.armed) return;
    this.armed = false;
    this.accounting.releaseRetry();
  }

  /**
   * The wait before the retry just granted: from a rate-limited response's reset header (a random
   * wait between it and 1.5 times it), else Envoy's fully jittered exponential back-off: a random
   * wait below the interval, which starts at the base and doubles while under half the maximum,
   * then stays at the maximum (25 ms base: below 25, 50, 100, 200, then 250 ms).
   */
  nextBackoffMs(): number {
    const limited = this.ratelimitedMs;
    this.ratelimitedMs = undefined;
    if (limited !== undefined) {
      this.accounting.backoffRatelimited();
      return limited + Math.floor(Math.random() * (limited / 2));
    }
    this.accounting.backoffExponential();
    const interval = this.nextInterval;
    this.nextInterval = interval < this.maxMs / 2 ? interval * 2 : this.maxMs;
    return Math.floor(Math.random() * interval);
  }

  /** The first reset header that parses to a wait within max_interval (over 1 ms), in milliseconds. */
  private resetInterval(headers: IncomingHttpHeaders): number | undefined {
    const limited = this.policy.rateLimitedBackOff!;
    for (const h of limited.resetHeaders) {
      const value = unsigned(headerString(headers, h.name));
      if (value === undefined) continue;
      const ms = h.unixTimestamp ? value * 1000 - Date.now() : value * 1000;
      if (ms > 1 && ms <= limited.maxMs) return ms;
    }
    return undefined;
  }

  private plugins(): readonly RetryHostPredicate[] {
    if (this.predicates === undefined) {
      this.predicates = this.policy.hostPredicates.map((make) => make());
      this.priority = this.policy.priority?.();
    }
    return this.predicates;
  }

  /** A try went to `host` at `priority` (what previous_hosts and previous_priorities remember). */
  onHostAttempted(host: RetryHost, priority: number): void {
    for (const p of this.plugins()) p.onHostAttempted(host);
    this.priority?.onHostAttempted(priority);
  }

  /** Whether a host just picked is to be replaced by another pick (a retry host predicate rejects it). */
  shouldSelectAnotherHost(host: RetryHost): boolean {
    return this.plugins().some((p) => p.shouldSelectAnotherHost(host));
  }

  /** The priorities the retry priority keeps the next try out of (undefined: none). */
  excludedPriorities(): ReadonlySet<number> | undefined {
    this.plugins();
    return this.priority?.excludedPriorities();
  }

  /** Every priority was excluded: the retry priority starts over (Envoy resets its attempted list then). */
  priorityExclusionExhausted(): void {
    this.priority?.exhausted();
  }
}

/** The request headers the retry state consumes, set or not (none goes upstream). */
export const CONSUMED_HEADERS = [
  'x-envoy-retry-on',
  'x-envoy-retry-grpc-on',
  'x-envoy-max-retries',
  'x-envoy-hedge-on-per-try-timeout',
  'x-envoy-retriable-header-names',
  'x-envoy-retriable-status-codes',
  'x-envoy-upstream-rq-per-try-timeout-ms',
];
