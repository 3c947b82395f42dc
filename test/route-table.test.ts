import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JsonObject } from '../shared/config/proto-json.js';
import type { RequestView } from '../shared/matchers.js';
import { chooseClusterName, RouteTable } from '../shared/http/route-table.js';
import { decideRoute } from '../shared/http/route-explain.js';
import { CASES, ROUTES } from './helpers/route-check-cases.js';

/**
 * The route table alone, as Envoy's config_impl_test has it: which virtual host a Host picks
 * (RouteMatcher::findVirtualHost), which route of it a request takes, and what the route says.
 */

const direct = (body: string) => ({ direct_response: { status: 200, body: { inline_string: body } } });
const vhost = (name: string, domains: string[], routes: JsonObject[] = [{ match: { prefix: '/' }, ...direct(name) }]) => ({ name, domains, routes });
const rq = (authority: string, path = '/', headers: Record<string, string> = {}, method = 'GET'): RequestView => ({ method, path, authority, headers: { ':authority': authority, ':path': path, ':method': method, ...headers } });
const vhName = (table: RouteTable, authority: string) => table.virtualHost(authority)?.name;

describe('the route table', () => {
  it("chooses a virtual host as Envoy does: exact, then the longest *suffix, then the longest prefix*, then '*'", () => {
    const table = new RouteTable({
      virtual_hosts: [
        vhost('default', ['*']),
        vhost('exact', ['api.example.com']),
        vhost('suffix', ['*.example.com']),
        vhost('longer-suffix', ['*-bar.example.com']),
        vhost('prefix', ['api.*']),
        vhost('longer-prefix', ['api.exam*']),
      ],
    });
    assert.equal(vhName(table, 'api.example.com'), 'exact');
    assert.equal(vhName(table, 'API.Example.COM'), 'exact', 'case-insensitive');
    assert.equal(vhName(table, 'foo-bar.example.com'), 'longer-suffix');
    assert.equal(vhName(table, 'www.example.com'), 'suffix');
    assert.equal(vhName(table, 'api.examples.org'), 'longer-prefix');
    assert.equal(vhName(table, 'api.other'), 'prefix');
    assert.equal(vhName(table, 'example.com'), 'default', 'a wildcard needs at least one character of its own');
    assert.equal(vhName(table, 'elsewhere'), 'default');
  });

  it('matches a Host with a port only against a domain with that port (ignore_port_in_host_matching is off)', () => {
    const table = new RouteTable({ virtual_hosts: [vhost('bare', ['example.com']), vhost('with-port', ['example.com:8080'])] });
    assert.equal(vhName(table, 'example.com:8080'), 'with-port');
    assert.equal(vhName(table, 'example.com:80'), undefined, 'Envoy: no virtual host, a 404');
    assert.equal(vhName(table, 'example.com'), 'bare');
  });

  it('require_tls: a request that did not come over TLS is redirected (301) to https, as Envoy\'s SslRedirectRoute; EXTERNAL_ONLY spares internal ones', () => {
    const table = new RouteTable({ virtual_hosts: [{ ...vhost('all', ['all.example']), require_tls: 'ALL' }, { ...vhost('external', ['ext.example']), require_tls: 'EXTERNAL_ONLY' }] });
    const redirect = table.route(rq('all.example', '/x?y=1'));
    assert.deepEqual(redirect?.action, { kind: 'redirect', status: 301, stripQuery: false, sslRedirect: true });
    assert.equal(table.route(rq('all.example', '/', { 'x-forwarded-proto': 'https' }))?.action.kind, 'direct_response');
    assert.equal(table.route(rq('all.example', '/', { 'x-envoy-internal': 'true' }))?.action.kind, 'redirect', 'ALL: internal requests too');
    assert.equal(table.route(rq('ext.example', '/'))?.action.kind, 'redirect');
    assert.equal(table.route(rq('ext.example', '/', { 'x-envoy-internal': 'true' }))?.action.kind, 'direct_response');
  });

  it('with ignore_port_in_host_matching, leaves the port out as Envoy cuts it: at the last colon, not inside brackets', () => {
    const table = new RouteTable({
      ignore_port_in_host_matching: true,
      virtual_hosts: [vhost('bare', ['example.com']), vhost('with-port', ['example.com:8080']), vhost('v6', ['[::1]']), vhost('wild', ['*.example.org'])],
    });
    assert.equal(vhName(table, 'example.com:8080'), 'bare', 'a domain with a port never matches now');
    assert.equal(vhName(table, 'Example.com:80'), 'bare');
    assert.equal(vhName(table, 'example.com'), 'bare');
    assert.equal(vhName(table, 'example.com:abc'), 'bare', 'Envoy does not check that the port is a number');
    assert.equal(vhName(table, '[::1]:443'), 'v6');
    assert.equal(vhName(table, '[::1]'), 'v6');
    assert.equal(vhName(table, 'a.example.org:8443'), 'wild');
    assert.equal(vhName(table, 'elsewhere:80'), undefined);
  });

  it('takes the first route whose path and header matchers all match; path matchers see the path without its query', () => {
    const table = new RouteTable({
      virtual_hosts: [
        vhost('all', ['*'], [
          { name: 'exact', match: { path: '/exact' }, ...direct('exact') },
          { name: 'header', match: { prefix: '/api', headers: [{ name: 'x-version', string_match: { exact: '2' } }] }, ...direct('v2') },
          { name: 'prefix', match: { prefix: '/api' }, ...direct('api') },
          { name: 'insensitive', match: { prefix: '/CaSe', case_sensitive: false }, ...direct('case') },
          { name: 'regex', match: { safe_regex: { regex: '/items/[0-9]+' } }, ...direct('item') },
          { name: 'separated', match: { path_separated_prefix: '/docs' }, ...direct('docs') },
        ]),
      ],
    });
    const route = (path: string, headers: Record<string, string> = {}) => table.route(rq('any', path, headers))?.name;
    assert.equal(route('/exact?x=1'), 'exact');
    assert.equal(route('/exact/more'), undefined);
    assert.equal(route('/api/users', { 'x-version': '2' }), 'header');
    assert.equal(route('/api/users'), 'prefix');
    assert.equal(route('/case/x'), 'insensitive');
    assert.equal(route('/items/42'), 'regex');
    assert.equal(route('/items/42/x'), undefined, 'a regex matches the whole path');
    assert.equal(route('/docs'), 'separated');
    assert.equal(route('/docs/a'), 'separated');
    assert.equal(route('/docsearch'), undefined, 'path_separated_prefix needs a / after the prefix');
  });

  it('compiles actions: a cluster with its timeout and not-found code, a redirect, a direct response', () => {
    const table = new RouteTable({
      virtual_hosts: [
        vhost('all', ['*'], [
          { match: { prefix: '/forward' }, route: { cluster: 'backend', timeout: '3s', cluster_not_found_response_code: 'NOT_FOUND', prefix_rewrite: '/v1' } },
          { match: { prefix: '/moved' }, redirect: { host_redirect: 'new.example', response_code: 'PERMANENT_REDIRECT', strip_query: true } },
          { match: { prefix: '/' }, direct_response: { status: 418, body: { inline_string: 'teapot' } } },
        ]),
      ],
    });
    const forward = table.route(rq('any', '/forward/x'))!.action;
    assert.equal(forward.kind, 'route');
    if (forward.kind === 'route') {
      assert.deepEqual([forward.cluster, forward.timeoutMs, forward.clusterNotFoundStatus, forward.prefixRewrite], ['backend', 3000, 404, '/v1']);
    }
    const moved = table.route(rq('any', '/moved'))!.action;
    assert.deepEqual(moved.kind === 'redirect' && [moved.status, moved.host, moved.stripQuery], [308, 'new.example', true]);
    const teapot = table.route(rq('any', '/other'))!.action;
    assert.deepEqual(teapot.kind === 'direct_response' && [teapot.status, teapot.body?.toString()], [418, 'teapot']);
  });

  it("keeps each route's typed_per_filter_config, the route's before its virtual host's", () => {
    const cfg = (v: string) => ({ '@type': 'type.googleapis.com/envoy.config.route.v3.FilterConfig', config: { v } });
    const table = new RouteTable({
      virtual_hosts: [{ name: 'all', domains: ['*'], typed_per_filter_config: { f: cfg('vhost') }, routes: [{ match: { prefix: '/' }, typed_per_filter_config: { f: cfg('route') }, ...direct('x') }] }],
    });
    assert.deepEqual(table.route(rq('any'))!.perFilter.get('f')?.map((c) => (c.config as JsonObject).v), ['route', 'vhost']);
  });

  it('chooses a weighted cluster by weight', () => {
    const table = new RouteTable({
      virtual_hosts: [vhost('all', ['*'], [{ match: { prefix: '/' }, route: { weighted_clusters: { clusters: [{ name: 'never', weight: 0 }, { name: 'always', weight: 5 }] } } }])],
    });
    const action = table.route(rq('any'))!.action;
    assert.equal(action.kind, 'route');
    if (action.kind === 'route') for (let i = 0; i < 50; i++) assert.equal(chooseClusterName(action, rq('any')), 'always');
  });

  it("matches headers as Envoy's HeaderUtility: a missing header matches only a presence matcher that wants it absent", () => {
    const routeFor = (header: JsonObject) => new RouteTable({ virtual_hosts: [vhost('v', ['*'], [{ match: { prefix: '/', headers: [{ name: 'x-a', ...header }] }, ...direct('hit') }])] });
    const hits = (header: JsonObject, headers: Record<string, string> = {}) => routeFor(header).route(rq('h', '/', headers)) !== undefined;
    // Absent: value matchers never match, inverted or not (unless treat_missing_header_as_empty).
    assert.equal(hits({ string_match: { exact: 'v' }, invert_match: true }), false);
    assert.equal(hits({ string_match: { prefix: '' }, treat_missing_header_as_empty: true }), true);
    assert.equal(hits({ present_match: true, invert_match: true }), true);
    assert.equal(hits({ present_match: false }), true);
    assert.equal(hits({ present_match: false, invert_match: true }), false);
    assert.equal(hits({}), false, 'no specifier: present');
    // Present.
    assert.equal(hits({ string_match: { exact: 'v' }, invert_match: true }, { 'x-a': 'w' }), true);
    assert.equal(hits({ exact_match: '' }, { 'x-a': 'anything' }), true, 'an empty legacy exact_match matches any value');
    assert.equal(hits({ present_match: false }, { 'x-a': 'w' }), false);
    assert.equal(hits({}, { 'x-a': '' }), true);
  });

  it('chooses a weighted cluster and a runtime fraction by a fixed random value as Envoy does', () => {
    const table = new RouteTable({
      virtual_hosts: [vhost('v', ['*'], [
        { match: { prefix: '/f', runtime_fraction: { default_value: { numerator: 30 } } }, ...direct('in') },
        { match: { prefix: '/' }, route: { weighted_clusters: { clusters: [{ name: 'a', weight: 30 }, { name: 'b', weight: 30 }, { name: 'c', weight: 40 }] } } },
      ])],
    });
    const action = table.route(rq('h', '/w'))!.action;
    assert.equal(action.kind, 'route');
    if (action.kind === 'route') assert.deepEqual([115n, 445n, 560n, 10n, 30n, 70n].map((r) => chooseClusterName(action, { ...rq('h'), random: r })), ['a', 'b', 'c', 'a', 'b', 'c']);
    assert.equal(table.route({ ...rq('h', '/f'), random: 129n })?.action.kind, 'direct_response', '129 % 100 < 30');
    assert.equal(table.route({ ...rq('h', '/f'), random: 130n })?.action.kind, 'route');
  });

  it('decides as it routes: the explainer takes the route RouteTable.route takes, for every route-check case', () => {
    const table = new RouteTable(ROUTES as JsonObject);
    for (const c of CASES) {
      const i = c.input;
      const headers: Record<string, string> = { 'x-forwarded-proto': i.ssl ? 'https' : 'http', ...(i.internal ? { 'x-envoy-internal': 'true' } : {}) };
      for (const h of i.additional_request_headers ?? []) headers[h.key] = h.value;
      const view = { ...rq(i.authority, i.path, headers, i.method), random: BigInt(i.random_value ?? 0), runtimeKeyOn: (key: string | undefined) => key === i.runtime };
      assert.equal(decideRoute(table, view).route, table.route(view), c.test_name);
    }
  });
});
