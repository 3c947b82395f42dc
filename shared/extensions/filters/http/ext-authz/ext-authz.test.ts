import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { ResponseFlag } from '../../../../access-log/entry.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import { extAuthzFactory } from './filter.js';
import type { FilterContext } from '../../../../http/filter-api.js';
import { closeClusterManagers, counter, decode, encode, filterContext, routesOf } from '../../../../../test/helpers/filter-harness.js';
import { startUnaryService } from '../../../../../test/helpers/grpc-service.js';

/**
 * envoy.filters.http.ext_authz alone (Envoy's ext_authz_test): what it does when the service cannot
 * be asked (no cluster, no host: status_on_error or failure_mode_allow, UAEX, the error and
 * failure_mode_allowed counters), the requests it does not check, and the allowed and denied
 * answers of a gRPC and an HTTP authorization service started here on 127.0.0.1.
 */

const EXT_AUTHZ = 'envoy.filters.http.ext_authz';
const PER_ROUTE = 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthzPerRoute';
const UAEX = ResponseFlag.unauthorizedExternalService;

const ctxOf = (statPrefix: string, defs: Record<string, number[]> = {}): FilterContext => filterContext(statPrefix, defs);
after(closeClusterManagers);

const grpcService = (cluster: string, extra: JsonObject = {}): JsonObject => ({ grpc_service: { envoy_grpc: { cluster_name: cluster }, timeout: '5s' }, ...extra });
const httpService = (cluster: string, extra: JsonObject = {}): JsonObject => ({ server_uri: { uri: `http://${cluster}`, cluster, timeout: '5s' }, ...extra });
const stat = (prefix: string, name: string) => counter(`${prefix}ext_authz.${name}`);

describe('ext_authz when the service cannot be asked', () => {
  it('refuses with status_on_error (403) and UAEX when the cluster is not there, counting ext_authz.error for the filter and the route\'s cluster', async () => {
    const f = extAuthzFactory(EXT_AUTHZ, grpcService('nowhere', { failure_mode_allow: false }), ctxOf('authz1'));
    const r = await decode(f, { clusterName: 'app1' });
    assert.deepEqual([r.decision, r.request.replied?.status, r.request.replied?.body], ['stop', 403, '']);
    assert.deepEqual([r.request.flags & UAEX, r.request.details], [UAEX, 'ext_authz_error']);
    assert.deepEqual([stat('http.authz1.', 'error'), stat('cluster.app1.', 'error'), stat('http.authz1.', 'failure_mode_allowed'), stat('http.authz1.', 'ok')], [1, 1, 0, 0]);

    // ErrorCustomStatusCode and StatsWithPrefix: 503, counted under the stat_prefix only.
    const custom = extAuthzFactory(EXT_AUTHZ, grpcService('nowhere', { status_on_error: { code: 'ServiceUnavailable' }, stat_prefix: 'with_stat_prefix' }), ctxOf('authz2'));
    const c = await decode(custom, { clusterName: 'app2' });
    assert.deepEqual([c.request.replied?.status, c.request.details], [503, 'ext_authz_error']);
    assert.deepEqual([stat('http.authz2.', 'with_stat_prefix.error'), stat('cluster.app2.', 'with_stat_prefix.error'), stat('http.authz2.', 'error'), stat('cluster.app2.', 'error')], [1, 1, 0, 0]);
  });

  it('lets the request through with failure_mode_allow when the cluster has no host, marked x-envoy-auth-failure-mode-allowed only with failure_mode_allow_header_add', async () => {
    const marked = extAuthzFactory(EXT_AUTHZ, { http_service: httpService('authz-empty3'), failure_mode_allow: true, failure_mode_allow_header_add: true }, ctxOf('authz3', { 'authz-empty3': [] }));
    const r = await decode(marked, { clusterName: 'app3' });
    assert.deepEqual([r.decision, r.request.replied, r.request.flags], ['continue', undefined, 0]);
    assert.equal(r.request.rq.headers['x-envoy-auth-failure-mode-allowed'], 'true');
    assert.deepEqual(
      [stat('http.authz3.', 'error'), stat('http.authz3.', 'failure_mode_allowed'), stat('cluster.app3.', 'error'), stat('cluster.app3.', 'failure_mode_allowed')],
      [1, 1, 1, 1],
      'ImmediateErrorOpen: error and failure_mode_allowed, for the filter and the cluster',
    );
    assert.equal(counter('cluster.authz-empty3.upstream_cx_none_healthy'), 1);

    const unmarked = extAuthzFactory(EXT_AUTHZ, { ...grpcService('authz-empty4'), failure_mode_allow: true }, ctxOf('authz4', { 'authz-empty4': [] }));
    const u = await decode(unmarked, { clusterName: 'app4' });
    assert.deepEqual([u.decision, u.request.rq.headers['x-envoy-auth-failure-mode-allowed']], ['continue', undefined], 'ErrorOpenWithHeaderAddClose');
    assert.deepEqual([stat('http.authz4.', 'error'), stat('http.authz4.', 'failure_mode_allowed')], [1, 1]);
  });

  it('checks nothing for a request without a route, a route whose ExtAuthzPerRoute disables it, or outside filter_enabled (deny_at_disable: 403)', async () => {
    // The service's cluster is not there: a check would be an error (a 403 and ext_authz.error).
    const routeConfig = routesOf([
      { match: { prefix: '/open' }, route: { cluster: 'backend' }, typed_per_filter_config: { [EXT_AUTHZ]: { '@type': PER_ROUTE, disabled: true } } },
      { match: { prefix: '/' }, route: { cluster: 'backend' } },
    ]);
    const f = extAuthzFactory(EXT_AUTHZ, grpcService('nowhere'), ctxOf('authz5'));
    const unrouted = await decode(f, { routeConfig: null });
    assert.deepEqual([unrouted.decision, unrouted.request.replied], ['continue', undefined], 'no route: Envoy skips the check');
    const open = await decode(f, { path: '/open/x', routeConfig });
    assert.deepEqual([open.decision, open.request.replied], ['continue', undefined], 'DisabledOnRoute');
    assert.equal(stat('http.authz5.', 'error'), 0);
    assert.equal((await decode(f, { path: '/guarded', routeConfig })).request.replied?.status, 403, 'the other route is checked');

    const off = { default_value: { numerator: 0, denominator: 'HUNDRED' } };
    const disabled = extAuthzFactory(EXT_AUTHZ, grpcService('nowhere', { filter_enabled: off }), ctxOf('authz6'));
    const d = await decode(disabled);
    assert.deepEqual([d.decision, d.request.replied], ['continue', undefined], 'FilterDisabled');
    const denying = extAuthzFactory(EXT_AUTHZ, grpcService('nowhere', { filter_enabled: off, deny_at_disable: { runtime_key: 'authz6.deny_at_disable', default_value: true } }), ctxOf('authz7'));
    const denied = await decode(denying);
    assert.deepEqual([denied.decision, denied.request.replied?.status, denied.request.flags & UAEX, denied.request.details], ['stop', 403, UAEX, 'ext_authz_error'], 'FilterDenyAtDisable');
    assert.deepEqual([stat('http.authz6.', 'disabled'), stat('http.authz7.', 'disabled'), stat('http.authz6.', 'error'), stat('http.authz7.', 'error')], [1, 1, 0, 0]);
  });

  it('reads the body with with_request_body: one past max_request_bytes is answered 413 without a check; a route may turn the buffering off', async () => {
    const routeConfig = routesOf([
      { match: { prefix: '/stream' }, route: { cluster: 'backend' }, typed_per_filter_config: { [EXT_AUTHZ]: { '@type': PER_ROUTE, check_settings: { disable_request_body_buffering: true } } } },
      { match: { prefix: '/' }, route: { cluster: 'backend' } },
    ]);
    const f = extAuthzFactory(EXT_AUTHZ, grpcService('nowhere', { with_request_body: { max_request_bytes: 10 } }), ctxOf('authz8'));
    const big = await decode(f, { method: 'POST', body: 'x'.repeat(11), routeConfig });
    assert.deepEqual([big.decision, big.request.replied?.status, big.request.replied?.body, big.request.details], ['stop', 413, 'Payload Too Large', 'request_payload_too_large']);
    assert.deepEqual([counter('http.authz8.downstream_rq_too_large'), stat('http.authz8.', 'error')], [1, 0], 'RequestDataIsTooLarge: no check');
    const streamed = await decode(f, { method: 'POST', path: '/stream', body: 'x'.repeat(11), routeConfig });
    assert.equal(streamed.request.replied?.status, 403, 'checked without its body (and the check failed)');
    assert.deepEqual([counter('http.authz8.downstream_rq_too_large'), stat('http.authz8.', 'error')], [1, 1]);
  });
});

describe('ext_authz with a gRPC authorization service', () => {
  const checks: JsonObject[] = [];
  let service: Awaited<ReturnType<typeof startUnaryService>>;
  let port = 0;

  before(async () => {
    service = await startUnaryService('/envoy.service.auth.v3.Authorization/Check', 'envoy.service.auth.v3.CheckRequest', 'envoy.service.auth.v3.CheckResponse', (call, callback) => {
      checks.push(call.request);
      const headers = ((call.request.attributes as JsonObject).request as { http: { headers: Record<string, string> } }).http.headers;
      const auth = headers.authorization;
      if (auth === 'fail') callback({ code: GrpcStatus.UNAVAILABLE, details: 'authorizer down' });
      else if (auth === 'good')
        callback(null, {
          status: { code: 0 },
          dynamic_metadata: { foo: 'cool', bar: 1 },
          ok_response: {
            headers: [{ header: { key: 'x-user', value: 'bob' } }, { header: { key: 'x-tag', value: 'grpc' }, append: true }, { header: { key: 'x-absent', value: 'v' }, append: true }],
            headers_to_remove: ['host', ':path', 'remove-me'],
            response_headers_to_add: [{ header: { key: 'x-authz', value: 'ok' } }, { header: { key: 'x-only', value: 'mine' }, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' }],
            query_parameters_to_set: [{ key: 'checked', value: 'true' }],
            query_parameters_to_remove: ['secret'],
          },
        });
      else if (auth === 'unauthorized') callback(null, { status: { code: GrpcStatus.PERMISSION_DENIED }, denied_response: { status: { code: 'Unauthorized' }, headers: [{ header: { key: 'x-denied', value: 'yes' } }, { header: { key: 'set-cookie', value: 'a=1' } }, { header: { key: 'set-cookie', value: 'b=2' } }], body: 'go away' } });
      else callback(null, { status: { code: GrpcStatus.PERMISSION_DENIED } });
    });
    port = service.port;
  });
  after(() => service.close());

  it("allows with ok_response: headers set, appended where present, removed (never host or a pseudo-header), query parameters, response headers, dynamic metadata", async () => {
    const routeConfig = routesOf(
      [{ match: { prefix: '/' }, route: { cluster: 'backend' }, typed_per_filter_config: { [EXT_AUTHZ]: { '@type': PER_ROUTE, check_settings: { context_extensions: { key_route: 'value_route' } } } } }],
      { typed_per_filter_config: { [EXT_AUTHZ]: { '@type': PER_ROUTE, check_settings: { context_extensions: { key_vhost: 'value_vhost', key_route: 'default_route_value' } } } } },
    );
    const f = extAuthzFactory(EXT_AUTHZ, grpcService('authz-grpc9'), ctxOf('authz9', { 'authz-grpc9': [port] }));
    const r = await decode(f, { path: '/users?secret=s&keep=1', authority: 'example.com', clusterName: 'app9', routeConfig, headers: { authorization: 'good', 'x-tag': 'client', 'remove-me': 'upstream-should-not-see-me' } });
    assert.deepEqual([r.decision, r.request.replied, r.request.flags], ['continue', undefined, 0]);
    const h = r.request.rq.headers;
    assert.deepEqual([h['x-user'], h['x-tag'], h['x-absent'], h['remove-me'], h.host], ['bob', 'client,grpc', undefined, undefined, 'example.com']);
    assert.equal(r.request.rq.path, '/users?keep=1&checked=true');
    assert.deepEqual(encode(r, 200, { 'x-authz': 'upstream', 'x-only': 'upstream' }), { 'x-authz': ['upstream', 'ok'], 'x-only': 'mine' });
    assert.deepEqual(r.request.metadata()['envoy.filters.http.ext_authz'], { foo: 'cool', bar: 1 });
    assert.deepEqual([stat('http.authz9.', 'ok'), stat('cluster.app9.', 'ok')], [1, 1]);

    // What was asked: the request as Envoy's CheckRequest, the route's context_extensions over its virtual host's.
    const attributes = checks.at(-1)!.attributes as { request: { http: JsonObject }; context_extensions: JsonObject };
    const http = attributes.request.http as { method: string; path: string; host: string; headers: Record<string, string> };
    assert.deepEqual([http.method, http.path, http.host, http.headers[':authority'], http.headers[':path'], http.headers.authorization], ['GET', '/users?secret=s&keep=1', 'example.com', 'example.com', '/users?secret=s&keep=1', 'good']);
    assert.deepEqual(attributes.context_extensions, { key_vhost: 'value_vhost', key_route: 'value_route' }, 'ContextExtensions');
  });

  it("denies with denied_response (its status, 403 without one; its headers and body), UAEX and ext_authz_denied, charged to the route's cluster; a failed call is an error", async () => {
    const f = extAuthzFactory(EXT_AUTHZ, grpcService('authz-grpc10'), ctxOf('authz10', { 'authz-grpc10': [port], app10: [] }));
    const r = await decode(f, { clusterName: 'app10', headers: { authorization: 'unauthorized' } });
    assert.equal(r.decision, 'stop');
    assert.deepEqual(r.request.replied, { status: 401, headers: { 'x-denied': 'yes', 'set-cookie': ['a=1', 'b=2'] }, body: 'go away' });
    assert.deepEqual([r.request.flags & UAEX, r.request.details], [UAEX, 'ext_authz_denied']);
    const plain = await decode(f, { clusterName: 'app10', headers: { authorization: 'nobody' } });
    assert.deepEqual([plain.request.replied?.status, plain.request.replied?.body], [403, '']);
    assert.deepEqual([stat('http.authz10.', 'denied'), stat('cluster.app10.', 'denied'), counter('cluster.app10.upstream_rq_401'), counter('cluster.app10.upstream_rq_403'), counter('cluster.app10.upstream_rq_4xx')], [2, 2, 1, 1, 2]);

    const failed = await decode(f, { clusterName: 'app10', headers: { authorization: 'fail' } });
    assert.deepEqual([failed.request.replied?.status, failed.request.details, stat('http.authz10.', 'error'), stat('http.authz10.', 'denied')], [403, 'ext_authz_error', 1, 2]);
  });
});

describe('ext_authz with an HTTP authorization service', () => {
  const seen: { method: string; url: string; headers: IncomingHttpHeaders }[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
      const auth = req.headers.authorization;
      if (auth === 'Bearer good') res.writeHead(200, { 'x-user': 'alice', 'x-not-allowed': 'no', 'x-envoy-auth-headers-to-remove': 'x-secret' }).end();
      else if (auth === 'Bearer down') res.writeHead(503).end('down');
      else res.writeHead(401, { 'www-authenticate': 'Bearer realm="test"', 'x-reason': 'bad token', 'x-hidden': 'h' }).end('nope');
    });
  });
  let port = 0;

  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  after(async () => {
    // The clusters' keep-alive connections to the service first, then the service.
    await closeClusterManagers();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("asks with the method, path_prefix + path and the headers it may see; a 200 allows with allowed_upstream_headers, any other status but 5xx denies with the service's answer, a 5xx is an error", async () => {
    const config = {
      http_service: httpService('authz-http11', {
        path_prefix: '/check',
        authorization_request: { allowed_headers: { patterns: [{ exact: 'x-allowed' }] }, headers_to_add: [{ key: 'x-checked-by', value: 'proxy' }] },
        authorization_response: { allowed_upstream_headers: { patterns: [{ exact: 'x-user' }] }, allowed_client_headers: { patterns: [{ exact: 'x-reason' }] } },
      }),
    };
    const f = extAuthzFactory(EXT_AUTHZ, config, ctxOf('authz11', { 'authz-http11': [port] }));
    const ok = await decode(f, { path: '/things?id=7', clusterName: 'app11', headers: { authorization: 'Bearer good', 'x-allowed': '1', 'x-private': 'p', 'x-secret': 's' } });
    assert.deepEqual([ok.decision, ok.request.replied], ['continue', undefined]);
    const asked = seen.at(-1)!;
    assert.deepEqual([asked.method, asked.url, asked.headers.host, asked.headers.authorization, asked.headers['x-allowed'], asked.headers['x-private'], asked.headers['x-checked-by'], asked.headers['content-length']], ['GET', '/check/things?id=7', 'example.com', 'Bearer good', '1', undefined, 'proxy', '0']);
    const h = ok.request.rq.headers;
    assert.deepEqual([h['x-user'], h['x-not-allowed'], h['x-secret']], ['alice', undefined, undefined]);

    const denied = await decode(f, { clusterName: 'app11', headers: { authorization: 'Bearer bad' } });
    assert.deepEqual([denied.request.replied?.status, denied.request.replied?.body, denied.request.details, denied.request.flags & UAEX], [401, 'nope', 'ext_authz_denied', UAEX]);
    // allowed_client_headers: x-reason, and WWW-Authenticate always; not x-hidden.
    const to = denied.request.replied!.headers;
    assert.deepEqual([to['www-authenticate'], to['x-reason'], to['x-hidden']], ['Bearer realm="test"', 'bad token', undefined]);

    const down = await decode(f, { clusterName: 'app11', headers: { authorization: 'Bearer down' } });
    assert.deepEqual([down.request.replied?.status, down.request.details], [403, 'ext_authz_error']);
    assert.deepEqual([stat('http.authz11.', 'ok'), stat('http.authz11.', 'denied'), stat('http.authz11.', 'error'), stat('cluster.app11.', 'error')], [1, 1, 1, 1]);
  });
});
