import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { staticCluster, TCP_PROXY_TYPE } from './helpers/bootstraps.js';
import { runProxy } from './helpers/cli.js';
import { startProxy, statValue, stopAllProxies, withDeadline, type RunningProxy } from './helpers/proxy.js';
import { closedPort, startEcho } from './helpers/upstream.js';

/**
 * The TCP proxy's max_connect_attempts: a failed connect is followed by another, to the host the
 * load balancer picks next, until that many have failed; then the client's connection closes and
 * the cluster counts upstream_cx_connect_attempts_exceeded (with the default of one attempt, at
 * the first failure), as Envoy's.
 */

let proxy: RunningProxy;
let echo: Awaited<ReturnType<typeof startEcho>>;
let refusing: number;

function tcpListener(name: string, cluster: string, attempts?: number): object {
  const config = { '@type': TCP_PROXY_TYPE, stat_prefix: name, cluster, ...(attempts ? { max_connect_attempts: attempts } : {}) };
  return { name, address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [{ name: 'tcp', typed_config: config }] }] };
}

before(async () => {
  echo = await startEcho();
  refusing = await closedPort();
  proxy = await startProxy(
    {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [tcpListener('retrying', 'half_refusing', 2), tcpListener('once', 'refusing_once'), tcpListener('thrice', 'refusing_thrice', 3)],
        clusters: [staticCluster('half_refusing', [refusing, echo.port]), staticCluster('refusing_once', refusing), staticCluster('refusing_thrice', refusing)],
      },
    },
    ['--concurrency', '1'],
  );
});

after(async () => {
  await stopAllProxies();
  echo.server.close();
});

/** Sends `text` through the listener; resolves with what came back before the connection closed. */
async function roundTrip(listener: string, text: string): Promise<string> {
  const socket = connect(proxy.ports.get(listener)!, '127.0.0.1');
  socket.on('error', () => {});
  await once(socket, 'connect');
  let got = '';
  socket.on('data', (d: Buffer) => {
    got += d;
    if (got === text) socket.end();
  });
  socket.write(text);
  // A given-up connection is reset: 'close' after an error, which once() would reject on.
  await withDeadline(`the connection through ${listener} to close`, new Promise((resolve) => socket.once('close', resolve)));
  return got;
}

describe('TCP proxy max_connect_attempts', () => {
  it('tries the next host when a connect fails: every client reaches the one that listens', async () => {
    for (let i = 0; i < 4; i++) assert.equal(await roundTrip('retrying', `hello ${i}`), `hello ${i}`);
    assert.ok((await statValue(proxy, 'cluster.half_refusing.upstream_cx_connect_fail')) >= 1, 'round robin sent some first attempts to the refusing host');
    assert.equal(await statValue(proxy, 'cluster.half_refusing.upstream_cx_connect_attempts_exceeded'), 0);
  });

  it('gives up after the attempts, closing the client and counting it once', async () => {
    assert.equal(await roundTrip('once', 'anyone?'), '');
    assert.equal(await statValue(proxy, 'cluster.refusing_once.upstream_cx_connect_fail'), 1);
    assert.equal(await statValue(proxy, 'cluster.refusing_once.upstream_cx_connect_attempts_exceeded'), 1, 'with the default of one attempt, at the first failure');
    assert.equal(await roundTrip('thrice', 'anyone?'), '');
    assert.equal(await statValue(proxy, 'cluster.refusing_thrice.upstream_cx_connect_fail'), 3);
    assert.equal(await statValue(proxy, 'cluster.refusing_thrice.upstream_cx_connect_attempts_exceeded'), 1);
  });

  it('refuses more than one attempt for a tunnelled connection, by name', async () => {
    const listener = tcpListener('tunnel', 'refusing_once', 2) as { filter_chains: { filters: { typed_config: Record<string, unknown> }[] }[] };
    listener.filter_chains[0]!.filters[0]!.typed_config.tunneling_config = { hostname: 'example.com:443' };
    const run = await runProxy(['--mode', 'validate', '--config-yaml', JSON.stringify({ static_resources: { listeners: [listener], clusters: [staticCluster('refusing_once', 1)] } })]);
    assert.notEqual(run.code, 0);
    assert.match(run.stderr, /typed_config\.max_connect_attempts: more than one attempt with tunneling_config is not supported by this proxy/);
  });
});
