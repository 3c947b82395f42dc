// The statsd sinks against a real statsd daemon (Etsy's statsd, from npm, with its default
// socket buffer): every line it gets parses (no bad line: this proxy's internal per-host
// figures, whose names hold a colon, are not sent), counters add up, and every histogram sample
// of a 3,000-request burst arrives (each is sent when it is recorded, not in one burst at the
// flush), with the value recorded.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { Agent, request } from 'node:http';
import { connect, createServer, type AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { StatsStore } from '../shared/stats/store.js';
import { openStatsdSinks, sendHistogramSamples } from '../shared/extensions/stat-sinks/statsd/statsd.js';
import { routesListener, staticCluster } from './helpers/bootstraps.js';
import { startProxy, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';
import { tempDir } from './helpers/cli.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

const statsdMain = join(dirname(createRequire(import.meta.url).resolve('statsd/package.json')), 'stats.js');

/** A port nothing listens on now (UDP or TCP), for a daemon that cannot be told port 0. */
async function freePort(kind: 'udp' | 'tcp'): Promise<number> {
  if (kind === 'udp') {
    const s = createSocket('udp4');
    s.bind(0, '127.0.0.1');
    await once(s, 'listening');
    const port = (s.address() as AddressInfo).port;
    s.close();
    return port;
  }
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Etsy's statsd on 127.0.0.1, no backend, no flush during the test: what it received stays in its counters and timers. */
class StatsdDaemon {
  private constructor(
    readonly port: number,
    private readonly mgmtPort: number,
    private readonly child: ChildProcess,
    private readonly dir: ReturnType<typeof tempDir>,
  ) {}

  /** `tcp`: the daemon's TCP server (servers/tcp) in place of its UDP one. */
  static async start(tcp = false): Promise<StatsdDaemon> {
    const dir = tempDir('proxy-statsd-');
    const [port, mgmtPort] = [await freePort(tcp ? 'tcp' : 'udp'), await freePort('tcp')];
    const listen = tcp ? { servers: [{ server: './servers/tcp', address: '127.0.0.1', port }] } : { port, address: '127.0.0.1' };
    const config = dir.file('config.js', `module.exports = ${JSON.stringify({ ...listen, mgmt_port: mgmtPort, mgmt_address: '127.0.0.1', backends: [], flushInterval: 3_600_000, title: false })};\n`);
    const child = spawn(process.execPath, [statsdMain, config], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    const daemon = new StatsdDaemon(port, mgmtPort, child, dir);
    await waitFor(`statsd listening (${output})`, async () => ((await daemon.command('health').catch(() => '')).includes('health: up') ? true : undefined), 20_000);
    return daemon;
  }

  /** A management command's answer (up to its END). */
  command(cmd: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(this.mgmtPort, '127.0.0.1', () => socket.write(`${cmd}\n`));
      let text = '';
      socket.on('data', (d) => {
        text += d;
        if (text.includes('END') || (cmd === 'health' && text.includes('\n'))) {
          socket.end();
          resolve(text);
        }
      });
      socket.on('error', reject);
    });
  }

  /** A counter's value (util.inspect's text of statsd's counters). */
  async counter(name: string): Promise<number> {
    const m = new RegExp(`'${name.replace(/\./g, '\\.')}': (\\d+)`).exec(await this.command('counters'));
    return m ? Number(m[1]) : 0;
  }

  /** How many samples a timer holds, and the first ones shown. */
  async timer(name: string): Promise<{ count: number; first: number[] }> {
    const text = await this.command('timers');
    const m = new RegExp(`'${name.replace(/\./g, '\\.')}': \\[([^\\]]*)\\]`).exec(text);
    if (!m) return { count: 0, first: [] };
    const more = /\.\.\. (\d+) more items?/.exec(m[1]!);
    const first = m[1]!.split(',').map((v) => v.trim()).filter((v) => /^[\d.]+$/.test(v)).map(Number);
    return { count: first.length + (more ? Number(more[1]) : 0), first };
  }

  stop(): void {
    this.child.kill('SIGKILL');
    this.dir.cleanup();
  }
}

describe('statsd sinks and a real statsd daemon', () => {
  let statsd: StatsdDaemon;
  let dog: StatsdDaemon;
  let upstream: Upstream;
  let proxy: RunningProxy;

  before(async () => {
    [statsd, dog] = [await StatsdDaemon.start(), await StatsdDaemon.start()];
    upstream = await startUpstream('backend');
    proxy = await startProxy({
      stats_flush_interval: '0.2s',
      stats_sinks: [
        { name: 'envoy.stat_sinks.statsd', typed_config: { '@type': 'type.googleapis.com/envoy.config.metrics.v3.StatsdSink', address: { socket_address: { protocol: 'UDP', address: '127.0.0.1', port_value: statsd.port } } } },
        { name: 'envoy.stat_sinks.dog_statsd', typed_config: { '@type': 'type.googleapis.com/envoy.config.metrics.v3.DogStatsdSink', max_bytes_per_datagram: 1400, address: { socket_address: { protocol: 'UDP', address: '127.0.0.1', port_value: dog.port } } } },
      ],
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [routesListener('ingress', [
          { match: { prefix: '/direct' }, direct_response: { status: 200, body: { inline_string: 'ok' } } },
          { match: { prefix: '/' }, route: { cluster: 'backend' } },
        ])],
        // Its host's per-host figures (_host.backend.127.0.0.1:<port>.*) are what used to reach the sinks, with a colon in the name.
        clusters: [staticCluster('backend', upstream.port)],
      },
    }, ['--concurrency', '1']);
  });

  after(async () => {
    await stopAllProxies();
    await upstream.close();
    statsd?.stop();
    dog?.stop();
  });

  it('gets lines that all parse, counters that add up to what happened, and no internal figure', async () => {
    for (let i = 0; i < 6; i++) {
      await new Promise<void>((resolve, reject) => request(`http://127.0.0.1:${proxy.ports.get('ingress')}/`, (res) => res.resume().on('end', resolve)).on('error', reject).end());
    }
    await waitFor('the six requests counted by statsd', async () => ((await statsd.counter('envoy.cluster.backend.upstream_rq_total')) >= 6 ? true : undefined));
    await waitFor('a flush or two more', async () => ((await statsd.counter('statsd.metrics_received')) > 0 ? true : undefined));
    assert.equal(await statsd.counter('envoy.cluster.backend.upstream_rq_total'), 6);
    assert.equal(await statsd.counter('statsd.bad_lines_seen'), 0);
    assert.doesNotMatch(await statsd.command('counters'), /'envoy\._/);
    await waitFor('DogStatsD\'s tagged counter', async () => ((await dog.counter('envoy.cluster.upstream_rq_total;envoy.cluster_name=backend')) >= 6 ? true : undefined));
    assert.equal(await dog.counter('statsd.bad_lines_seen'), 0);
  });

  it('gets every histogram sample of a 3,000-request burst', async () => {
    const burst = 3000;
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    const base = await statsd.timer('envoy.http.ingress.downstream_rq_time');
    let sent = 0;
    const one = (): Promise<void> =>
      new Promise((resolve, reject) => request(`http://127.0.0.1:${proxy.ports.get('ingress')}/direct`, { agent }, (res) => res.resume().on('end', resolve)).on('error', reject).end());
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (sent < burst) {
        sent++;
        await one();
      }
    }));
    agent.destroy();
    await waitFor('every sample at statsd', async () => ((await statsd.timer('envoy.http.ingress.downstream_rq_time')).count >= base.count + burst ? true : undefined), 20_000).catch(() => undefined);
    assert.equal((await statsd.timer('envoy.http.ingress.downstream_rq_time')).count, base.count + burst);
    assert.equal(await statsd.counter('statsd.bad_lines_seen'), 0);
  });
});

describe('a histogram sample', () => {
  it('goes out when it is recorded (with the others of its turn of the event loop), with the value recorded (not its bin\'s), and never for an internal histogram', async () => {
    const receiver = createSocket('udp4');
    const got: string[] = [];
    const datagrams: string[] = [];
    receiver.on('message', (m) => {
      datagrams.push(m.toString());
      got.push(...m.toString().split('\n'));
    });
    receiver.bind(0, '127.0.0.1');
    await once(receiver, 'listening');
    const store = new StatsStore();
    const port = (receiver.address() as AddressInfo).port;
    const sinks = openStatsdSinks({ stats_sinks: [{ name: 'envoy.stat_sinks.statsd', typed_config: { '@type': 'type.googleapis.com/envoy.config.metrics.v3.StatsdSink', address: { socket_address: { address: '127.0.0.1', port_value: port } } } }] });
    sendHistogramSamples(store, sinks);
    store.histogram('cluster.a.upstream_rq_time').record(1234);
    store.histogram('_contention.wait').record(7);
    store.histogram('cluster.a.upstream_rq_time').record(17);
    await waitFor('two samples', () => (got.length >= 2 ? true : undefined));
    assert.deepEqual(got, ['envoy.cluster.a.upstream_rq_time:1234|ms', 'envoy.cluster.a.upstream_rq_time:17|ms']);
    assert.equal(datagrams.length, 1, 'the samples of one turn of the event loop share a datagram');
    // A sample of a later turn goes on its own.
    store.histogram('cluster.a.upstream_rq_time').record(5);
    await waitFor('the third sample', () => (got.length >= 3 ? true : undefined));
    assert.deepEqual([datagrams.length, got[2]], [2, 'envoy.cluster.a.upstream_rq_time:5|ms']);
    for (const s of sinks) s.close();
    receiver.close();
  });
});

describe('statsd over TCP (tcp_cluster_name), to a real statsd daemon', () => {
  it("sends the tree's counters to the first host of a static cluster, as Envoy's TcpStatsdSink", async () => {
    const statsd = await StatsdDaemon.start(true);
    const upstream = await startUpstream('backend');
    try {
      const proxy = await startProxy({
        stats_flush_interval: '0.2s',
        stats_sinks: [{ name: 'envoy.stat_sinks.statsd', typed_config: { '@type': 'type.googleapis.com/envoy.config.metrics.v3.StatsdSink', tcp_cluster_name: 'statsd', prefix: 'tcp' } }],
        admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
        static_resources: {
          listeners: [routesListener('ingress', [{ match: { prefix: '/' }, route: { cluster: 'backend' } }])],
          // As Envoy's hotrestart_test.sh configures it: a STRICT_DNS cluster of localhost.
          clusters: [staticCluster('backend', upstream.port), { ...staticCluster('statsd', statsd.port), type: 'STRICT_DNS', load_assignment: { cluster_name: 'statsd', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: 'localhost', port_value: statsd.port } } } }] }] } }],
        },
      }, ['--concurrency', '1']);
      for (let i = 0; i < 4; i++) {
        await new Promise<void>((resolve, reject) => request(`http://127.0.0.1:${proxy.ports.get('ingress')}/`, (res) => res.resume().on('end', resolve)).on('error', reject).end());
      }
      await waitFor('the four requests counted by statsd over TCP', async () => ((await statsd.counter('tcp.cluster.backend.upstream_rq_total')) >= 4 ? true : undefined));
      assert.equal(await statsd.counter('tcp.cluster.backend.upstream_rq_total'), 4);
      assert.equal(await statsd.counter('statsd.bad_lines_seen'), 0);
      await proxy.stop();
    } finally {
      await upstream.close();
      statsd.stop();
    }
  });
});
