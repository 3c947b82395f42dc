import assert from 'node:assert/strict';
import { createServer as createHttpsServer, type Server } from 'node:https';
import { createSecureContext, type TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { makePki, UPSTREAM_TLS_TYPE, type TestPki } from './helpers/certs.js';
import { routesListener } from './helpers/bootstraps.js';
import { httpRequest, startProxy, statValue, stopAllProxies, type RunningProxy } from './helpers/proxy.js';

/**
 * UpstreamHttpProtocolOptions.auto_sni, auto_san_validation and override_auto_sni_header, as
 * Envoy's router sets them per request: the upstream connection names the request's host (the
 * header's, if given) by SNI and accepts only a certificate with a SAN for it (in place of the
 * configured matchers); connections are pooled per name. A real upstream that picks its
 * certificate by SNI.
 */

const OPTIONS = 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions';

let pki: TestPki;
let upstream: Server;
let proxy: RunningProxy;

const cluster = (name: string, port: number, naming: object) => ({
  name,
  type: 'STATIC',
  connect_timeout: '1s',
  typed_extension_protocol_options: { [OPTIONS]: { '@type': `type.googleapis.com/${OPTIONS}`, explicit_http_config: { http_protocol_options: {} }, upstream_http_protocol_options: naming } },
  transport_socket: { name: 'envoy.transport_sockets.tls', typed_config: { '@type': UPSTREAM_TLS_TYPE, common_tls_context: { validation_context: { trusted_ca: { filename: pki.caPath } } } } },
  load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } }] }] },
});

before(async () => {
  pki = makePki();
  const a = pki.leaf('a', { sans: ['DNS:a.example'], serial: 'A1' });
  const b = pki.leaf('b', { sans: ['DNS:*.b.example'], serial: 'B1' });
  const contexts: Record<string, ReturnType<typeof createSecureContext>> = { 'a.example': createSecureContext({ cert: a.cert, key: a.key }), b: createSecureContext({ cert: b.cert, key: b.key }) };
  // Its certificate by the name asked for: a.example's, *.b.example's, else a.example's.
  upstream = createHttpsServer({ cert: a.cert, key: a.key, SNICallback: (name, cb) => cb(null, name.endsWith('.b.example') ? contexts.b : contexts['a.example']) }, (req, res) => {
    req.resume();
    res.end(JSON.stringify({ sni: (req.socket as TLSSocket).servername || null }));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const port = (upstream.address() as { port: number }).port;
  proxy = await startProxy({
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: {
      listeners: [routesListener('web', [{ match: { prefix: '/override' }, route: { cluster: 'override' } }, { match: { prefix: '/' }, route: { cluster: 'named' } }])],
      clusters: [
        cluster('named', port, { auto_sni: true, auto_san_validation: true }),
        cluster('override', port, { auto_sni: true, auto_san_validation: true, override_auto_sni_header: 'X-Upstream-Name' }),
      ],
    },
  }, ['--concurrency', '1']);
});

after(async () => {
  await stopAllProxies();
  upstream.close();
  upstream.closeAllConnections();
  pki.remove();
});

const get = (path: string, headers: Record<string, string>) => httpRequest(`http://127.0.0.1:${proxy.ports.get('web')}${path}`, { headers });

describe('auto_sni and auto_san_validation', () => {
  it("name the request's host, without its port, and verify the certificate for it", async () => {
    const a = await get('/', { host: 'a.example:8443' });
    assert.equal(a.status, 200, a.body);
    assert.deepEqual(JSON.parse(a.body), { sni: 'a.example' });
    const b = await get('/', { host: 'x.b.example' });
    assert.equal(b.status, 200, b.body);
    assert.deepEqual(JSON.parse(b.body), { sni: 'x.b.example' }, 'a wildcard SAN covers one label');
  });

  it('pool connections by name: the same host reuses its connection', async () => {
    const before = await statValue(proxy, 'cluster.named.upstream_cx_total');
    assert.equal((await get('/', { host: 'a.example' })).status, 200);
    assert.equal((await get('/', { host: 'x.b.example' })).status, 200);
    assert.equal(await statValue(proxy, 'cluster.named.upstream_cx_total'), before);
  });

  it('refuse a certificate without a SAN for the name (the server answered with another)', async () => {
    const r = await get('/', { host: 'elsewhere.example' });
    assert.equal(r.status, 503);
    assert.ok((await statValue(proxy, 'cluster.named.ssl.fail_verify_san')) >= 1);
  });

  it('override_auto_sni_header names the server when the request has it, else the host does', async () => {
    const r = await get('/override', { host: 'ignored.example', 'x-upstream-name': 'y.b.example' });
    assert.equal(r.status, 200, r.body);
    assert.deepEqual(JSON.parse(r.body), { sni: 'y.b.example' });
    assert.deepEqual(JSON.parse((await get('/override', { host: 'a.example' })).body), { sni: 'a.example' });
  });
});
