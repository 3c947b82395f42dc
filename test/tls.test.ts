import assert from 'node:assert/strict';
import { createHash, X509Certificate } from 'node:crypto';
import { createServer as createHttpsServer, request as httpsRequest, type RequestOptions, type Server as HttpsServer } from 'node:https';
import { connect as h2Connect, createSecureServer, type Http2SecureServer } from 'node:http2';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { hcmFilter, staticCluster, TCP_PROXY_TYPE } from './helpers/bootstraps.js';
import { downstreamTls, makePki, UPSTREAM_TLS_TYPE, type Leaf, type TestPki } from './helpers/certs.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * TLS with certificates made for the test (openssl) and real TLS clients: listeners that
 * terminate TLS and pick their filter chain by SNI (or by TLS or not), HTTP/2 over ALPN, client
 * certificates, SNI passthrough, TLS to upstream hosts (HTTP/1.1 and HTTP/2), /certs and the
 * server's certificate-expiry figure.
 */

let pki: TestPki;
let server: Leaf;
let other: Leaf;
let client: Leaf;
let backend: Leaf;
let a: Upstream;
let b: Upstream;
let c: Upstream;
let secureUpstream: HttpsServer;
let secureH2Upstream: Http2SecureServer;
/** Accepts and never answers: a TLS handshake to it hangs. */
let stalled: NetServer;
let proxy: RunningProxy;

const OTHER_KEY_PASSWORD = 'open sesame';

function listen(s: HttpsServer | Http2SecureServer | NetServer): Promise<number> {
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as { port: number }).port)));
}

const hcm = hcmFilter;

const to = (cluster: string, prefix = '/') => ({ match: { prefix }, route: { cluster, ...(prefix !== '/' ? { prefix_rewrite: '/' } : {}) } });

function upstreamTls(context: object): object {
  return { name: 'envoy.transport_sockets.tls', typed_config: { '@type': UPSTREAM_TLS_TYPE, ...context } };
}

before(async () => {
  pki = makePki();
  server = pki.leaf('server', { sans: ['DNS:example.com', 'DNS:*.example.com', 'IP:127.0.0.1'], serial: 'A1' });
  other = pki.leaf('other', { sans: ['DNS:*.other.test'], serial: 'B2', keyPassword: OTHER_KEY_PASSWORD });
  client = pki.leaf('client', { sans: ['URI:spiffe://test/client'], serial: 'C3' });
  backend = pki.leaf('backend', { sans: ['DNS:backend.internal'], serial: 'D4' });
  const untrustedCa = pki.otherCa();
  [a, b, c] = await Promise.all([startUpstream('A'), startUpstream('B'), startUpstream('C')]);
  // The TLS upstreams say which SNI and protocol reached them.
  secureUpstream = createHttpsServer({ cert: backend.cert, key: backend.key }, (req, res) => {
    const socket = req.socket as TLSSocket;
    res.end(JSON.stringify({ sni: (socket as unknown as { servername?: string }).servername, alpn: socket.alpnProtocol, httpVersion: req.httpVersion }));
  });
  secureH2Upstream = createSecureServer({ cert: backend.cert, key: backend.key }, (req, res) => {
    res.end(JSON.stringify({ httpVersion: req.httpVersion, alpn: (req.socket as unknown as TLSSocket).alpnProtocol }));
  });
  // Reads (so it sees the proxy hang up, and close() can finish) but never answers.
  stalled = createNetServer((socket) => socket.resume());
  const [securePort, secureH2Port, stalledPort] = await Promise.all([listen(secureUpstream), listen(secureH2Upstream), listen(stalled)]);
  const trustBackend = { common_tls_context: { validation_context: { trusted_ca: { filename: pki.caPath }, match_typed_subject_alt_names: [{ san_type: 'DNS', matcher: { exact: 'backend.internal' } }] } }, sni: 'backend.internal' };
  proxy = await startProxy(
    {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [
          {
            name: 'tls',
            address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
            listener_filters: [{ name: 'envoy.filters.listener.tls_inspector', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector' } }],
            filter_chains: [
              {
                filter_chain_match: { server_names: ['example.com'] },
                transport_socket: downstreamTls(server, { alpn: ['h2', 'http/1.1'] }),
                filters: [hcm('example', [
                  to('secure', '/secure/'),
                  to('secure_h2', '/secure-h2/'),
                  to('untrusted', '/untrusted/'),
                  { match: { prefix: '/stalled/' }, route: { cluster: 'stalled', timeout: '0.3s' } },
                  to('a'),
                ])],
              },
              {
                filter_chain_match: { server_names: ['*.other.test'] },
                transport_socket: {
                  name: 'envoy.transport_sockets.tls',
                  typed_config: {
                    '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext',
                    common_tls_context: {
                      tls_certificates: [{ certificate_chain: { inline_string: other.cert }, private_key: { inline_string: other.key }, password: { inline_string: OTHER_KEY_PASSWORD } }],
                    },
                  },
                },
                filters: [hcm('other', [to('b')])],
              },
              { filter_chain_match: { transport_protocol: 'raw_buffer' }, filters: [hcm('plain', [to('c')])] },
            ],
          },
          {
            name: 'mtls',
            address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
            filter_chains: [{
              transport_socket: downstreamTls(server, {
                validation: { trusted_ca: { filename: pki.caPath }, match_typed_subject_alt_names: [{ san_type: 'URI', matcher: { prefix: 'spiffe://test/' } }] },
                context: { require_client_certificate: true },
              }),
              filters: [hcm('mtls', [to('a')])],
            }],
          },
          {
            name: 'passthrough',
            address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
            filter_chains: [{
              filter_chain_match: { server_names: ['backend.internal'] },
              filters: [{ name: 'envoy.filters.network.tcp_proxy', typed_config: { '@type': TCP_PROXY_TYPE, stat_prefix: 'passthrough', cluster: 'raw_backend' } }],
            }],
          },
        ],
        clusters: [
          staticCluster('a', a.port),
          staticCluster('b', b.port),
          staticCluster('c', c.port),
          staticCluster('raw_backend', securePort),
          { ...staticCluster('secure', securePort), transport_socket: upstreamTls(trustBackend) },
          { ...staticCluster('secure_h2', secureH2Port), transport_socket: upstreamTls(trustBackend), http2_protocol_options: {} },
          { ...staticCluster('stalled', stalledPort), connect_timeout: '10s', transport_socket: upstreamTls({}) },
          { ...staticCluster('untrusted', securePort), transport_socket: upstreamTls({ common_tls_context: { validation_context: { trusted_ca: { filename: untrustedCa.caPath } } } }) },
        ],
      },
    },
    ['--concurrency', '2'],
  );
});

after(async () => {
  await stopAllProxies();
  await Promise.all([a.close(), b.close(), c.close()]);
  secureUpstream.closeAllConnections();
  await new Promise((r) => secureUpstream.close(r));
  await new Promise((r) => secureH2Upstream.close(r));
  await new Promise((r) => stalled.close(r));
  pki.remove();
});

interface TlsAnswer {
  status: number;
  body: string;
  serial: string;
  alpn: string | false | null;
}

/** An HTTPS/1.1 request to a listener, trusting the test CA, with the SNI given (and a client certificate, if any). */
function get(listener: string, path: string, servername: string, cert?: Leaf): Promise<TlsAnswer> {
  return new Promise((resolve, reject) => {
    const rq = httpsRequest(
      { host: '127.0.0.1', port: proxy.ports.get(listener), path, servername, ca: pki.ca, agent: false, ALPNProtocols: ['http/1.1'], ...(cert ? { cert: cert.cert, key: cert.key } : {}) } as RequestOptions,
      (res) => {
        const socket = res.socket as TLSSocket;
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, serial: socket.getPeerCertificate().serialNumber, alpn: socket.alpnProtocol }));
      },
    );
    rq.on('error', reject);
    rq.end();
  });
}

const stat = (name: string) => statValue(proxy, name);
const echoOf = (body: string) => JSON.parse(body) as { name: string; headers: Record<string, string> };

describe('TLS on listeners', () => {
  it('terminates TLS for the chain of its SNI, with that chain\'s certificate', async () => {
    const r = await get('tls', '/echo', 'example.com');
    assert.equal(r.status, 200);
    assert.equal(r.serial, 'A1');
    assert.equal(r.alpn, 'http/1.1');
    assert.equal(echoOf(r.body).name, 'A');
    assert.equal(echoOf(r.body).headers['x-forwarded-proto'], 'https');
  });

  it('matches a wildcard server name, with a key read through its password', async () => {
    const r = await get('tls', '/', 'api.other.test');
    assert.equal(r.status, 200);
    assert.equal(r.serial, 'B2');
    assert.equal(r.body, 'B');
  });

  it('serves HTTP/2 when ALPN settles on h2', async () => {
    const session = h2Connect(`https://127.0.0.1:${proxy.ports.get('tls')}`, { ca: pki.ca, servername: 'example.com' });
    try {
      await new Promise<void>((resolve, reject) => session.once('connect', () => resolve()).once('error', reject));
      assert.equal(session.alpnProtocol, 'h2');
      const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const stream = session.request({ ':path': '/echo' });
        let status = 0;
        let body = '';
        stream.on('response', (h) => (status = Number(h[':status'])));
        stream.on('data', (d) => (body += d));
        stream.on('end', () => resolve({ status, body }));
        stream.on('error', reject);
        stream.end();
      });
      assert.equal(status, 200);
      assert.equal(echoOf(body).name, 'A');
      assert.equal(echoOf(body).headers['x-forwarded-proto'], 'https');
    } finally {
      session.close();
    }
    assert.ok((await stat('http.example.downstream_cx_http2_total')) >= 1);
  });

  it('serves plaintext on the same port through the raw_buffer chain', async () => {
    const r = await httpRequest(`http://127.0.0.1:${proxy.ports.get('tls')}/`);
    assert.equal(r.status, 200);
    assert.equal(r.body, 'C');
  });

  it('closes a connection whose SNI no chain matches, counting no_filter_chain_match', async () => {
    await assert.rejects(get('tls', '/', 'nope.test'));
    assert.equal(await stat(`listener.127.0.0.1_${proxy.ports.get('tls')}.no_filter_chain_match`), 1);
  });

  it('counts handshakes and the negotiated version', async () => {
    const prefix = `listener.127.0.0.1_${proxy.ports.get('tls')}.ssl.`;
    assert.ok((await stat(`${prefix}handshake`)) >= 3);
    assert.ok((await stat(`${prefix}versions.TLSv1.3`)) >= 3);
  });
});

describe('client certificates', () => {
  it('refuses a client without a certificate when one is required', async () => {
    await assert.rejects(get('mtls', '/', 'example.com'));
    assert.equal(await stat(`listener.127.0.0.1_${proxy.ports.get('mtls')}.ssl.fail_verify_no_cert`), 1);
  });

  it('refuses a certificate whose SAN no matcher accepts', async () => {
    await assert.rejects(get('mtls', '/', 'example.com', backend));
    assert.equal(await stat(`listener.127.0.0.1_${proxy.ports.get('mtls')}.ssl.fail_verify_san`), 1);
  });

  it('admits a client with a certificate the CA signed and the SAN matcher accepts', async () => {
    const r = await get('mtls', '/', 'example.com', client);
    assert.equal(r.status, 200);
    assert.equal(r.body, 'A');
  });
});

describe('SNI passthrough', () => {
  it('routes by server name without terminating TLS: the client talks to the upstream\'s certificate', async () => {
    const socket = tlsConnect({ host: '127.0.0.1', port: proxy.ports.get('passthrough')!, servername: 'backend.internal', ca: pki.ca });
    await new Promise<void>((resolve, reject) => socket.once('secureConnect', () => resolve()).once('error', reject));
    assert.equal(socket.getPeerCertificate().serialNumber, 'D4');
    // The server closes after its answer (connection: close); ending our side first would send close_notify before it answers.
    socket.write('GET / HTTP/1.1\r\nhost: backend.internal\r\nconnection: close\r\n\r\n');
    let text = '';
    for await (const d of socket) text += d;
    assert.match(text, /^HTTP\/1\.1 200/);
    assert.match(text, /"sni":"backend.internal"/);
  });
});

describe('TLS to upstream hosts', () => {
  it('verifies the upstream against trusted_ca and its SAN, sending the configured SNI', async () => {
    const r = await get('tls', '/secure/', 'example.com');
    assert.equal(r.status, 200, r.body);
    assert.deepEqual(JSON.parse(r.body), { sni: 'backend.internal', alpn: 'http/1.1', httpVersion: '1.1' });
    assert.ok((await stat('cluster.secure.ssl.handshake')) >= 1);
  });

  it('speaks HTTP/2 over TLS (ALPN h2) to an HTTP/2 cluster', async () => {
    const r = await get('tls', '/secure-h2/', 'example.com');
    assert.equal(r.status, 200, r.body);
    assert.deepEqual(JSON.parse(r.body), { httpVersion: '2.0', alpn: 'h2' });
  });

  it('answers at the route timeout while the TLS handshake to the host still hangs', async () => {
    const r = await get('tls', '/stalled/', 'example.com');
    assert.equal(r.status, 504);
    assert.equal(r.body, 'upstream request timeout');
    assert.equal(await stat('cluster.stalled.upstream_rq_timeout'), 1);
  });

  it('fails a host whose certificate the cluster\'s CA did not sign', async () => {
    const r = await get('tls', '/untrusted/', 'example.com');
    assert.equal(r.status, 503);
    assert.match(r.body, /^upstream connect error or disconnect\/reset before headers/);
    assert.ok((await stat('cluster.untrusted.ssl.connection_error')) >= 1);
    assert.ok((await stat('cluster.untrusted.ssl.fail_verify_error')) >= 1);
  });
});

describe('/certs', () => {
  interface Details {
    path: string;
    serial_number: string;
    subject_alt_names: object[];
    days_until_expiration: string;
    valid_from: string;
    expiration_time: string;
  }

  it('lists every context\'s certificates: file, serial, SANs and days until expiration', async () => {
    const r = await httpRequest(`http://${proxy.admin}/certs`);
    assert.equal(r.status, 200);
    const { certificates } = JSON.parse(r.body) as { certificates: { ca_cert: Details[]; cert_chain: Details[] }[] };
    // Three listener chains with TLS, four clusters.
    assert.equal(certificates.length, 7);
    const chains = certificates.flatMap((c) => c.cert_chain);
    const leaf = chains.find((d) => d.serial_number === 'a1')!;
    assert.equal(leaf.path, server.certPath);
    assert.deepEqual(leaf.subject_alt_names, [{ dns: 'example.com' }, { dns: '*.example.com' }, { ip_address: '127.0.0.1' }]);
    assert.equal(leaf.days_until_expiration, '9', 'ten days from its making, less the seconds since');
    assert.match(leaf.valid_from, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(chains.find((d) => d.serial_number === 'b2')!.path, '<inline>');
    const cas = certificates.flatMap((c) => c.ca_cert);
    assert.ok(cas.some((d) => d.serial_number === '1000' && d.path === pki.caPath && d.days_until_expiration === '29'));
  });

  it('reports the days until the first certificate expires', async () => {
    assert.equal(await stat('server.days_until_first_cert_expiring'), 9);
  });

  it("publishes each certificate's expiry as Envoy names it (ssl.certificate.<name>.expiration_unix_time_seconds)", async () => {
    const body = (await httpRequest(`http://${proxy.admin}/stats?filter=${encodeURIComponent('\\.ssl\\.certificate\\.')}`)).body;
    const gauges = new Map(body.trim().split('\n').map((line) => line.split(': ') as [string, string]));
    const expiry = (pem: string) => String(Math.floor(new Date(new X509Certificate(pem).validTo).getTime() / 1000));
    const named = (scope: RegExp, name: string) => [...gauges].filter(([k]) => scope.test(k) && k.endsWith(`.ssl.certificate.${name}.expiration_unix_time_seconds`)).map(([, v]) => v);
    // From a file: no inline bytes to digest (SHA-256 of nothing starts e3b0c442).
    assert.ok(named(/^listener\./, 'unnamed_cert_e3b0c442').includes(expiry(server.cert)), body);
    // Inline: the first 8 hex digits of its SHA-256.
    const inlineName = `unnamed_cert_${createHash('sha256').update(other.cert).digest('hex').slice(0, 8)}`;
    const inline = named(/^listener\./, inlineName);
    assert.ok(inline.length > 0 && inline.every((v) => v === expiry(other.cert)), body);
    // A cluster's CA, from a file.
    assert.ok(named(/^cluster\./, 'unnamed_ca_cert_e3b0c442').includes(expiry(pki.ca)), body);
  });

  it('redacts private keys and passwords in /config_dump', async () => {
    const dump = (await httpRequest(`http://${proxy.admin}/config_dump`)).body;
    assert.ok(!dump.includes('PRIVATE KEY'), 'no key material');
    assert.ok(!dump.includes(OTHER_KEY_PASSWORD), 'no password');
    assert.match(dump, /"private_key": \{\s*"inline_string": "\[redacted\]"/);
  });
});

describe('certificates across a hot restart', () => {
  it('serves the certificate file as the new epoch finds it', async () => {
    const dir = makePki();
    try {
      const first = dir.leaf('rotating', { sans: ['DNS:example.com'], serial: 'E1' });
      const config = {
        admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
        static_resources: {
          listeners: [{
            name: 'tls',
            address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
            filter_chains: [{ transport_socket: downstreamTls(first), filters: [hcm('rotating', [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'ok' } } }])] }],
          }],
        },
      };
      const common = ['--concurrency', '1', '--parent-shutdown-time-s', '5'];
      const e0 = await startProxy(config, common);
      const port = e0.ports.get('tls')!;
      const serialNow = () =>
        new Promise<string>((resolve, reject) => {
          const socket = tlsConnect({ host: '127.0.0.1', port, servername: 'example.com', ca: dir.ca }, () => {
            resolve(socket.getPeerCertificate().serialNumber);
            socket.destroy();
          });
          socket.on('error', reject);
        });
      assert.equal(await serialNow(), 'E1');
      // The operator renews the certificate in place (same paths), then hot-restarts.
      dir.leaf('rotating', { sans: ['DNS:example.com'], serial: 'E2' });
      const e1 = await startProxy(config, [...common, '--base-id', String(e0.baseId), '--restart-epoch', '1']);
      assert.equal(e1.ports.get('tls'), port, 'the listener was handed over');
      // New connections reach the new epoch once the old one stops accepting (right after the new one is live).
      await waitFor('a connection to the new epoch, with the renewed certificate', async () => ((await serialNow()) === 'E2' ? true : undefined));
      const certs = JSON.parse((await httpRequest(`http://${e1.admin}/certs`)).body) as { certificates: { cert_chain: { serial_number: string }[] }[] };
      assert.equal(certs.certificates[0]!.cert_chain[0]!.serial_number, 'e2');
      await e1.stop();
      await e0.stop();
    } finally {
      dir.remove();
    }
  });
});
