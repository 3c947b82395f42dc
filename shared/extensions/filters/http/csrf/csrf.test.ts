import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { csrfFactory } from './csrf.js';
import { counter, decode, routesOf } from '../../../../../test/helpers/filter-harness.js';

/** envoy.filters.http.csrf alone (Envoy's csrf_filter_test): which requests pass, which get 403, what is counted. */

const CSRF = 'type.googleapis.com/envoy.extensions.filters.http.csrf.v3.CsrfPolicy';
const enabled = { filter_enabled: { default_value: { numerator: 100 } } };
const shadow = { filter_enabled: { default_value: { numerator: 0 } }, shadow_enabled: { default_value: { numerator: 100 } } };

describe('the CSRF filter', () => {
  it('lets a state-changing request from its own origin through, and one from another origin not (403 "Invalid origin")', async () => {
    const f = csrfFactory('envoy.filters.http.csrf', enabled, 'csrf1');
    const same = await decode(f, { method: 'POST', authority: 'app.example', headers: { origin: 'https://app.example' } });
    assert.equal(same.decision, 'continue');
    const other = await decode(f, { method: 'POST', authority: 'app.example', headers: { origin: 'https://evil.example' } });
    assert.equal(other.decision, 'stop');
    assert.deepEqual([other.request.replied?.status, other.request.replied?.body], [403, 'Invalid origin']);
    assert.deepEqual([counter('http.csrf1.csrf.request_valid'), counter('http.csrf1.csrf.request_invalid')], [1, 1]);
  });

  it('falls back to Referer, counts a request with neither as missing_source_origin, and leaves GET alone', async () => {
    const f = csrfFactory('envoy.filters.http.csrf', enabled, 'csrf2');
    assert.equal((await decode(f, { method: 'DELETE', authority: 'app.example:8443', headers: { referer: 'https://app.example:8443/page' } })).decision, 'continue');
    const none = await decode(f, { method: 'PUT', authority: 'app.example' });
    assert.equal(none.request.replied?.status, 403);
    assert.equal(counter('http.csrf2.csrf.missing_source_origin'), 1);
    assert.equal((await decode(f, { method: 'GET', authority: 'app.example', headers: { origin: 'https://evil.example' } })).decision, 'continue');
  });

  it('accepts additional_origins, and in shadow mode counts without refusing', async () => {
    const extra = csrfFactory('envoy.filters.http.csrf', { ...enabled, additional_origins: [{ suffix: '.trusted.example' }] }, 'csrf3');
    assert.equal((await decode(extra, { method: 'POST', authority: 'app.example', headers: { origin: 'https://api.trusted.example' } })).decision, 'continue');
    const watching = csrfFactory('envoy.filters.http.csrf', shadow, 'csrf4');
    const r = await decode(watching, { method: 'POST', authority: 'app.example', headers: { origin: 'https://evil.example' } });
    assert.deepEqual([r.decision, r.request.replied, counter('http.csrf4.csrf.request_invalid')], ['continue', undefined, 1]);
  });

  it("takes the route's policy over the filter's (typed_per_filter_config)", async () => {
    const f = csrfFactory('envoy.filters.http.csrf', enabled, 'csrf5');
    const routeConfig = routesOf([{ match: { prefix: '/' }, route: { cluster: 'backend' }, typed_per_filter_config: { 'envoy.filters.http.csrf': { '@type': CSRF, filter_enabled: { default_value: { numerator: 0 } } } } }]);
    const r = await decode(f, { method: 'POST', authority: 'app.example', headers: { origin: 'https://evil.example' }, routeConfig });
    assert.deepEqual([r.decision, r.request.replied], ['continue', undefined], 'the route turned it off');
  });
});
