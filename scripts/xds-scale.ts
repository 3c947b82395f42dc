// xDS at scale: CLUSTERS EDS clusters with ENDPOINTS endpoints each arrive over ADS from a test
// control plane. Prints the time from the proxy's start to LIVE (every cluster and its endpoints
// applied before the workers start), each process's RSS, and how long /clusters and
// /config_dump take (median of 3). Asserts nothing.
// Usage: npm run build && node --import tsx scripts/xds-scale.ts   (env: CLUSTERS=10000 ENDPOINTS=10)
import { readFileSync } from 'node:fs';
import { routesListener, staticCluster } from '../test/helpers/bootstraps.js';
import { CLUSTER_URL, TestControlPlane } from '../test/helpers/control-plane.js';
import { httpRequest, startProxy, stopAllProxies } from '../test/helpers/proxy.js';

const CLUSTERS = Number(process.env.CLUSTERS ?? 10_000);
const ENDPOINTS = Number(process.env.ENDPOINTS ?? 10);
const ENDPOINTS_URL = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';

const rssMb = (pid: number) => Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024);
async function timed(url: string): Promise<{ ms: number; bytes: number }> {
  const runs: { ms: number; bytes: number }[] = [];
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    const r = await httpRequest(url);
    runs.push({ ms: performance.now() - t, bytes: r.body.length });
  }
  return runs.sort((x, y) => x.ms - y.ms)[1]!;
}

const cp = await TestControlPlane.start();
const names = Array.from({ length: CLUSTERS }, (_, i) => `service_${i}`);
cp.set(CLUSTER_URL, '1', names.map((name) => ({ '@type': CLUSTER_URL, name, type: 'EDS', connect_timeout: '1s', eds_cluster_config: { eds_config: { ads: {}, resource_api_version: 'V3' } } })));
cp.set(ENDPOINTS_URL, '1', names.map((name, i) => ({
  '@type': ENDPOINTS_URL,
  cluster_name: name,
  endpoints: [{ lb_endpoints: Array.from({ length: ENDPOINTS }, (_, e) => ({ endpoint: { address: { socket_address: { address: `10.${(i >> 8) & 255}.${i & 255}.${e + 1}`, port_value: 8080 } } } })) }],
})));
const listener = routesListener('ingress', [{ match: { prefix: '/' }, route: { cluster: 'service_0' } }]) as any;
listener.filter_chains[0].filters[0].typed_config.route_config.validate_clusters = false;
const started = Date.now();
const proxy = await startProxy(
  {
    node: { id: 'scale', cluster: 'bench' },
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: { listeners: [listener], clusters: [staticCluster('xds', cp.port)] },
    dynamic_resources: { ads_config: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] }, cds_config: { ads: {}, resource_api_version: 'V3', initial_fetch_timeout: '120s' } },
  },
  ['--concurrency', '2'],
);
const live = Date.now() - started;
const active = (await httpRequest(`http://${proxy.admin}/stats?filter=^cluster_manager.active_clusters$`)).body.trim();
console.log(`${CLUSTERS} EDS clusters x ${ENDPOINTS} endpoints over ADS: LIVE ${live} ms after start (${active})`);
console.log(`RSS: ${[proxy.pid, ...proxy.children()].map((pid) => `${pid === proxy.pid ? 'supervisor' : `child ${pid}`} ${rssMb(pid)} MB`).join(', ')}`);
const clusters = await timed(`http://${proxy.admin}/clusters`);
const clustersJson = await timed(`http://${proxy.admin}/clusters?format=json`);
const dump = await timed(`http://${proxy.admin}/config_dump`);
const dumpEds = await timed(`http://${proxy.admin}/config_dump?include_eds`);
console.log(`/clusters ${clusters.ms.toFixed(0)} ms (${(clusters.bytes / 1e6).toFixed(1)} MB), ?format=json ${clustersJson.ms.toFixed(0)} ms (${(clustersJson.bytes / 1e6).toFixed(1)} MB)`);
console.log(`/config_dump ${dump.ms.toFixed(0)} ms (${(dump.bytes / 1e6).toFixed(1)} MB), ?include_eds ${dumpEds.ms.toFixed(0)} ms (${(dumpEds.bytes / 1e6).toFixed(1)} MB)`);
cp.stop();
await stopAllProxies();
