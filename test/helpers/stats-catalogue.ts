import { readFileSync } from 'node:fs';
import { createServer as createHttp } from 'node:http';
import { createServer as createHttps } from 'node:https';
import { connect as h2connect } from 'node:http2';
import { createSocket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { join } from 'node:path';
import { DOWNSTREAM_TLS_TYPE, makePki, UPSTREAM_TLS_TYPE } from './certs.js';
import { HCM_TYPE, ROUTER_TYPE, TCP_PROXY_TYPE } from './bootstraps.js';
import { repoRoot, tempDir } from './cli.js';
import { httpRequest, startProxy, type RunningProxy } from './proxy.js';
import { CLUSTER_URL, LISTENER_URL, ROUTE_URL, TestControlPlane } from './control-plane.js';
import { startH2Upstream, startUpstream } from './upstream.js';

/**
 * Envoy's standard statistics (shared/stats/envoy-catalogue.json) against a running proxy whose
 * configuration uses every subsystem the catalogue covers that this proxy implements: HTTP over
 * plaintext and TLS (with the TLS inspector), HTTP/1.1 and HTTP/2 both sides, a health-checked,
 * outlier-detected cluster with circuit breakers and retries, ring-hash and Maglev clusters, a TLS
 * upstream, a TCP proxy, a UDP proxy, clusters and routes from a control plane over ADS (CDS,
 * RDS), listeners from a file (LDS), a file access log and runtime layers. After some traffic, every entry is one of:
 * - `refused`: it needs a feature this proxy refuses by name, so no configuration it accepts has it;
 * - `cannot`: it cannot apply to a tree of Node processes (the reason says why);
 * - `gap`: it applies, and this proxy does not serve it yet (the reason says what is missing);
 * - applicable: served, with Envoy's type.
 * Used by test/stats-catalogue.test.ts and scripts/stats-catalogue.ts.
 */

export interface CatalogueEntry {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'text_readout';
  subsystem: string;
  doc: string;
  refused?: string;
  cannot?: string;
  gap?: string;
  /** Where the entry differs from Envoy's page (a name spelled as Envoy emits it), and why. */
  note?: string;
}

export const cataloguePath = join(repoRoot, 'shared/stats/envoy-catalogue.json');

export function loadCatalogue(): CatalogueEntry[] {
  return (JSON.parse(readFileSync(cataloguePath, 'utf8')) as { statistics: CatalogueEntry[] }).statistics;
}

export interface CatalogueRun {
  proxy: RunningProxy;
  /** Names served, by Envoy's type. */
  served: Record<CatalogueEntry['type'], Set<string>>;
  /** The entry's name with this configuration's values for its placeholders. */
  instantiate(entry: CatalogueEntry): string;
  stop(): Promise<void>;
}

const vhost = (routes: object[]) => ({ name: 'all', domains: ['*'], routes });
const router = [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } }];
const cluster = (name: string, port: number, extra: object = {}) => ({
  name,
  type: 'STATIC',
  connect_timeout: '1s',
  load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } }] }] },
  ...extra,
});

export async function startCatalogueRun(): Promise<CatalogueRun> {
  const tmp = tempDir('stats-catalogue-');
  const pki = makePki();
  const leaf = pki.leaf('localhost', { sans: ['DNS:localhost', 'IP:127.0.0.1'], serial: '51' });
  const upstream = await startUpstream('A');
  const h2 = await startH2Upstream();
  const https = createHttps({ cert: leaf.cert, key: leaf.key }, (req, res) => {
    req.resume();
    res.end('tls upstream');
  });
  await new Promise<void>((r) => https.listen(0, '127.0.0.1', r));
  // An upstream that says it is a canary (x-envoy-upstream-canary), for the router's canary.* codes.
  const canary = createHttp((req, res) => {
    req.resume();
    res.setHeader('x-envoy-upstream-canary', 'true');
    res.end('canary');
  });
  await new Promise<void>((r) => canary.listen(0, '127.0.0.1', r));
  const canaryPort = (canary.address() as AddressInfo).port;
  const httpsPort = (https.address() as AddressInfo).port;
  const udpEcho = createSocket('udp4');
  udpEcho.on('message', (m, r) => udpEcho.send(m, r.port, r.address));
  await new Promise<void>((r) => udpEcho.bind(0, '127.0.0.1', r));
  const udpPort = (udpEcho.address() as AddressInfo).port;

  const accessLog = join(tmp.dir, 'access.log');
  // From one control plane: clusters and listeners over their own gRPC services (each with its
  // control_plane.* figures under cluster_manager.cds. / listener_manager.lds.), routes over ADS
  // (control_plane.* at the root).
  const controlPlane = await TestControlPlane.start();
  controlPlane.identifier = 'catalogue-control-plane';
  controlPlane.set(CLUSTER_URL, 'c1', [{ '@type': CLUSTER_URL, ...cluster('discovered', upstream.port) }]);
  controlPlane.set(ROUTE_URL, 'r1', [{ '@type': ROUTE_URL, name: 'file_routes', virtual_hosts: [vhost([{ match: { prefix: '/' }, route: { cluster: 'discovered' } }])] }]);
  controlPlane.set(LISTENER_URL, 'l1', [{
    '@type': LISTENER_URL,
    name: 'discovered_listener',
    address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
    filter_chains: [{ filters: [{ name: 'hcm', typed_config: { '@type': HCM_TYPE, stat_prefix: 'dynamic', rds: { route_config_name: 'file_routes', config_source: { ads: {}, resource_api_version: 'V3' } }, http_filters: router } }] }],
  }]);

  const hcm = (statPrefix: string, routes: object[], extra: object = {}) => ({
    name: 'envoy.filters.network.http_connection_manager',
    typed_config: {
      '@type': HCM_TYPE,
      stat_prefix: statPrefix,
      add_user_agent: true,
      internal_address_config: { cidr_ranges: [{ address_prefix: '10.0.0.0', prefix_len: 8 }] },
      route_config: { name: `${statPrefix}_routes`, virtual_hosts: [vhost(routes)] },
      http_filters: router,
      access_log: [{ name: 'envoy.access_loggers.file', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog', path: accessLog } }],
      ...extra,
    },
  });
  const routes = [
    { match: { prefix: '/h2' }, route: { cluster: 'backend_h2' } },
    { match: { prefix: '/tls' }, route: { cluster: 'backend_tls' } },
    { match: { prefix: '/canary' }, route: { cluster: 'canary' } },
    { match: { prefix: '/ring' }, route: { cluster: 'ring', hash_policy: [{ header: { header_name: 'x-user' } }] } },
    { match: { prefix: '/maglev' }, route: { cluster: 'maglev', hash_policy: [{ header: { header_name: 'x-user' } }] } },
    { match: { prefix: '/' }, route: { cluster: 'backend', retry_policy: { retry_on: '5xx', num_retries: 1 } } },
  ];
  const bootstrap = {
    node: { id: 'catalogue', cluster: 'catalogue' },
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    stats_flush_on_admin: true,
    layered_runtime: { layers: [{ name: 'static', static_layer: { 'some.key': 1 } }, { name: 'admin', admin_layer: {} }] },
    dynamic_resources: {
      ads_config: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] },
      cds_config: { api_config_source: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] }, resource_api_version: 'V3' },
      lds_config: { api_config_source: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] }, resource_api_version: 'V3' },
    },
    static_resources: {
      listeners: [
        { name: 'http', address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [hcm('ingress', routes)] }] },
        {
          name: 'https',
          address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
          listener_filters: [{ name: 'envoy.filters.listener.tls_inspector', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector' } }],
          filter_chains: [{
            filter_chain_match: { transport_protocol: 'tls' },
            transport_socket: { name: 'envoy.transport_sockets.tls', typed_config: { '@type': DOWNSTREAM_TLS_TYPE, common_tls_context: { tls_certificates: [{ certificate_chain: { filename: leaf.certPath }, private_key: { filename: leaf.keyPath } }], alpn_protocols: ['h2', 'http/1.1'] } } },
            filters: [hcm('secure', routes)],
          }],
        },
        { name: 'tcp', address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [{ name: 'tcp', typed_config: { '@type': TCP_PROXY_TYPE, stat_prefix: 'tcp', cluster: 'backend' } }] }] },
        {
          name: 'udp',
          address: { socket_address: { protocol: 'UDP', address: '127.0.0.1', port_value: 0 } },
          listener_filters: [{ name: 'envoy.filters.udp_listener.udp_proxy', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.udp.udp_proxy.v3.UdpProxyConfig', stat_prefix: 'udp', matcher: { on_no_match: { action: { name: 'route', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.udp.udp_proxy.v3.Route', cluster: 'datagrams' } } } } } }],
        },
      ],
      clusters: [
        cluster('backend', upstream.port, {
          health_checks: [{ timeout: '1s', interval: '1s', unhealthy_threshold: 2, healthy_threshold: 1, http_health_check: { path: '/' } }],
          outlier_detection: { consecutive_5xx: 5 },
          circuit_breakers: { thresholds: [{ max_connections: 100, track_remaining: true }] },
        }),
        cluster('backend_h2', h2.port, { typed_extension_protocol_options: { 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': { '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions', explicit_http_config: { http2_protocol_options: {} } } } }),
        cluster('backend_tls', httpsPort, { transport_socket: { name: 'envoy.transport_sockets.tls', typed_config: { '@type': UPSTREAM_TLS_TYPE, sni: 'localhost', common_tls_context: { validation_context: { trusted_ca: { filename: pki.caPath } }, tls_certificates: [{ certificate_chain: { filename: leaf.certPath }, private_key: { filename: leaf.keyPath } }] } } } }),
        cluster('canary', canaryPort),
        cluster('ring', upstream.port, { lb_policy: 'RING_HASH' }),
        cluster('maglev', upstream.port, { lb_policy: 'MAGLEV' }),
        cluster('datagrams', udpPort),
        cluster('xds', controlPlane.port),
      ],
    },
  };
  const proxy = await startProxy(bootstrap, ['--concurrency', '1']);
  const port = (name: string) => proxy.ports.get(name)!;

  // Traffic through every part.
  const base = `http://127.0.0.1:${port('http')}`;
  for (const path of ['/', '/h2', '/tls', '/ring', '/maglev', '/canary', '/flaky?key=catalogue&fail=1']) {
    await httpRequest(`${base}${path}`, { headers: { 'x-user': 'u1', 'user-agent': 'Mozilla/5.0 (iOS 17.0; iPhone)' } });
  }
  // An internal request (its client 10.1.2.3 is in internal_address_config), for the router's internal.* codes.
  await httpRequest(`${base}/`, { headers: { 'x-forwarded-for': '10.1.2.3' } });
  await httpRequest(`http://127.0.0.1:${port('discovered_listener')}/`);
  const h2session = h2connect(base);
  await new Promise<void>((resolve, reject) => {
    const rq = h2session.request({ ':path': '/h2' });
    rq.on('response', () => rq.resume());
    rq.on('end', resolve);
    rq.on('error', reject);
    rq.end();
  });
  h2session.close();
  await new Promise<void>((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port: port('https'), servername: 'localhost', ca: pki.ca, ALPNProtocols: ['http/1.1'] }, () => {
      socket.end('GET / HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n');
    });
    socket.resume();
    socket.on('end', resolve);
    socket.on('error', reject);
  });
  const udp = createSocket('udp4');
  await new Promise<void>((resolve) => {
    udp.on('message', () => resolve());
    udp.send('hello', port('udp'), '127.0.0.1');
  });
  udp.close();

  const names = async (type: string) => new Set((await httpRequest(`http://${proxy.admin}/stats?type=${type}`)).body.split('\n').map((l) => l.slice(0, l.indexOf(':'))).filter(Boolean));
  const served = { counter: await names('Counters'), gauge: await names('Gauges'), histogram: await names('Histograms'), text_readout: await names('TextReadouts') };

  const substitutions: [string, string][] = [
    ['<address>', `127.0.0.1_${port('https')}`],
    ['<priority>', 'default'],
    ['<*xx>', '2xx'],
    ['<*>', '200'],
    ['<user_agent>', 'ios'],
    ['<route_config_name>', 'file_routes'],
    ['<handler>', 'worker_0'],
    ['<thread_name>', 'main_thread'],
    ['<id>', '0'],
    ['<worker_id>', 'worker_0'],
    ['<version>', 'TLSv1.3'],
    ['<cipher>', 'TLS_AES_256_GCM_SHA384'],
    ['<curve>', 'X25519'],
    ['<sigalg>', 'ecdsa_secp256r1_sha256'],
    // Certificates from files: Envoy's name digests no inline bytes.
    ['<cert_name>', 'unnamed_cert_e3b0c442'],
  ];
  // The stat prefix and cluster name each subsystem's names are read under.
  const prefixOf: Record<string, string> = { tcp_proxy: 'tcp', udp_proxy: 'udp', rds: 'dynamic', listener: 'secure' };
  const clusterOf: Record<string, string> = { udp_proxy: 'datagrams', ssl: 'backend_tls', http2: 'backend_h2' };
  const instantiate = (e: CatalogueEntry): string => {
    let name = e.name.replaceAll('<stat_prefix>', prefixOf[e.subsystem] ?? 'ingress').replaceAll('<name>', clusterOf[e.subsystem] ?? 'backend');
    if (e.subsystem === 'load_balancer' && name.includes('ring_hash_lb.')) name = name.replace('cluster.backend.', 'cluster.ring.');
    if (e.subsystem === 'load_balancer' && name.includes('maglev_lb.')) name = name.replace('cluster.backend.', 'cluster.maglev.');
    if (e.subsystem === 'router' && name.includes('.canary.')) name = name.replace('cluster.backend.', 'cluster.canary.');
    if (e.subsystem === 'http_conn_man' || e.subsystem === 'router') name = name.replace(`listener.127.0.0.1_${port('https')}`, `listener.127.0.0.1_${port('http')}`);
    for (const [k, v] of substitutions) name = name.replaceAll(k, v);
    return name;
  };
  return {
    proxy,
    served,
    instantiate,
    async stop() {
      await proxy.stop();
      await upstream.close();
      await h2.close();
      await new Promise((r) => https.close(r));
      await new Promise((r) => canary.close(r));
      controlPlane.stop();
      udpEcho.close();
      pki.remove();
      tmp.cleanup();
    },
  };
}
