// The retry decision (worker/http/retry-state.ts) against Envoy's retry_state_impl_test.cc cases:
// every retry_on and retry-grpc-on condition, the request headers merged in and consumed, the
// limit, the breaker's retry unit and the figures, both back-offs, and the host predicates.
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { RetryState, type RetryAccounting } from '../worker/http/retry-state.js';
import { compileRetryPolicy, parseConditions, RETRY_ON, type RetryPolicy } from '../shared/http/retry-policy.js';
import { setRuntime } from '../shared/runtime.js';

interface Books extends RetryAccounting {
  held: number;
  room: number;
  counts: Record<string, number>;
}

function books(room = 3): Books {
  const counts: Record<string, number> = {};
  const count = (name: string) => () => {
    counts[name] = (counts[name] ?? 0) + 1;
  };
  const b: Books = {
    held: 0,
    room,
    counts,
    canRetry: () => b.held < b.room,
    acquireRetry: () => void b.held++,
    releaseRetry: () => void b.held--,
    retry: count('retry'),
    success: count('success'),
    limitExceeded: count('limit_exceeded'),
    overflow: count('overflow'),
    backoffExponential: count('backoff_exponential'),
    backoffRatelimited: count('backoff_ratelimited'),
  };
  return b;
}

const view = (headers: IncomingHttpHeaders) => ({ method: 'GET', path: '/', authority: 'x', headers });

function state(policy: Record<string, unknown> | undefined, headers: IncomingHttpHeaders = {}, b = books()): RetryState | undefined {
  return RetryState.create(policy ? compileRetryPolicy(policy) : undefined, headers, view(headers), b);
}

afterEach(() => setRuntime({ layers: [], entries: {} }));

describe('retry conditions', () => {
  it('parses every retry_on token, the gRPC ones in retry_on too, and leaves unknown tokens out as Envoy does', () => {
    const all = Object.keys(RETRY_ON).join(',');
    assert.deepEqual(parseConditions(`${all}, ,bogus`, RETRY_ON).unknown, ['bogus']);
    const p = compileRetryPolicy({ retry_on: 'connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes' });
    assert.notEqual(p.retryOn, 0);
    assert.equal(compileRetryPolicy({ retry_on: 'nothing-known' }).retryOn, 0);
  });

  it('retries responses: 5xx, gateway-error, retriable-4xx (409 only), retriable-status-codes, retriable-headers', () => {
    const cases: [string, Record<string, unknown>, number, IncomingHttpHeaders, boolean][] = [
      ['5xx', {}, 500, {}, true],
      ['5xx', {}, 409, {}, false],
      ['gateway-error', {}, 503, {}, true],
      ['gateway-error', {}, 500, {}, false],
      ['retriable-4xx', {}, 409, {}, true],
      ['retriable-4xx', {}, 404, {}, false],
      ['retriable-status-codes', { retriable_status_codes: [418] }, 418, {}, true],
      ['retriable-status-codes', { retriable_status_codes: [418] }, 503, {}, false],
      ['retriable-headers', { retriable_headers: [{ name: 'x-upstream-pushback' }] }, 200, { 'x-upstream-pushback': 'yes' }, true],
      ['retriable-headers', { retriable_headers: [{ name: ':status', string_match: { exact: '202' } }] }, 202, {}, true],
      ['retriable-headers', { retriable_headers: [{ name: 'x-upstream-pushback' }] }, 200, {}, false],
      ['connect-failure', {}, 503, {}, false],
    ];
    for (const [on, extra, status, headers, retried] of cases) {
      const s = state({ retry_on: on, ...extra })!;
      assert.equal(s.onHeaders(status, headers), retried ? 'yes' : 'no', `${on} on ${status}`);
    }
  });

  it('retries a trailers-only gRPC answer by its grpc-status: cancelled 1, deadline-exceeded 4, resource-exhausted 8, internal 13, unavailable 14', () => {
    const codes: Record<string, number> = { cancelled: 1, 'deadline-exceeded': 4, 'resource-exhausted': 8, internal: 13, unavailable: 14 };
    for (const [token, code] of Object.entries(codes)) {
      assert.equal(state({ retry_on: token })!.onHeaders(200, { 'grpc-status': String(code) }), 'yes', token);
      assert.equal(state({ retry_on: token })!.onHeaders(200, { 'grpc-status': '0' }), 'no', `${token} on OK`);
      assert.equal(state({ retry_on: token })!.onHeaders(200, {}), 'no', `${token} without grpc-status`);
    }
    // x-envoy-retry-grpc-on adds gRPC conditions only; its retry-on tokens are not gRPC ones.
    assert.equal(state(undefined, { 'x-envoy-retry-grpc-on': 'unavailable' })!.onHeaders(200, { 'grpc-status': '14' }), 'yes');
    assert.equal(state(undefined, { 'x-envoy-retry-grpc-on': '5xx' })!.enabled, false);
  });

  it('retries a rate-limited answer (x-envoy-ratelimited) only under envoy-ratelimited, whatever else is on', () => {
    assert.equal(state({ retry_on: '5xx' })!.onHeaders(503, { 'x-envoy-ratelimited': 'true' }), 'no');
    assert.equal(state({ retry_on: '5xx,envoy-ratelimited' })!.onHeaders(429, { 'x-envoy-ratelimited': 'true' }), 'yes');
  });

  it('retries resets: connect-failure a failed connection only, refused-stream a refused stream only, reset and 5xx any, reset-before-request one not yet started', () => {
    const cases: [string, 'connect' | 'refused' | 'reset', boolean, boolean][] = [
      ['connect-failure', 'connect', true, true],
      ['connect-failure', 'reset', false, false],
      ['refused-stream', 'refused', true, true],
      ['refused-stream', 'reset', true, false],
      ['reset', 'reset', true, true],
      ['5xx', 'reset', true, true],
      ['gateway-error', 'connect', false, true],
      ['reset-before-request', 'reset', false, true],
      ['reset-before-request', 'reset', true, false],
      ['retriable-status-codes', 'reset', false, false],
    ];
    for (const [on, reason, started, retried] of cases) {
      assert.equal(state({ retry_on: on })!.onReset(reason, started), retried ? 'yes' : 'no', `${on} on ${reason} (started ${started})`);
    }
    assert.equal(state({ retry_on: '5xx,reset' })!.onReset('overflow', false), 'no');
  });
});

describe('the request headers', () => {
  it('merge x-envoy-retry-on, x-envoy-max-retries (only with a condition on), x-envoy-retriable-status-codes and -header-names, and are consumed', () => {
    const headers: IncomingHttpHeaders = {
      'x-envoy-retry-on': 'retriable-status-codes,retriable-headers',
      'x-envoy-max-retries': '3',
      'x-envoy-retriable-status-codes': '418, 425,x',
      'x-envoy-retriable-header-names': 'x-a, x-b',
      'x-envoy-upstream-rq-per-try-timeout-ms': '10',
      'x-envoy-hedge-on-per-try-timeout': 'true',
      other: 'kept',
    };
    const b = books(10);
    const s = RetryState.create(undefined, headers, view(headers), b)!;
    assert.deepEqual(Object.keys(headers), ['other']);
    assert.equal(s.onHeaders(418, {}), 'yes');
    assert.equal(s.onHeaders(425, {}), 'yes');
    assert.equal(s.onHeaders(200, { 'x-b': '1' }), 'yes');
    assert.equal(s.onHeaders(418, {}), 'limit', 'three retries, then the limit');
    assert.equal(b.counts.limit_exceeded, 1);
    // Without a condition, x-envoy-max-retries alone does nothing (and there is no retry state).
    assert.equal(state(undefined, { 'x-envoy-max-retries': '5' }), undefined);
    // A route policy's num_retries stands when the header is not a number.
    const t = state({ retry_on: '5xx', num_retries: 2 }, { 'x-envoy-max-retries': 'many' })!;
    assert.equal(t.onHeaders(503, {}), 'yes');
    assert.equal(t.onHeaders(503, {}), 'yes');
    assert.equal(t.onHeaders(503, {}), 'limit');
  });

  it('consumes them even when nothing can be retried', () => {
    const headers: IncomingHttpHeaders = { 'x-envoy-max-retries': '2', 'x-envoy-retriable-status-codes': '500' };
    assert.equal(state(undefined, headers), undefined);
    assert.deepEqual(headers, {});
  });

  it('retriable_request_headers: a request matching none of them is not retried', () => {
    const policy = { retry_on: '5xx', retriable_request_headers: [{ name: ':method', string_match: { exact: 'GET' } }] };
    assert.equal(state(policy)!.enabled, true);
    const post: IncomingHttpHeaders = {};
    const s = RetryState.create(compileRetryPolicy(policy), post, { method: 'POST', path: '/', authority: 'x', headers: post }, books())!;
    assert.equal(s.enabled, false);
  });
});

describe('the retry unit and the figures', () => {
  it('holds the breaker unit from a granted retry to the next decision, counts success, limit and overflow as Envoy does', () => {
    const b = books(1);
    const s = state({ retry_on: '5xx', num_retries: 3 }, {}, b)!;
    assert.equal(s.onHeaders(503, {}), 'yes');
    assert.equal(b.held, 1);
    assert.equal(s.onHeaders(200, {}), 'no');
    assert.equal(b.held, 0);
    assert.deepEqual({ ...b.counts }, { retry: 1, success: 1 });
    // Another exchange holds the only unit: overflow (and a retry of the allowance is spent).
    b.held = 1;
    const t = state({ retry_on: '5xx', num_retries: 1 }, {}, b)!;
    assert.equal(t.onHeaders(503, {}), 'overflow');
    assert.equal(b.counts.overflow, 1);
    b.held = 0;
    assert.equal(t.onHeaders(503, {}), 'limit');
    // A retried try that is not retried again counts as the retry's success, whatever its status (Envoy's rule).
    const u = state({ retry_on: 'connect-failure' }, {}, b)!;
    assert.equal(u.onReset('connect', false), 'yes');
    assert.equal(u.onHeaders(503, {}), 'no');
    assert.equal(b.counts.success, 2);
    u.release();
    assert.equal(b.held, 0);
  });

  it('upstream.use_retry at 0 turns retries off', () => {
    setRuntime({ layers: ['static'], entries: { 'upstream.use_retry': ['0'] } });
    const b = books();
    assert.equal(state({ retry_on: '5xx' }, {}, b)!.onHeaders(503, {}), 'no');
    assert.equal(b.held, 0);
  });
});

describe('back-off', () => {
  const random = Math.random;
  afterEach(() => {
    Math.random = random;
  });

  it('is fully jittered exponential: below 25, 50, 100, 200, then 250 ms by default; retry_back_off sets base and maximum', () => {
    Math.random = () => 0.999999;
    const s = state({ retry_on: '5xx', num_retries: 10 })!;
    const waits = Array.from({ length: 6 }, () => s.nextBackoffMs());
    assert.deepEqual(waits, [24, 49, 99, 199, 249, 249]);
    const t = state({ retry_on: '5xx', retry_back_off: { base_interval: '0.010s', max_interval: '0.030s' } })!;
    assert.deepEqual([t.nextBackoffMs(), t.nextBackoffMs(), t.nextBackoffMs()], [9, 19, 29]);
  });

  it('follows a rate-limited answer\'s reset header (between it and 1.5 times it), once, then the exponential again', () => {
    Math.random = () => 0;
    const b = books();
    const s = state({ retry_on: 'retriable-status-codes', retriable_status_codes: [429], num_retries: 3, rate_limited_retry_back_off: { reset_headers: [{ name: 'Retry-After' }, { name: 'X-RateLimit-Reset', format: 'UNIX_TIMESTAMP' }], max_interval: '10s' } }, {}, b)!;
    assert.equal(s.onHeaders(429, { 'retry-after': '2' }), 'yes');
    assert.equal(s.nextBackoffMs(), 2000);
    assert.equal(s.onHeaders(429, { 'retry-after': '60' }), 'yes', 'over max_interval: the header is not used');
    assert.equal(s.nextBackoffMs(), 0);
    assert.equal(s.onHeaders(429, { 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 4) }), 'yes');
    const wait = s.nextBackoffMs();
    assert.ok(wait > 2000 && wait <= 4000, `${wait}`);
    assert.deepEqual([b.counts.backoff_ratelimited, b.counts.backoff_exponential], [2, 1]);
  });
});

describe('host selection', () => {
  it('previous_hosts rejects the hosts tried, omit_canary_hosts the canaries; previous_priorities excludes the priorities tried every update_frequency tries', () => {
    const policy: RetryPolicy = compileRetryPolicy({
      retry_on: '5xx',
      retry_host_predicate: [
        { name: 'envoy.retry_host_predicates.previous_hosts', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate' } },
        { name: 'envoy.retry_host_predicates.omit_canary_hosts', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.retry.host.omit_canary_hosts.v3.OmitCanaryHostsPredicate' } },
      ],
      retry_priority: { name: 'envoy.retry_priorities.previous_priorities', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.retry.priority.previous_priorities.v3.PreviousPrioritiesConfig', update_frequency: 2 } },
      host_selection_retry_max_attempts: 5,
    });
    assert.equal(policy.hostSelectionMaxAttempts, 5);
    const s = RetryState.create(policy, {}, view({}), books())!;
    const a = { canary: false };
    const b = { canary: false };
    const canary = { canary: true };
    assert.equal(s.shouldSelectAnotherHost(canary), true);
    assert.equal(s.shouldSelectAnotherHost(a), false);
    s.onHostAttempted(a, 0);
    assert.equal(s.shouldSelectAnotherHost(a), true);
    assert.equal(s.shouldSelectAnotherHost(b), false);
    assert.equal(s.excludedPriorities(), undefined, 'one try: not yet the update');
    s.onHostAttempted(b, 1);
    assert.deepEqual([...(s.excludedPriorities() ?? [])], [0, 1]);
    s.priorityExclusionExhausted();
    assert.equal(s.excludedPriorities(), undefined);
  });
});
