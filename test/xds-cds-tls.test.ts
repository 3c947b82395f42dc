import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server } from 'node:https';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { routesListener } from './helpers/bootstraps.js';
import { makePki, UPSTREAM_TLS_TYPE, type TestPki } from './helpers/certs.js';
import { tempDir } from './helpers/cli.js';
import { httpRequest, startProxy, stopAllProxies } from './helpers/proxy.js';

/** A cluster from CDS that speaks TLS to its hosts (UpstreamTlsContext), its files read by the supervisor. */

const tmp = tempDir();
let pki: TestPki;
let upstream: Server;
let upstreamPort: number;

before(async () => {
  pki = makePki();
  const backend = pki.leaf('backend', { sans: ['DNS:backend.internal'], serial: 'C1' });
  upstream = createHttpsServer({ cert: backend.cert, key: backend.key }, (req, res) => res.end(`secure ${(req.socket as unknown as { servername?: string }).servername}`));
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamPort = (upstream.address() as { port: number }).port;
});

after(async () => {
  await stopAllProxies();
  upstream.close();
  pki.remove();
  tmp.cleanup();
});

const cluster = (name: string, caPath: string) => ({
  '@type': 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
  name,
  type: 'STATIC',
  connect_timeout: '1s',
  load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: upstreamPort } } } }] }] },
  transport_socket: {
    name: 'envoy.transport_sockets.tls',
    typed_config: {
      '@type': UPSTREAM_TLS_TYPE,
      sni: 'backend.internal',
      common_tls_context: { validation_context: { trusted_ca: { filename: caPath }, match_typed_subject_alt_names: [{ san_type: 'DNS', matcher: { exact: 'backend.internal' } }] } },
    },
  },
});

describe('TLS on a cluster from CDS', () => {
  it('connects to its hosts over TLS, verified against its CA; a cluster whose CA file is missing is refused by name', async () => {
    const cdsPath = join(tmp.dir, 'cds.json');
    writeFileSync(cdsPath, JSON.stringify({ version_info: '1', resources: [cluster('secure', pki.caPath), cluster('broken', join(tmp.dir, 'missing-ca.pem'))] }));
    const listener = routesListener('ingress', [{ match: { prefix: '/' }, route: { cluster: 'secure' } }]) as any;
    listener.filter_chains[0].filters[0].typed_config.route_config.validate_clusters = false;
    const proxy = await startProxy(
      {
        admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
        static_resources: { listeners: [listener] },
        dynamic_resources: { cds_config: { path_config_source: { path: cdsPath }, resource_api_version: 'V3' } },
      },
      ['--concurrency', '1'],
    );
    assert.equal((await httpRequest(`http://127.0.0.1:${proxy.ports.get('ingress')}/`)).body, 'secure backend.internal');
    const status = (await httpRequest(`http://${proxy.admin}/config_status`)).body;
    assert.match(status, /^cluster broken, refused, no version\n {2}refused version '1' at \S+: .*missing-ca\.pem/m);
    const certs = JSON.parse((await httpRequest(`http://${proxy.admin}/certs`)).body).certificates as { ca_cert: { path: string }[] }[];
    assert.ok(certs.some((c) => c.ca_cert.some((ca) => ca.path === pki.caPath)), 'its CA is in /certs');
    await proxy.stop();
  });
});
