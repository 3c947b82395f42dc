import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dump } from 'js-yaml';
import { runProxy, tempDir } from './helpers/cli.js';
import { httpRequest, startProxy, waitFor, type RunningProxy } from './helpers/proxy.js';
import { hcmFilter, staticCluster } from './helpers/bootstraps.js';
import { CASES, CLUSTERS, ROUTES, type CheckCase } from './helpers/route-check-cases.js';
import { LISTENER_URL, ROUTE_URL, TestControlPlane } from './helpers/control-plane.js';

/**
 * /route_explain on a running proxy: what it says of each router_check_tool case agrees with what
 * `proxy route-check` checks of it (the same cases pass there, test/route-check.test.ts), and it
 * tells the filter chain, the virtual host's domain, each route tried and why, and the policies.
 */

let proxy: RunningProxy;
const tmp = tempDir('route-explain-');

const withRoutes = (name: string, extra: object = {}) => ({ ...hcmFilter(name, []), typed_config: { ...(hcmFilter(name, []).typed_config as object), route_config: ROUTES, ...extra } });

before(async () => {
  proxy = await startProxy({
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    layered_runtime: { layers: [{ name: 'admin', admin_layer: {} }] },
    static_resources: {
      listeners: [
        { name: 'main', address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [withRoutes('main')] }] },
        {
          name: 'split',
          address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
          filter_chains: [
            { name: 'office', filter_chain_match: { source_prefix_ranges: [{ address_prefix: '10.0.0.0', prefix_len: 8 }] }, filters: [withRoutes('office', { normalize_path: true, merge_slashes: true })] },
            { name: 'others', filters: [{ name: 'tcp', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy', stat_prefix: 'tcp', cluster: 'www' } }] },
          ],
        },
      ],
      clusters: CLUSTERS.map((c) => staticCluster(c, 1)),
    },
  });
  // As route-check's runtime mock turns a 0 % runtime_fraction into 1 % for the test that names its key.
  assert.equal((await httpRequest(`http://${proxy.admin}/runtime_modify?shop.canary=1`, { method: 'POST' })).status, 200);
});
after(async () => {
  await proxy?.stop();
  tmp.cleanup();
});

type Explained = Record<string, any>;

async function explain(query: Record<string, string | string[]>): Promise<{ status: number; body: Explained | string }> {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) for (const one of [v].flat()) params.append(k, one);
  const r = await httpRequest(`http://${proxy.admin}/route_explain?${params}`);
  return { status: r.status, body: r.headers['content-type'] === 'application/json' ? JSON.parse(r.body) : r.body };
}

/** The query that asks /route_explain about a router_check_tool input. */
function queryOf(c: CheckCase): Record<string, string | string[]> {
  const i = c.input;
  const headers = [...(i.internal ? ['x-envoy-internal:true'] : []), ...(i.additional_request_headers ?? []).map((h) => `${h.key}:${h.value}`)];
  return { listener: 'main', method: i.method, authority: i.authority, path: i.path, random: String(i.random_value ?? 0), tls: String(i.ssl === true), header: headers };
}

/** What route-check would read off the explanation, field by field of `validate`. */
function actual(e: Explained, field: string): unknown {
  const forward = e.action?.route;
  const local = e.action?.redirect ?? e.action?.direct_response;
  switch (field) {
    case 'cluster_name': return forward?.cluster_chosen ?? '';
    case 'virtual_host_name': return forward ? e.virtual_host.name : '';
    case 'path_rewrite': return forward ? forward.upstream_path : '';
    case 'host_rewrite': return forward ? forward.upstream_authority : '';
    case 'code_redirect': return local?.status ?? 0;
    case 'path_redirect': return e.action?.redirect?.location ?? (e.action?.direct_response ? undefined : '');
  }
  return undefined;
}

describe('/route_explain', () => {
  it('agrees with proxy route-check on every case', async () => {
    const tests = tmp.file('tests.json', JSON.stringify({ tests: CASES }));
    const routes = tmp.file('routes.yaml', dump(ROUTES));
    const checked = await runProxy(['route-check', '-c', routes, '-t', tests]);
    assert.equal(checked.code, 0, checked.stderr);
    let compared = 0;
    for (const c of CASES) {
      const { status, body } = await explain(queryOf(c));
      assert.equal(status, 200, `${c.test_name}: ${String(body)}`);
      for (const [field, expected] of Object.entries(c.validate)) {
        const got = actual(body as Explained, field);
        if (got === undefined) continue; // a direct response's own URI and header matches are route-check's alone
        assert.deepEqual(got, expected, `${c.test_name}: ${field}`);
        compared++;
      }
    }
    assert.ok(compared >= 30, `compared ${compared} fields`);
  });

  it('tells the virtual host, each route tried and why, and the policies', async () => {
    const { body } = await explain({ listener: 'main', authority: 'eu.api.example.com', path: '/old/x?y=1', header: 'x-envoy-internal:true' });
    const e = body as Explained;
    assert.deepEqual(e.virtual_host, { name: 'api', domain: '*.api.example.com', matched_by: 'the longest matching suffix wildcard' });
    assert.deepEqual(e.routes_tried.map((t: Explained) => [t.name, t.matched]), [['rewrite', true]]);
    assert.deepEqual(e.routes_tried[0].why, ["path '/old/x' starts with prefix '/old/': yes"]);
    assert.equal(e.action.route.timeouts.timeout, '2s');
    assert.deepEqual(e.action.route.retry_policy, { from: 'virtual_host', config: { retry_on: '5xx', num_retries: 2 }, num_retries: 2 });
    assert.deepEqual(e.http_filters, [{ name: 'envoy.filters.http.router', runs: true }]);

    const { body: legacy } = await explain({ listener: 'main', authority: 'shop.example.com', path: '/legacy', random: '50' });
    const tried = (legacy as Explained).routes_tried as Explained[];
    assert.deepEqual(tried.map((t) => t.name ?? t.index), ['canary', 'split', 'ping', 'moved', 'upgrade', 'legacy', 'debug']);
    assert.deepEqual(tried[0]!.why, ["path '/legacy' starts with prefix '/shop': no"]);
    assert.deepEqual(tried[5]!.why, ["path '/legacy' is '/Legacy' (ignoring case): yes", 'header \'x-old\' (absent) matches {"present_match":true}: no']);
    assert.match((legacy as Explained).result, /no route of the virtual host matches: 404/);
  });

  it('chooses the filter chain by the connection, and normalizes the path first', async () => {
    const office = (await explain({ listener: 'split', source: '10.1.2.3', authority: 'shop.example.com', path: '/a/../shop//x', random: '0' })).body as Explained;
    assert.equal(office.filter_chain.name, 'office');
    assert.deepEqual(office.connection_manager.path_normalization, { normalized_path: '/shop/x' });
    assert.equal(office.action.route.cluster_chosen, 'shop-canary');
    const others = (await explain({ listener: 'split', source: '192.0.2.1', authority: 'shop.example.com' })).body as Explained;
    assert.equal(others.filter_chain.name, 'others');
    assert.match(others.result, /no HTTP connection manager/);
  });

  it('refuses a request it cannot describe, naming the parameter', async () => {
    const none = await explain({ authority: 'a' });
    assert.equal(none.status, 400);
    assert.match(String(none.body), /^listener: name the listener .*'main', 'split'/);
    assert.equal((await explain({ listener: 'nope' })).status, 404);
    for (const [q, message] of [
      [{ random: '-1' }, /^random: '-1' is not an unsigned 64-bit integer/],
      [{ header: 'novalue' }, /^header: 'novalue' is not name:value/],
      [{ path: 'x' }, /^path: 'x' is not a path/],
      [{ tls: 'yes' }, /^tls: 'yes' is neither true nor false/],
      [{ source: 'somewhere' }, /^source: 'somewhere' is not an IP address/],
    ] as const) {
      const r = await explain({ listener: 'main', ...q });
      assert.equal(r.status, 400, JSON.stringify(q));
      assert.match(String(r.body), message);
    }
  });
});

describe('/route_explain of routes from RDS', () => {
  it('names the route configuration and its version, and follows a new one', async () => {
    const cp = await TestControlPlane.start();
    const filter = hcmFilter('dyn', []) as Record<string, any>;
    delete filter.typed_config.route_config;
    filter.typed_config.rds = { route_config_name: 'dyn-routes', config_source: { ads: {}, resource_api_version: 'V3' } };
    const routes = (cluster: string) => ({ '@type': ROUTE_URL, name: 'dyn-routes', virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster } }] }] });
    cp.set(LISTENER_URL, 'l1', [{ '@type': LISTENER_URL, name: 'dyn', address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [filter] }] }]);
    cp.set(ROUTE_URL, 'r1', [routes('www')]);
    const dyn = await startProxy({
      node: { id: 'explained', cluster: 'tests' },
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: { clusters: [staticCluster('xds', cp.port), ...CLUSTERS.map((c) => staticCluster(c, 1))] },
      dynamic_resources: { ads_config: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] }, lds_config: { ads: {}, resource_api_version: 'V3' } },
    });
    try {
      const ask = async () => JSON.parse((await httpRequest(`http://${dyn.admin}/route_explain?listener=dyn&authority=a`)).body) as Explained;
      const first = await waitFor('r1 explained', async () => {
        const r = await httpRequest(`http://${dyn.admin}/route_explain?listener=dyn&authority=a`);
        return r.status === 200 && JSON.parse(r.body).action ? (JSON.parse(r.body) as Explained) : undefined;
      });
      assert.deepEqual(first.connection_manager.route_config, { source: 'rds', name: 'dyn-routes', version_info: 'r1' });
      assert.equal(first.action.route.cluster_chosen, 'www');
      cp.set(ROUTE_URL, 'r2', [routes('api')]);
      const second = await waitFor('r2 explained', async () => {
        const e = await ask();
        return e.connection_manager.route_config.version_info === 'r2' ? e : undefined;
      });
      assert.equal(second.action.route.cluster_chosen, 'api');
    } finally {
      await dyn.stop();
      cp.stop();
    }
  });
});
