import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { JsonObject } from '../shared/config/proto-json.js';
import { routesListener, staticCluster } from './helpers/bootstraps.js';
import { CLUSTER_URL, edsCluster, ENDPOINTS_URL, TestControlPlane } from './helpers/control-plane.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';

/**
 * A host that EDS drops while it passes its health checks, as Envoy's updateDynamicHostList
 * treats it (eds_integration_test's RemoveAfterHcFail): it stays, routable and flagged
 * pending_dynamic_removal, until it fails a check; with ignore_health_on_host_removal it goes at once.
 */

const HC = { timeout: '5s', interval: '0.1s', no_traffic_interval: '0.1s', unhealthy_threshold: 1, healthy_threshold: 1, http_health_check: { path: '/healthz' } };

interface Backend {
  port: number;
  healthy: boolean;
  server: Server;
}

async function backend(name: string): Promise<Backend> {
  const b = { healthy: true } as Backend;
  b.server = createServer((req, res) => {
    if (req.url === '/healthz') res.writeHead(b.healthy ? 200 : 503).end();
    else res.end(name);
  });
  await new Promise<void>((resolve) => b.server.listen(0, '127.0.0.1', resolve));
  b.port = (b.server.address() as { port: number }).port;
  return b;
}

const assignment = (name: string, ports: number[]): JsonObject => ({
  '@type': ENDPOINTS_URL,
  cluster_name: name,
  endpoints: [{ lb_endpoints: ports.map((port) => ({ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } })) }],
});

let a: Backend;
let b: Backend;
let cp: TestControlPlane;
let proxy: RunningProxy;

before(async () => {
  a = await backend('A');
  b = await backend('B');
  cp = await TestControlPlane.start();
  cp.set(CLUSTER_URL, '1', [edsCluster('kept', { health_checks: [HC] }), edsCluster('dropped', { health_checks: [HC], ignore_health_on_host_removal: true })]);
  cp.set(ENDPOINTS_URL, '1', [assignment('kept', [a.port, b.port]), assignment('dropped', [a.port, b.port])]);
  const listener = routesListener('ingress', [{ match: { prefix: '/' }, route: { cluster: 'kept' } }]) as { filter_chains: { filters: { typed_config: { route_config: JsonObject } }[] }[] };
  listener.filter_chains[0]!.filters[0]!.typed_config.route_config.validate_clusters = false;
  proxy = await startProxy(
    {
      node: { id: 'proxy-under-test', cluster: 'tests' },
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: { listeners: [listener], clusters: [staticCluster('xds', cp.port)] },
      dynamic_resources: { ads_config: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] }, cds_config: { ads: {}, resource_api_version: 'V3' } },
    },
    ['--concurrency', '1'],
  );
  for (const cluster of ['kept', 'dropped']) await waitFor(`${cluster}'s hosts to be healthy`, async () => ((await statValue(proxy, `cluster.${cluster}.membership_healthy`)) === 2 ? true : undefined));
});

after(async () => {
  await stopAllProxies();
  await cp.stop();
  for (const s of [a, b]) s.server.close();
});

const flagsOf = async (cluster: string, port: number) => new RegExp(`^${cluster}::127\\.0\\.0\\.1:${port}::health_flags::(.*)$`, 'm').exec((await httpRequest(`http://${proxy.admin}/clusters`)).body)?.[1];

describe('a host discovery drops', () => {
  it('stays while it passes its checks (pending_dynamic_removal), and serves; with ignore_health_on_host_removal it goes at once', async () => {
    cp.set(ENDPOINTS_URL, '2', [assignment('kept', [a.port]), assignment('dropped', [a.port])]);
    await waitFor('dropped to lose B', async () => ((await statValue(proxy, 'cluster.dropped.membership_total')) === 1 ? true : undefined));
    assert.equal(await flagsOf('dropped', b.port), undefined);
    // Envoy's healthFlagsToString: each flag after a '/'.
    await waitFor('kept to flag B', async () => ((await flagsOf('kept', b.port)) === '/pending_dynamic_removal' ? true : undefined));
    assert.equal(await statValue(proxy, 'cluster.kept.membership_total'), 2);
    assert.equal(await statValue(proxy, 'cluster.kept.membership_healthy'), 2);
    const seen = new Set<string>();
    for (let i = 0; i < 8; i++) seen.add((await httpRequest(`http://127.0.0.1:${proxy.ports.get('ingress')}/`)).body);
    assert.deepEqual([...seen].sort(), ['A', 'B'], 'a host pending removal is still routable');
  });

  it('goes once it fails a check', async () => {
    b.healthy = false;
    await waitFor('kept to remove B', async () => ((await statValue(proxy, 'cluster.kept.membership_total')) === 1 ? true : undefined));
    assert.equal(await flagsOf('kept', b.port), undefined);
    assert.equal(await flagsOf('kept', a.port), 'healthy');
  });

  it('comes back without the flag when discovery lists it again', async () => {
    b.healthy = true;
    cp.set(ENDPOINTS_URL, '3', [assignment('kept', [a.port, b.port]), assignment('dropped', [a.port])]);
    await waitFor('B to be healthy again', async () => ((await flagsOf('kept', b.port)) === 'healthy' ? true : undefined));
  });
});
