import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { JsonObject } from '../shared/config/proto-json.js';
import { hcmFilter, staticCluster } from './helpers/bootstraps.js';
import { CLUSTER_URL, LISTENER_URL, ROUTE_URL, TestControlPlane } from './helpers/control-plane.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * Listeners from a control plane: LDS after CDS and RDS after LDS (Envoy's order), listeners
 * whose route tables come by RDS, NACKs that keep the valid siblings, removal by leaving a
 * listener out (state of the world) or naming it removed (delta), and a hot restart in which the
 * new epoch takes the dynamic listener's socket from the old one.
 */

let a: Upstream;
let b: Upstream;

before(async () => {
  a = await startUpstream('A');
  b = await startUpstream('B');
});

after(async () => {
  await stopAllProxies();
  await a.close();
  await b.close();
});

const api = (type: 'GRPC' | 'DELTA_GRPC') => ({ api_type: type, transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] });

/** A listener on 127.0.0.1:0 whose connection manager takes route table `routes` by RDS over ADS (or an inline table to `cluster`). */
function listener(name: string, via: { routes: string } | { cluster: string }): JsonObject {
  const filter = hcmFilter(name, 'cluster' in via ? [{ match: { prefix: '/' }, route: { cluster: via.cluster } }] : []) as any;
  if ('routes' in via) {
    delete filter.typed_config.route_config;
    filter.typed_config.rds = { route_config_name: via.routes, config_source: { ads: {}, resource_api_version: 'V3' } };
  }
  return { '@type': LISTENER_URL, name, address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [filter] }] };
}
const routes = (name: string, cluster: string): JsonObject => ({ '@type': ROUTE_URL, name, virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster } }] }] });
const cluster = (name: string, port: number): JsonObject => ({ '@type': CLUSTER_URL, ...staticCluster(name, port) });

function bootstrap(cpPort: number, type: 'GRPC' | 'DELTA_GRPC'): JsonObject {
  return {
    node: { id: 'proxy-under-test', cluster: 'tests' },
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: { clusters: [staticCluster('xds', cpPort)] },
    dynamic_resources: { ads_config: api(type), cds_config: { ads: {}, resource_api_version: 'V3' }, lds_config: { ads: {}, resource_api_version: 'V3' } },
  };
}

async function portOf(proxy: RunningProxy, name: string): Promise<number | undefined> {
  const json = JSON.parse((await httpRequest(`http://${proxy.admin}/listeners?format=json`)).body) as { listener_statuses: { name: string; local_address: { socket_address: { port_value: number } } }[] };
  return json.listener_statuses.find((l) => l.name === name)?.local_address.socket_address.port_value;
}
const waitForPort = (proxy: RunningProxy, name: string) => waitFor(`listener ${name}`, () => portOf(proxy, name));
const get = async (port: number) => (await httpRequest(`http://127.0.0.1:${port}/`)).body;
const refuses = (port: number) =>
  new Promise<true | undefined>((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.on('connect', () => {
      s.destroy();
      resolve(undefined);
    });
    s.on('error', () => resolve(true));
  });

describe('listeners from a control plane over ADS (state of the world)', () => {
  it('subscribes CDS, then LDS, then RDS; serves, follows, NACKs with siblings applied, and removes', async () => {
    const cp = await TestControlPlane.start();
    try {
      cp.set(CLUSTER_URL, 'c1', [cluster('a', a.port), cluster('b', b.port)]);
      cp.set(LISTENER_URL, 'l1', [listener('edge', { routes: 'edge-routes' })]);
      cp.set(ROUTE_URL, 'r1', [routes('edge-routes', 'a')]);
      const proxy = await startProxy(bootstrap(cp.port, 'GRPC'), ['--concurrency', '2', '--drain-time-s', '1']);
      const edge = (await waitForPort(proxy, 'edge'))!;
      assert.equal(await get(edge), 'A', 'the workers started with the listener and its route table');
      const order = [...new Set(cp.requests.map((rq) => rq.type_url))];
      assert.deepEqual(order, [CLUSTER_URL, LISTENER_URL, ROUTE_URL], 'CDS, then LDS, then RDS');
      assert.deepEqual(cp.requests.find((rq) => rq.type_url === ROUTE_URL)?.resource_names, ['edge-routes']);

      // A new listener with a route table of its own: RDS asks for both names now.
      cp.set(ROUTE_URL, 'r2', [routes('edge-routes', 'a'), routes('side-routes', 'b')]);
      cp.set(LISTENER_URL, 'l2', [listener('edge', { routes: 'edge-routes' }), listener('side', { routes: 'side-routes' })]);
      const side = (await waitForPort(proxy, 'side'))!;
      await waitFor('side to route by its table', async () => ((await get(side)) === 'B' ? true : undefined));
      await cp.waitForRequest('RDS for both names', (rq) => rq.type_url === ROUTE_URL && JSON.stringify(rq.resource_names) === JSON.stringify(['edge-routes', 'side-routes']));

      // A refused listener: NACK with the last good version, the valid sibling applies.
      const from = cp.requests.length;
      cp.set(LISTENER_URL, 'l3', [listener('edge', { routes: 'edge-routes' }), listener('side', { routes: 'side-routes' }), listener('bad', { cluster: 'nowhere' }), listener('third', { cluster: 'a' })]);
      const nonce = cp.lastNonce;
      const nack = await cp.waitForRequest('the NACK', (rq) => rq.type_url === LISTENER_URL && rq.response_nonce === nonce, from);
      assert.equal(nack.version_info, 'l2');
      assert.match(String((nack.error_detail as JsonObject).message), /listener 'bad': .*unknown cluster 'nowhere'/);
      const third = (await waitForPort(proxy, 'third'))!;
      assert.equal(await get(third), 'A');

      // Left out of the next state of the world: removed.
      cp.set(LISTENER_URL, 'l4', [listener('edge', { routes: 'edge-routes' })]);
      await waitFor('side and third to stop accepting', async () => ((await refuses(side)) && (await refuses(third)) ? true : undefined));
      assert.equal(await statValue(proxy, 'listener_manager.listener_removed'), 2);
      assert.equal(await get(edge), 'A');
      await proxy.stop();
    } finally {
      cp.stop();
    }
  });
});

describe('listener warming', () => {
  it('a new listener waits for its route table (warming_state, /init_dump, total_listeners_warming), then serves; or serves without it after the initial fetch timeout', async () => {
    const cp = await TestControlPlane.start();
    try {
      cp.set(CLUSTER_URL, '1', [cluster('a', a.port)]);
      cp.set(LISTENER_URL, '1', [listener('first', { cluster: 'a' })]);
      cp.set(ROUTE_URL, '1', []);
      const proxy = await startProxy(bootstrap(cp.port, 'GRPC'), ['--concurrency', '1', '--drain-time-s', '1']);
      await waitForPort(proxy, 'first');

      cp.set(LISTENER_URL, '2', [listener('first', { cluster: 'a' }), listener('late', { routes: 'late-routes' })]);
      await waitFor('late to warm', async () => ((await statValue(proxy, 'listener_manager.total_listeners_warming')) === 1 ? true : undefined));
      assert.equal(await portOf(proxy, 'late'), undefined, 'a warming listener is not listed');
      const dump = JSON.parse((await httpRequest(`http://${proxy.admin}/config_dump?resource=dynamic_listeners`)).body).configs as any[];
      const late = dump.find((d) => d.name === 'late');
      assert.equal(late.warming_state.version_info, '2');
      assert.equal(late.active_state, undefined);
      assert.deepEqual(JSON.parse((await httpRequest(`http://${proxy.admin}/init_dump?mask=listener`)).body), {
        unready_targets_dumps: [{ name: 'init manager Listener-local-init-manager late', target_names: ['RdsRouteConfigSubscription late-routes'] }],
      });
      await cp.waitForRequest('RDS for late-routes', (rq) => rq.type_url === ROUTE_URL && JSON.stringify(rq.resource_names) === JSON.stringify(['late-routes']));

      cp.set(ROUTE_URL, '2', [routes('late-routes', 'a')]);
      const port = (await waitForPort(proxy, 'late'))!;
      assert.equal(await get(port), 'A', 'warm: it serves with its table');
      assert.equal(await statValue(proxy, 'listener_manager.total_listeners_warming'), 0);
      assert.deepEqual(JSON.parse((await httpRequest(`http://${proxy.admin}/init_dump`)).body), {});

      // A table that never comes: after its source's initial_fetch_timeout the listener serves without it (404).
      const never = listener('never', { routes: 'never-routes' }) as any;
      never.filter_chains[0].filters[0].typed_config.rds.config_source.initial_fetch_timeout = '0.5s';
      cp.set(LISTENER_URL, '3', [listener('first', { cluster: 'a' }), listener('late', { routes: 'late-routes' }), never]);
      const neverPort = (await waitForPort(proxy, 'never'))!;
      assert.equal((await httpRequest(`http://127.0.0.1:${neverPort}/`)).status, 404);
      assert.match(proxy.output(), /listener 'never' has waited 500 ms for route configuration\(s\) 'never-routes': serving without them/);
      await proxy.stop();
    } finally {
      cp.stop();
    }
  });
});

describe('listeners over incremental xDS (DELTA_GRPC) from the per-type listener service', () => {
  it('adds a listener, and removes it when the control plane names it removed', async () => {
    const cp = await TestControlPlane.start();
    try {
      cp.set(CLUSTER_URL, '1', [cluster('a', a.port)]);
      cp.set(LISTENER_URL, '1', [listener('one', { cluster: 'a' }), listener('two', { cluster: 'a' })]);
      const config = bootstrap(cp.port, 'DELTA_GRPC') as any;
      config.dynamic_resources.lds_config = { api_config_source: api('DELTA_GRPC'), resource_api_version: 'V3' };
      const proxy = await startProxy(config, ['--concurrency', '1', '--drain-time-s', '1']);
      const two = (await waitForPort(proxy, 'two'))!;
      assert.equal(await get(two), 'A');
      cp.set(LISTENER_URL, '2', [listener('one', { cluster: 'a' })]);
      await waitFor('two to stop accepting', () => refuses(two));
      assert.equal(await portOf(proxy, 'two'), undefined);
      assert.equal(await get((await portOf(proxy, 'one'))!), 'A');
      const lds = cp.requests.find((rq) => rq.type_url === LISTENER_URL);
      assert.ok(lds && lds.node !== undefined, 'the listener service has a stream of its own (its first request carries the node)');
      await proxy.stop();
    } finally {
      cp.stop();
    }
  });
});

describe('a hot restart with listeners from a control plane', () => {
  it('the new epoch takes the dynamic listener\'s socket from the old one: the same port serves throughout', async () => {
    const cp = await TestControlPlane.start();
    try {
      cp.set(CLUSTER_URL, '1', [cluster('a', a.port)]);
      cp.set(LISTENER_URL, '1', [listener('edge', { cluster: 'a' })]);
      const common = ['--concurrency', '1', '--drain-time-s', '1'];
      const e0 = await startProxy(bootstrap(cp.port, 'GRPC'), common);
      const port = (await waitForPort(e0, 'edge'))!;
      assert.equal(await get(port), 'A');
      const e1 = await startProxy(bootstrap(cp.port, 'GRPC'), ['--base-id', String(e0.baseId), ...common, '--restart-epoch', '1', '--parent-shutdown-time-s', '30']);
      assert.equal(await portOf(e1, 'edge'), port, 'inherited from epoch 0, though configured as port 0');
      assert.match(e1.output(), /lds: listener 'edge' added on 127\.0\.0\.1:\d+/);
      // Epoch 0 stopped accepting when epoch 1 went LIVE: the port is epoch 1's now.
      assert.equal(await get(port), 'A');
      await e1.stop();
      await e0.stop();
    } finally {
      cp.stop();
    }
  });
});
