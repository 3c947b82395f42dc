// Settings that used to validate and then do nothing: %REQUESTED_SERVER_NAME% (the TLS SNI, from
// the handshake or from the TLS inspector on a connection passed through), and
// %UPSTREAM_TRANSPORT_FAILURE_REASON% (a refused connect, a failed upstream TLS handshake), as
// Envoy prints them; codec_type HTTP3 on a TCP listener is refused by name; a configured
// request_headers_timeout is counted in downstream_rq_header_timeout.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer as createHttps, request as httpsRequest, type RequestOptions, type Server as HttpsServer } from 'node:https';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { closedPort, startUpstream, type Upstream } from './helpers/upstream.js';
import { startProxy, statValue, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';
import { HCM_TYPE, ROUTER_TYPE, TCP_PROXY_TYPE, staticCluster } from './helpers/bootstraps.js';
import { downstreamTls, makePki, UPSTREAM_TLS_TYPE, type TestPki } from './helpers/certs.js';
import { runProxy, tempDir } from './helpers/cli.js';

const FORMAT = '%REQ(X-CASE)% sni=%REQUESTED_SERVER_NAME% reason=%UPSTREAM_TRANSPORT_FAILURE_REASON% %RESPONSE_FLAGS% %RESPONSE_CODE_DETAILS%\n';

describe('access-log commands and settings Envoy fills', () => {
  const tmp = tempDir();
  const logPath = join(tmp.dir, 'access.log');
  let pki: TestPki;
  let proxy: RunningProxy;
  let upstream: Upstream;
  let tlsUpstream: HttpsServer;
  const log = { name: 'envoy.access_loggers.file', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog', path: logPath, log_format: { text_format_source: { inline_string: FORMAT } } } };
  const lines = () => {
    try {
      return readFileSync(logPath, 'utf8').split('\n').filter(Boolean);
    } catch {
      return [];
    }
  };

  before(async () => {
    pki = makePki();
    upstream = await startUpstream('plain');
    const leaf = pki.leaf('localhost', { sans: ['DNS:localhost', 'DNS:api.example.com', 'IP:127.0.0.1'], serial: '61' });
    const other = pki.otherCa();
    tlsUpstream = createHttps({ cert: leaf.cert, key: leaf.key }, (_req, res) => res.end('tls'));
    await new Promise<void>((resolve) => tlsUpstream.listen(0, '127.0.0.1', () => resolve()));
    const hcm = (prefix: string) => ({
      name: 'hcm',
      typed_config: {
        '@type': HCM_TYPE,
        stat_prefix: prefix,
        request_headers_timeout: '0.2s',
        route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes: [
          { match: { prefix: '/refused' }, route: { cluster: 'refused' } },
          { match: { prefix: '/untrusted' }, route: { cluster: 'untrusted' } },
          { match: { prefix: '/' }, route: { cluster: 'plain' } },
        ] }] },
        http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } }],
        access_log: [log],
      },
    });
    proxy = await startProxy({
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [
          { name: 'https', address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ transport_socket: downstreamTls(leaf, { alpn: ['http/1.1'] }), filters: [hcm('secure')] }] },
          {
            name: 'passthrough',
            address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
            listener_filters: [{ name: 'envoy.filters.listener.tls_inspector', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector' } }],
            filter_chains: [{ filters: [{ name: 'tcp', typed_config: { '@type': TCP_PROXY_TYPE, stat_prefix: 'pass', cluster: 'refused', access_log: [log] } }] }],
          },
        ],
        clusters: [
          staticCluster('plain', upstream.port),
          staticCluster('refused', await closedPort()),
          // The upstream's certificate is signed by a CA this cluster does not trust.
          { ...staticCluster('untrusted', (tlsUpstream.address() as { port: number }).port), transport_socket: { name: 'envoy.transport_sockets.tls', typed_config: { '@type': UPSTREAM_TLS_TYPE, sni: 'localhost', common_tls_context: { validation_context: { trusted_ca: { filename: other.caPath } } } } } },
        ],
      },
    }, ['--file-flush-interval-msec', '50']);
  });

  after(async () => {
    await stopAllProxies();
    await upstream.close();
    tlsUpstream.closeAllConnections();
    await new Promise((resolve) => tlsUpstream.close(resolve));
    pki.remove();
    tmp.cleanup();
  });

  const get = (path: string, servername: string, kase: string) =>
    new Promise<number>((resolve, reject) => {
      const rq = httpsRequest({ host: '127.0.0.1', port: proxy.ports.get('https'), path, servername, ca: pki.ca, agent: false, headers: { 'x-case': kase } } as RequestOptions, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      });
      rq.on('error', reject);
      rq.end();
    });
  const line = (kase: string) => waitFor(`the log line of ${kase}`, () => lines().find((l) => l.startsWith(`${kase} `)));

  it('%REQUESTED_SERVER_NAME% is the SNI of a terminated TLS connection', async () => {
    assert.equal(await get('/', 'api.example.com', 'sni'), 200);
    assert.match(await line('sni'), /^sni sni=api\.example\.com reason=- - via_upstream$/);
  });

  it('%UPSTREAM_TRANSPORT_FAILURE_REASON% says why the upstream connection failed: a refused connect, an untrusted certificate', async () => {
    assert.equal(await get('/refused', 'api.example.com', 'refused'), 503);
    assert.equal(
      await line('refused'),
      'refused sni=api.example.com reason=delayed_connect_error:_Connection_refused UF upstream_reset_before_response_started{remote_connection_failure|delayed_connect_error:_Connection_refused}',
    );
    assert.equal(await get('/untrusted', 'api.example.com', 'untrusted'), 503);
    assert.match(await line('untrusted'), /^untrusted sni=api\.example\.com reason=TLS_error:\|SSL_routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED:TLS_error_end UF upstream_reset_before_response_started\{remote_connection_failure\|TLS_error:/);
  });

  it('%REQUESTED_SERVER_NAME% of a TLS connection passed through is the TLS inspector\'s', async () => {
    const socket = tlsConnect({ host: '127.0.0.1', port: proxy.ports.get('passthrough')!, servername: 'backend.internal', ca: pki.ca });
    socket.on('error', () => {});
    await new Promise((resolve) => socket.once('close', resolve));
    assert.match(await waitFor('the TCP proxy\'s line', () => lines().find((l) => l.includes('sni=backend.internal'))), /^- sni=backend\.internal reason=delayed_connect_error:_Connection_refused UF/);
    assert.equal(await statValue(proxy, 'tls_inspector.sni_found'), 1);
  });

  it('counts a request whose head outlives request_headers_timeout in downstream_rq_header_timeout', async () => {
    const timeouts = await statValue(proxy, 'http.secure.downstream_rq_timeout');
    const socket = tlsConnect({ host: '127.0.0.1', port: proxy.ports.get('https')!, servername: 'api.example.com', ca: pki.ca }, () => socket.write('GET / HTTP/1.1\r\nhost: x\r\n'));
    socket.on('error', () => {});
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d));
    await new Promise((resolve) => socket.once('close', resolve));
    assert.match(answer, /^HTTP\/1\.1 408 /);
    assert.equal(await statValue(proxy, 'http.secure.downstream_rq_header_timeout'), 1);
    assert.equal(await statValue(proxy, 'http.secure.downstream_rq_timeout'), timeouts);
  });
});

describe('codec_type HTTP3', () => {
  it('is refused on a TCP listener, by name, as Envoy refuses it', async () => {
    const tmp = tempDir();
    const config = tmp.file('http3.json', JSON.stringify({
      static_resources: {
        listeners: [{
          name: 'h3',
          address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
          filter_chains: [{ filters: [{ name: 'hcm', typed_config: { '@type': HCM_TYPE, stat_prefix: 'h3', codec_type: 'HTTP3', route_config: { virtual_hosts: [] }, http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } }] } }] }],
        }],
      },
    }));
    const r = await runProxy(['--mode', 'validate', '-c', config]);
    tmp.cleanup();
    assert.notEqual(r.code, 0);
    assert.match(r.stderr + r.stdout, /codec_type: HTTP\/3 codec configured on non-QUIC listener/);
  });
});
