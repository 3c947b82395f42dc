import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ResponseFlag } from '../../../../access-log/entry.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import { healthCheckFactory } from './health-check.js';
import { closeClusterManagers, decode, encode, filterContext } from '../../../../../test/helpers/filter-harness.js';

/** envoy.filters.http.health_check alone, as Envoy's health_check_test has it: which requests are health checks, and what each gets. */

const byPath = { headers: [{ name: ':path', string_match: { exact: '/healthz' } }] };
let failing = false;
const filter = (config: JsonObject) => healthCheckFactory('envoy.filters.http.health_check', config, filterContext('ingress', {}, () => failing));
after(() => closeClusterManagers());

describe('the health-check filter', () => {
  it('answers a matching request 200 itself, with the service cluster and health_check_ok', async () => {
    failing = false;
    const run = await decode(filter({ pass_through_mode: false, ...byPath }), { path: '/healthz' });
    assert.equal(run.decision, 'stop');
    assert.deepEqual(run.request.replied, { status: 200, headers: { 'x-envoy-upstream-healthchecked-cluster': 'local' }, body: '' });
    assert.equal(run.request.healthCheck, true);
    assert.equal(run.request.details, 'health_check_ok');
    assert.equal(run.request.flags, 0);
  });

  it('answers 503 while the server fails health checks, flagged LH, without x-envoy-immediate-health-check-fail', async () => {
    failing = true;
    const run = await decode(filter({ pass_through_mode: false, ...byPath }), { path: '/healthz' });
    assert.equal(run.decision, 'stop');
    assert.deepEqual(run.request.replied, { status: 503, headers: { 'x-envoy-upstream-healthchecked-cluster': 'local' }, body: '' });
    assert.equal(run.request.flags, ResponseFlag.failedLocalHealthCheck);
    assert.equal(run.request.details, 'health_check_failed');
  });

  it('lets another request through, and marks its response with x-envoy-immediate-health-check-fail while failing', async () => {
    failing = false;
    const ok = await decode(filter({ pass_through_mode: false, ...byPath }), { path: '/other' });
    assert.equal(ok.decision, 'continue');
    assert.equal(ok.request.healthCheck, false);
    assert.deepEqual(encode(ok, 200), {});
    failing = true;
    const draining = await decode(filter({ pass_through_mode: false, ...byPath }), { path: '/other' });
    assert.equal(draining.decision, 'continue');
    assert.deepEqual(encode(draining, 200), { 'x-envoy-immediate-health-check-fail': 'true' });
  });

  it('in pass-through mode lets a health check go upstream and marks its answer, except while failing', async () => {
    failing = false;
    const through = await decode(filter({ pass_through_mode: true, ...byPath }), { path: '/healthz' });
    assert.equal(through.decision, 'continue');
    assert.equal(through.request.healthCheck, true);
    assert.equal(through.request.replied, undefined);
    assert.deepEqual(encode(through, 200), { 'x-envoy-upstream-healthchecked-cluster': 'local' });
    failing = true;
    const failed = await decode(filter({ pass_through_mode: true, ...byPath }), { path: '/healthz' });
    assert.equal(failed.decision, 'stop');
    assert.equal(failed.request.replied?.status, 503);
  });

  it('needs every header matcher to match; with none configured every request is a health check, as in Envoy', async () => {
    failing = false;
    const both = filter({ pass_through_mode: false, headers: [...byPath.headers, { name: 'x-probe', present_match: true }] });
    assert.equal((await decode(both, { path: '/healthz' })).decision, 'continue');
    assert.equal((await decode(both, { path: '/healthz', headers: { 'x-probe': '1' } })).decision, 'stop');
    assert.equal((await decode(filter({ pass_through_mode: false }), { path: '/anything' })).request.replied?.status, 200);
  });
});
