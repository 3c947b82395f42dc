import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { httpListener, staticCluster } from './helpers/bootstraps.js';
import { httpRequest, startProxy, statValue, stopAllProxies, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * Host health from the endpoints' configured health_status (EDS health), the load balancer over
 * healthy hosts, panic routing, and what /clusters and the stats show of it.
 */

let a: Upstream;
let b: Upstream;
let proxy: RunningProxy;

function cluster(name: string, statuses: [Upstream, string | undefined][], extra: object = {}): object {
  const c = staticCluster(name, 0) as any;
  c.load_assignment.endpoints[0].lb_endpoints = statuses.map(([u, status]) => ({
    endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: u.port } } },
    ...(status ? { health_status: status } : {}),
  }));
  return { ...c, ...extra };
}

before(async () => {
  a = await startUpstream('A');
  b = await startUpstream('B');
  const listeners = ['one_unhealthy', 'all_unhealthy', 'no_panic', 'draining', 'degraded'].map((name) => httpListener(name, 0, name));
  proxy = await startProxy(
    {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners,
        clusters: [
          cluster('one_unhealthy', [[a, undefined], [b, 'UNHEALTHY']]),
          cluster('all_unhealthy', [[a, 'UNHEALTHY'], [b, 'TIMEOUT']]),
          cluster('no_panic', [[a, 'UNHEALTHY'], [b, 'UNHEALTHY']], { common_lb_config: { healthy_panic_threshold: { value: 0 } } }),
          cluster('draining', [[a, 'HEALTHY'], [b, 'DRAINING']]),
          cluster('degraded', [[a, 'DEGRADED'], [b, 'UNHEALTHY']], { common_lb_config: { healthy_panic_threshold: { value: 0 } } }),
        ],
      },
    },
    ['--concurrency', '2'],
  );
});

after(async () => {
  await stopAllProxies();
  await a.close();
  await b.close();
});

async function answers(listener: string, n: number): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const r = await httpRequest(`http://127.0.0.1:${proxy.ports.get(listener)}/`);
    const key = r.status === 200 ? r.body : `${r.status} ${r.body}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  return seen;
}

const stat = (name: string) => statValue(proxy, name);

describe('EDS health and load balancing over healthy hosts', () => {
  it('sends nothing to a host configured UNHEALTHY, and /clusters says why', async () => {
    assert.deepEqual([...(await answers('one_unhealthy', 20))], [['A', 20]]);
    const text = (await httpRequest(`http://${proxy.admin}/clusters`)).body;
    assert.match(text, new RegExp(`^one_unhealthy::127\\.0\\.0\\.1:${a.port}::health_flags::healthy$`, 'm'));
    assert.match(text, new RegExp(`^one_unhealthy::127\\.0\\.0\\.1:${b.port}::health_flags::/failed_eds_health$`, 'm'));
    const json = JSON.parse((await httpRequest(`http://${proxy.admin}/clusters?format=json`)).body);
    const hosts = json.cluster_statuses.find((c: { name: string }) => c.name === 'one_unhealthy').host_statuses;
    assert.deepEqual(hosts.map((h: { health_status: unknown }) => h.health_status), [{ eds_health_status: 'HEALTHY' }, { eds_health_status: 'UNHEALTHY' }]);
    assert.equal(await stat('cluster.one_unhealthy.membership_total'), 2);
    assert.equal(await stat('cluster.one_unhealthy.membership_healthy'), 1);
    const dump = JSON.parse((await httpRequest(`http://${proxy.admin}/config_dump?include_eds`)).body);
    const eds = dump.configs.find((c: { '@type': string }) => c['@type'].endsWith('EndpointsConfigDump'));
    const lb = eds.static_endpoint_configs.find((c: { endpoint_config: { cluster_name: string } }) => c.endpoint_config.cluster_name === 'one_unhealthy').endpoint_config.endpoints[0].lb_endpoints;
    assert.deepEqual(lb.map((e: { health_status: string }) => e.health_status), ['HEALTHY', 'UNHEALTHY']);
  });

  it('routes to every host in panic (healthy share under healthy_panic_threshold, 50 % by default), counting it', async () => {
    const seen = await answers('all_unhealthy', 20);
    assert.ok((seen.get('A') ?? 0) > 0 && (seen.get('B') ?? 0) > 0, JSON.stringify([...seen]));
    assert.equal(await stat('cluster.all_unhealthy.lb_healthy_panic'), 20);
    assert.equal(await stat('cluster.all_unhealthy.membership_healthy'), 0);
  });

  it('answers 503 "no healthy upstream" when panic routing is off and no host is healthy', async () => {
    assert.deepEqual([...(await answers('no_panic', 3))], [['503 no healthy upstream', 3]]);
    assert.equal(await stat('cluster.no_panic.upstream_cx_none_healthy'), 3);
  });

  it('excludes a DRAINING host (/eds_status_draining), and uses a DEGRADED one only when none is healthy', async () => {
    assert.deepEqual([...(await answers('draining', 10))], [['A', 10]]);
    assert.equal(await stat('cluster.draining.membership_excluded'), 1);
    const text = (await httpRequest(`http://${proxy.admin}/clusters`)).body;
    assert.match(text, new RegExp(`^draining::127\\.0\\.0\\.1:${b.port}::health_flags::/eds_status_draining$`, 'm'));
    assert.match(text, new RegExp(`^degraded::127\\.0\\.0\\.1:${a.port}::health_flags::/degraded_eds_health$`, 'm'));
    assert.deepEqual([...(await answers('degraded', 10))], [['A', 10]]);
    assert.equal(await stat('cluster.degraded.membership_degraded'), 1);
  });
});
