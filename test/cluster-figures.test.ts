import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { routesListener, staticCluster, TCP_PROXY_TYPE } from './helpers/bootstraps.js';
import { httpRequest, startProxy, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';
import { startEcho, startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * A cluster's connection figures as Envoy's: upstream_cx_connect_ms and upstream_cx_length_ms
 * (histograms, "No recorded values" until used), upstream_cx_http1_total, upstream_cx_destroy and
 * the bytes each connection carried (upstream_cx_rx_bytes_total / _tx_bytes_total).
 */

let proxy: RunningProxy;
let upstream: Upstream;
let echo: Awaited<ReturnType<typeof startEcho>>;

before(async () => {
  upstream = await startUpstream('figures');
  echo = await startEcho();
  proxy = await startProxy(
    {
      stats_flush_on_admin: true,
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [
          routesListener('web', [{ match: { prefix: '/' }, route: { cluster: 'app' } }]),
          { name: 'tcp', address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [{ name: 'tcp', typed_config: { '@type': TCP_PROXY_TYPE, stat_prefix: 'tcp', cluster: 'echo' } }] }] },
        ],
        clusters: [staticCluster('app', upstream.port), staticCluster('echo', echo.port), staticCluster('idle', 1)],
      },
    },
    ['--concurrency', '1'],
  );
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
  echo.server.close();
});

const stat = async (name: string): Promise<string | undefined> => {
  const body = (await httpRequest(`http://${proxy.admin}/stats?filter=${encodeURIComponent(`^${name.replace(/\./g, '\\.')}$`)}`)).body;
  return /: (.*)$/m.exec(body)?.[1];
};

describe("a connection manager's connection figures", () => {
  it("record each downstream connection's codec, end, length and bytes as Envoy's", async () => {
    const socket = connect(proxy.ports.get('web')!, '127.0.0.1');
    await once(socket, 'connect');
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d));
    socket.write('GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
    await once(socket, 'close');
    assert.match(answer, /^HTTP\/1\.1 200/);
    await waitFor('the connection counted closed', async () => ((await stat('http.web.downstream_cx_destroy')) === '1' ? true : undefined));
    assert.equal(await stat('http.web.downstream_cx_destroy_local'), '1', 'the proxy ended it (connection: close)');
    assert.equal(await stat('http.web.downstream_cx_http1_active'), '0');
    assert.ok(Number(await stat('http.web.downstream_cx_rx_bytes_total')) > 0);
    assert.ok(Number(await stat('http.web.downstream_cx_tx_bytes_total')) > answer.length - 1);
    assert.match(String(await stat('http.web.downstream_cx_length_ms')), /^P0\(/);
    assert.equal(await stat('http.web.tracing.not_traceable'), '0', "the tracing figures are there without tracing, as Envoy's");
    const listener = JSON.parse((await httpRequest(`http://${proxy.admin}/listeners?format=json`)).body) as { listener_statuses: { name: string; local_address: { socket_address: { port_value: number } } }[] };
    const port = listener.listener_statuses.find((l) => l.name === 'web')!.local_address.socket_address.port_value;
    assert.match(String(await stat(`listener.127.0.0.1_${port}.downstream_cx_length_ms`)), /^P0\(/, "the listener's connection length too");
    assert.equal(await stat('server.debug_assertion_failures'), '0', "a release build's");
  });
});

describe("a cluster's connection figures", () => {
  it('count the membership as Envoy does: one change for the first hosts, the highest weight', async () => {
    assert.equal(await stat('cluster.app.membership_change'), '1');
    assert.equal(await stat('cluster.app.max_host_weight'), '1');
  });

  it('are there before any connection: the histograms print No recorded values', async () => {
    assert.equal(await stat('cluster.idle.upstream_cx_length_ms'), 'No recorded values');
    assert.equal(await stat('cluster.idle.upstream_cx_connect_ms'), 'No recorded values');
  });

  it('record the connect time and the protocol of HTTP/1.1 connections', async () => {
    assert.equal((await httpRequest(`http://127.0.0.1:${proxy.ports.get('web')}/`)).status, 200);
    assert.ok(Number(await stat('cluster.app.upstream_cx_http1_total')) >= 1);
    assert.match(String(await stat('cluster.app.upstream_cx_connect_ms')), /^P0\(/);
    assert.ok(Number(await stat('cluster.app.upstream_rq_pending_total')) >= 1, 'each request waited for its connection');
    assert.equal(await stat('cluster.app.upstream_rq_pending_active'), '0');
  });

  it("record a connection's length, its bytes and its end when it closes", async () => {
    const socket = connect(proxy.ports.get('tcp')!, '127.0.0.1');
    await once(socket, 'connect');
    socket.write('hello through the proxy');
    await once(socket, 'data');
    socket.end();
    await once(socket, 'close');
    await waitFor('the upstream connection closed', async () => ((await stat('cluster.echo.upstream_cx_destroy')) === '1' ? true : undefined));
    assert.equal(await stat('cluster.echo.upstream_cx_tx_bytes_total'), String('hello through the proxy'.length));
    assert.equal(await stat('cluster.echo.upstream_cx_rx_bytes_total'), String('hello through the proxy'.length));
    assert.match(String(await stat('cluster.echo.upstream_cx_length_ms')), /^P0\(/);
  });
});
