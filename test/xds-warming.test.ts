import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { JsonObject } from '../shared/config/proto-json.js';
import { routesListener, staticCluster } from './helpers/bootstraps.js';
import { CLUSTER_URL, edsCluster, ENDPOINTS_URL, TestControlPlane } from './helpers/control-plane.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * Cluster warming, as Envoy's: once the workers serve, a new or changed cluster from CDS warms
 * (its first endpoints, DNS answer, health-check round) before it serves, shown as
 * dynamic_warming_clusters and cluster_manager.warming_clusters; the version it replaces serves
 * meanwhile, and over ADS the CDS ACK waits until it is warm.
 */

let a: Upstream;
before(async () => {
  a = await startUpstream('A');
});
after(async () => {
  await stopAllProxies();
  await a.close();
});

const assignment = (name: string, port: number): JsonObject => ({
  '@type': ENDPOINTS_URL,
  cluster_name: name,
  endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } }] }],
});

describe('cluster warming', () => {
  it('a new EDS cluster warms until its endpoints come; a changed one keeps serving its old version until the new one is warm', async () => {
    const cp = await TestControlPlane.start();
    try {
      cp.set(CLUSTER_URL, '1', []);
      const listener = routesListener('ingress', [{ match: { prefix: '/' }, route: { cluster: 'late' } }]) as any;
      listener.filter_chains[0].filters[0].typed_config.route_config.validate_clusters = false;
      const proxy = await startProxy(
        {
          node: { id: 'proxy-under-test', cluster: 'tests' },
          admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
          static_resources: { listeners: [listener], clusters: [staticCluster('xds', cp.port)] },
          dynamic_resources: { ads_config: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] }, cds_config: { ads: {}, resource_api_version: 'V3' } },
        },
        ['--concurrency', '1'],
      );
      const url = `http://127.0.0.1:${proxy.ports.get('ingress')}/`;

      cp.set(CLUSTER_URL, '2', [edsCluster('late')]);
      const cdsNonce = cp.lastNonce;
      await waitFor('late to warm', async () => ((await statValue(proxy, 'cluster_manager.warming_clusters')) === 1 ? true : undefined));
      // As Envoy's ADS: the CDS ACK waits while the cluster warms.
      assert.equal(cp.requests.find((rq) => rq.type_url === CLUSTER_URL && rq.response_nonce === cdsNonce), undefined, 'no CDS ACK while warming');
      const dump = JSON.parse((await httpRequest(`http://${proxy.admin}/config_dump?resource=dynamic_warming_clusters`)).body).configs as any[];
      assert.deepEqual(dump.map((c) => [c.version_info, c.cluster.name]), [['2', 'late']]);
      assert.doesNotMatch((await httpRequest(`http://${proxy.admin}/clusters`)).body, /^late::/m, 'a warming cluster does not serve');
      assert.equal((await httpRequest(url)).status, 503);

      cp.set(ENDPOINTS_URL, '1', [assignment('late', a.port)]);
      await waitFor('late to serve', async () => ((await httpRequest(url)).body === 'A' ? true : undefined));
      const ack = await cp.waitForRequest('the CDS ACK, once warm', (rq) => rq.type_url === CLUSTER_URL && rq.response_nonce === cdsNonce);
      assert.deepEqual([ack.version_info, ack.error_detail], ['2', undefined]);
      assert.equal(await statValue(proxy, 'cluster_manager.warming_clusters'), 0);
      const eds = JSON.parse((await httpRequest(`http://${proxy.admin}/config_dump?include_eds`)).body).configs.find((c: any) => c['@type'].endsWith('EndpointsConfigDump'));
      assert.deepEqual(
        eds.dynamic_endpoint_configs.map((e: any) => [e.endpoint_config.cluster_name, e.endpoint_config.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value]),
        [['late', a.port]],
        'endpoints that came by EDS are dynamic',
      );
      assert.equal(JSON.parse((await httpRequest(`http://${proxy.admin}/config_dump?resource=dynamic_warming_clusters`)).body).configs, undefined);

      // A change: the endpoints it already has warm it at once, and the old version serves until then.
      cp.set(CLUSTER_URL, '3', [edsCluster('late', { connect_timeout: '2s' })]);
      await waitFor('version 3 to serve', async () => {
        const active = JSON.parse((await httpRequest(`http://${proxy.admin}/config_dump?resource=dynamic_active_clusters`)).body).configs as any[];
        return active.find((c) => c.cluster.name === 'late')?.version_info === '3' ? true : undefined;
      });
      assert.equal((await httpRequest(url)).body, 'A');
      assert.equal(await statValue(proxy, 'cluster_manager.cluster_modified'), 1);
      await proxy.stop();
    } finally {
      cp.stop();
    }
  });
});
