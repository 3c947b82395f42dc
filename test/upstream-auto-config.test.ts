import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { createSecureServer, type Http2SecureServer } from 'node:http2';
import { createServer as createHttpsServer } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { makePki, UPSTREAM_TLS_TYPE, type TestPki } from './helpers/certs.js';
import { loadErrors, routesListener } from './helpers/bootstraps.js';
import { httpRequest, startProxy, statValue, stopAllProxies, type RunningProxy } from './helpers/proxy.js';

/**
 * HttpProtocolOptions.auto_config, as Envoy's mixed connection pool: each TLS connection offers h2
 * and http/1.1 by ALPN and speaks what the upstream chose, so one cluster reaches an HTTP/2
 * backend over HTTP/2 and an HTTP/1.1-only backend over HTTP/1.1; the connection that
 * negotiated h2 carries the request it was opened for (no second handshake), and the counts are
 * by protocol negotiated. Envoy's refusal of auto_config without an ALPN transport socket, in its words.
 */

const OPTIONS = 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions';
const OPTIONS_TYPE = `type.googleapis.com/${OPTIONS}`;

let pki: TestPki;
let h2Server: Http2SecureServer;
let h1Server: Server;
let proxy: RunningProxy;

const answer = (name: string) => (req: { httpVersion: string; resume(): void; on(e: 'end', f: () => void): void }, res: { setHeader(k: string, v: string): void; end(b: string): void }) => {
  req.resume();
  req.on('end', () => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ name, version: req.httpVersion }));
  });
};

const autoCluster = (name: string, port: number) => ({
  name,
  type: 'STATIC',
  connect_timeout: '1s',
  typed_extension_protocol_options: { [OPTIONS]: { '@type': OPTIONS_TYPE, auto_config: { http2_protocol_options: { max_concurrent_streams: 100 } } } },
  transport_socket: { name: 'envoy.transport_sockets.tls', typed_config: { '@type': UPSTREAM_TLS_TYPE, sni: 'backend.internal', common_tls_context: { validation_context: { trusted_ca: { filename: pki.caPath } } } } },
  load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } }] }] },
});

before(async () => {
  pki = makePki();
  const leaf = pki.leaf('backend', { sans: ['DNS:backend.internal'], serial: 'C1' });
  h2Server = createSecureServer({ cert: leaf.cert, key: leaf.key, allowHTTP1: true }, answer('h2-capable'));
  h1Server = createHttpsServer({ cert: leaf.cert, key: leaf.key }, answer('http1-only'));
  const port = (s: { listen(p: number, h: string, f: () => void): unknown; address(): unknown }) =>
    new Promise<number>((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as { port: number }).port)));
  const h2Port = await port(h2Server);
  const h1Port = await port(h1Server);
  const routes = ['h2', 'h1', 'burst'].map((c) => ({ match: { prefix: `/${c}` }, route: { cluster: c } }));
  proxy = await startProxy({
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: {
      listeners: [routesListener('web', routes)],
      clusters: [autoCluster('h2', h2Port), autoCluster('h1', h1Port), autoCluster('burst', h2Port)],
    },
  }, ['--concurrency', '1']);
});

after(async () => {
  await stopAllProxies();
  h2Server.close();
  h1Server.close();
  h1Server.closeAllConnections();
  pki.remove();
});

const get = async (path: string) => {
  const r = await httpRequest(`http://127.0.0.1:${proxy.ports.get('web')}${path}`);
  assert.equal(r.status, 200, r.body);
  return JSON.parse(r.body) as { name: string; version: string };
};

describe('upstream auto_config', () => {
  it('speaks HTTP/2 to a backend that chooses h2, from the first request, over the connection that negotiated it', async () => {
    for (let i = 0; i < 4; i++) assert.deepEqual(await get('/h2'), { name: 'h2-capable', version: '2.0' });
    assert.equal(await statValue(proxy, 'cluster.h2.upstream_cx_total'), 1);
    assert.equal(await statValue(proxy, 'cluster.h2.upstream_cx_http2_total'), 1);
    assert.equal(await statValue(proxy, 'cluster.h2.upstream_cx_http1_total'), 0);
    assert.equal(await statValue(proxy, 'cluster.h2.upstream_cx_active'), 1);
    assert.equal(await statValue(proxy, 'cluster.h2.ssl.handshake'), 1);
  });

  it('speaks HTTP/1.1 to a backend that offers only that', async () => {
    for (let i = 0; i < 4; i++) assert.deepEqual(await get('/h1'), { name: 'http1-only', version: '1.1' });
    assert.equal(await statValue(proxy, 'cluster.h1.upstream_cx_http1_total'), 1);
    assert.equal(await statValue(proxy, 'cluster.h1.upstream_cx_http2_total'), 0);
  });

  it('requests that arrive while the first connections negotiate all go over HTTP/2', async () => {
    const all = await Promise.all(Array.from({ length: 12 }, () => get('/burst')));
    assert.deepEqual([...new Set(all.map((a) => a.version))], ['2.0']);
    const total = await statValue(proxy, 'cluster.burst.upstream_cx_total');
    assert.equal(await statValue(proxy, 'cluster.burst.upstream_cx_http2_total'), total);
    assert.equal(await statValue(proxy, 'cluster.burst.upstream_cx_active'), total, 'every connection that negotiated h2 is a session now');
  });

  it("refuses it without an ALPN transport socket, in Envoy's words, and HTTP/3 by name", () => {
    const messages = (c: object) => loadErrors({ static_resources: { clusters: [c] } }).map(String);
    const plain = { ...autoCluster('plain', 1), transport_socket: undefined };
    assert.ok(messages(plain).some((m) => m.includes('ALPN configured for cluster plain which has a non-ALPN transport socket')));
    const h3 = autoCluster('h3', 1);
    h3.typed_extension_protocol_options[OPTIONS].auto_config = { http3_protocol_options: {} } as never;
    assert.ok(messages(h3).some((m) => m.includes('http3_protocol_options') && m.includes('Node 20')));
  });
});
