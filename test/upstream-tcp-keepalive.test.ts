import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { routesListener, staticCluster, TCP_PROXY_TYPE } from './helpers/bootstraps.js';
import { httpRequest, startProxy, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';

/**
 * Cluster.upstream_connection_options.tcp_keepalive, as Envoy sets it on each upstream
 * connection: SO_KEEPALIVE with the idle time, interval and probes given. What the kernel says of
 * the proxy's upstream sockets (/proc/net/tcp: a keepalive timer, due after keepalive_time) is
 * the check, for the HTTP pools, the TCP proxy and the health checks alike; a socket without it
 * has no such timer.
 */

let upstream: Server;
let upstreamPort = 0;
let echo: TcpServer;
let echoPort = 0;
let proxy: RunningProxy;
/** Only health checks connect to it. */
let checked: Server;
let checkedPort = 0;

/** The kernel's timer on established client sockets to `port` on 127.0.0.1: [kind, seconds until due] (kind 2: keepalive, 0: none). */
function timersTo(port: number): [number, number][] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  return readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1).flatMap((line) => {
    const f = line.trim().split(/\s+/);
    if (f.length < 6 || f[3] !== '01' || f[2] !== `0100007F:${hexPort}`) return [];
    const [kind, when] = f[5]!.split(':');
    return [[parseInt(kind!, 16), parseInt(when!, 16) / 100] as [number, number]];
  });
}

function listener(name: string, filter: object): object {
  return { name, address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [filter] }] };
}
const keepalive = { upstream_connection_options: { tcp_keepalive: { keepalive_time: 600, keepalive_interval: 30, keepalive_probes: 4 } } };

before(async () => {
  upstream = createServer((req, res) => {
    req.resume();
    res.end('ok');
  });
  upstream.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamPort = (upstream.address() as { port: number }).port;
  echo = createTcpServer((s) => s.pipe(s));
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  echoPort = (echo.address() as { port: number }).port;
  checked = createServer((req, res) => res.end('healthy'));
  checked.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => checked.listen(0, '127.0.0.1', resolve));
  checkedPort = (checked.address() as { port: number }).port;
  const healthChecks = [{ timeout: '1s', interval: '1s', unhealthy_threshold: 1, healthy_threshold: 1, http_health_check: { path: '/health' } }];
  proxy = await startProxy({
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: {
      listeners: [
        routesListener('ka', [{ match: { prefix: '/' }, route: { cluster: 'ka' } }]),
        listener('tcp', { name: 'envoy.filters.network.tcp_proxy', typed_config: { '@type': TCP_PROXY_TYPE, stat_prefix: 'tcp', cluster: 'echo' } }),
      ],
      clusters: [{ ...staticCluster('ka', upstreamPort), ...keepalive }, { ...staticCluster('echo', echoPort), ...keepalive }, { ...staticCluster('checked', checkedPort), ...keepalive, health_checks: healthChecks }],
    },
  }, ['--concurrency', '1']);
});

after(async () => {
  await stopAllProxies();
  upstream.close();
  upstream.closeAllConnections();
  echo.close();
  checked.close();
  checked.closeAllConnections();
});

describe('upstream tcp_keepalive', () => {
  it("sets the keepalive timer on the HTTP pool's connections, due after keepalive_time", async () => {
    // Nothing else connects to this upstream: before the request, no client socket to it.
    assert.deepEqual(timersTo(upstreamPort), []);
    assert.equal((await httpRequest(`http://127.0.0.1:${proxy.ports.get('ka')}/`)).status, 200);
    const [timer] = await waitFor('the kept-alive upstream connection', () => (timersTo(upstreamPort).length ? timersTo(upstreamPort) : undefined));
    assert.equal(timer![0], 2, 'a keepalive timer');
    assert.ok(timer![1] > 500 && timer![1] <= 600, `due in ${timer![1]} s`);
  });

  it("sets it on the TCP proxy's connections too", async () => {
    const client = connect(proxy.ports.get('tcp')!, '127.0.0.1');
    await new Promise<void>((resolve) => client.once('connect', resolve));
    client.write('ping');
    await new Promise<void>((resolve) => client.once('data', () => resolve()));
    const [timer] = await waitFor('the TCP proxy upstream connection', () => (timersTo(echoPort).length ? timersTo(echoPort) : undefined));
    assert.equal(timer![0], 2);
    client.destroy();
  });

  it("sets it on the health checks' connections (kept open: reuse_connection)", async () => {
    const [timer] = await waitFor('the health check connection', () => (timersTo(checkedPort).length ? timersTo(checkedPort) : undefined));
    assert.equal(timer![0], 2);
    assert.ok(timer![1] > 500 && timer![1] <= 600, `due in ${timer![1]} s`);
  });

  it('a test client socket without it has no keepalive timer (the check can tell)', async () => {
    const client = connect(upstreamPort, '127.0.0.1');
    await new Promise<void>((resolve) => client.once('connect', resolve));
    const port = client.localPort!;
    const mine = readFileSync('/proc/net/tcp', 'utf8').split('\n').find((l) => l.includes(`:${port.toString(16).toUpperCase().padStart(4, '0')} 0100007F:`));
    assert.ok(mine, 'the test client socket is listed');
    assert.equal(mine.trim().split(/\s+/)[5]!.split(':')[0], '00');
    client.destroy();
  });
});
