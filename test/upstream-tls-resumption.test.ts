import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createServer, type Server } from 'node:https';
import { createSecureServer as createH2Server, type Http2SecureServer } from 'node:http2';
import type { TLSSocket } from 'node:tls';
import { routesListener, staticCluster } from './helpers/bootstraps.js';
import { httpRequest, startProxy, statValue, stopAllProxies, type RunningProxy } from './helpers/proxy.js';
import { makePki, UPSTREAM_TLS_TYPE, type TestPki } from './helpers/certs.js';

/**
 * TLS session resumption to upstreams, as Envoy's client context does it: each cluster keeps up
 * to max_session_keys sessions (1 by default) from its handshakes and offers the newest on its
 * next connection; a TLS 1.3 one is used once; 0 turns it off. The upstream closes every
 * connection after its answer, so each request is a new handshake; the upstream says whether it
 * resumed, and so does cluster.<name>.ssl.session_reused. Node's TLS server (OpenSSL) gives two
 * TLS 1.3 tickets after a full handshake and none after a resumed one: with one key kept, every
 * other connection resumes, with two, two of three (as Envoy's client would against it).
 */

describe('upstream TLS session resumption (max_session_keys)', () => {
  let pki: TestPki;
  let https: Server;
  let h2: Http2SecureServer;
  let proxy: RunningProxy;
  const tls = (extra: object = {}, params: object = {}) => ({
    transport_socket: { name: 'envoy.transport_sockets.tls', typed_config: { '@type': UPSTREAM_TLS_TYPE, common_tls_context: { tls_params: params }, ...extra } },
  });

  before(async () => {
    pki = makePki();
    const leaf = pki.leaf('resumed', { sans: ['DNS:resumed'], serial: '71' });
    https = createServer({ key: leaf.key, cert: leaf.cert }, (req, res) => {
      res.setHeader('connection', 'close');
      res.end((req.socket as TLSSocket).isSessionReused() ? 'resumed' : 'full');
    });
    h2 = createH2Server({ key: leaf.key, cert: leaf.cert }, (req, res) => {
      const socket = req.stream.session?.socket as TLSSocket;
      res.end(socket.isSessionReused() ? 'resumed' : 'full');
      // One stream per session: the next request needs a new one.
      req.stream.session?.close();
    });
    await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
    await new Promise<void>((resolve) => h2.listen(0, '127.0.0.1', resolve));
    const port = (https.address() as { port: number }).port;
    const h2Port = (h2.address() as { port: number }).port;
    proxy = await startProxy({
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [routesListener('web', [
          { match: { prefix: '/v13' }, route: { cluster: 'v13' } },
          { match: { prefix: '/two' }, route: { cluster: 'two' } },
          { match: { prefix: '/v12' }, route: { cluster: 'v12' } },
          { match: { prefix: '/off' }, route: { cluster: 'off' } },
          { match: { prefix: '/h2' }, route: { cluster: 'h2' } },
        ])],
        clusters: [
          { ...staticCluster('v13', port), ...tls() },
          { ...staticCluster('two', port), ...tls({ max_session_keys: 2 }) },
          { ...staticCluster('v12', port), ...tls({}, { tls_maximum_protocol_version: 'TLSv1_2' }) },
          { ...staticCluster('off', port), ...tls({ max_session_keys: 0 }) },
          { ...staticCluster('h2', h2Port), ...tls(), http2_protocol_options: {} },
        ],
      },
    }, ['--concurrency', '1']);
  });

  after(async () => {
    await stopAllProxies();
    https.close();
    h2.close();
    pki.remove();
  });

  const answers = async (path: string, n: number) => {
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push((await httpRequest(`http://127.0.0.1:${proxy.ports.get('web')}${path}`)).body);
    return out;
  };

  const cases: [string, string, string[]][] = [
    ['v13', 'TLS 1.3, one key: each ticket used once', ['full', 'resumed', 'full', 'resumed']],
    ['two', 'TLS 1.3, two keys', ['full', 'resumed', 'resumed', 'full']],
    ['v12', 'TLS 1.2: a session serves again and again', ['full', 'resumed', 'resumed', 'resumed']],
    ['h2', 'an HTTP/2 cluster\'s sessions', ['full', 'resumed', 'full', 'resumed']],
  ];
  for (const [cluster, what, expected] of cases) {
    it(`${what}: ${expected.join(', ')}`, async () => {
      assert.deepEqual(await answers(`/${cluster}`, expected.length), expected);
      assert.equal(await statValue(proxy, `cluster.${cluster}.ssl.session_reused`), expected.filter((e) => e === 'resumed').length);
      assert.equal(await statValue(proxy, `cluster.${cluster}.ssl.handshake`), expected.length);
    });
  }

  it('max_session_keys 0: never resumed', async () => {
    assert.deepEqual(await answers('/off', 3), ['full', 'full', 'full']);
    assert.equal(await statValue(proxy, 'cluster.off.ssl.session_reused'), 0);
  });
});
