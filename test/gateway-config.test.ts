import assert from 'node:assert/strict';
import { renameSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TLSSocket } from 'node:tls';
import type { JsonObject } from '../shared/config/proto-json.js';
import { staticCluster } from './helpers/bootstraps.js';
import { DOWNSTREAM_TLS_TYPE, makePki, type Leaf, type TestPki } from './helpers/certs.js';
import { tempDir } from './helpers/cli.js';
import { CLUSTER_URL, LISTENER_URL, ROUTE_URL, SECRET_URL, TestControlPlane } from './helpers/control-plane.js';
import { httpRequest, startProxy, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';

/**
 * A configuration of the shape a gateway control plane (Envoy Gateway's translator) puts on every
 * HTTP listener and cluster: path normalization, the server header passed through, the router's
 * suppress_envoy_headers, ports ignored in host matching, a bounded accept, a filter disabled on
 * the connection manager and enabled per route, a typed load_balancing_policy and
 * ignore_health_on_host_removal; an HTTPS listener whose certificate comes by SDS and is rotated
 * while it serves. Served from a bootstrap (the secret from a file), then from a control plane over
 * ADS (LDS, RDS, CDS, EDS, SDS), with the same answers, under Envoy Gateway's bootstrap overload
 * manager and beside its readiness listener.
 */

const HCM = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const ENDPOINTS_URL = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';
const FILTER_CONFIG = 'type.googleapis.com/envoy.config.route.v3.FilterConfig';
const CLUSTER = 'httproute/default/backend/rule/0';
const ROUTES = 'default/eg/http';
const TEAPOT = { '@type': 'type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault', abort: { http_status: 418, percentage: { numerator: 100 } } };

let upstream: Server;
let upstreamPort = 0;

function hcm(routeSource: JsonObject): JsonObject {
  return {
    name: 'envoy.filters.network.http_connection_manager',
    typed_config: {
      '@type': HCM,
      stat_prefix: 'http-10080',
      normalize_path: true,
      merge_slashes: true,
      path_with_escaped_slashes_action: 'UNESCAPE_AND_REDIRECT',
      server_header_transformation: 'PASS_THROUGH',
      use_remote_address: true,
      common_http_protocol_options: { headers_with_underscores_action: 'REJECT_REQUEST' },
      ...routeSource,
      http_filters: [
        { name: 'envoy.filters.http.fault/teapot', disabled: true, typed_config: TEAPOT },
        { name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router', suppress_envoy_headers: true } },
      ],
    },
  };
}

const routeConfig: JsonObject = {
  name: ROUTES,
  ignore_port_in_host_matching: true,
  virtual_hosts: [{
    name: 'default/eg/http/www_example_com',
    domains: ['www.example.com'],
    routes: [
      { name: 'httproute/default/teapot/rule/0/match/0', match: { prefix: '/teapot' }, route: { cluster: CLUSTER }, typed_per_filter_config: { 'envoy.filters.http.fault/teapot': { '@type': FILTER_CONFIG, config: {} } } },
      { name: 'httproute/default/backend/rule/0/match/0', match: { prefix: '/' }, route: { cluster: CLUSTER } },
    ],
  }],
};

const SECRET = 'default/eg-https';

/**
 * Envoy Gateway's bootstrap overload manager: at most 50000 connections across listeners, and a
 * heap monitor shrinking the heap at 95 % and refusing requests at 98 % (its MaxHeapSizeBytes).
 */
const gatewayOverload: JsonObject = {
  refresh_interval: '0.25s',
  resource_monitors: [
    { name: 'envoy.resource_monitors.global_downstream_max_connections', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.resource_monitors.downstream_connections.v3.DownstreamConnectionsConfig', max_active_downstream_connections: 50000 } },
    { name: 'envoy.resource_monitors.fixed_heap', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.resource_monitors.fixed_heap.v3.FixedHeapConfig', max_heap_size_bytes: 1073741824 } },
  ],
  actions: [
    { name: 'envoy.overload_actions.shrink_heap', triggers: [{ name: 'envoy.resource_monitors.fixed_heap', threshold: { value: 0.95 } }] },
    { name: 'envoy.overload_actions.stop_accepting_requests', triggers: [{ name: 'envoy.resource_monitors.fixed_heap', threshold: { value: 0.98 } }] },
  ],
};

/** Envoy Gateway's readiness listener, which bypasses the overload manager. */
const readyListener: JsonObject = {
  name: 'envoy-gateway-proxy-ready-0.0.0.0-19001',
  address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
  bypass_overload_manager: true,
  filter_chains: [{
    filters: [{
      name: 'envoy.filters.network.http_connection_manager',
      typed_config: {
        '@type': HCM,
        stat_prefix: 'eg-ready-http',
        route_config: { name: 'local_route', virtual_hosts: [{ name: 'prometheus_stats', domains: ['*'], routes: [{ match: { prefix: '/ready' }, direct_response: { status: 200, body: { inline_string: 'ready' } } }] }] },
        http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } }],
      },
    }],
  }],
};

/** The HTTPS listener of the same gateway: its certificate is an SDS secret (Envoy Gateway's ADS, or a file). */
const httpsListener = (routeSource: JsonObject, sdsConfig: JsonObject): JsonObject => ({
  name: 'default/eg/https',
  address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
  filter_chains: [{
    filters: [hcm(routeSource)],
    transport_socket: { name: 'envoy.transport_sockets.tls', typed_config: { '@type': DOWNSTREAM_TLS_TYPE, common_tls_context: { alpn_protocols: ['http/1.1'], tls_certificate_sds_secret_configs: [{ name: SECRET, sds_config: sdsConfig }] } } },
  }],
});

const secret = (leaf: Leaf): JsonObject => ({ '@type': SECRET_URL, name: SECRET, tls_certificate: { certificate_chain: { inline_string: leaf.cert }, private_key: { inline_string: leaf.key } } });

let pki: TestPki;
let firstCert: Leaf;
let rotatedCert: Leaf;

/** An HTTPS request to the gateway: its status and the serial number of the certificate it presented. */
function httpsGet(port: number, path: string): Promise<{ status: number; serial: string }> {
  return new Promise((resolve, reject) => {
    const rq = httpsRequest({ host: '127.0.0.1', port, path, servername: 'www.example.com', headers: { host: 'www.example.com' }, ca: pki.ca, agent: false }, (res) => {
      const serial = (res.socket as TLSSocket).getPeerCertificate().serialNumber.toLowerCase();
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, serial }));
    });
    rq.on('error', reject);
    rq.end();
  });
}

/** The HTTPS listener serves with its first certificate; after `rotate`, with the new one. */
async function checkRotation(port: number, rotate: () => void): Promise<void> {
  assert.deepEqual(await httpsGet(port, '/a//b'), { status: 200, serial: 'e1' });
  rotate();
  await waitFor('the rotated certificate', async () => ((await httpsGet(port, '/').catch(() => undefined))?.serial === 'e2' ? true : undefined));
  assert.equal((await httpsGet(port, '/teapot')).status, 418);
}

const listener = (routeSource: JsonObject): JsonObject => ({
  name: 'default/eg/http',
  address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
  max_connections_to_accept_per_socket_event: 1,
  per_connection_buffer_limit_bytes: 32768,
  filter_chains: [{ filters: [hcm(routeSource)] }],
});

const lbPolicy = { policies: [{ typed_extension_config: { name: 'envoy.load_balancing_policies.least_request', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.load_balancing_policies.least_request.v3.LeastRequest', locality_lb_config: { locality_weighted_lb_config: {} } } } }] };
const assignment = (): JsonObject => ({ cluster_name: CLUSTER, endpoints: [{ locality: { region: 'local' }, load_balancing_weight: 1, lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: upstreamPort } } }, load_balancing_weight: 1 }] }] });
const clusterFields = { connect_timeout: '10s', per_connection_buffer_limit_bytes: 32768, ignore_health_on_host_removal: true, load_balancing_policy: lbPolicy };

before(async () => {
  pki = makePki();
  firstCert = pki.leaf('gateway-1', { sans: ['DNS:www.example.com'], serial: 'E1' });
  rotatedCert = pki.leaf('gateway-2', { sans: ['DNS:www.example.com'], serial: 'E2' });
  upstream = createServer((req, res) => {
    res.setHeader('server', 'backend/1.0');
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ url: req.url, host: req.headers.host }));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamPort = (upstream.address() as { port: number }).port;
});

after(async () => {
  await stopAllProxies();
  pki.remove();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
});

/** What a client of the gateway sees: normalized paths, the upstream's server header, no x-envoy-*, the per-route filter, the port ignored. */
async function checkServes(port: number): Promise<void> {
  const get = (path: string) => httpRequest(`http://127.0.0.1:${port}${path}`, { headers: { host: 'www.example.com:10080' } });
  const r = await get('/a//b/./../c?x=1');
  assert.equal(r.status, 200, r.body);
  assert.deepEqual(JSON.parse(r.body), { url: '/a/c?x=1', host: 'www.example.com:10080' });
  assert.equal(r.headers.server, 'backend/1.0');
  assert.equal(r.headers['x-envoy-upstream-service-time'], undefined);
  const redirect = await get('/a%2Fb');
  assert.deepEqual([redirect.status, redirect.headers.location], [307, '/a/b']);
  assert.equal((await get('/teapot')).status, 418, 'the filter disabled on the connection manager runs where its route enables it');
  assert.equal((await get('/teapots-elsewhere/x')).status, 418, 'a prefix match');
  assert.equal((await httpRequest(`http://127.0.0.1:${port}/`, { headers: { host: 'other.example' } })).status, 404);
}

describe('a gateway-shaped configuration', () => {
  it('serves from a bootstrap, its certificate from a file by SDS', async () => {
    const dir = tempDir('proxy-gateway-sds-');
    const writeSecret = (name: string, leaf: Leaf) => dir.file(name, JSON.stringify({ version_info: leaf.serial, resources: [secret(leaf)] }));
    writeSecret('sds.json', firstCert);
    try {
      const proxy = await startProxy({
        admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
        static_resources: {
          listeners: [listener({ route_config: routeConfig }), httpsListener({ route_config: routeConfig }, { path_config_source: { path: join(dir.dir, 'sds.json'), watched_directory: { path: dir.dir } }, resource_api_version: 'V3' })],
          clusters: [{ ...staticCluster(CLUSTER, upstreamPort), ...clusterFields, load_assignment: assignment() }],
        },
      }, ['--concurrency', '1']);
      await checkServes(proxy.ports.get('default/eg/http')!);
      await checkRotation(proxy.ports.get('default/eg/https')!, () => renameSync(writeSecret('sds.next', rotatedCert), join(dir.dir, 'sds.json')));
      await proxy.stop();
    } finally {
      dir.cleanup();
    }
  });

  it('serves from a control plane over ADS: LDS, RDS, CDS, EDS and SDS', async () => {
    const cp = await TestControlPlane.start();
    let proxy: RunningProxy | undefined;
    try {
      const ads = { ads: {}, resource_api_version: 'V3' };
      cp.set(CLUSTER_URL, '1', [{ '@type': CLUSTER_URL, name: CLUSTER, type: 'EDS', eds_cluster_config: { eds_config: ads }, ...clusterFields }]);
      cp.set(ENDPOINTS_URL, '1', [{ '@type': ENDPOINTS_URL, ...assignment() }]);
      cp.set(LISTENER_URL, '1', [{ '@type': LISTENER_URL, ...listener({ rds: { route_config_name: ROUTES, config_source: ads } }) }, { '@type': LISTENER_URL, ...httpsListener({ rds: { route_config_name: ROUTES, config_source: ads } }, ads) }]);
      cp.set(SECRET_URL, '1', [secret(firstCert)]);
      // The test's control plane encodes with proto3-json-serializer, which cannot write an empty Any:
      // over ADS the route enables the filter with its configuration (test/xds-resource.test.ts decodes an empty one from the wire).
      const overAds = JSON.parse(JSON.stringify(routeConfig).replace('"config":{}', `"config":${JSON.stringify(TEAPOT)}`)) as JsonObject;
      cp.set(ROUTE_URL, '1', [{ '@type': ROUTE_URL, ...overAds }]);
      proxy = await startProxy({
        node: { id: 'gateway', cluster: 'eg' },
        admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
        overload_manager: gatewayOverload,
        static_resources: { listeners: [readyListener], clusters: [staticCluster('xds', cp.port)] },
        dynamic_resources: { ads_config: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] }, cds_config: ads, lds_config: ads },
      }, ['--concurrency', '1']);
      const running = proxy;
      const port = await waitFor('the gateway listener', async () => {
        const json = JSON.parse((await httpRequest(`http://${running.admin}/listeners?format=json`)).body) as { listener_statuses: { name: string; local_address: { socket_address: { port_value: number } } }[] };
        return json.listener_statuses.find((l) => l.name === 'default/eg/http')?.local_address.socket_address.port_value;
      });
      await waitFor('routes and endpoints', async () => ((await httpRequest(`http://127.0.0.1:${port}/`, { headers: { host: 'www.example.com' } })).status === 200 ? true : undefined));
      await checkServes(port);
      const ready = await httpRequest(`http://127.0.0.1:${proxy.ports.get(readyListener.name as string)}/ready`);
      assert.deepEqual([ready.status, ready.body], [200, 'ready']);
      // The overload manager measures (a worker's heap is far from 1 GiB) and the connection limit counts the gateway's connections.
      const stats = (await httpRequest(`http://${running.admin}/stats?filter=^overload`)).body;
      assert.match(stats, /^overload\.envoy\.resource_monitors\.fixed_heap\.pressure: \d$/m);
      assert.match(stats, /^overload\.envoy\.overload_actions\.stop_accepting_requests\.active: 0$/m);
      const httpsPort = await waitFor('the HTTPS listener', async () => {
        const json = JSON.parse((await httpRequest(`http://${running.admin}/listeners?format=json`)).body) as { listener_statuses: { name: string; local_address: { socket_address: { port_value: number } } }[] };
        return json.listener_statuses.find((l) => l.name === 'default/eg/https')?.local_address.socket_address.port_value;
      });
      await checkRotation(httpsPort, () => cp.set(SECRET_URL, '2', [secret(rotatedCert)]));
    } finally {
      await proxy?.stop();
      cp.stop();
    }
  });
});
