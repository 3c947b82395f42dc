import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ServerCredentials } from '@grpc/grpc-js';
import type { JsonObject } from '../shared/config/proto-json.js';
import { routesListener, staticCluster } from './helpers/bootstraps.js';
import { makePki, UPSTREAM_TLS_TYPE } from './helpers/certs.js';
import { CLUSTER_URL, LISTENER_URL, TestControlPlane } from './helpers/control-plane.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * Clusters from a control plane over gRPC (state of the world): ADS and the per-type service,
 * ACK and NACK as Envoy sends them, the last good configuration kept while the control plane is
 * gone, and initial_fetch_timeout.
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

function cluster(name: string, port: number, extra: JsonObject = {}): JsonObject {
  return { '@type': CLUSTER_URL, ...staticCluster(name, port), ...extra };
}

function bootstrap(cpPort: number, cdsConfig: JsonObject, ads: boolean): JsonObject {
  const listener = routesListener('ingress', [{ match: { prefix: '/' }, route: { cluster: 'dynamic' } }]) as any;
  listener.filter_chains[0].filters[0].typed_config.route_config.validate_clusters = false;
  const api = { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }], set_node_on_first_message_only: true };
  return {
    node: { id: 'proxy-under-test', cluster: 'tests', metadata: { team: 'edge' } },
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: { listeners: [listener], clusters: [staticCluster('xds', cpPort)] },
    dynamic_resources: ads ? { ads_config: api, cds_config: { ads: {}, resource_api_version: 'V3', ...cdsConfig } } : { cds_config: { api_config_source: api, resource_api_version: 'V3', ...cdsConfig } },
  };
}

describe('clusters from a control plane over ADS', () => {
  let cp: TestControlPlane;
  let proxy: RunningProxy;
  let port: number;
  const body = async () => (await httpRequest(`http://127.0.0.1:${port}/`)).body;

  before(async () => {
    cp = await TestControlPlane.start();
    cp.set(CLUSTER_URL, '1', [cluster('dynamic', a.port)]);
    proxy = await startProxy(bootstrap(cp.port, {}, true), ['--concurrency', '2']);
    port = proxy.ports.get('ingress')!;
  });

  after(() => cp.stop());

  it('starts with the control plane\'s clusters, sends the node first, and ACKs with the version and nonce', async () => {
    assert.equal(await body(), 'A');
    const [first] = cp.requests;
    assert.deepEqual([first!.type_url, obj(first!.node).id, obj(first!.node).cluster, first!.version_info ?? '', first!.response_nonce ?? ''], [CLUSTER_URL, 'proxy-under-test', 'tests', '', '']);
    assert.deepEqual(obj(obj(first!.node).metadata), { team: 'edge' });
    const ack = await cp.waitForRequest('the ACK', (rq) => rq.response_nonce === '1');
    assert.deepEqual([ack.version_info, ack.error_detail, ack.node], ['1', undefined, undefined], 'the node only on the first request');
    assert.match((await httpRequest(`http://${proxy.admin}/clusters`)).body, /^dynamic::added_via_api::true$/m);
    assert.equal(await statValue(proxy, 'control_plane.connected_state'), 1);
    // As Envoy's gRPC subscriptions: an attempt at start, and one per response.
    assert.deepEqual([await statValue(proxy, 'cluster_manager.cds.update_attempt'), await statValue(proxy, 'cluster_manager.cds.update_success')], [2, 1]);
  });

  it('applies an update, and NACKs a refused cluster with the last good version and error_detail while its valid sibling applies', async () => {
    cp.set(CLUSTER_URL, '2', [cluster('dynamic', b.port)]);
    await waitFor('version 2 to serve', async () => ((await body()) === 'B' ? true : undefined));
    const from = cp.requests.length;
    cp.set(CLUSTER_URL, '3', [cluster('dynamic', a.port, { lb_policy: 'CLUSTER_PROVIDED' }), cluster('second', a.port)]);
    const nonce = cp.lastNonce;
    const nack = await cp.waitForRequest('the NACK', (rq) => rq.response_nonce === nonce, from);
    assert.equal(nack.version_info, '2', 'the last version accepted');
    assert.equal(obj(nack.error_detail).code, 13);
    assert.match(String(obj(nack.error_detail).message), /cluster 'dynamic': lb_policy: CLUSTER_PROVIDED is not supported/);
    assert.equal(await body(), 'B', 'the refused version did not replace the served one');
    assert.match((await httpRequest(`http://${proxy.admin}/clusters`)).body, /^second::added_via_api::true$/m);
    assert.equal(await statValue(proxy, 'cluster_manager.cds.update_rejected'), 1);
  });

  it("refuses a response as a whole, as Envoy's decoder does, when a cluster breaks its message's rules (connect_timeout: 0s) or is of another type: NACKed naming each, nothing of it applied", async () => {
    const added = await statValue(proxy, 'cluster_manager.cluster_added');
    const from = cp.requests.length;
    cp.set(CLUSTER_URL, '4', [cluster('dynamic', a.port, { connect_timeout: '0s' }), cluster('second', a.port), cluster('third', a.port), { '@type': LISTENER_URL, name: 'stray' }]);
    const nonce = cp.lastNonce;
    const nack = await cp.waitForRequest('the NACK', (rq) => rq.response_nonce === nonce, from);
    assert.equal(nack.version_info, '2', 'the last version accepted');
    assert.equal(obj(nack.error_detail).code, 13);
    const detail = String(obj(nack.error_detail).message);
    assert.match(detail, /cluster 'dynamic': connect_timeout: value must be greater than 0s/);
    assert.match(detail, /cluster 'stray': a resource of type type\.googleapis\.com\/envoy\.config\.listener\.v3\.Listener where envoy\.config\.cluster\.v3\.Cluster was expected/);
    assert.doesNotMatch(detail, /'third'|'second'/, 'only the resources at fault are named');
    assert.equal(await statValue(proxy, 'cluster_manager.cds.update_rejected'), 2);
    assert.equal(await body(), 'B');
    assert.doesNotMatch((await httpRequest(`http://${proxy.admin}/clusters`)).body, /^third::/m, 'the valid new cluster was not added either');
    assert.equal(await statValue(proxy, 'cluster_manager.cluster_added'), added, 'nothing added');
  });

  it('keeps serving the last good configuration while the control plane is gone, and asks again with it when it is back', async () => {
    cp.stop();
    await waitFor('the stream to be seen lost', async () => ((await statValue(proxy, 'control_plane.connected_state')) === 0 ? true : undefined));
    assert.equal(await body(), 'B');
    const from = cp.requests.length;
    await cp.listen();
    const again = await cp.waitForRequest('the proxy to come back', () => true, from);
    assert.deepEqual([again.type_url, again.version_info, again.response_nonce ?? '', obj(again.node).id], [CLUSTER_URL, '2', '', 'proxy-under-test'], 'a new stream: the node again, the last accepted version, no nonce');
    await waitFor('connected again', async () => ((await statValue(proxy, 'control_plane.connected_state')) === 1 ? true : undefined));
  });
});

describe('a control plane behind TLS', () => {
  it("connects over the xDS cluster's TLS transport socket: its CA and SAN matchers verify the control plane, its certificate answers the control plane's demand for one", async () => {
    const pki = makePki();
    const server = pki.leaf('control-plane', { sans: ['DNS:xds.test'], serial: 'c1' });
    const client = pki.leaf('proxy', { sans: ['DNS:proxy.test'], serial: 'c2' });
    // The control plane demands a client certificate signed by the CA (mutual TLS).
    const credentials = ServerCredentials.createSsl(Buffer.from(pki.ca), [{ private_key: Buffer.from(server.key), cert_chain: Buffer.from(server.cert) }], true);
    const cp = await TestControlPlane.start(0, credentials);
    try {
      cp.set(CLUSTER_URL, '1', [cluster('dynamic', a.port)]);
      const config = bootstrap(cp.port, {}, true) as any;
      const xds = config.static_resources.clusters.find((c: JsonObject) => c.name === 'xds');
      xds.transport_socket = {
        name: 'envoy.transport_sockets.tls',
        typed_config: {
          '@type': UPSTREAM_TLS_TYPE,
          sni: 'xds.test',
          common_tls_context: {
            tls_certificates: [{ certificate_chain: { filename: client.certPath }, private_key: { filename: client.keyPath } }],
            validation_context: { trusted_ca: { filename: pki.caPath }, match_typed_subject_alt_names: [{ san_type: 'DNS', matcher: { exact: 'xds.test' } }] },
          },
        },
      };
      const proxy = await startProxy(config, ['--concurrency', '1']);
      assert.equal((await httpRequest(`http://127.0.0.1:${proxy.ports.get('ingress')}/`)).body, 'A');
      assert.equal(await statValue(proxy, 'cluster.xds.ssl.handshake'), 1);
      await proxy.stop();
    } finally {
      cp.stop();
      pki.remove();
    }
  });
});

describe('clusters from the per-type CDS service', () => {
  it('starts after initial_fetch_timeout when the control plane has nothing to say, then applies what it sends', async () => {
    const cp = await TestControlPlane.start();
    try {
      const started = Date.now();
      const proxy = await startProxy(bootstrap(cp.port, { initial_fetch_timeout: '1s' }, false), ['--concurrency', '1']);
      assert.ok(Date.now() - started >= 1000, 'not LIVE before the initial fetch timed out');
      assert.equal(await statValue(proxy, 'cluster_manager.cds.init_fetch_timeout'), 1);
      assert.equal((await httpRequest(`http://127.0.0.1:${proxy.ports.get('ingress')}/`)).status, 503, 'no cluster yet');
      cp.set(CLUSTER_URL, 'late', [cluster('dynamic', a.port)]);
      await waitFor('the late cluster to serve', async () => ((await httpRequest(`http://127.0.0.1:${proxy.ports.get('ingress')}/`)).body === 'A' ? true : undefined));
      assert.equal(cp.requests[0]!.type_url, CLUSTER_URL);
      // A per-type stream's figures are the subscription's, as Envoy scopes them; the root's belong to ADS.
      assert.equal(await statValue(proxy, 'cluster_manager.cds.control_plane.connected_state'), 1);
      assert.ok(Number.isNaN(await statValue(proxy, 'control_plane.connected_state')));
      await proxy.stop();
    } finally {
      cp.stop();
    }
  });
});

function obj(v: unknown): JsonObject {
  return (v ?? {}) as JsonObject;
}

describe('a hot restart while connected to a control plane', () => {
  it('gives the new epoch a stream of its own (two during the overlap, as with Envoy) and its clusters, while the old one serves on', async () => {
    const cp = await TestControlPlane.start();
    try {
      cp.set(CLUSTER_URL, '1', [cluster('dynamic', a.port)]);
      const common = ['--concurrency', '1', '--socket-path', `@proxy_xds_restart_test_${process.pid}`];
      const e0 = await startProxy(bootstrap(cp.port, {}, true), common);
      const port = e0.ports.get('ingress')!;
      assert.equal((await httpRequest(`http://127.0.0.1:${port}/`)).body, 'A');
      const e1 = await startProxy(bootstrap(cp.port, {}, true), ['--base-id', String(e0.baseId), ...common, '--restart-epoch', '1', '--parent-shutdown-time-s', '30']);
      assert.equal(cp.openStreams, 2, 'both epochs are connected');
      assert.equal(cp.requests.filter((rq) => obj(rq.node).id === 'proxy-under-test' && (rq.response_nonce ?? '') === '').length, 2, 'each epoch opened its own stream');
      assert.equal(e1.ports.get('ingress'), port);
      assert.equal((await httpRequest(`http://127.0.0.1:${port}/`)).body, 'A', 'the new epoch serves the control plane\'s cluster');
      assert.match((await httpRequest(`http://${e1.admin}/clusters`)).body, /^dynamic::added_via_api::true$/m);
      await e1.stop();
    } finally {
      cp.stop();
    }
  });
});

describe('endpoints from a control plane (EDS over ADS)', () => {
  const ENDPOINTS_URL = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';
  const assignment = (port: number, health?: string) => ({
    '@type': ENDPOINTS_URL,
    cluster_name: 'dynamic-endpoints',
    endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } }, ...(health ? { health_status: health } : {}) }] }],
  });

  it('asks for an EDS cluster\'s endpoints by service name after CDS, and follows each new assignment', async () => {
    const cp = await TestControlPlane.start();
    try {
      cp.set(CLUSTER_URL, '1', [{ '@type': CLUSTER_URL, name: 'dynamic', type: 'EDS', connect_timeout: '1s', eds_cluster_config: { service_name: 'dynamic-endpoints', eds_config: { ads: {}, resource_api_version: 'V3' } } }]);
      cp.set(ENDPOINTS_URL, '1', [assignment(a.port)]);
      const proxy = await startProxy(bootstrap(cp.port, {}, true), ['--concurrency', '2']);
      const url = `http://127.0.0.1:${proxy.ports.get('ingress')}/`;
      assert.equal((await httpRequest(url)).body, 'A', 'the workers started with the endpoints');
      const types = cp.requests.map((rq) => rq.type_url);
      assert.ok(types.indexOf(ENDPOINTS_URL) > types.indexOf(CLUSTER_URL), 'CDS before EDS');
      const eds = cp.requests.find((rq) => rq.type_url === ENDPOINTS_URL)!;
      assert.deepEqual(eds.resource_names, ['dynamic-endpoints']);

      cp.set(ENDPOINTS_URL, '2', [assignment(b.port)]);
      await waitFor('the new endpoints to serve', async () => ((await httpRequest(url)).body === 'B' ? true : undefined));
      cp.set(ENDPOINTS_URL, '3', [assignment(b.port, 'UNHEALTHY')]);
      await waitFor('the EDS health status in /clusters', async () => (/::health_flags::\/failed_eds_health$/m.test((await httpRequest(`http://${proxy.admin}/clusters`)).body) ? true : undefined));
      assert.equal(await statValue(proxy, 'cluster.dynamic.update_success'), 3);

      // A weight of 0 breaks LbEndpoint's rule (at least 1): the response is refused whole and NACKed.
      const from = cp.requests.length;
      const zero = assignment(a.port) as any;
      zero.endpoints[0].lb_endpoints[0].load_balancing_weight = 0;
      cp.set(ENDPOINTS_URL, '4', [zero]);
      const nonce = cp.lastNonce;
      const nack = await cp.waitForRequest('the EDS NACK', (rq) => rq.type_url === ENDPOINTS_URL && rq.response_nonce === nonce, from);
      assert.match(String(obj(nack.error_detail).message), /endpoints 'dynamic-endpoints': endpoints\[0\]\.lb_endpoints\[0\]\.load_balancing_weight: value must be greater than or equal to 1/);
      assert.equal(nack.version_info, '3');
      assert.equal(await statValue(proxy, 'cluster.dynamic.update_rejected'), 1, "counted against the cluster's subscription");
      assert.match((await httpRequest(`http://${proxy.admin}/clusters`)).body, /::health_flags::\/failed_eds_health$/m, 'version 3 still holds');
      await proxy.stop();
    } finally {
      cp.stop();
    }
  });
});

describe('route tables from a control plane (RDS over ADS)', () => {
  const ROUTES_URL = 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration';
  const routes = (cluster: string) => ({ '@type': ROUTES_URL, name: 'ingress-routes', virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster } }] }] });

  it('routes by the named route configuration, follows each new version, and shows it in /config_dump', async () => {
    const cp = await TestControlPlane.start();
    try {
      cp.set(ROUTES_URL, '1', [routes('to-a')]);
      const listener = routesListener('ingress', []) as any;
      const hcm = listener.filter_chains[0].filters[0].typed_config;
      delete hcm.route_config;
      hcm.rds = { route_config_name: 'ingress-routes', config_source: { ads: {}, resource_api_version: 'V3' } };
      const proxy = await startProxy(
        {
          node: { id: 'proxy-under-test', cluster: 'tests' },
          admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
          static_resources: { listeners: [listener], clusters: [staticCluster('xds', cp.port), staticCluster('to-a', a.port), staticCluster('to-b', b.port)] },
          dynamic_resources: { ads_config: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] } },
        },
        ['--concurrency', '2'],
      );
      const url = `http://127.0.0.1:${proxy.ports.get('ingress')}/`;
      assert.equal((await httpRequest(url)).body, 'A', 'the workers started with the route table');
      assert.deepEqual(cp.requests.find((rq) => rq.type_url === ROUTES_URL)?.resource_names, ['ingress-routes']);
      cp.set(ROUTES_URL, '2', [routes('to-b')]);
      await waitFor('version 2 to route', async () => ((await httpRequest(url)).body === 'B' ? true : undefined));
      assert.equal(await statValue(proxy, 'http.ingress.rds.ingress-routes.update_success'), 2);

      // A virtual host without domains breaks its rule (at least one): refused whole, NACKed, version 2 routes on.
      const from = cp.requests.length;
      cp.set(ROUTES_URL, '3', [{ ...routes('to-a'), virtual_hosts: [{ name: 'all', domains: [], routes: [{ match: { prefix: '/' }, route: { cluster: 'to-a' } }] }] }]);
      const nonce = cp.lastNonce;
      const nack = await cp.waitForRequest('the RDS NACK', (rq) => rq.type_url === ROUTES_URL && rq.response_nonce === nonce, from);
      assert.match(String(obj(nack.error_detail).message), /route configuration 'ingress-routes': virtual_hosts\[0\]\.domains: value must contain at least 1 item/);
      assert.equal(await statValue(proxy, 'http.ingress.rds.ingress-routes.update_rejected'), 1);
      assert.equal((await httpRequest(url)).body, 'B');
      const dump = JSON.parse((await httpRequest(`http://${proxy.admin}/config_dump?resource=dynamic_route_configs`)).body);
      assert.deepEqual(dump.configs.map((c: { version_info: string; route_config: { name: string } }) => [c.version_info, c.route_config.name]), [['2', 'ingress-routes']]);
      await proxy.stop();
    } finally {
      cp.stop();
    }
  });
});

describe('clusters over incremental xDS (DELTA_GRPC, ADS)', () => {
  it('applies changes and removals, ACKs and NACKs by nonce, and says what it holds on a new stream', async () => {
    const cp = await TestControlPlane.start();
    try {
      cp.set(CLUSTER_URL, '1', [cluster('dynamic', a.port), cluster('second', a.port)]);
      const config = bootstrap(cp.port, {}, true) as any;
      config.dynamic_resources.ads_config.api_type = 'DELTA_GRPC';
      const proxy = await startProxy(config, ['--concurrency', '1']);
      const url = `http://127.0.0.1:${proxy.ports.get('ingress')}/`;
      assert.equal((await httpRequest(url)).body, 'A');
      const [first] = cp.requests;
      assert.deepEqual([first!.type_url, obj(first!.node).id, first!.resource_names_subscribe], [CLUSTER_URL, 'proxy-under-test', undefined], 'a wildcard subscription');
      const ack = await cp.waitForRequest('the ACK', (rq) => rq.response_nonce === '1');
      assert.deepEqual([ack.error_detail, ack.version_info], [undefined, undefined]);

      cp.set(CLUSTER_URL, '2', [cluster('dynamic', b.port)]);
      await waitFor('the change to serve', async () => ((await httpRequest(url)).body === 'B' ? true : undefined));
      await waitFor('the removal', async () => ((await statValue(proxy, 'cluster_manager.cluster_removed')) === 1 ? true : undefined));

      const from = cp.requests.length;
      cp.set(CLUSTER_URL, '3', [cluster('dynamic', a.port, { lb_policy: 'CLUSTER_PROVIDED' })]);
      const nonce = cp.lastNonce;
      const nack = await cp.waitForRequest('the NACK', (rq) => rq.response_nonce === nonce, from);
      assert.match(String(obj(nack.error_detail).message), /lb_policy: CLUSTER_PROVIDED is not supported/);
      assert.equal((await httpRequest(url)).body, 'B');

      // Refused as a whole (a rule broken): the new cluster beside it is not held either.
      const wholeFrom = cp.requests.length;
      cp.set(CLUSTER_URL, '4', [cluster('dynamic', a.port, { connect_timeout: '0s' }), cluster('third', a.port)]);
      const wholeNonce = cp.lastNonce;
      const wholeNack = await cp.waitForRequest('the NACK of the whole', (rq) => rq.response_nonce === wholeNonce, wholeFrom);
      assert.match(String(obj(wholeNack.error_detail).message), /cluster 'dynamic': connect_timeout: value must be greater than 0s/);
      assert.doesNotMatch((await httpRequest(`http://${proxy.admin}/clusters`)).body, /^third::/m);

      cp.stop();
      const again = cp.requests.length;
      await cp.listen();
      const hello = await cp.waitForRequest('a new stream', () => true, again);
      assert.deepEqual(obj(hello.initial_resource_versions), { dynamic: '2' }, 'the versions held (neither the refused version 3 nor anything of the response refused whole), sent on the new stream');
      await proxy.stop();
    } finally {
      cp.stop();
    }
  });
});

describe('rate_limit_settings', () => {
  it('holds requests past the token bucket and sends them in order as tokens come (rate_limit_enforced)', async () => {
    const cp = await TestControlPlane.start();
    try {
      let arrivals = 0;
      cp.onRequest = () => arrivals++;
      cp.set(CLUSTER_URL, '1', [cluster('dynamic', a.port)]);
      const config = bootstrap(cp.port, {}, true) as any;
      // One token, four a second: every request after the first waits for its token.
      config.dynamic_resources.ads_config.rate_limit_settings = { max_tokens: 1, fill_rate: 4 };
      const proxy = await startProxy(config, ['--concurrency', '1']);
      assert.equal((await httpRequest(`http://127.0.0.1:${proxy.ports.get('ingress')}/`)).body, 'A');
      await cp.waitForRequest('the ACK', (rq) => rq.response_nonce === '1');
      // The ACK had to wait for the next token: the proxy counts the request it held. (How long it
      // waited is not asserted: the control plane sees arrival times skewed by the stream's setup.)
      assert.ok((await statValue(proxy, 'control_plane.rate_limit_enforced')) >= 1);
      assert.ok(arrivals >= 2, 'the subscription, then its ACK');
      assert.equal(await statValue(proxy, 'control_plane.pending_requests'), 0);
      await proxy.stop();
    } finally {
      cp.stop();
    }
  });
});
