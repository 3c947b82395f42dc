import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createSocket, type Socket as DgramSocket } from 'node:dgram';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { runProxy, tempDir } from './helpers/cli.js';
import { alive, startProxy, statValue, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';

/**
 * UDP listeners with the udp_proxy listener filter, with real datagrams: sessions by client
 * address to a UDP echo server, the idle timeout, hash policies, a worker replaced under
 * traffic and a hot restart (the sockets are the supervisor's: they never close), and Envoy's
 * checks on UDP listeners.
 */

const UDP_PROXY = 'type.googleapis.com/envoy.extensions.filters.udp.udp_proxy.v3.UdpProxyConfig';
const ROUTE = 'type.googleapis.com/envoy.extensions.filters.udp.udp_proxy.v3.Route';
const tmp = tempDir();

/** UDP echo servers answering `<name>:<datagram>`. */
const echoes: { name: string; port: number; socket: DgramSocket }[] = [];
async function startUdpEcho(name: string): Promise<number> {
  const socket = createSocket('udp4');
  socket.on('message', (m, r) => socket.send(Buffer.concat([Buffer.from(`${name}:`), m]), r.port, r.address));
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  const port = (socket.address() as AddressInfo).port;
  echoes.push({ name, port, socket });
  return port;
}

before(async () => {
  await startUdpEcho('a');
  await startUdpEcho('b');
});

after(async () => {
  await stopAllProxies();
  for (const e of echoes) e.socket.close();
  tmp.cleanup();
});

function udpListener(name: string, proxy: Record<string, unknown>, port = 0): object {
  return {
    name,
    address: { socket_address: { protocol: 'UDP', address: '127.0.0.1', port_value: port } },
    listener_filters: [{ name: 'envoy.filters.udp_listener.udp_proxy', typed_config: { '@type': UDP_PROXY, stat_prefix: name, ...proxy } }],
  };
}

function cluster(name: string, ports: number[], extra: object = {}): object {
  return { name, type: 'STATIC', connect_timeout: '1s', load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: ports.map((port) => ({ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } })) }] }, ...extra };
}

function bootstrap(listeners: object[], clusters: object[]): object {
  return { admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } }, static_resources: { listeners, clusters } };
}

/** A client with its own port: sends each message and collects the answers (in order of arrival). */
async function exchange(port: number, messages: string[], timeoutMs = 10_000): Promise<string[]> {
  const client = createSocket('udp4');
  const answers: string[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${answers.length} of ${messages.length} answers: ${answers.join(', ')}`)), timeoutMs);
      client.on('message', (m) => {
        answers.push(m.toString());
        if (answers.length === messages.length) {
          clearTimeout(timer);
          resolve();
        }
      });
      for (const m of messages) client.send(m, port, '127.0.0.1');
    });
  } finally {
    client.close();
  }
  return answers;
}

describe('a UDP listener with udp_proxy', () => {
  let proxy: RunningProxy;
  before(async () => {
    const matcher = { on_no_match: { action: { name: 'route', typed_config: { '@type': ROUTE, cluster: 'echo' } } } };
    proxy = await startProxy(
      bootstrap(
        [udpListener('udp', { matcher, idle_timeout: '0.5s' }), udpListener('hashed', { cluster: 'both', hash_policies: [{ source_ip: true }] })],
        [cluster('echo', [echoes[0]!.port]), cluster('both', [echoes[0]!.port, echoes[1]!.port], { lb_policy: 'RING_HASH' })],
      ),
      ['--concurrency', '2'],
    );
  });

  it('proxies each client as a session (20 clients on 2 workers), both ways, with Envoy figures', async () => {
    const port = proxy.ports.get('udp')!;
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => exchange(port, [`one ${i}`, `two ${i}`, `three ${i}`])));
    results.forEach((answers, i) => assert.deepEqual([...answers].sort(), [`a:one ${i}`, `a:three ${i}`, `a:two ${i}`]));
    assert.equal(await statValue(proxy, 'udp.udp.downstream_sess_total'), 20);
    assert.equal(await statValue(proxy, 'udp.udp.downstream_sess_rx_datagrams'), 60);
    assert.equal(await statValue(proxy, 'udp.udp.downstream_sess_tx_datagrams'), 60);
    assert.equal(await statValue(proxy, 'cluster.echo.udp.sess_tx_datagrams'), 60);
    // Each session ends after idle_timeout without a datagram.
    await waitFor('the sessions to time out', async () => ((await statValue(proxy, 'udp.udp.downstream_sess_active')) === 0 ? true : undefined));
    assert.equal(await statValue(proxy, 'udp.udp.idle_timeout'), 20);
  });

  it('keeps every session of one source address on one host with hash_policies source_ip (RING_HASH)', async () => {
    const port = proxy.ports.get('hashed')!;
    const answers = (await Promise.all(Array.from({ length: 10 }, (_, i) => exchange(port, [`m${i}`])))).flat();
    const hosts = new Set(answers.map((a) => a.split(':')[0]));
    assert.equal(hosts.size, 1, `every client of 127.0.0.1 reached one host: ${answers.join(', ')}`);
  });
});

describe('the UDP sockets belong to the tree', () => {
  it('serve on after their worker is replaced', async () => {
    const proxy = await startProxy(bootstrap([udpListener('udp', { cluster: 'echo' })], [cluster('echo', [echoes[0]!.port])]), ['--concurrency', '1']);
    const port = proxy.ports.get('udp')!;
    assert.deepEqual(await exchange(port, ['before']), ['a:before']);
    const worker = workerPid(proxy.pid);
    process.kill(worker, 'SIGKILL');
    await waitFor('the worker to die', () => !alive(worker) || undefined);
    await waitFor('a replacement worker', () => {
      const pid = workerPidOrUndefined(proxy.pid);
      return pid !== undefined && pid !== worker ? pid : undefined;
    });
    // The replacement reads the same socket: the next datagram is served (a new session).
    assert.deepEqual(await waitFor('an answer from the replacement', () => exchange(port, ['after'], 2000).catch(() => undefined)), ['a:after']);
  });

  it('are handed to the next epoch by a hot restart, port and all', async () => {
    const config = bootstrap([udpListener('udp', { cluster: 'echo' })], [cluster('echo', [echoes[0]!.port])]);
    const e0 = await startProxy(config, ['--concurrency', '1']);
    const port = e0.ports.get('udp')!;
    assert.deepEqual(await exchange(port, ['epoch 0']), ['a:epoch 0']);
    const e1 = await startProxy(config, ['--base-id', String(e0.baseId), '--concurrency', '2', '--restart-epoch', '1', '--drain-time-s', '1', '--parent-shutdown-time-s', '2']);
    assert.equal(e1.ports.get('udp'), port, 'the same port');
    await waitFor('epoch 0 to exit', () => (e0.process.exitCode !== null ? true : undefined));
    assert.deepEqual(await exchange(port, ['epoch 1']), ['a:epoch 1']);
    assert.equal(await statValue(e1, 'udp.udp.downstream_sess_total'), 2, 'the counters continue from epoch 0');
  });
});

describe("Envoy's checks on UDP listeners", () => {
  it('refuse filter chains, a missing or misplaced udp_proxy, and matchers beyond on_no_match, by name', async () => {
    const refused = async (listener: object, message: RegExp) => {
      const r = await runProxy(['--mode', 'validate', '-c', tmp.file(`l${Math.random()}.json`, JSON.stringify(bootstrap([listener], [cluster('echo', [1])])))]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, message);
    };
    const base = udpListener('u', { cluster: 'echo' }) as Record<string, unknown>;
    await refused({ ...base, filter_chains: [{ filters: [] }] }, /a UDP listener's filter chains are for QUIC, which Node 20 does not have/);
    await refused({ ...base, listener_filters: [] }, /a UDP listener needs exactly one envoy\.filters\.udp_listener\.udp_proxy listener filter/);
    await refused({ name: 't', address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, listener_filters: base.listener_filters, filter_chains: [{ filters: [{ name: 'envoy.filters.network.tcp_proxy', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy', stat_prefix: 't', cluster: 'echo' } }] }] }, /envoy\.filters\.udp_listener\.udp_proxy is for a listener whose address has protocol UDP/);
    await refused(udpListener('m', { matcher: { matcher_list: { matchers: [] }, on_no_match: { action: { name: 'r', typed_config: { '@type': ROUTE, cluster: 'echo' } } } } }), /matcher_list: field 'matcher_list' of xds\.type\.matcher\.v3\.Matcher is not supported by this proxy \(the UDP proxy's matcher may only have on_no_match/);
    await refused(udpListener('o', { cluster: 'echo', use_original_src_ip: true }), /use_original_src_ip.*IP_TRANSPARENT/);
    await refused({ ...base, udp_listener_config: { quic_options: {} } }, /quic_options.*HTTP\/3 \(QUIC\) is not available in Node 20/);
  });
});

/** The supervisor's worker_0 (its process arguments end with `worker_0`). */
function workerPidOrUndefined(supervisor: number): number | undefined {
  const out = spawnSync('ps', ['-o', 'pid=,args=', '--ppid', String(supervisor)], { encoding: 'utf8' }).stdout;
  for (const line of out.trim().split('\n')) {
    const m = /^\s*(\d+)\s+.*\sworker_0$/.exec(line);
    if (m) return Number(m[1]);
  }
  return undefined;
}

function workerPid(supervisor: number): number {
  const pid = workerPidOrUndefined(supervisor);
  assert.ok(pid !== undefined, 'a worker_0 process');
  return pid;
}
