import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HealthCheckFilter } from '../../worker/http/health-check-filter.js';
import { FakeRequest } from '../helpers/filter-harness.js';

/** envoy.filters.http.health_check alone (Envoy's health_check_test): which requests are health checks, and what each gets. */

const rq = (path: string, headers: Record<string, string> = {}) => new FakeRequest({ path, headers: { ':path': path, ...headers } }).rq;
const byPath = { headers: [{ name: ':path', string_match: { exact: '/healthz' } }] };

describe('the health-check filter', () => {
  it('answers a matching request 200 itself, and 503 while the server fails health checks', () => {
    const f = new HealthCheckFilter({ pass_through_mode: false, ...byPath });
    assert.deepEqual(f.decide(rq('/healthz'), false), { healthCheck: true, status: 200 });
    assert.deepEqual(f.decide(rq('/healthz'), true), { healthCheck: true, status: 503 });
    assert.deepEqual(f.decide(rq('/other'), false), { healthCheck: false }, 'not a health check: the route decides');
  });

  it('in pass-through mode lets a health check go upstream, except while failing', () => {
    const f = new HealthCheckFilter({ pass_through_mode: true, ...byPath });
    assert.deepEqual(f.decide(rq('/healthz'), false), { healthCheck: true });
    assert.deepEqual(f.decide(rq('/healthz'), true), { healthCheck: true, status: 503 });
  });

  it('needs every header matcher to match; with none configured every request is a health check, as in Envoy', () => {
    const both = new HealthCheckFilter({ pass_through_mode: false, headers: [...byPath.headers, { name: 'x-probe', present_match: true }] });
    assert.equal(both.isHealthCheck(rq('/healthz')), false);
    assert.equal(both.isHealthCheck(rq('/healthz', { 'x-probe': '1' })), true);
    const none = new HealthCheckFilter({ pass_through_mode: false });
    assert.deepEqual(none.decide(rq('/anything'), false), { healthCheck: true, status: 200 });
  });
});
