import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { hcmFilter, staticCluster } from './helpers/bootstraps.js';
import { httpRequest, startProxy, stopAllProxies, waitFor } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * The settings of Envoy's hotrestart_test.sh configurations together (test/config/integration's
 * server configs): a virtual host that requires TLS, a statsd sink over TCP to a STRICT_DNS
 * cluster of localhost, a listener with additional addresses. They load, serve, and go through a
 * hot restart (ports kept, statsd fed by both epochs).
 */

let upstream: Upstream;
let statsd: Server;
let statsdPort = 0;
const statsdLines: string[] = [];

before(async () => {
  upstream = await startUpstream('cluster_1');
  statsd = createServer((socket) => {
    let rest = '';
    socket.on('data', (d) => {
      const text = rest + d.toString();
      const lines = text.split('\n');
      rest = lines.pop()!;
      statsdLines.push(...lines);
    });
  });
  await new Promise<void>((resolve) => statsd.listen(0, '127.0.0.1', resolve));
  statsdPort = (statsd.address() as { port: number }).port;
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
  statsd.close();
});

function config(): object {
  const http = hcmFilter('router', [{ match: { prefix: '/' }, route: { cluster: 'cluster_1' } }]) as { typed_config: { route_config: { virtual_hosts: object[] } } };
  http.typed_config.route_config.virtual_hosts.unshift({ name: 'redirect', domains: ['www.redirect.com'], require_tls: 'ALL', routes: [{ match: { prefix: '/' }, route: { cluster: 'cluster_1' } }] });
  return {
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    stats_flush_interval: '0.2s',
    stats_sinks: [{ name: 'envoy.stat_sinks.statsd', typed_config: { '@type': 'type.googleapis.com/envoy.config.metrics.v3.StatsdSink', tcp_cluster_name: 'statsd' } }],
    static_resources: {
      listeners: [{
        name: 'http',
        address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
        additional_addresses: [{ address: { socket_address: { address: '127.0.0.1', port_value: 0 } } }],
        filter_chains: [{ filters: [http] }],
      }],
      clusters: [
        staticCluster('cluster_1', upstream.port),
        { name: 'statsd', type: 'STRICT_DNS', connect_timeout: '5s', load_assignment: { cluster_name: 'statsd', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: 'localhost', port_value: statsdPort } } } }] }] } },
      ],
    },
  };
}

describe("the settings of Envoy's hot-restart test configurations", () => {
  it('load, serve, and survive a hot restart', async () => {
    const e0 = await startProxy(config(), ['--concurrency', '1', '--parent-shutdown-time-s', '2']);
    const json = JSON.parse((await httpRequest(`http://${e0.admin}/listeners?format=json`)).body) as { listener_statuses: { local_address: { socket_address: { port_value: number } }; additional_local_addresses: { socket_address: { port_value: number } }[] }[] };
    const ports = [json.listener_statuses[0]!.local_address.socket_address.port_value, json.listener_statuses[0]!.additional_local_addresses[0]!.socket_address.port_value];
    for (const port of ports) {
      assert.equal((await httpRequest(`http://127.0.0.1:${port}/`)).body, 'cluster_1');
      const redirect = await httpRequest(`http://127.0.0.1:${port}/path?q`, { headers: { host: 'www.redirect.com' } });
      assert.deepEqual([redirect.status, redirect.headers.location], [301, 'https://www.redirect.com/path?q']);
    }
    await waitFor('counters over TCP', () => (statsdLines.some((l) => /^envoy\.cluster\.cluster_1\.upstream_rq_total:\d+\|c$/.test(l)) ? true : undefined));
    const e1 = await startProxy(config(), ['--base-id', String(e0.baseId), '--restart-epoch', '1', '--concurrency', '1', '--parent-shutdown-time-s', '2']);
    for (const port of ports) assert.equal((await httpRequest(`http://127.0.0.1:${port}/`)).body, 'cluster_1');
    const seen = statsdLines.length;
    await waitFor('the new epoch feeding statsd', () => (statsdLines.length > seen ? true : undefined));
    await e1.stop();
  });
});
