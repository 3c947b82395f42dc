// Which of Envoy's standard statistics (shared/stats/envoy-catalogue.json) a running proxy
// serves, with the type Envoy gives them. Starts the proxy on a bootstrap that uses the
// subsystems this proxy implements (an HTTP listener routing to a health-checked, outlier-detected
// cluster, a TCP proxy, a UDP proxy, a runtime layer), sends some traffic, reads /stats by type,
// and reports, per subsystem, the names that apply to this configuration: present with Envoy's
// type, present with another type, missing. Names whose placeholders this configuration does not
// instantiate (a virtual cluster, a zone, a certificate …) or that need an optional setting are
// counted apart.
// Usage: node --import tsx scripts/stats-catalogue.ts [--missing]   (--missing lists the names)
// Prints figures; asserts nothing.
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface Entry {
  name: string;
  type: string;
  subsystem: string;
  optional?: boolean;
}

const root = join(import.meta.dirname, '..');
const catalogue = (JSON.parse(readFileSync(join(root, 'shared/stats/envoy-catalogue.json'), 'utf8')) as { statistics: Entry[] }).statistics;

async function get(url: string): Promise<string> {
  return (await fetch(url)).text();
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'stats-catalogue-'));
  const app = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => app.listen(0, '127.0.0.1', r));
  const appPort = (app.address() as AddressInfo).port;
  const udpEcho = createSocket('udp4');
  udpEcho.on('message', (m, r) => udpEcho.send(m, r.port, r.address));
  await new Promise<void>((r) => udpEcho.bind(0, '127.0.0.1', r));
  const udpPort = (udpEcho.address() as AddressInfo).port;
  const cluster = (name: string, port: number, extra: object = {}) => ({ name, type: 'STATIC', connect_timeout: '1s', load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } }] }] }, ...extra });
  const bootstrap = {
    node: { id: 'catalogue', cluster: 'catalogue' },
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    stats_flush_on_admin: true,
    layered_runtime: { layers: [{ name: 'static', static_layer: { 'some.key': 1 } }, { name: 'admin', admin_layer: {} }] },
    static_resources: {
      listeners: [
        {
          name: 'http',
          address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
          filter_chains: [{ filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: {
            '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
            stat_prefix: 'ingress',
            route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'backend' } }] }] },
            http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } }],
          } }] }],
        },
        { name: 'tcp', address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [{ name: 'tcp', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy', stat_prefix: 'tcp', cluster: 'backend' } }] }] },
        { name: 'udp', address: { socket_address: { protocol: 'UDP', address: '127.0.0.1', port_value: 0 } }, listener_filters: [{ name: 'envoy.filters.udp_listener.udp_proxy', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.udp.udp_proxy.v3.UdpProxyConfig', stat_prefix: 'udp', matcher: { on_no_match: { action: { name: 'route', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.udp.udp_proxy.v3.Route', cluster: 'datagrams' } } } } } }] },
      ],
      clusters: [
        cluster('backend', appPort, {
          health_checks: [{ timeout: '1s', interval: '1s', unhealthy_threshold: 2, healthy_threshold: 1, http_health_check: { path: '/' } }],
          outlier_detection: { consecutive_5xx: 5 },
        }),
        cluster('datagrams', udpPort),
      ],
    },
  };
  const config = join(dir, 'bootstrap.json');
  writeFileSync(config, JSON.stringify(bootstrap));
  const adminFile = join(dir, 'admin');
  const proxy = spawn(process.execPath, [join(root, 'bin/proxy.js'), '-c', config, '--concurrency', '1', '--disable-hot-restart', '--admin-address-path', adminFile, '-l', 'warning'], { stdio: 'inherit' });
  try {
    for (let i = 0; i < 200 && !(existsSync(adminFile) && readFileSync(adminFile, 'utf8')); i++) await new Promise((r) => setTimeout(r, 50));
    const admin = readFileSync(adminFile, 'utf8');
    for (let i = 0; i < 100 && (await get(`http://${admin}/ready`)).trim() !== 'LIVE'; i++) await new Promise((r) => setTimeout(r, 50));
    const listeners = JSON.parse(await get(`http://${admin}/listeners?format=json`)) as { listener_statuses: { name: string; local_address: { socket_address: { port_value: number } } }[] };
    const port = (n: string) => listeners.listener_statuses.find((l) => l.name === n)!.local_address.socket_address.port_value;
    for (let i = 0; i < 20; i++) await get(`http://127.0.0.1:${port('http')}/`);
    const client = createSocket('udp4');
    client.send('hello', port('udp'), '127.0.0.1');
    await new Promise((r) => setTimeout(r, 300));
    client.close();
    const names = async (type: string) => new Set((await get(`http://${admin}/stats?type=${type}`)).split('\n').map((l) => l.slice(0, l.indexOf(':'))).filter(Boolean));
    const served = { counter: await names('Counters'), gauge: await names('Gauges'), histogram: await names('Histograms'), text_readout: await names('TextReadouts') };
    const substitutions: Record<string, string> = {
      '<stat_prefix>': '', // by subsystem, below
      '<name>': 'backend',
      '<address>': `127.0.0.1_${port('http')}`,
      '<priority>': 'default',
    };
    const prefixOf: Record<string, string> = { tcp_proxy: 'tcp', udp_proxy: 'udp' };
    type Outcome = 'present' | 'wrong type' | 'missing' | 'not instantiated' | 'optional';
    const bySubsystem = new Map<string, Map<Outcome, string[]>>();
    for (const e of catalogue) {
      let name = e.name.replaceAll('<stat_prefix>', prefixOf[e.subsystem] ?? 'ingress');
      if (e.subsystem === 'udp_proxy') name = name.replaceAll('<name>', 'datagrams');
      for (const [k, v] of Object.entries(substitutions)) if (k !== '<stat_prefix>') name = name.replaceAll(k, v);
      let outcome: Outcome;
      if (e.optional) outcome = 'optional';
      else if (/<[^>]+>/.test(name)) outcome = 'not instantiated';
      else if ((served as Record<string, Set<string>>)[e.type]?.has(name)) outcome = 'present';
      else if (Object.values(served).some((s) => s.has(name))) outcome = 'wrong type';
      else outcome = 'missing';
      const m = bySubsystem.get(e.subsystem) ?? new Map<Outcome, string[]>();
      bySubsystem.set(e.subsystem, m);
      m.set(outcome, [...(m.get(outcome) ?? []), `${name} (${e.type})`]);
    }
    const outcomes: Outcome[] = ['present', 'wrong type', 'missing', 'not instantiated', 'optional'];
    console.log(`Envoy's standard statistics (${catalogue.length} in shared/stats/envoy-catalogue.json) served by this proxy for this configuration`);
    console.log(`| subsystem | ${outcomes.join(' | ')} |`);
    console.log(`|---|${outcomes.map(() => '---').join('|')}|`);
    const totals = new Map<Outcome, number>();
    for (const [subsystem, m] of [...bySubsystem].sort()) {
      console.log(`| ${subsystem} | ${outcomes.map((o) => m.get(o)?.length ?? 0).join(' | ')} |`);
      for (const o of outcomes) totals.set(o, (totals.get(o) ?? 0) + (m.get(o)?.length ?? 0));
    }
    console.log(`| all | ${outcomes.map((o) => totals.get(o) ?? 0).join(' | ')} |`);
    if (process.argv.includes('--missing')) {
      for (const [subsystem, m] of [...bySubsystem].sort()) {
        for (const o of ['wrong type', 'missing'] as const) for (const n of m.get(o) ?? []) console.log(`${subsystem}\t${o}\t${n}`);
      }
    }
  } finally {
    proxy.kill('SIGTERM');
    app.close();
    udpEcho.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
