import assert from 'node:assert/strict';
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { join } from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { hcmFilter, loadErrors, staticCluster } from './helpers/bootstraps.js';
import { DOWNSTREAM_TLS_TYPE, makePki, UPSTREAM_TLS_TYPE, type Leaf, type TestPki } from './helpers/certs.js';
import { tempDir } from './helpers/cli.js';
import { LISTENER_URL, SECRET_URL, TestControlPlane } from './helpers/control-plane.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * Secrets (SDS), with real TLS clients: the bootstrap's secrets by name; secrets from a file
 * (a new version renamed onto it; a rotation of the files it names, by its watched_directory),
 * and from a control plane over ADS (a listener that waits for its secret, a secret refused and
 * then a good one, a secret that never comes); what /certs, /config_dump and the sds.* figures
 * say, as Envoy's sds_dynamic_integration_test expects them.
 */

let pki: TestPki;
let first: Leaf;
let second: Leaf;
let third: Leaf;
let upstream: Upstream;
const dirs: { cleanup: () => void }[] = [];

before(async () => {
  pki = makePki();
  first = pki.leaf('first', { sans: ['DNS:example.com'], serial: 'A1' });
  second = pki.leaf('second', { sans: ['DNS:example.com'], serial: 'B2' });
  third = pki.leaf('third', { sans: ['DNS:example.com'], serial: 'C3' });
  upstream = await startUpstream('backend');
});
after(async () => {
  await stopAllProxies();
  await upstream.close();
  pki.remove();
  for (const d of dirs) d.cleanup();
});

const certificate = (leaf: Leaf) => ({ certificate_chain: { filename: leaf.certPath }, private_key: { filename: leaf.keyPath } });
const secretTls = (refs: object[]) => ({ name: 'envoy.transport_sockets.tls', typed_config: { '@type': DOWNSTREAM_TLS_TYPE, common_tls_context: { tls_certificate_sds_secret_configs: refs } } });

function tlsListener(name: string, refs: object[]): object {
  return {
    name,
    address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
    filter_chains: [{ filters: [hcmFilter(name, [{ match: { prefix: '/' }, route: { cluster: 'backend' } }])], transport_socket: secretTls(refs) }],
  };
}

function bootstrap(listeners: object[], extra: object = {}): object {
  return {
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: { listeners, clusters: [staticCluster('backend', upstream.port)] },
    ...extra,
  };
}

/** The serial number of the certificate the listener presents now, and the open connection (kept, to use again). */
function handshake(port: number): Promise<{ serial: string; socket: TLSSocket }> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, servername: 'example.com', ca: pki.ca }, () => resolve({ serial: socket.getPeerCertificate().serialNumber.toLowerCase(), socket }));
    socket.once('error', reject);
  });
}

/** One HTTP/1.1 request on an open TLS connection (kept alive): its status. */
function requestOn(socket: TLSSocket): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (/\r\n\r\n/.test(text)) {
        socket.off('data', onData);
        resolve(Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1]));
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.write('GET / HTTP/1.1\r\nhost: example.com\r\n\r\n');
  });
}

async function serialNow(proxy: RunningProxy, listener: string): Promise<string> {
  const { serial, socket } = await handshake(proxy.ports.get(listener)!);
  socket.destroy();
  return serial;
}

const sdsFile = (dir: ReturnType<typeof tempDir>, name: string, version: string, secret: object) =>
  dir.file(name, JSON.stringify({ version_info: version, resources: [{ '@type': SECRET_URL, name: 'server_cert', ...secret }] }));

describe('static secrets', () => {
  it('serve a listener by name, and an unknown or twice-named one is refused in Envoy\'s words', async () => {
    const secrets = [{ name: 'server_cert', tls_certificate: certificate(first) }];
    const proxy = await startProxy(bootstrap([tlsListener('tls', [{ name: 'server_cert' }])], { static_resources: { listeners: [tlsListener('tls', [{ name: 'server_cert' }])], clusters: [staticCluster('backend', upstream.port)], secrets } }));
    assert.equal(await serialNow(proxy, 'tls'), 'a1');
    const dump = JSON.parse((await httpRequest(`http://${proxy.admin}/config_dump?resource=static_secrets`)).body);
    assert.equal(dump.configs[0].name, 'server_cert');
    assert.equal(dump.configs[0].secret.tls_certificate.private_key.filename, '[redacted]');
    assert.equal(dump.configs[0].secret.tls_certificate.certificate_chain.filename, first.certPath);
    await proxy.stop();

    const missing = loadErrors(bootstrap([tlsListener('tls', [{ name: 'missing' }])]));
    assert.match(missing.map(String).join('\n'), /tls_certificate_sds_secret_configs\[0\]\.name: Unknown static secret: missing/);
    const twice = loadErrors({ ...bootstrap([]), static_resources: { secrets: [...secrets, ...secrets] } });
    assert.match(twice.map(String).join('\n'), /Duplicate static TlsCertificate secret name server_cert/);
  });
});

describe('secrets from a file', () => {
  it('rotate: a new version renamed onto the file, then the files it names by its watched_directory; open connections stay', async () => {
    const dir = tempDir('proxy-sds-');
    dirs.push(dir);
    sdsFile(dir, 'sds.json', 'v1', { tls_certificate: certificate(first) });
    const source = { path_config_source: { path: join(dir.dir, 'sds.json') } };
    const proxy = await startProxy(bootstrap([tlsListener('tls', [{ name: 'server_cert', sds_config: source }])]));
    const port = proxy.ports.get('tls')!;
    const open = await handshake(port);
    assert.equal(open.serial, 'a1');
    assert.equal(await requestOn(open.socket), 200);
    const prefix = `listener.127.0.0.1_${port}.server_ssl_socket_factory.`;
    assert.equal(await statValue(proxy, `${prefix}ssl_context_update_by_sds`), 1);
    assert.equal(await statValue(proxy, 'sds.server_cert.update_success'), 1);

    // A new version, renamed onto the file: new handshakes get the new certificate; the open connection goes on.
    sdsFile(dir, 'sds.json.tmp', 'v2', { tls_certificate: certificate(second) });
    renameSync(join(dir.dir, 'sds.json.tmp'), join(dir.dir, 'sds.json'));
    await waitFor('the second certificate', async () => ((await serialNow(proxy, 'tls')) === 'b2' ? true : undefined));
    assert.equal(await requestOn(open.socket), 200);
    assert.equal(await statValue(proxy, 'sds.server_cert.update_success'), 2);
    assert.equal(await statValue(proxy, `${prefix}ssl_context_update_by_sds`), 2);
    const certs = JSON.parse((await httpRequest(`http://${proxy.admin}/certs`)).body);
    assert.deepEqual(certs.certificates.map((c: { cert_chain: { path: string; serial_number: string }[] }) => c.cert_chain.map((x) => [x.path, x.serial_number])), [[['<inline>', 'b2']]]);
    const dump = JSON.parse((await httpRequest(`http://${proxy.admin}/config_dump?resource=dynamic_active_secrets`)).body);
    assert.equal(dump.configs[0].version_info, 'v2');
    assert.equal(dump.configs[0].secret.tls_certificate.private_key.inline_bytes, 'W3JlZGFjdGVkXQ==');
    assert.equal(Buffer.from(dump.configs[0].secret.tls_certificate.certificate_chain.inline_bytes, 'base64').toString(), second.cert);

    // Kubernetes' way: the secret's files behind a symlink its watched_directory holds, swapped.
    const root = join(dir.dir, 'root');
    for (const [v, leaf] of [['v1', second], ['v2', third]] as const) {
      mkdirSync(join(root, v), { recursive: true });
      writeFileSync(join(root, v, 'cert.pem'), leaf.cert);
      writeFileSync(join(root, v, 'key.pem'), leaf.key);
    }
    mkdirSync(join(root, 'empty'));
    symlinkSync(join(root, 'v1'), join(root, 'current'));
    const files = { certificate_chain: { filename: join(root, 'current', 'cert.pem') }, private_key: { filename: join(root, 'current', 'key.pem') }, watched_directory: { path: root } };
    sdsFile(dir, 'sds.json.tmp', 'v3', { tls_certificate: files });
    renameSync(join(dir.dir, 'sds.json.tmp'), join(dir.dir, 'sds.json'));
    await waitFor('version v3', async () => ((await statValue(proxy, 'sds.server_cert.update_success')) === 3 ? true : undefined));
    const swap = (target: string) => {
      symlinkSync(join(root, target), join(root, 'next'));
      renameSync(join(root, 'next'), join(root, 'current'));
    };
    swap('v2');
    await waitFor('the third certificate', async () => ((await serialNow(proxy, 'tls')) === 'c3' ? true : undefined));
    // A rotation is not an update of the secret (Envoy's "rotation is not a SDS attempt").
    assert.equal(await statValue(proxy, 'sds.server_cert.update_success'), 3);
    assert.equal(await statValue(proxy, `${prefix}ssl_context_update_by_sds`), 4);
    // Files that cannot be read: the rotation fails, the certificate in force stays.
    swap('empty');
    await waitFor('key_rotation_failed', async () => ((await statValue(proxy, 'sds.server_cert.key_rotation_failed')) === 1 ? true : undefined));
    assert.equal(await serialNow(proxy, 'tls'), 'c3');
    assert.equal(await requestOn(open.socket), 200);
    open.socket.destroy();
  });
});

describe('secrets for clusters', () => {
  it('verify an upstream with a CA from SDS; a cluster whose secret is refused answers 503, counted as not ready', async () => {
    const dir = tempDir('proxy-sds-upstream-');
    dirs.push(dir);
    const secure = createHttpsServer({ cert: first.cert, key: first.key }, (_req, res) => res.end('secure'));
    await new Promise<void>((resolve) => secure.listen(0, '127.0.0.1', resolve));
    try {
      const securePort = (secure.address() as { port: number }).port;
      dir.file('ca.json', JSON.stringify({ version_info: '1', resources: [{ '@type': SECRET_URL, name: 'ca', validation_context: { trusted_ca: { filename: pki.caPath } } }] }));
      const source = { path_config_source: { path: join(dir.dir, 'ca.json') } };
      const upstreamTls = (validation: object) => ({ name: 'envoy.transport_sockets.tls', typed_config: { '@type': UPSTREAM_TLS_TYPE, sni: 'example.com', common_tls_context: validation } });
      const clusters = [
        { ...staticCluster('secure', securePort), transport_socket: upstreamTls({ validation_context_sds_secret_config: { name: 'ca', sds_config: source } }) },
        // The file has 'ca', not 'other': Envoy refuses it (and the cluster goes on without its secret).
        { ...staticCluster('unready', securePort), transport_socket: upstreamTls({ combined_validation_context: { default_validation_context: { match_typed_subject_alt_names: [{ san_type: 'DNS', matcher: { exact: 'example.com' } }] }, validation_context_sds_secret_config: { name: 'other', sds_config: source } } }) },
      ];
      const routes = [{ match: { prefix: '/unready' }, route: { cluster: 'unready' } }, { match: { prefix: '/' }, route: { cluster: 'secure' } }];
      const proxy = await startProxy({
        admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
        static_resources: { listeners: [{ name: 'plain', address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [hcmFilter('plain', routes)] }] }], clusters },
      });
      const port = proxy.ports.get('plain')!;
      const ok = await httpRequest(`http://127.0.0.1:${port}/`);
      assert.deepEqual([ok.status, ok.body], [200, 'secure']);
      assert.equal(await statValue(proxy, 'cluster.secure.client_ssl_socket_factory.ssl_context_update_by_sds'), 1);
      assert.equal(await statValue(proxy, 'sds.other.update_rejected'), 1);
      const refused = await httpRequest(`http://127.0.0.1:${port}/unready`);
      assert.equal(refused.status, 503);
      assert.equal(refused.body, 'upstream connect error or disconnect/reset before headers. reset reason: remote connection failure, transport failure reason: TLS error: Secret is not supplied by SDS');
      await waitFor('upstream_context_secrets_not_ready', async () => ((await statValue(proxy, 'cluster.unready.client_ssl_socket_factory.upstream_context_secrets_not_ready')) >= 1 ? true : undefined));
      await proxy.stop();
    } finally {
      secure.close();
    }
  });
});

describe('secrets over ADS', () => {
  let cp: TestControlPlane;
  before(async () => {
    cp = await TestControlPlane.start();
  });
  after(() => cp.stop());

  const ads = (extra: object = {}) => ({
    node: { id: 'n', cluster: 'c' },
    dynamic_resources: {
      ads_config: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] },
      lds_config: { ads: {}, resource_api_version: 'V3' },
    },
    ...extra,
  });
  const xdsCluster = () => ({ ...staticCluster('xds', cp.port), typed_extension_protocol_options: { 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': { '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions', explicit_http_config: { http2_protocol_options: {} } } } });
  const secret = (leaf: Leaf, name = 'server_cert') => ({ '@type': SECRET_URL, name, tls_certificate: { certificate_chain: { inline_string: leaf.cert }, private_key: { inline_string: leaf.key } } });

  it('a listener waits for its secret, a wrong secret is refused, a rotation takes over', async () => {
    cp.set(SECRET_URL, '1', []);
    cp.set(LISTENER_URL, '1', []);
    const boot = { ...bootstrap([]), static_resources: { clusters: [staticCluster('backend', upstream.port), xdsCluster()] }, ...ads() };
    const proxy = await startProxy(boot);
    const listener = { '@type': LISTENER_URL, ...tlsListener('dyn', [{ name: 'server_cert', sds_config: { ads: {}, resource_api_version: 'V3' } }]) };
    cp.set(LISTENER_URL, '2', [listener]);
    // It warms until its secret comes (or its initial fetch timeout, 15 s, passes).
    await waitFor('the listener warming', async () => ((await statValue(proxy, 'listener_manager.total_listeners_warming')) === 1 ? true : undefined));
    const warmingDump = JSON.parse((await httpRequest(`http://${proxy.admin}/config_dump?resource=dynamic_warming_secrets`)).body);
    assert.equal(warmingDump.configs[0].version_info, 'uninitialized');
    // A secret its context cannot load with is refused (a NACK); the wait is over, and the listener serves without it.
    cp.set(SECRET_URL, '1', [{ '@type': SECRET_URL, name: 'server_cert', tls_certificate: {} }]);
    await waitFor('the refused secret', async () => ((await statValue(proxy, 'sds.server_cert.update_rejected')) === 1 ? true : undefined));
    assert.equal(await statValue(proxy, 'sds.server_cert.update_success'), 0);
    await waitFor('the listener serving', async () => ((await statValue(proxy, 'listener_manager.total_listeners_active')) === 1 ? true : undefined));
    cp.set(SECRET_URL, '2', [secret(first)]);
    const listeners = JSON.parse((await httpRequest(`http://${proxy.admin}/listeners?format=json`)).body);
    const port = Number(listeners.listener_statuses.find((l: { name: string }) => l.name === 'dyn').local_address.socket_address.port_value);
    const open = await waitFor('the good secret', () => handshake(port).catch(() => undefined));
    assert.equal(open.serial, 'a1');
    assert.equal(await requestOn(open.socket), 200);
    cp.set(SECRET_URL, '3', [secret(second)]);
    await waitFor('the second certificate', async () => ((await handshake(port).then(({ serial, socket }) => (socket.destroy(), serial))) === 'b2' ? true : undefined));
    assert.equal(await requestOn(open.socket), 200);
    open.socket.destroy();
    assert.equal(await statValue(proxy, 'sds.server_cert.update_success'), 2);
    assert.equal(await statValue(proxy, `listener.127.0.0.1_${port}.server_ssl_socket_factory.ssl_context_update_by_sds`), 2);
    await proxy.stop();
  });

  it('comes from the SDS service of a control plane too, on a stream of its own', async () => {
    cp.set(SECRET_URL, '20', [secret(first, 'grpc_cert')]);
    const source = { api_config_source: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] }, resource_api_version: 'V3' };
    const proxy = await startProxy({ ...bootstrap([]), node: { id: 'n', cluster: 'c' }, static_resources: { listeners: [tlsListener('grpc', [{ name: 'grpc_cert', sds_config: source }])], clusters: [staticCluster('backend', upstream.port), xdsCluster()] } });
    assert.equal(await serialNow(proxy, 'grpc'), 'a1');
    assert.equal(await statValue(proxy, 'sds.grpc_cert.update_success'), 1);
    assert.equal(await statValue(proxy, 'sds.grpc_cert.control_plane.connected_state'), 1);
    cp.set(SECRET_URL, '21', [secret(second, 'grpc_cert')]);
    await waitFor('the second certificate', async () => ((await serialNow(proxy, 'grpc')) === 'b2' ? true : undefined));
    await proxy.stop();
  });

  it('a secret that never comes: after its initial_fetch_timeout the listener serves, and refuses TLS as not ready', async () => {
    cp.set(SECRET_URL, '9', []);
    cp.set(LISTENER_URL, '9', []);
    const source = { ads: {}, resource_api_version: 'V3', initial_fetch_timeout: '0.3s' };
    const boot = { ...bootstrap([tlsListener('late', [{ name: 'absent', sds_config: source }])]), static_resources: { listeners: [tlsListener('late', [{ name: 'absent', sds_config: source }])], clusters: [staticCluster('backend', upstream.port), xdsCluster()] }, ...ads() };
    const proxy = await startProxy(boot);
    assert.equal(await statValue(proxy, 'sds.absent.init_fetch_timeout'), 1);
    const port = proxy.ports.get('late')!;
    await assert.rejects(handshake(port));
    await waitFor('secrets_not_ready', async () => ((await statValue(proxy, `listener.127.0.0.1_${port}.server_ssl_socket_factory.downstream_context_secrets_not_ready`)) >= 1 ? true : undefined));
    assert.deepEqual(JSON.parse((await httpRequest(`http://${proxy.admin}/certs`)).body).certificates, []);
    cp.set(SECRET_URL, '10', [secret(third, 'absent')]);
    await waitFor('the late secret', async () => ((await serialNow(proxy, 'late').catch(() => undefined)) === 'c3' ? true : undefined));
    await proxy.stop();
  });
});
