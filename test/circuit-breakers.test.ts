import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { HCM_TYPE, ROUTER_TYPE, staticCluster } from './helpers/bootstraps.js';
import { httpRequest, startProxy, statValue, stopAllProxies, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * Circuit breakers per priority, enforced across the tree (both workers count against one limit
 * through shared memory), with Envoy's overflow reply and stats.
 */

let upstream: Upstream;
let proxy: RunningProxy;

before(async () => {
  upstream = await startUpstream('A');
  const limited = staticCluster('limited', upstream.port) as any;
  limited.circuit_breakers = { thresholds: [{ max_requests: 2, max_retries: 0 }, { priority: 'HIGH', max_requests: 10 }] };
  const route = (prefix: string, extra: object = {}) => ({ match: { prefix }, route: { cluster: 'limited', ...extra } });
  proxy = await startProxy(
    {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [{
          name: 'ingress',
          address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
          filter_chains: [{ filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: {
            '@type': HCM_TYPE,
            stat_prefix: 'ingress',
            route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes: [
              route('/high/', { priority: 'HIGH', prefix_rewrite: '/' }),
              route('/retry/', { prefix_rewrite: '/', retry_policy: { retry_on: '5xx', num_retries: 3 } }),
              route('/'),
            ] }] },
            http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } }],
          } }] }],
        }],
        clusters: [limited],
      },
    },
    ['--concurrency', '2'],
  );
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
});

const stat = (name: string) => statValue(proxy, name);

/** `n` slow requests started 50 ms apart on their own connections (so both workers take some). */
async function slow(path: string, n: number): Promise<{ status: number; body: string }[]> {
  const all: Promise<{ status: number; body: string }>[] = [];
  for (let i = 0; i < n; i++) {
    all.push(httpRequest(`http://127.0.0.1:${proxy.ports.get('ingress')}${path}`, { agent: false }));
    await new Promise((r) => setTimeout(r, 50));
  }
  return Promise.all(all);
}

describe('circuit breakers', () => {
  it('admits max_requests across both workers, and answers the rest 503 overflow', async () => {
    const results = await slow('/slow?ms=1500', 6);
    const ok = results.filter((r) => r.status === 200);
    const overflow = results.filter((r) => r.status === 503);
    assert.equal(ok.length, 2, JSON.stringify(results));
    assert.equal(overflow.length, 4);
    assert.equal(overflow[0]!.body, 'upstream connect error or disconnect/reset before headers. reset reason: overflow');
    assert.equal(await stat('cluster.limited.upstream_rq_pending_overflow'), 4);
    // Everything was given back: the limit admits again.
    assert.equal((await httpRequest(`http://127.0.0.1:${proxy.ports.get('ingress')}/`)).status, 200);
  });

  it('applies the HIGH thresholds to routes of priority HIGH', async () => {
    const results = await slow('/high/slow?ms=1000', 5);
    assert.deepEqual(results.map((r) => r.status), [200, 200, 200, 200, 200]);
  });

  it('refuses retries beyond max_retries, counting upstream_rq_retry_overflow', async () => {
    const r = await httpRequest(`http://127.0.0.1:${proxy.ports.get('ingress')}/retry/flaky?key=cb&fail=1`);
    assert.equal(r.status, 503, 'max_retries 0: the first answer stands');
    assert.equal(await stat('cluster.limited.upstream_rq_retry_overflow'), 1);
    assert.equal(await stat('cluster.limited.upstream_rq_retry'), 0);
  });

  it('shows every priority\'s thresholds in /clusters', async () => {
    const text = (await httpRequest(`http://${proxy.admin}/clusters`)).body;
    assert.match(text, /^limited::default_priority::max_requests::2$/m);
    assert.match(text, /^limited::default_priority::max_retries::0$/m);
    assert.match(text, /^limited::high_priority::max_requests::10$/m);
    assert.match(text, /^limited::high_priority::max_pending_requests::1024$/m);
  });
});
