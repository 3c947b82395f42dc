// How long a cluster or listener update takes from the control plane to the data plane, under load.
// A test control plane (over gRPC, ADS) flips cluster "dynamic" between two upstreams UPDATES
// times, then modifies the listener LISTENER_UPDATES times (alternately in place, a new route in
// its filter chain, and whole, with a new stat_prefix too, so that the old version drains); after
// each send, requests are made until one is answered by the new version. Meanwhile LOOPS
// keep-alive clients and LOOPS new-connection clients send requests without pause and count
// failures. Prints the update latencies (median, max) and the failures (the goal is 0).
// Usage: npm run build && node --import tsx scripts/xds-update-latency.ts
//   (env: UPDATES=100 LISTENER_UPDATES=10 LOOPS=2 DRAIN_TIME_S=2)
import { Agent, request } from 'node:http';
import { routesListener, staticCluster } from '../test/helpers/bootstraps.js';
import { CLUSTER_URL, LISTENER_URL, TestControlPlane } from '../test/helpers/control-plane.js';
import { startProxy, stopAllProxies } from '../test/helpers/proxy.js';
import { startUpstream } from '../test/helpers/upstream.js';

const UPDATES = Number(process.env.UPDATES ?? 100);
const LISTENER_UPDATES = Number(process.env.LISTENER_UPDATES ?? 10);
const LOOPS = Number(process.env.LOOPS ?? 2);
const DRAIN_TIME_S = process.env.DRAIN_TIME_S ?? '2';

function get(port: number, agent: Agent | false): Promise<{ status: number; body: string } | Error> {
  return new Promise((resolve) => {
    request({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
      res.on('error', resolve);
    })
      .on('error', resolve)
      .end();
  });
}

const upstreams = [await startUpstream('A'), await startUpstream('B')];
const cp = await TestControlPlane.start();
const cluster = (i: number) => ({ '@type': CLUSTER_URL, ...staticCluster('dynamic', upstreams[i % 2]!.port) });
cp.set(CLUSTER_URL, '0', [cluster(0)]);
/** Version `i` of the listener: routes to `cluster`; from a stat prefix of its own on when `whole`. */
const listener = (cluster: string, statPrefix?: string) => {
  const l = routesListener('ingress', [{ match: { prefix: '/' }, route: { cluster } }]) as any;
  l.filter_chains[0].filters[0].typed_config.route_config.validate_clusters = false;
  return { '@type': LISTENER_URL, ...l, ...(statPrefix ? { stat_prefix: statPrefix } : {}) };
};
cp.set(LISTENER_URL, '0', [listener('dynamic')]);
const api = { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] };
const proxy = await startProxy(
  {
    node: { id: 'latency', cluster: 'bench' },
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: { clusters: [staticCluster('xds', cp.port), staticCluster('to-a', upstreams[0]!.port), staticCluster('to-b', upstreams[1]!.port)] },
    dynamic_resources: { ads_config: api, cds_config: { ads: {}, resource_api_version: 'V3' }, lds_config: { ads: {}, resource_api_version: 'V3' } },
  },
  ['--concurrency', '2', '--drain-time-s', DRAIN_TIME_S],
);
const port = proxy.ports.get('ingress')!;

let running = true;
let requests = 0;
const failures = new Map<string, number>();
const loop = async (agent: Agent | false) => {
  while (running) {
    const r = await get(port, agent);
    requests++;
    const failure = r instanceof Error ? r.message : r.status !== 200 ? `status ${r.status}` : undefined;
    if (failure) failures.set(failure, (failures.get(failure) ?? 0) + 1);
  }
};
const loops = [...Array.from({ length: LOOPS }, () => loop(new Agent({ keepAlive: true, maxSockets: 1 }))), ...Array.from({ length: LOOPS }, () => loop(false))];

const latencies: number[] = [];
const probe = new Agent({ keepAlive: true, maxSockets: 1 });
for (let i = 1; i <= UPDATES; i++) {
  const want = upstreams[i % 2]!.name;
  const sent = performance.now();
  cp.set(CLUSTER_URL, String(i), [cluster(i)]);
  for (;;) {
    const r = await get(port, probe);
    if (!(r instanceof Error) && r.body === want) break;
  }
  latencies.push(performance.now() - sent);
}
const percentiles = (xs: number[]) => {
  xs.sort((x, y) => x - y);
  return `median ${xs[xs.length >> 1]!.toFixed(1)} ms, max ${xs.at(-1)!.toFixed(1)} ms`;
};
const clusterLatency = percentiles(latencies);

// Listener modifications: odd ones in place (a new route), even ones whole (a new stat prefix too).
const listenerLatencies: number[] = [];
for (let i = 1; i <= LISTENER_UPDATES; i++) {
  const want = upstreams[i % 2]!.name;
  const sent = performance.now();
  cp.set(LISTENER_URL, `l${i}`, [listener(i % 2 ? 'to-b' : 'to-a', i % 2 ? undefined : `v${i}`)]);
  for (;;) {
    const r = await get(port, probe);
    if (!(r instanceof Error) && r.body === want) break;
  }
  listenerLatencies.push(performance.now() - sent);
}
// The last drains run out under load too.
await new Promise((resolve) => setTimeout(resolve, Number(DRAIN_TIME_S) * 1000 + 500));
running = false;
await Promise.all(loops);
console.log(`${UPDATES} cluster updates over ADS: latency from the control plane's send to the first request routed by the new version: ${clusterLatency}`);
if (LISTENER_UPDATES) console.log(`${LISTENER_UPDATES} listener modifications over ADS (half in place, half whole with a drain of ${DRAIN_TIME_S} s): ${percentiles(listenerLatencies)}`);
console.log(`load meanwhile (${LOOPS} keep-alive and ${LOOPS} new-connection clients): ${requests} requests, ${[...failures.values()].reduce((n, v) => n + v, 0)} failed${failures.size ? ` (${[...failures].map(([k, v]) => `${k}: ${v}`).join(', ')})` : ''}`);
cp.stop();
await stopAllProxies();
for (const u of upstreams) await u.close();
