import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { filterBootstrap } from './helpers/bootstraps.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/** The fault filter (envoy.filters.http.fault) as Envoy's: delays, aborts, header-controlled faults, runtime overrides. */

let upstream: Upstream;
let proxy: RunningProxy;
const FAULT = 'type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault';
const ALWAYS = { numerator: 100 };
const fault = (config: object) => ({ 'envoy.filters.http.fault': { '@type': FAULT, ...config } });

before(async () => {
  upstream = await startUpstream('A');
  const routes = [
    { match: { prefix: '/abort' }, route: { cluster: 'backend' }, typed_per_filter_config: fault({ abort: { http_status: 418, percentage: ALWAYS } }) },
    { match: { prefix: '/delay' }, route: { cluster: 'backend' }, typed_per_filter_config: fault({ delay: { fixed_delay: '0.3s', percentage: ALWAYS } }) },
    { match: { prefix: '/header' }, route: { cluster: 'backend' }, typed_per_filter_config: fault({ delay: { header_delay: {}, percentage: ALWAYS }, abort: { header_abort: {}, percentage: ALWAYS } }) },
    { match: { prefix: '/grpc' }, route: { cluster: 'backend' }, typed_per_filter_config: fault({ abort: { grpc_status: 14, percentage: ALWAYS } }) },
    { match: { prefix: '/' }, route: { cluster: 'backend' } },
  ];
  // The filter's own fault: only for requests that ask for chaos.
  const filter = { name: 'envoy.filters.http.fault', typed_config: { '@type': FAULT, abort: { http_status: 503, percentage: ALWAYS }, headers: [{ name: 'x-chaos', string_match: { exact: 'yes' } }] } };
  proxy = await startProxy(
    filterBootstrap('chaos', [filter], routes, upstream.port, {}, { layered_runtime: { layers: [{ name: 'admin', admin_layer: {} }] } }),
    ['--concurrency', '1'],
  );
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
});

const get = (path: string, headers: Record<string, string> = {}) => httpRequest(`http://127.0.0.1:${proxy.ports.get('chaos')}${path}`, { headers });
const stat = (name: string) => statValue(proxy, `http.chaos.fault.${name}`);

describe('the fault filter', () => {
  it('aborts with the route\'s status and Envoy\'s body; the filter\'s own fault applies only where its headers match', async () => {
    const r = await get('/abort');
    assert.deepEqual([r.status, r.body], [418, 'fault filter abort']);
    assert.equal((await get('/')).status, 200);
    assert.equal((await get('/', { 'x-chaos': 'yes' })).status, 503);
    assert.equal(await stat('aborts_injected'), 2);
  });

  it('delays a request, then lets it through', async () => {
    const started = performance.now();
    const r = await get('/delay');
    assert.equal(r.body, 'A');
    assert.ok(performance.now() - started >= 250, 'held for the delay');
    assert.equal(await stat('delays_injected'), 1);
    await waitFor('no active fault', async () => ((await stat('active_faults')) === 0 ? true : undefined));
  });

  it('takes header-controlled faults from the request\'s headers, and none without them', async () => {
    assert.equal((await get('/header')).status, 200);
    assert.equal((await get('/header', { 'x-envoy-fault-abort-request': '429' })).status, 429);
    const started = performance.now();
    assert.equal((await get('/header', { 'x-envoy-fault-delay-request': '200' })).status, 200);
    assert.ok(performance.now() - started >= 150);
  });

  it('aborts a gRPC request with a gRPC status', async () => {
    const r = await get('/grpc');
    assert.deepEqual([r.status, r.headers['grpc-status'], r.headers['grpc-message']], [200, '14', 'fault filter abort']);
  });

  it('follows the runtime: fault.http.abort.abort_percent at 0 switches aborts off', async () => {
    const set = await httpRequest(`http://${proxy.admin}/runtime_modify?fault.http.abort.abort_percent=0`, { method: 'POST' });
    assert.equal(set.status, 200);
    assert.equal((await get('/abort')).status, 200);
  });
});
