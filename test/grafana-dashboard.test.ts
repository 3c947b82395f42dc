import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { HCM_TYPE, ROUTER_TYPE, staticCluster } from './helpers/bootstraps.js';
import { httpRequest, startProxy, stopAllProxies, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * A Grafana dashboard the Envoy community uses (Contour's "Envoy Metrics"): every metric its
 * panels query, with the Envoy labels they select by, is served by /stats/prometheus for an
 * equivalent configuration (listeners with the connection managers `ingress_http` and
 * `ingress_https`, a cluster with traffic). Only the list of names is kept
 * (test/fixtures/grafana-contour-envoy-metrics.json), not the dashboard.
 */

interface Wanted {
  name: string;
  histogram?: string;
  labels?: Record<string, string[]>;
}

const dashboard = JSON.parse(readFileSync(new URL('./fixtures/grafana-contour-envoy-metrics.json', import.meta.url), 'utf8')) as { metrics: Wanted[] };
let proxy: RunningProxy;
let upstream: Upstream;

before(async () => {
  upstream = await startUpstream('dashboard');
  const listener = (name: string) => ({
    name,
    address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
    filter_chains: [{ filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: { '@type': HCM_TYPE, stat_prefix: name, route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'default_app_80' } }] }] }, http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } }] } }] }],
  });
  proxy = await startProxy(
    { admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } }, static_resources: { listeners: [listener('ingress_http'), listener('ingress_https')], clusters: [staticCluster('default_app_80', upstream.port)] } },
    ['--concurrency', '1'],
  );
  for (let i = 0; i < 5; i++) await httpRequest(`http://127.0.0.1:${proxy.ports.get('ingress_http')}/`);
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
});

describe("Contour's Envoy dashboard", () => {
  it('finds every metric it queries in /stats/prometheus, with the labels it selects by', async () => {
    const body = (await httpRequest(`http://${proxy.admin}/stats/prometheus`)).body;
    const missing: string[] = [];
    for (const m of dashboard.metrics) {
      const lines = body.split('\n').filter((l) => l.startsWith(`${m.name}{`) || l.startsWith(`${m.name} `));
      if (!lines.length) {
        missing.push(m.name);
        continue;
      }
      if (m.histogram) assert.match(body, new RegExp(`^# TYPE ${m.histogram} histogram$`, 'm'), `${m.histogram} is a histogram`);
      for (const [label, values] of Object.entries(m.labels ?? {})) {
        for (const v of values) if (!lines.some((l) => l.includes(`${label}="${v}"`))) missing.push(`${m.name}{${label}="${v}"}`);
      }
    }
    assert.deepEqual(missing, [], `every name the dashboard queries (${dashboard.metrics.length}) is served`);
  });
});
