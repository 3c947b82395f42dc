import assert from 'node:assert/strict';
import { Client, credentials, Server, ServerCredentials, type ServiceError } from '@grpc/grpc-js';
import { after, before, describe, it } from 'node:test';
import { CLUSTER_URL, TestControlPlane } from './helpers/control-plane.js';
import { withDeadline } from './helpers/proxy.js';

/**
 * The test control plane speaks real xDS, not a dialect shared only with this proxy: an
 * independent xDS client, @grpc/grpc-js-xds (gRPC's own), takes a listener, a route, an EDS
 * cluster and its endpoints from it over ADS and reaches a backend through them.
 */

const LISTENER_URL = 'type.googleapis.com/envoy.config.listener.v3.Listener';
const ENDPOINTS_URL = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';
const METHOD = '/proxy.test.Echo/Say';
const raw = (b: Buffer) => b;

let cp: TestControlPlane;
let backend: Server;
let backendPort: number;

before(async () => {
  backend = new Server();
  const say = { path: METHOD, requestStream: false, responseStream: false, requestSerialize: raw, requestDeserialize: raw, responseSerialize: raw, responseDeserialize: raw };
  backend.addService({ Say: say } as never, { Say: (call: { request: Buffer }, done: (err: null, reply: Buffer) => void) => done(null, Buffer.concat([Buffer.from('backend got '), call.request])) } as never);
  backendPort = await new Promise<number>((resolve, reject) => backend.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))));
  cp = await TestControlPlane.start();
  cp.set(LISTENER_URL, '1', [
    {
      '@type': LISTENER_URL,
      name: 'echo-service',
      api_listener: {
        api_listener: {
          '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
          route_config: { name: 'echo-route', virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '' }, route: { cluster: 'echo-backend' } }] }] },
          http_filters: [{ name: 'router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } }],
        },
      },
    },
  ]);
  cp.set(CLUSTER_URL, '1', [{ '@type': CLUSTER_URL, name: 'echo-backend', type: 'EDS', eds_cluster_config: { eds_config: { ads: {}, resource_api_version: 'V3' } }, lb_policy: 'ROUND_ROBIN' }]);
  cp.set(ENDPOINTS_URL, '1', [
    {
      '@type': ENDPOINTS_URL,
      cluster_name: 'echo-backend',
      endpoints: [{ locality: { region: 'r', zone: 'z' }, load_balancing_weight: 1, lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: backendPort } } } }] }],
    },
  ]);
});

after(() => {
  cp.stop();
  backend.forceShutdown();
});

describe('the test control plane, cross-checked', () => {
  it('serves @grpc/grpc-js-xds, which reaches a backend through the listener, route, cluster and endpoints it sends', async () => {
    process.env.GRPC_XDS_BOOTSTRAP_CONFIG = JSON.stringify({
      xds_servers: [{ server_uri: `127.0.0.1:${cp.port}`, channel_creds: [{ type: 'insecure' }], server_features: ['xds_v3'] }],
      node: { id: 'grpc-js-xds-cross-check', cluster: 'tests', locality: {} },
    });
    const xds = await import('@grpc/grpc-js-xds');
    xds.register();
    const client = new Client('xds:///echo-service', credentials.createInsecure());
    try {
      const reply = await withDeadline(
        'the xDS client to reach the backend',
        new Promise<Buffer>((resolve, reject) =>
          client.makeUnaryRequest(METHOD, raw, raw, Buffer.from('hello'), (err: ServiceError | null, value?: Buffer) => (err ? reject(err) : resolve(value!))),
        ),
      );
      assert.equal(reply.toString(), 'backend got hello');
      const types = new Set(cp.requests.map((rq) => rq.type_url));
      assert.deepEqual([...types].sort(), [CLUSTER_URL, ENDPOINTS_URL, LISTENER_URL].sort());
      assert.ok(cp.requests.some((rq) => rq.type_url === ENDPOINTS_URL && rq.version_info === '1'), 'it ACKed the endpoints');
    } finally {
      client.close();
    }
  });
});
