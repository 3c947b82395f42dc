import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { ResponseFlag } from '../../../../access-log/entry.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import { EMPTY_RUNTIME, setRuntime } from '../../../../runtime.js';
import type { FilterContext } from '../../../../http/filter-api.js';
import { rateLimitFactory } from './ratelimit.js';
import { closeClusterManagers, counter, decode, encode, filterContext, routesOf, type FakeRequestOptions } from '../../../../../test/helpers/filter-harness.js';
import { startUnaryService } from '../../../../../test/helpers/grpc-service.js';

/**
 * envoy.filters.http.ratelimit alone (Envoy's ratelimit_test): the requests it asks nothing for,
 * what it does when the rate-limit service cannot be asked (failure mode allow or deny, RLSE,
 * cluster.<route's cluster>.ratelimit.{error,failure_mode_allowed}), and the OK and OVER_LIMIT
 * answers of a RateLimitService started here on 127.0.0.1.
 */

const RATELIMIT = 'envoy.filters.http.ratelimit';
const PER_ROUTE = 'type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimitPerRoute';

const ctxOf = (defs: Record<string, number[]> = {}): FilterContext => filterContext('ingress', defs);
after(closeClusterManagers);

const filterConfig = (serviceCluster: string, extra: JsonObject = {}): JsonObject => ({ domain: 'foo', timeout: '5s', rate_limit_service: { grpc_service: { envoy_grpc: { cluster_name: serviceCluster } }, transport_api_version: 'V3' }, ...extra });
/** One route to `cluster` with these rate limits (a descriptor from x-user, then a generic key by default). */
const limitedRoutes = (cluster: string, rateLimits: JsonObject[] = [{ actions: [{ request_headers: { header_name: 'x-user', descriptor_key: 'user' } }] }], route: JsonObject = {}, vhost: JsonObject = {}) =>
  routesOf([{ match: { prefix: '/' }, route: { cluster, rate_limits: rateLimits }, ...route }], vhost);
const rl = (cluster: string, name: string) => counter(`cluster.${cluster}.ratelimit.${name}`);

/** Runs `body` with these runtime values, then puts the empty runtime back. */
async function withRuntime<T>(values: Record<string, string>, body: () => Promise<T>): Promise<T> {
  setRuntime({ layers: ['test'], entries: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, [v]])) });
  try {
    return await body();
  } finally {
    setRuntime(EMPTY_RUNTIME);
  }
}

describe('the rate limit filter when it asks nothing or cannot ask', () => {
  it("asks nothing without a route, a route's rate_limits, a descriptor, the request_type it serves, or the runtime's consent", async () => {
    // The service's cluster is not there: any question would be counted as an error.
    const ctx = ctxOf();
    const f = rateLimitFactory(RATELIMIT, filterConfig('nowhere'), ctx);
    const quiet = async (options: FakeRequestOptions, factory = f) => {
      const r = await decode(factory, options);
      assert.deepEqual([r.decision, r.request.replied, r.request.flags], ['continue', undefined, 0], JSON.stringify(options));
    };
    await quiet({ routeConfig: null, headers: { 'x-user': 'a' } });
    await quiet({ routeConfig: routesOf([{ match: { prefix: '/' }, route: { cluster: 'rl1' } }]), headers: { 'x-user': 'a' } });
    await quiet({ routeConfig: limitedRoutes('rl1') }); // NoDescriptor: no x-user
    // A disable_key the runtime does not mention counts (and this one is asked, and fails: error 1).
    await quiet({ routeConfig: limitedRoutes('rl1', [{ disable_key: 'test_key', actions: [{ generic_key: { descriptor_value: 'v' } }] }]) });
    const internalOnly = rateLimitFactory(RATELIMIT, filterConfig('nowhere', { request_type: 'internal' }), ctx);
    const externalOnly = rateLimitFactory(RATELIMIT, filterConfig('nowhere', { request_type: 'external' }), ctx);
    await quiet({ routeConfig: limitedRoutes('rl1'), headers: { 'x-user': 'a' } }, internalOnly);
    await quiet({ routeConfig: limitedRoutes('rl1'), headers: { 'x-user': 'a', 'x-envoy-internal': 'true' } }, externalOnly);
    await withRuntime({ 'ratelimit.http_filter_enabled': '0' }, () => quiet({ routeConfig: limitedRoutes('rl1'), headers: { 'x-user': 'a' } }));
    await withRuntime({ 'ratelimit.test_key.http_filter_enabled': '0' }, () => quiet({ routeConfig: limitedRoutes('rl1', [{ disable_key: 'test_key', actions: [{ generic_key: { descriptor_value: 'v' } }] }]) }));
    assert.deepEqual([rl('rl1', 'error'), rl('rl1', 'ok')], [1, 0], 'only the generic key without a runtime override asked (and failed)');
    // The same requests where they are served are asked: InternalRequestType, ExternalRequestType.
    await decode(internalOnly, { routeConfig: limitedRoutes('rl1'), headers: { 'x-user': 'a', 'x-envoy-internal': 'true' } });
    await decode(externalOnly, { routeConfig: limitedRoutes('rl1'), headers: { 'x-user': 'a', 'x-envoy-internal': 'false' } });
    assert.equal(rl('rl1', 'error'), 3);
  });

  it("lets the request through when the service's cluster is not there or has no host, counting error and failure_mode_allowed under the route's cluster", async () => {
    const none = await decode(rateLimitFactory(RATELIMIT, filterConfig('nowhere'), ctxOf()), { routeConfig: limitedRoutes('rl2'), headers: { 'x-user': 'a' } });
    assert.deepEqual([none.decision, none.request.replied, none.request.flags], ['continue', undefined, 0]);
    const empty = await decode(rateLimitFactory(RATELIMIT, filterConfig('rls-empty'), ctxOf({ 'rls-empty': [] })), { routeConfig: limitedRoutes('rl2'), headers: { 'x-user': 'a' } });
    assert.deepEqual([empty.decision, empty.request.replied], ['continue', undefined]);
    assert.deepEqual([rl('rl2', 'error'), rl('rl2', 'failure_mode_allowed'), rl('rl2', 'ok'), rl('rl2', 'over_limit')], [2, 2, 0, 0], 'ErrorResponse');
  });

  it('refuses with 500 (status_on_error), RLSE and rate_limiter_error under failure_mode_deny', async () => {
    const f = rateLimitFactory(RATELIMIT, filterConfig('nowhere', { failure_mode_deny: true }), ctxOf());
    const r = await decode(f, { routeConfig: limitedRoutes('rl3'), headers: { 'x-user': 'a' } });
    assert.deepEqual([r.decision, r.request.replied?.status, r.request.replied?.body], ['stop', 500, '']);
    assert.deepEqual([r.request.flags, r.request.details], [ResponseFlag.rateLimitServiceError, 'rate_limiter_error']);
    const custom = rateLimitFactory(RATELIMIT, filterConfig('nowhere', { failure_mode_deny: true, status_on_error: { code: 'ServiceUnavailable' } }), ctxOf());
    assert.equal((await decode(custom, { routeConfig: limitedRoutes('rl3'), headers: { 'x-user': 'a' } })).request.replied?.status, 503, 'ErrorResponseWithFailureModeAllowOffAndCustomStatusOn');
    assert.deepEqual([rl('rl3', 'error'), rl('rl3', 'failure_mode_allowed')], [2, 0]);
  });
});

describe('the rate limit filter with a rate-limit service', () => {
  const asked: JsonObject[] = [];
  let service: Awaited<ReturnType<typeof startUnaryService>>;
  let port = 0;
  // ratelimit_test's two descriptor statuses: 1 a MINUTE "first" (2 left, reset in 3 s), 4 an HOUR "second" (5 left, 6 s).
  const statuses = [
    { code: 'OK', current_limit: { requests_per_unit: 1, unit: 'MINUTE', name: 'first' }, limit_remaining: 2, duration_until_reset: '3s' },
    { code: 'OK', current_limit: { requests_per_unit: 4, unit: 'HOUR', name: 'second' }, limit_remaining: 5, duration_until_reset: '6s' },
  ];

  before(async () => {
    service = await startUnaryService('/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit', 'envoy.service.ratelimit.v3.RateLimitRequest', 'envoy.service.ratelimit.v3.RateLimitResponse', (call, callback) => {
      asked.push(call.request);
      const entries = (call.request.descriptors as { entries: { key: string; value: string }[] }[]).flatMap((d) => d.entries);
      const user = entries.find((e) => e.key === 'user')?.value;
      const requestHeaders = [{ key: 'x-rls-rate-limited', value: 'true' }];
      if (user === 'down') callback({ code: GrpcStatus.UNAVAILABLE, details: 'limiter down' });
      else if (user === 'odd') callback(null, { overall_code: 'UNKNOWN' });
      else if (user === 'alice')
        callback(null, {
          overall_code: 'OVER_LIMIT',
          statuses,
          response_headers_to_add: [{ key: 'retry-after', value: '33' }],
          request_headers_to_add: requestHeaders,
          raw_body: Buffer.from('slow down').toString('base64'),
          dynamic_metadata: { name: 'my-limit', x: 3 },
        });
      else callback(null, { overall_code: 'OK', statuses, request_headers_to_add: requestHeaders, response_headers_to_add: [{ key: 'x-rl', value: 'checked' }] });
    });
    port = service.port;
  });
  after(() => service.close());

  it("asks with the filter's domain (a route's RateLimitPerRoute domain over it) and the route's descriptors; an OK goes on with the service's request headers, and its response headers and X-RateLimit-* on the response", async () => {
    const f = rateLimitFactory(RATELIMIT, filterConfig('rls4', { enable_x_ratelimit_headers: 'DRAFT_VERSION_03' }), ctxOf({ rls4: [port] }));
    const r = await decode(f, { routeConfig: limitedRoutes('rl4', [{ actions: [{ request_headers: { header_name: 'x-user', descriptor_key: 'user' } }] }, { actions: [{ generic_key: { descriptor_value: 'descriptor_value', descriptor_key: 'descriptor_key' } }] }]), headers: { 'x-user': 'bob' } });
    assert.deepEqual([r.decision, r.request.replied, r.request.flags], ['continue', undefined, 0]);
    assert.deepEqual(asked.at(-1), { domain: 'foo', descriptors: [{ entries: [{ key: 'user', value: 'bob' }] }, { entries: [{ key: 'descriptor_key', value: 'descriptor_value' }] }], hits_addend: 1 });
    assert.equal(r.request.rq.headers['x-rls-rate-limited'], 'true', 'OkResponseWithHeaders: the request headers to add');
    // OkResponseWithFilterHeaders: the status with the least remaining decides; every limit is listed.
    assert.deepEqual(encode(r, 200, {}), { 'x-ratelimit-limit': '1, 1;w=60;name="first", 4;w=3600;name="second"', 'x-ratelimit-remaining': '2', 'x-ratelimit-reset': '3', 'x-rl': 'checked' });
    assert.deepEqual([rl('rl4', 'ok'), rl('rl4', 'error')], [1, 0]);

    // PerRouteDomainSet, and OVERRIDE: a route without rate limits of its own takes its virtual host's.
    const vhostOnly = routesOf(
      [{ match: { prefix: '/' }, route: { cluster: 'rl4' }, typed_per_filter_config: { [RATELIMIT]: { '@type': PER_ROUTE, domain: 'bar', vh_rate_limits: 'OVERRIDE' } } }],
      { rate_limits: [{ actions: [{ generic_key: { descriptor_value: 'vhost' } }] }] },
    );
    await decode(f, { routeConfig: vhostOnly });
    assert.deepEqual(asked.at(-1), { domain: 'bar', descriptors: [{ entries: [{ key: 'generic_key', value: 'vhost' }] }], hits_addend: 1 });
    assert.equal(rl('rl4', 'ok'), 2);
  });

  it("answers OVER_LIMIT with 429, x-envoy-ratelimited, the service's headers and body and RL, keeping its request headers out, charging 429 to the route's cluster", async () => {
    const f = rateLimitFactory(RATELIMIT, filterConfig('rls5'), ctxOf({ rls5: [port], rl5: [] }));
    const r = await decode(f, { routeConfig: limitedRoutes('rl5'), headers: { 'x-user': 'alice' } });
    assert.equal(r.decision, 'stop');
    assert.deepEqual(r.request.replied, { status: 429, headers: { 'retry-after': '33', 'x-envoy-ratelimited': 'true' }, body: 'slow down' });
    assert.deepEqual([r.request.flags, r.request.details, r.request.rq.headers['x-rls-rate-limited']], [ResponseFlag.rateLimited, 'request_rate_limited', undefined]);
    assert.deepEqual(r.request.metadata()['envoy.filters.http.ratelimit'], { name: 'my-limit', x: 3 }, 'LimitResponseWithDynamicMetadata');
    assert.deepEqual([rl('rl5', 'over_limit'), counter('cluster.rl5.upstream_rq_429'), counter('cluster.rl5.upstream_rq_4xx')], [1, 1, 1]);

    // LimitResponseWithoutEnvoyRateLimitedHeader, LimitResponseWithInvalidRateLimitedStatus (200 gives way to 429), a configured 503.
    const quiet = rateLimitFactory(RATELIMIT, filterConfig('rls5', { disable_x_envoy_ratelimited_header: true, rate_limited_status: { code: 'OK' } }), ctxOf({ rls5: [port] }));
    const q = await decode(quiet, { routeConfig: limitedRoutes('rl5'), headers: { 'x-user': 'alice' } });
    assert.deepEqual([q.request.replied?.status, q.request.replied?.headers['x-envoy-ratelimited']], [429, undefined]);
    const unavailable = rateLimitFactory(RATELIMIT, filterConfig('rls5', { rate_limited_status: { code: 'ServiceUnavailable' } }), ctxOf({ rls5: [port], rl5: [] }));
    assert.equal((await decode(unavailable, { routeConfig: limitedRoutes('rl5'), headers: { 'x-user': 'alice' } })).request.replied?.status, 503);
    assert.equal(rl('rl5', 'over_limit'), 3);
    // LimitResponseWithRateLimitedStatus: the configured status is what the route's cluster is charged.
    assert.deepEqual([counter('cluster.rl5.upstream_rq_503'), counter('cluster.rl5.upstream_rq_5xx')], [1, 1]);
  });

  it('answers a gRPC request over the limit in gRPC (UNAVAILABLE, or RESOURCE_EXHAUSTED), and only counts one while the runtime does not enforce', async () => {
    const grpcRequest = { method: 'POST', headers: { 'x-user': 'alice', 'content-type': 'application/grpc' } };
    const plain = rateLimitFactory(RATELIMIT, filterConfig('rls6'), ctxOf({ rls6: [port] }));
    const g = await decode(plain, { routeConfig: limitedRoutes('rl6'), ...grpcRequest });
    assert.deepEqual([g.request.replied?.status, g.request.replied?.headers['grpc-status'], g.request.replied?.headers['content-type']], [200, '14', 'application/grpc']);
    const exhausted = rateLimitFactory(RATELIMIT, filterConfig('rls6', { rate_limited_as_resource_exhausted: true }), ctxOf({ rls6: [port] }));
    assert.equal((await decode(exhausted, { routeConfig: limitedRoutes('rl6'), ...grpcRequest })).request.replied?.headers['grpc-status'], '8');

    // LimitResponseRuntimeDisabled: ratelimit.http_filter_enforcing at 0 lets it through, still counted over_limit.
    const r = await withRuntime({ 'ratelimit.http_filter_enforcing': '0' }, () => decode(plain, { routeConfig: limitedRoutes('rl6'), headers: { 'x-user': 'alice' } }));
    assert.deepEqual([r.decision, r.request.replied, r.request.flags], ['continue', undefined, 0]);
    assert.equal(rl('rl6', 'over_limit'), 3);
  });

  it('takes a failed call or an answer neither OK nor OVER_LIMIT as an error: through by default, 500 under failure_mode_deny', async () => {
    const f = rateLimitFactory(RATELIMIT, filterConfig('rls7'), ctxOf({ rls7: [port] }));
    for (const user of ['down', 'odd']) {
      const r = await decode(f, { routeConfig: limitedRoutes('rl7'), headers: { 'x-user': user } });
      assert.deepEqual([r.decision, r.request.replied], ['continue', undefined], user);
    }
    assert.deepEqual([rl('rl7', 'error'), rl('rl7', 'failure_mode_allowed')], [2, 2]);
    const deny = rateLimitFactory(RATELIMIT, filterConfig('rls7', { failure_mode_deny: true }), ctxOf({ rls7: [port] }));
    const d = await decode(deny, { routeConfig: limitedRoutes('rl7'), headers: { 'x-user': 'odd' } });
    assert.deepEqual([d.request.replied?.status, d.request.flags, d.request.details], [500, ResponseFlag.rateLimitServiceError, 'rate_limiter_error']);
    assert.deepEqual([rl('rl7', 'error'), rl('rl7', 'failure_mode_allowed')], [3, 2]);
  });
});
