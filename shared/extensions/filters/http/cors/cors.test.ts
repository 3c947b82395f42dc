import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { corsFactory } from './cors.js';
import { counter, decode, encode, routesOf } from '../../../../../test/helpers/filter-harness.js';

/** envoy.filters.http.cors alone (Envoy's cors_filter_test): preflights answered, responses decorated, what is counted. */

const POLICY = 'type.googleapis.com/envoy.extensions.filters.http.cors.v3.CorsPolicy';
const withPolicy = (policy: object) => routesOf([{ match: { prefix: '/' }, route: { cluster: 'backend' }, typed_per_filter_config: { 'envoy.filters.http.cors': { '@type': POLICY, ...policy } } }]);
const allowed = { allow_origin_string_match: [{ exact: 'https://app.example' }], allow_methods: 'GET, POST', allow_headers: 'content-type', expose_headers: 'x-trace', max_age: '600', allow_credentials: true };

describe('the CORS filter', () => {
  it('answers a preflight from an allowed origin itself, with the Access-Control-Allow-* headers', async () => {
    const f = corsFactory('envoy.filters.http.cors', 'cors1');
    const r = await decode(f, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' }, routeConfig: withPolicy(allowed) });
    assert.equal(r.decision, 'stop');
    assert.equal(r.request.replied?.status, 200);
    assert.deepEqual(r.request.replied?.headers, {
      'access-control-allow-origin': 'https://app.example',
      'access-control-allow-credentials': 'true',
      'access-control-allow-methods': 'GET, POST',
      'access-control-allow-headers': 'content-type',
      'access-control-max-age': '600',
    });
    assert.equal(counter('http.cors1.cors.origin_valid'), 1);
  });

  it("decorates an allowed origin's response (allow-origin, credentials, expose-headers) and leaves another origin's alone", async () => {
    const f = corsFactory('envoy.filters.http.cors', 'cors2');
    const ok = await decode(f, { headers: { origin: 'https://app.example' }, routeConfig: withPolicy(allowed) });
    assert.equal(ok.decision, 'continue');
    assert.deepEqual(encode(ok, 200, { 'content-type': 'text/plain' }), { 'content-type': 'text/plain', 'access-control-allow-origin': 'https://app.example', 'access-control-allow-credentials': 'true', 'access-control-expose-headers': 'x-trace' });
    const other = await decode(f, { headers: { origin: 'https://evil.example' }, routeConfig: withPolicy(allowed) });
    assert.deepEqual(encode(other, 200), {});
    assert.equal(counter('http.cors2.cors.origin_invalid'), 1);
  });

  it('forwards a preflight from an origin not allowed, unless forward_not_matching_preflights is false', async () => {
    const f = corsFactory('envoy.filters.http.cors', 'cors3');
    const preflight = { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' } };
    assert.equal((await decode(f, { ...preflight, routeConfig: withPolicy(allowed) })).decision, 'continue');
    const answered = await decode(f, { ...preflight, routeConfig: withPolicy({ ...allowed, forward_not_matching_preflights: false }) });
    assert.equal(answered.decision, 'stop');
    assert.equal(answered.request.replied?.headers['access-control-allow-origin'], undefined);
  });

  it('takes each setting from the most specific policy that has it (the route over its virtual host)', async () => {
    const f = corsFactory('envoy.filters.http.cors', 'cors4');
    const routeConfig = routesOf(
      [{ match: { prefix: '/' }, route: { cluster: 'backend' }, typed_per_filter_config: { 'envoy.filters.http.cors': { '@type': POLICY, allow_methods: 'PUT' } } }],
      { typed_per_filter_config: { 'envoy.filters.http.cors': { '@type': POLICY, ...allowed } } },
    );
    const r = await decode(f, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'PUT' }, routeConfig });
    assert.equal(r.request.replied?.headers['access-control-allow-methods'], 'PUT', "the route's methods");
    assert.equal(r.request.replied?.headers['access-control-max-age'], '600', "the virtual host's max age");
  });

  it('does nothing without a policy, for a request without Origin, in shadow mode (counted only), or on a direct response', async () => {
    const f = corsFactory('envoy.filters.http.cors', 'cors5');
    assert.deepEqual(encode(await decode(f, { headers: { origin: 'https://app.example' } }), 200), {}, 'no policy');
    assert.deepEqual(encode(await decode(f, { routeConfig: withPolicy(allowed) }), 200), {}, 'no Origin');
    const shadow = { ...allowed, filter_enabled: { default_value: { numerator: 0 } }, shadow_enabled: { default_value: { numerator: 100 } } };
    const watched = await decode(f, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' }, routeConfig: withPolicy(shadow) });
    assert.deepEqual([watched.decision, encode(watched, 200)], ['continue', {}]);
    assert.equal(counter('http.cors5.cors.origin_valid'), 1, 'shadow mode counts');
    const direct = routesOf([{ match: { prefix: '/' }, direct_response: { status: 200 }, typed_per_filter_config: { 'envoy.filters.http.cors': { '@type': POLICY, ...allowed } } }]);
    assert.deepEqual(encode(await decode(f, { headers: { origin: 'https://app.example' }, routeConfig: direct }), 200), {});
  });
});
