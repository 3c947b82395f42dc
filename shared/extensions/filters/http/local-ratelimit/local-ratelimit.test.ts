import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ResponseFlag } from '../../../../access-log/entry.js';
import { bindBucketSlots, slotsNeeded } from '../../../../ratelimit/bucket-slots.js';
import { localRateLimitFactory } from './local-ratelimit.js';
import { counter, decode, encode, routesOf } from '../../../../../test/helpers/filter-harness.js';

/**
 * envoy.filters.http.local_ratelimit alone (Envoy's local_ratelimit filter_test): tokens, the
 * answer to a request without one, enforcement and shadow, descriptors, the figures. Each
 * configuration's buckets are a connection's own here (local_rate_limit_per_downstream_connection),
 * so no tree region is needed; every request of a test shares one connection key.
 */

const NAME = 'envoy.filters.http.local_ratelimit';
const all = { default_value: { numerator: 100 } };
const connection = { key: {} };

/** A configuration with its token-bucket slots given, as the supervisor gives them. */
function limited(statPrefix: string, extra: Record<string, unknown> = {}) {
  const config = { '@type': 'type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit', stat_prefix: statPrefix, token_bucket: { max_tokens: 2, tokens_per_fill: 1, fill_interval: '3600s' }, filter_enabled: all, filter_enforced: all, local_rate_limit_per_downstream_connection: true, ...extra };
  bindBucketSlots(config, Array.from({ length: slotsNeeded(config) }, (_, i) => i));
  return config;
}

describe('the local rate limit filter', () => {
  it('lets requests through while the bucket has tokens, then answers 429 local_rate_limited with flag RL, counting each', async () => {
    const f = localRateLimitFactory(NAME, limited('lrl1'), 'local');
    const c = { key: {} };
    for (let i = 0; i < 2; i++) assert.equal((await decode(f, { connection: c })).decision, 'continue');
    const refused = await decode(f, { connection: c });
    assert.equal(refused.decision, 'stop');
    assert.deepEqual([refused.request.replied?.status, refused.request.replied?.body], [429, 'local_rate_limited']);
    assert.equal(refused.request.flags & ResponseFlag.rateLimited, ResponseFlag.rateLimited);
    assert.equal(refused.request.details, 'local_rate_limited');
    const figure = (n: string) => counter(`lrl1.http_local_rate_limit.${n}`);
    assert.deepEqual([figure('enabled'), figure('ok'), figure('rate_limited'), figure('enforced')], [3, 2, 1, 1]);
  });

  it('not enforced: counted rate_limited, sent on with request_headers_to_add_when_not_enforced', async () => {
    const f = localRateLimitFactory(NAME, limited('lrl2', { token_bucket: { max_tokens: 1, tokens_per_fill: 1, fill_interval: '3600s' }, filter_enforced: { default_value: { numerator: 0 } }, request_headers_to_add_when_not_enforced: [{ header: { key: 'x-local-rate-limit', value: 'true' } }] }), 'local');
    const c = { key: {} };
    await decode(f, { connection: c });
    const over = await decode(f, { connection: c });
    assert.deepEqual([over.decision, over.request.rq.headers['x-local-rate-limit']], ['continue', 'true']);
    assert.deepEqual([counter('lrl2.http_local_rate_limit.rate_limited'), counter('lrl2.http_local_rate_limit.enforced')], [1, 0]);
  });

  it('does nothing unless filter_enabled says so (0 % when unset)', async () => {
    const config = limited('lrl3');
    delete (config as Record<string, unknown>).filter_enabled;
    const f = localRateLimitFactory(NAME, config, 'local');
    for (let i = 0; i < 4; i++) assert.equal((await decode(f, { connection })).decision, 'continue');
    assert.equal(counter('lrl3.http_local_rate_limit.enabled'), 0);
  });

  it('answers with the configured status (a status under 400 is 429), a gRPC client with UNAVAILABLE, or RESOURCE_EXHAUSTED when told', async () => {
    const once = { max_tokens: 1, tokens_per_fill: 1, fill_interval: '3600s' };
    const teapot = localRateLimitFactory(NAME, limited('lrl4', { token_bucket: once, status: { code: 'ServiceUnavailable' } }), 'local');
    const c1 = { key: {} };
    await decode(teapot, { connection: c1 });
    assert.equal((await decode(teapot, { connection: c1 })).request.replied?.status, 503);
    const grpc = localRateLimitFactory(NAME, limited('lrl5', { token_bucket: once }), 'local');
    const c2 = { key: {} };
    const grpcRequest = { connection: c2, method: 'POST', headers: { 'content-type': 'application/grpc' } };
    await decode(grpc, grpcRequest);
    const refused = (await decode(grpc, grpcRequest)).request.replied!;
    assert.deepEqual([refused.status, refused.headers['grpc-status'], refused.headers['grpc-message']], [200, '14', 'local_rate_limited']);
    const exhausted = localRateLimitFactory(NAME, limited('lrl6', { token_bucket: once, rate_limited_as_resource_exhausted: true }), 'local');
    const c3 = { key: {} };
    await decode(exhausted, { ...grpcRequest, connection: c3 });
    assert.equal((await decode(exhausted, { ...grpcRequest, connection: c3 })).request.replied?.headers['grpc-status'], '8');
  });

  it('gives a descriptor its own bucket (the route\'s rate_limits build it), and the draft-03 X-RateLimit headers of the bucket that decided', async () => {
    const config = limited('lrl7', {
      token_bucket: { max_tokens: 100, tokens_per_fill: 100, fill_interval: '3600s' },
      descriptors: [{ entries: [{ key: 'client', value: 'greedy' }], token_bucket: { max_tokens: 1, tokens_per_fill: 1, fill_interval: '60s' } }],
      enable_x_ratelimit_headers: 'DRAFT_VERSION_03',
    });
    const f = localRateLimitFactory(NAME, config, 'local');
    const routeConfig = routesOf([{ match: { prefix: '/' }, route: { cluster: 'backend', rate_limits: [{ actions: [{ request_headers: { header_name: 'x-client', descriptor_key: 'client' } }] }] } }]);
    const c = { key: {} };
    const first = await decode(f, { connection: c, headers: { 'x-client': 'greedy' }, routeConfig });
    assert.equal(first.decision, 'continue');
    const headers = encode(first, 200);
    assert.deepEqual([headers['x-ratelimit-limit'], headers['x-ratelimit-remaining']], ['1', '0']);
    assert.match(String(headers['x-ratelimit-reset']), /^(59|60)$/, 'seconds to the next token of the descriptor\'s 60 s bucket');
    const second = await decode(f, { connection: c, headers: { 'x-client': 'greedy' }, routeConfig });
    assert.equal(second.request.replied?.status, 429);
    assert.equal(second.request.replied?.headers['x-ratelimit-limit'], '1');
    assert.equal((await decode(f, { connection: c, headers: { 'x-client': 'polite' }, routeConfig })).decision, 'continue', 'another client takes from the filter\'s bucket');
  });
});
