import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server as HttpServer } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ServerCredentials, status as GrpcStatus } from '@grpc/grpc-js';
import type { JsonObject } from '../shared/config/proto-json.js';
import { filterBootstrap, staticCluster } from './helpers/bootstraps.js';
import { makePki, UPSTREAM_TLS_TYPE, type TestPki } from './helpers/certs.js';
import { runProxy, tempDir } from './helpers/cli.js';
import { startUnaryService } from './helpers/grpc-service.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * The external authorization filter (envoy.filters.http.ext_authz) as Envoy's, against real
 * authorization services started here: an HTTP one (node:http) and a gRPC one (@grpc/grpc-js
 * serving envoy.service.auth.v3.Authorization with Envoy's protos).
 */

const EXT_AUTHZ = 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz';
const PER_ROUTE = 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthzPerRoute';
const tmp = tempDir();
let upstream: Upstream;

before(async () => {
  upstream = await startUpstream('A');
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
  tmp.cleanup();
});

/**
 * A bootstrap whose filter chain is `before` and one ext_authz filter, with the authorization
 * service's cluster beside `backend`, and an access log of each request's id and the
 * authorization service's dynamic metadata.
 */
function authzBootstrap(name: string, filter: object, authzPort: number, routes: object[], vhost: object = {}, before: object[] = []): Record<string, unknown> {
  const bootstrap = filterBootstrap(name, [...before, { name: 'envoy.filters.http.ext_authz', typed_config: { '@type': EXT_AUTHZ, ...filter } }], routes, upstream.port, vhost);
  (bootstrap.static_resources as { clusters: object[] }).clusters.push(staticCluster('authz', authzPort));
  const hcm = (bootstrap.static_resources as any).listeners[0].filter_chains[0].filters[0].typed_config;
  hcm.access_log = [
    {
      name: 'envoy.access_loggers.file',
      typed_config: {
        '@type': 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog',
        path: logPath(name),
        log_format: { text_format_source: { inline_string: '%REQ(X-REQUEST-ID)% %RESPONSE_FLAGS% %DYNAMIC_METADATA(envoy.filters.http.ext_authz)%\n' } },
      },
    },
  ];
  return bootstrap;
}
const logPath = (name: string) => join(tmp.dir, `${name}.log`);
/** The access log line of the request with this x-request-id. */
const logLine = (name: string, id: string) => waitFor(`the access log line of ${id}`, () => (existsSync(logPath(name)) ? readFileSync(logPath(name), 'utf8').split('\n').find((l) => l.startsWith(`${id} `)) : undefined));

/** Every path to the upstream's /echo (its query kept), which answers with what it got. */
const echo = { cluster: 'backend', regex_rewrite: { pattern: { regex: '^/.*$' }, substitution: '/echo' } };
interface Echoed {
  headers: Record<string, string>;
  body: string;
  url: string;
}

describe('ext_authz with an HTTP authorization service', () => {
  let authz: HttpServer;
  let authzPort = 0;
  const seen: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[] = [];
  let proxy: RunningProxy;
  const get = (path: string, headers: Record<string, string> = {}, body?: string) =>
    httpRequest(`http://127.0.0.1:${proxy.ports.get('guarded')}${path}`, { headers, ...(body !== undefined ? { method: 'POST', body } : {}) });

  before(async () => {
    authz = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        const auth = req.headers.authorization;
        if (req.url?.includes('/boom')) {
          res.writeHead(503).end('down');
        } else if (auth === 'Bearer good') {
          res.writeHead(200, { 'x-user': 'alice', 'x-tag': 'checked', 'x-envoy-auth-headers-to-remove': 'x-secret', 'x-on-success': 'yes', 'x-not-allowed': 'no' }).end();
        } else {
          res.writeHead(401, { 'www-authenticate': 'Bearer realm="test"', 'x-reason': 'bad token', 'content-type': 'text/plain' }).end('nope');
        }
      });
    });
    await new Promise<void>((resolve) => authz.listen(0, '127.0.0.1', resolve));
    authzPort = (authz.address() as { port: number }).port;
    const filter = {
      http_service: {
        server_uri: { uri: 'http://authz', cluster: 'authz', timeout: '2s' },
        path_prefix: '/check',
        authorization_request: { allowed_headers: { patterns: [{ exact: 'x-allowed' }] }, headers_to_add: [{ key: 'x-checked-by', value: 'proxy' }] },
        authorization_response: {
          allowed_upstream_headers: { patterns: [{ exact: 'x-user' }] },
          allowed_upstream_headers_to_append: { patterns: [{ exact: 'x-tag' }] },
          allowed_client_headers_on_success: { patterns: [{ exact: 'x-on-success' }] },
          dynamic_metadata_from_headers: { patterns: [{ exact: 'x-user' }] },
        },
      },
      with_request_body: { max_request_bytes: 64 },
    };
    const routes = [
      { match: { prefix: '/open' }, route: echo, typed_per_filter_config: { 'envoy.filters.http.ext_authz': { '@type': PER_ROUTE, disabled: true } } },
      { match: { prefix: '/' }, route: echo },
    ];
    proxy = await startProxy(authzBootstrap('guarded', filter, authzPort, routes), ['--concurrency', '1', '--file-flush-interval-msec', '50']);
  });

  after(() => new Promise<void>((resolve) => authz.close(() => resolve())));

  it("asks the service with the request's method, path, host and only the headers it may see; lets an allowed request through with the service's headers", async () => {
    const r = await get('/things?id=7', { authorization: 'Bearer good', 'x-allowed': '1', 'x-private': 'p', 'x-secret': 's', 'x-tag': 'client', 'x-request-id': 'http-ok' });
    assert.equal(r.status, 200);
    const asked = seen.at(-1)!;
    assert.deepEqual([asked.method, asked.url, asked.headers.host], ['GET', '/check/things?id=7', `127.0.0.1:${proxy.ports.get('guarded')}`]);
    assert.deepEqual([asked.headers.authorization, asked.headers['x-allowed'], asked.headers['x-private'], asked.headers['x-checked-by']], ['Bearer good', '1', undefined, 'proxy']);
    const up = JSON.parse(r.body) as Echoed;
    assert.deepEqual([up.headers['x-user'], up.headers['x-tag'], up.headers['x-secret'], up.headers['x-not-allowed']], ['alice', 'client,checked', undefined, undefined]);
    assert.equal(r.headers['x-on-success'], 'yes');
    assert.equal(await statValue(proxy, 'http.guarded.ext_authz.ok'), 1);
    // dynamic_metadata_from_headers: the service's x-user, as dynamic metadata.
    assert.equal(await logLine('guarded', 'http-ok'), 'http-ok - {"x-user":"alice"}');
  });

  it("denies with the service's status, body and headers, charged to the route's cluster", async () => {
    const r = await get('/things', { authorization: 'Bearer bad', 'x-request-id': 'http-denied' });
    assert.deepEqual([r.status, r.body, r.headers['www-authenticate'], r.headers['x-reason']], [401, 'nope', 'Bearer realm="test"', 'bad token']);
    assert.equal(await logLine('guarded', 'http-denied'), 'http-denied UAEX -');
    assert.equal(await statValue(proxy, 'http.guarded.ext_authz.denied'), 1);
    assert.equal(await statValue(proxy, 'cluster.backend.ext_authz.denied'), 1);
    assert.equal(await statValue(proxy, 'cluster.backend.upstream_rq_401'), 1);
  });

  it('sends the body when with_request_body asks, and refuses one over max_request_bytes with 413', async () => {
    const r = await get('/upload', { authorization: 'Bearer good' }, 'payload');
    assert.equal(r.status, 200);
    assert.deepEqual([seen.at(-1)!.method, seen.at(-1)!.body, seen.at(-1)!.headers['x-envoy-auth-partial-body']], ['POST', 'payload', 'false']);
    assert.equal((JSON.parse(r.body) as Echoed).body, 'payload');
    assert.equal((await get('/upload', { authorization: 'Bearer good' }, 'x'.repeat(65))).status, 413);
  });

  it('answers status_on_error (403) when the service fails, and leaves a route that switches it off alone', async () => {
    const checks = seen.length;
    assert.equal((await get('/open/x')).status, 200);
    assert.equal(seen.length, checks, 'no check for the route');
    const r = await get('/boom', { authorization: 'Bearer good' });
    assert.deepEqual([r.status, r.body], [403, '']);
    assert.equal(await statValue(proxy, 'http.guarded.ext_authz.error'), 1);
  });
});

describe('ext_authz with a gRPC authorization service', () => {
  let closeService: () => Promise<void>;
  let proxy: RunningProxy;
  const checks: JsonObject[] = [];
  const get = (path: string, headers: Record<string, string> = {}) => httpRequest(`http://127.0.0.1:${proxy.ports.get('grpc_guarded')}${path}`, { headers });

  before(async () => {
    const service = await startUnaryService(
      '/envoy.service.auth.v3.Authorization/Check',
      'envoy.service.auth.v3.CheckRequest',
      'envoy.service.auth.v3.CheckResponse',
      (call, callback) => {
          checks.push(call.request);
          const headers = ((call.request.attributes as JsonObject).request as { http: { headers: Record<string, string> } }).http.headers;
          if (headers['x-fail'] === '1') {
            callback({ code: GrpcStatus.UNAVAILABLE, details: 'authorizer down' });
          } else if (headers.authorization === 'Bearer good') {
            callback(null, {
              status: { code: 0 },
              dynamic_metadata: { tier: 'gold' },
              ok_response: {
                headers: [{ header: { key: 'x-user', value: 'bob' } }, { header: { key: 'x-tag', value: 'grpc' }, append: true }, { header: { key: 'x-absent', value: 'v' }, append: true }],
                headers_to_remove: ['x-secret'],
                response_headers_to_add: [{ header: { key: 'x-authz', value: 'ok' } }],
                query_parameters_to_set: [{ key: 'checked', value: 'true' }],
              },
            });
          } else {
            callback(null, { status: { code: 7 }, denied_response: { status: { code: 'Forbidden' }, headers: [{ header: { key: 'x-denied', value: 'yes' } }], body: 'go away' } });
          }
      },
    );
    closeService = service.close;
    const port = service.port;
    const filter = { grpc_service: { envoy_grpc: { cluster_name: 'authz' }, timeout: '2s' }, failure_mode_allow: true, failure_mode_allow_header_add: true, stat_prefix: 'front', metadata_context_namespaces: ['envoy.lb'] };
    // A filter before it writes dynamic metadata the check sends (metadata_context_namespaces).
    const h2m = { name: 'envoy.filters.http.header_to_metadata', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.header_to_metadata.v3.Config', request_rules: [{ header: 'x-version', on_header_present: { metadata_namespace: 'envoy.lb', key: 'version' } }] } };
    const routes = [{ match: { prefix: '/' }, route: echo, typed_per_filter_config: { 'envoy.filters.http.ext_authz': { '@type': PER_ROUTE, check_settings: { context_extensions: { route: 'echo', level: 'route' } } } } }];
    const vhost = { typed_per_filter_config: { 'envoy.filters.http.ext_authz': { '@type': PER_ROUTE, check_settings: { context_extensions: { vhost: 'all', level: 'vhost' } } } } };
    proxy = await startProxy(authzBootstrap('grpc_guarded', filter, port, routes, vhost, [h2m]), ['--concurrency', '1', '--file-flush-interval-msec', '50']);
  });

  after(() => closeService());

  it("sends Envoy's CheckRequest: addresses, method, path, host, headers, the route's context_extensions merged, and dynamic metadata both ways", async () => {
    assert.equal((await get('/a?x=1', { authorization: 'Bearer good', 'x-version': 'v3', 'x-request-id': 'grpc-ok' })).status, 200);
    const attributes = checks.at(-1)!.attributes as any;
    assert.deepEqual(attributes.metadata_context, { filter_metadata: { 'envoy.lb': { version: 'v3' } } });
    assert.equal(await logLine('grpc_guarded', 'grpc-ok'), 'grpc-ok - {"tier":"gold"}');
    assert.equal(attributes.source.address.socket_address.address, '127.0.0.1');
    assert.equal(attributes.destination.address.socket_address.port_value, proxy.ports.get('grpc_guarded'));
    assert.deepEqual([attributes.request.http.method, attributes.request.http.path, attributes.request.http.protocol], ['GET', '/a?x=1', 'HTTP/1.1']);
    assert.equal(attributes.request.http.headers[':authority'], `127.0.0.1:${proxy.ports.get('grpc_guarded')}`);
    assert.deepEqual(attributes.context_extensions, { vhost: 'all', route: 'echo', level: 'route' });
  });

  it("applies ok_response: headers set, appended where present, removed; query parameters; response headers", async () => {
    const r = await get('/a', { authorization: 'Bearer good', 'x-tag': 'client', 'x-secret': 's' });
    const up = JSON.parse(r.body) as Echoed;
    assert.deepEqual([up.headers['x-user'], up.headers['x-tag'], up.headers['x-absent'], up.headers['x-secret'], up.url], ['bob', 'client,grpc', undefined, undefined, '/echo?checked=true']);
    assert.equal(r.headers['x-authz'], 'ok');
    assert.equal(await statValue(proxy, 'http.grpc_guarded.ext_authz.front.ok'), 2);
  });

  it('denies with denied_response; lets the request through on a failed call with failure_mode_allow, marked', async () => {
    const denied = await get('/a', { authorization: 'Bearer bad' });
    assert.deepEqual([denied.status, denied.body, denied.headers['x-denied']], [403, 'go away', 'yes']);
    const failed = await get('/a', { 'x-fail': '1' });
    assert.equal(failed.status, 200);
    assert.equal((JSON.parse(failed.body) as Echoed).headers['x-envoy-auth-failure-mode-allowed'], 'true');
    assert.deepEqual(
      [await statValue(proxy, 'http.grpc_guarded.ext_authz.front.denied'), await statValue(proxy, 'http.grpc_guarded.ext_authz.front.error'), await statValue(proxy, 'cluster.backend.ext_authz.front.failure_mode_allowed')],
      [1, 1, 1],
    );
  });
});

describe("ext_authz with a gRPC service behind a TLS cluster", () => {
  let pki: TestPki;
  let closeService: () => Promise<void>;
  let port = 0;
  const allow = (_call: unknown, callback: (err: null, r: JsonObject) => void) => callback(null, { status: { code: 0 }, ok_response: { headers: [{ header: { key: 'x-checked', value: 'tls' } }] } });

  before(async () => {
    pki = makePki();
    const leaf = pki.leaf('authz', { sans: ['DNS:authz.test'], serial: 'a1' });
    const service = await startUnaryService('/envoy.service.auth.v3.Authorization/Check', 'envoy.service.auth.v3.CheckRequest', 'envoy.service.auth.v3.CheckResponse', allow, ServerCredentials.createSsl(null, [{ private_key: Buffer.from(leaf.key), cert_chain: Buffer.from(leaf.cert) }], false));
    closeService = service.close;
    port = service.port;
  });

  after(async () => {
    await closeService();
    pki.remove();
  });

  /** The authz cluster with an UpstreamTlsContext trusting `caPath`, SNI and a SAN matcher as Envoy's. */
  function tlsAuthzBootstrap(name: string, caPath: string): Record<string, unknown> {
    const bootstrap = authzBootstrap(name, { grpc_service: { envoy_grpc: { cluster_name: 'authz' }, timeout: '2s' } }, port, [{ match: { prefix: '/' }, route: echo }]);
    const authz = (bootstrap.static_resources as { clusters: Record<string, unknown>[] }).clusters.find((c) => c.name === 'authz')!;
    authz.typed_extension_protocol_options = { 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': { '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions', explicit_http_config: { http2_protocol_options: {} } } };
    authz.transport_socket = {
      name: 'envoy.transport_sockets.tls',
      typed_config: {
        '@type': UPSTREAM_TLS_TYPE,
        sni: 'authz.test',
        common_tls_context: { validation_context: { trusted_ca: { filename: caPath }, match_typed_subject_alt_names: [{ san_type: 'DNS', matcher: { exact: 'authz.test' } }] } },
      },
    };
    return bootstrap;
  }

  it("calls the service over the cluster's TLS transport socket, verified against its trusted_ca and SAN matchers", async () => {
    const proxy = await startProxy(tlsAuthzBootstrap('authz_tls', pki.caPath), ['--concurrency', '1']);
    const r = await httpRequest(`http://127.0.0.1:${proxy.ports.get('authz_tls')}/a`);
    assert.equal(r.status, 200);
    assert.equal((JSON.parse(r.body) as Echoed).headers['x-checked'], 'tls');
    assert.equal(await statValue(proxy, 'cluster.authz.ssl.handshake'), 1);
  });

  it('refuses the request (an authorization error) when the service is not trusted by the cluster', async () => {
    const proxy = await startProxy(tlsAuthzBootstrap('authz_untrusted', pki.otherCa().caPath), ['--concurrency', '1']);
    const r = await httpRequest(`http://127.0.0.1:${proxy.ports.get('authz_untrusted')}/a`);
    assert.equal(r.status, 403);
    assert.deepEqual([await statValue(proxy, 'http.authz_untrusted.ext_authz.error'), await statValue(proxy, 'cluster.authz.ssl.fail_verify_error')], [1, 1]);
  });
});

describe('ext_authz configuration', () => {
  it('refuses a filter without a service, and what it cannot do, by name', async () => {
    const bootstrap = authzBootstrap('bad', { clear_route_cache: true, with_request_body: { max_request_bytes: 10, allow_partial_message: true } }, 1, [{ match: { prefix: '/' }, route: echo }]);
    const out = await runProxy(['--mode', 'validate', '-c', tmp.file('bad-authz.json', JSON.stringify(bootstrap))]);
    assert.equal(out.code, 1);
    const text = out.stderr + out.stdout;
    assert.match(text, /exactly one of grpc_service and http_service must be set/);
    assert.match(text, /field 'clear_route_cache' of envoy\.extensions\.filters\.http\.ext_authz\.v3\.ExtAuthz is not supported by this proxy \(routes are chosen before/);
    assert.match(text, /field 'allow_partial_message' of envoy\.extensions\.filters\.http\.ext_authz\.v3\.BufferSettings is not supported/);
  });
});
