// xDS at scale: CLUSTERS EDS clusters with ENDPOINTS endpoints each arrive over ADS from a test
// control plane. Prints the time from the proxy's start to LIVE (every cluster and its endpoints
// applied before the workers start), each process's RSS, how long /clusters and /config_dump take
// (median of 3), and then, once the workers serve, how long a change to every cluster takes to
// warm and serve (the CDS ACK waits for it). Asserts nothing.
// Usage: npm run build && node --import tsx scripts/xds-scale.ts   (env: CLUSTERS=10000 ENDPOINTS=10)
import { readFileSync } from 'node:fs';
import { routesListener, staticCluster } from '../test/helpers/bootstraps.js';
import { CLUSTER_URL, TestControlPlane } from '../test/helpers/control-plane.js';
import { httpRequest, startProxy, stopAllProxies, waitFor } from '../test/helpers/proxy.js';

const CLUSTERS = Number(process.env.CLUSTERS ?? 10_000);
const ENDPOINTS = Number(process.env.ENDPOINTS ?? 10);
const PROFILE = process.env.PROFILE;
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
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, ...(PROFILE ? { profile_path: PROFILE } : {}) },
    static_resources: { listeners: [listener], clusters: [staticCluster('xds', cp.port)] },
    dynamic_resources: { ads_config: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] }, cds_config: { ads: {}, resource_api_version: 'V3', initial_fetch_timeout: '120s' } },
  },
  ['--concurrency', '2'],
);
// Whatever happens below, the proxy and the control plane stop (a proxy left running keeps its hot-restart region).
try {
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
  // Every cluster changed at once, with the workers serving: each warms (taking the endpoints it has)
  // and then serves; the CDS ACK goes when none warms any more.
  // PROFILE=<path>: the change is CPU-profiled in every process (<path>.<process>.cpuprofile).
  if (PROFILE) await httpRequest(`http://${proxy.admin}/cpuprofiler?enable=y`, { method: 'POST' });
  const sent = performance.now();
  const from = cp.requests.length;
  cp.set(CLUSTER_URL, '2', names.map((name) => ({ '@type': CLUSTER_URL, name, type: 'EDS', connect_timeout: '2s', eds_cluster_config: { eds_config: { ads: {}, resource_api_version: 'V3' } } })));
  const nonce = cp.lastNonce;
  await waitFor('the CDS ACK of version 2', () => cp.requests.slice(from).find((rq) => rq.type_url === CLUSTER_URL && rq.response_nonce === nonce), 300_000);
  console.log(`all ${CLUSTERS} clusters changed while serving: warm and ACKed ${(performance.now() - sent).toFixed(0)} ms after the send (${(await httpRequest(`http://${proxy.admin}/stats?filter=^cluster_manager.(warming_clusters|cluster_modified)$`)).body.trim().replace(/\n/g, ', ')})`);
  if (PROFILE) await httpRequest(`http://${proxy.admin}/cpuprofiler?enable=n`, { method: 'POST' });
} finally {
  cp.stop();
  await stopAllProxies();
}
