import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ResponseFlag } from '../../../../access-log/entry.js';
import { stats } from '../../../../stats/process.js';
import { faultFactory } from './fault.js';
import { counter, decode, FakeRequest, routesOf } from '../../../../../test/helpers/filter-harness.js';

/** envoy.filters.http.fault alone (Envoy's fault_filter_test): aborts, delays, the limits on them, what is counted and flagged. */

const FAULT = 'type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault';
const all = { numerator: 100 };
const active = (prefix: string) => stats.gauge(`http.${prefix}.fault.active_faults`).value;

describe('the fault filter', () => {
  it('aborts with the configured status: a local reply "fault filter abort", flag FI, aborts_injected and one active fault until the exchange ends', async () => {
    const f = faultFactory('envoy.filters.http.fault', { abort: { http_status: 503, percentage: all } }, 'fault1');
    const r = await decode(f);
    assert.equal(r.decision, 'stop');
    assert.deepEqual([r.request.replied?.status, r.request.replied?.body], [503, 'fault filter abort']);
    assert.equal(r.request.flags & ResponseFlag.faultInjected, ResponseFlag.faultInjected);
    assert.equal(r.request.details, 'fault_filter_abort');
    assert.equal(counter('http.fault1.fault.aborts_injected'), 1);
    assert.equal(active('fault1'), 1);
    r.request.finish();
    assert.equal(active('fault1'), 0);
  });

  it('aborts a gRPC request with grpc-status in a 200 answer', async () => {
    const f = faultFactory('envoy.filters.http.fault', { abort: { grpc_status: 14, percentage: all } }, 'fault2');
    const r = await decode(f, { method: 'POST', headers: { 'content-type': 'application/grpc' } });
    assert.equal(r.request.replied?.status, 200);
    assert.equal(r.request.replied?.headers['grpc-status'], '14');
  });

  it('takes the fault from the request with header_abort, within the configured percentage', async () => {
    const f = faultFactory('envoy.filters.http.fault', { abort: { header_abort: {}, percentage: all } }, 'fault3');
    const asked = await decode(f, { headers: { 'x-envoy-fault-abort-request': '429' } });
    assert.equal(asked.request.replied?.status, 429);
    const none = await decode(f);
    assert.deepEqual([none.decision, none.request.replied], ['continue', undefined], 'no header, no fault');
    const zero = await decode(f, { headers: { 'x-envoy-fault-abort-request': '429', 'x-envoy-fault-abort-request-percentage': '0' } });
    assert.equal(zero.decision, 'continue', 'the request asked for 0 %');
  });

  it('delays, flagging DI, then goes on (or aborts after the delay)', async () => {
    const f = faultFactory('envoy.filters.http.fault', { delay: { fixed_delay: '0.005s', percentage: all } }, 'fault4');
    const request = new FakeRequest();
    const held = f.create().decodeHeaders(request);
    assert.ok(held instanceof Promise, 'it holds the request');
    assert.equal(await held, 'continue');
    assert.equal(request.flags & ResponseFlag.delayInjected, ResponseFlag.delayInjected);
    assert.equal(counter('http.fault4.fault.delays_injected'), 1);
    const both = faultFactory('envoy.filters.http.fault', { delay: { fixed_delay: '0.001s', percentage: all }, abort: { http_status: 500, percentage: all } }, 'fault5');
    const rb = await decode(both);
    assert.deepEqual([rb.decision, rb.request.replied?.status], ['stop', 500]);
    assert.equal(active('fault5'), 1, 'one active fault for both');
  });

  it('applies only to its upstream_cluster, its headers and its downstream_nodes', async () => {
    const f = faultFactory('envoy.filters.http.fault', { abort: { http_status: 503, percentage: all }, upstream_cluster: 'other', headers: [{ name: 'x-test', string_match: { exact: 'yes' } }] }, 'fault6');
    assert.equal((await decode(f, { headers: { 'x-test': 'yes' } })).decision, 'continue', 'the route goes to backend, not other');
    const g = faultFactory('envoy.filters.http.fault', { abort: { http_status: 503, percentage: all }, headers: [{ name: 'x-test', string_match: { exact: 'yes' } }], downstream_nodes: ['node-a'] }, 'fault7');
    assert.equal((await decode(g, { headers: { 'x-test': 'yes' } })).decision, 'continue', 'not from node-a');
    assert.equal((await decode(g, { headers: { 'x-test': 'yes', 'x-envoy-downstream-service-node': 'node-a' } })).decision, 'stop');
    assert.equal((await decode(g, { headers: { 'x-envoy-downstream-service-node': 'node-a' } })).decision, 'continue', 'the header does not match');
  });

  it('stops at max_active_faults (faults_overflow), and a route\'s HTTPFault replaces the filter\'s', async () => {
    const f = faultFactory('envoy.filters.http.fault', { abort: { http_status: 503, percentage: all }, max_active_faults: 1 }, 'fault8');
    const first = await decode(f);
    assert.equal(first.decision, 'stop');
    const second = await decode(f);
    assert.equal(second.decision, 'continue');
    assert.equal(counter('http.fault8.fault.faults_overflow'), 1);
    first.request.finish();
    assert.equal((await decode(f)).decision, 'stop', 'room again once the first ended');
    const quiet = faultFactory('envoy.filters.http.fault', { abort: { http_status: 503, percentage: all } }, 'fault9');
    const routeConfig = routesOf([{ match: { prefix: '/' }, route: { cluster: 'backend' }, typed_per_filter_config: { 'envoy.filters.http.fault': { '@type': FAULT, abort: { http_status: 418, percentage: all } } } }]);
    assert.equal((await decode(quiet, { routeConfig })).request.replied?.status, 418);
  });
});
