import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { JsonObject } from '../shared/config/proto-json.js';
import { filterBootstrap, hcmFilter, staticCluster } from './helpers/bootstraps.js';
import { LISTENER_URL, ROUTE_URL, TestControlPlane } from './helpers/control-plane.js';
import { runProxy, tempDir } from './helpers/cli.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor, type HttpResult, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * The local rate limit filter (envoy.filters.http.local_ratelimit) as Envoy's: token buckets the
 * whole tree shares (two workers here), per-route buckets, descriptors from the route's
 * rate_limits, enforcement, X-RateLimit headers, gRPC statuses and per-connection buckets.
 */

const LRL = 'type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit';
const ALWAYS = { default_value: { numerator: 100 } };
/** A bucket that does not refill while the test runs (one token an hour). */
const bucket = (max: number) => ({ max_tokens: max, tokens_per_fill: 1, fill_interval: '3600s' });
const perRoute = (config: object) => ({ 'envoy.filters.http.local_ratelimit': { '@type': LRL, filter_enabled: ALWAYS, filter_enforced: ALWAYS, ...config } });

let upstream: Upstream;
let proxy: RunningProxy;
const tmp = tempDir();

before(async () => {
  upstream = await startUpstream('A');
  const routes = [
    { match: { prefix: '/route' }, route: { cluster: 'backend' }, typed_per_filter_config: perRoute({ stat_prefix: 'route_rl', token_bucket: bucket(2) }) },
    {
      match: { prefix: '/shadow' },
      route: { cluster: 'backend', prefix_rewrite: '/echo' },
      typed_per_filter_config: perRoute({
        stat_prefix: 'shadow_rl',
        token_bucket: bucket(1),
        filter_enforced: { default_value: { numerator: 0 } },
        request_headers_to_add_when_not_enforced: [{ header: { key: 'x-rate-limited', value: 'yes' } }],
      }),
    },
    {
      match: { prefix: '/users' },
      route: { cluster: 'backend', rate_limits: [{ actions: [{ request_headers: { header_name: 'x-user', descriptor_key: 'user' } }] }] },
      typed_per_filter_config: perRoute({
        stat_prefix: 'users_rl',
        token_bucket: bucket(3),
        always_consume_default_token_bucket: false,
        enable_x_ratelimit_headers: 'DRAFT_VERSION_03',
        descriptors: [{ entries: [{ key: 'user', value: 'alice' }], token_bucket: bucket(1) }],
        response_headers_to_add: [{ header: { key: 'x-limited-by', value: 'users' } }],
      }),
    },
    { match: { prefix: '/grpc' }, route: { cluster: 'backend' }, typed_per_filter_config: perRoute({ stat_prefix: 'grpc_rl', token_bucket: bucket(1), rate_limited_as_resource_exhausted: true }) },
    { match: { prefix: '/per-connection' }, route: { cluster: 'backend' }, typed_per_filter_config: perRoute({ stat_prefix: 'conn_rl', token_bucket: bucket(1), local_rate_limit_per_downstream_connection: true }) },
    { match: { prefix: '/' }, route: { cluster: 'backend' } },
  ];
  const filter = { name: 'envoy.filters.http.local_ratelimit', typed_config: { '@type': LRL, stat_prefix: 'tree_rl', token_bucket: bucket(5), filter_enabled: ALWAYS, filter_enforced: ALWAYS } };
  proxy = await startProxy(filterBootstrap('limited', [filter], routes, upstream.port), ['--concurrency', '2']);
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
  tmp.cleanup();
});

const url = (path: string) => `http://127.0.0.1:${proxy.ports.get('limited')}${path}`;
const get = (path: string, headers: Record<string, string> = {}) => httpRequest(url(path), { headers });
const stat = (name: string) => statValue(proxy, name);

/** `n` requests at once, each on a connection of its own, so that both workers take some. */
async function burst(path: string, n: number): Promise<HttpResult[]> {
  return Promise.all(Array.from({ length: n }, () => get(path)));
}

function statuses(results: HttpResult[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const r of results) out[r.status] = (out[r.status] ?? 0) + 1;
  return out;
}

describe('the local rate limit filter', () => {
  it('shares one bucket across the tree: of 12 requests spread over two workers, exactly its 5 tokens pass', async () => {
    const results = await burst('/', 12);
    assert.deepEqual(statuses(results), { 200: 5, 429: 7 });
    const refused = results.find((r) => r.status === 429)!;
    assert.equal(refused.body, 'local_rate_limited');
    assert.deepEqual(
      [await stat('tree_rl.http_local_rate_limit.enabled'), await stat('tree_rl.http_local_rate_limit.ok'), await stat('tree_rl.http_local_rate_limit.rate_limited'), await stat('tree_rl.http_local_rate_limit.enforced')],
      [12, 5, 7, 7],
    );
  });

  it("gives a route's own configuration a bucket of its own; the filter's is not taken from", async () => {
    const before = await stat('tree_rl.http_local_rate_limit.enabled');
    assert.deepEqual(statuses(await burst('/route', 4)), { 200: 2, 429: 2 });
    assert.equal(await stat('route_rl.http_local_rate_limit.ok'), 2);
    assert.equal(await stat('tree_rl.http_local_rate_limit.enabled'), before);
  });

  it('lets a request through when the limit is not enforced, marked with request_headers_to_add_when_not_enforced', async () => {
    const first = JSON.parse((await get('/shadow')).body) as { headers: Record<string, string> };
    assert.equal(first.headers['x-rate-limited'], undefined);
    const second = await get('/shadow');
    assert.equal(second.status, 200);
    assert.equal((JSON.parse(second.body) as { headers: Record<string, string> }).headers['x-rate-limited'], 'yes');
    assert.deepEqual([await stat('shadow_rl.http_local_rate_limit.rate_limited'), await stat('shadow_rl.http_local_rate_limit.enforced')], [1, 0]);
  });

  it("limits by descriptor from the route's rate_limits, with X-RateLimit headers and response_headers_to_add", async () => {
    const alice = await get('/users', { 'x-user': 'alice' });
    assert.equal(alice.status, 200);
    assert.deepEqual([alice.headers['x-ratelimit-limit'], alice.headers['x-ratelimit-remaining']], ['1', '0']);
    const again = await get('/users', { 'x-user': 'alice' });
    assert.equal(again.status, 429);
    assert.deepEqual([again.headers['x-ratelimit-limit'], again.headers['x-ratelimit-remaining'], again.headers['x-limited-by']], ['1', '0', 'users']);
    assert.ok(Number(again.headers['x-ratelimit-reset']) > 0, 'the next token is an hour away');
    // Bob matches no descriptor: the route's own bucket (3 tokens) decides.
    const bob = await get('/users', { 'x-user': 'bob' });
    assert.deepEqual([bob.status, bob.headers['x-ratelimit-limit'], bob.headers['x-ratelimit-remaining']], [200, '3', '2']);
    // Without the header the action cannot say: no descriptor, the route's bucket again.
    assert.equal((await get('/users')).status, 200);
  });

  it('answers a gRPC request with a gRPC status: RESOURCE_EXHAUSTED when asked', async () => {
    assert.equal((await get('/grpc')).status, 200);
    const r = await get('/grpc', { 'content-type': 'application/grpc' });
    assert.deepEqual([r.status, r.headers['grpc-status'], r.headers['grpc-message']], [200, '8', 'local_rate_limited']);
    assert.equal((await get('/grpc')).status, 429);
  });

  it('gives each connection its own bucket with local_rate_limit_per_downstream_connection', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const onOne = (): Promise<number> =>
      new Promise((resolve, reject) => {
        const req = request(url('/per-connection'), { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end();
      });
    try {
      assert.deepEqual([await onOne(), await onOne()], [200, 429]);
      assert.equal((await get('/per-connection')).status, 200, 'a new connection has a full bucket');
    } finally {
      agent.destroy();
    }
  });
});

describe('local rate limits from a control plane', () => {
  /** A listener whose connection manager limits with a bucket of `max` and takes its routes by RDS; `extraChain` adds a second filter chain. */
  function listener(max: number, extraChain = false): JsonObject {
    const filter = hcmFilter('dyn', []) as any;
    delete filter.typed_config.route_config;
    filter.typed_config.rds = { route_config_name: 'dyn-routes', config_source: { ads: {}, resource_api_version: 'V3' } };
    filter.typed_config.http_filters.unshift({ name: 'envoy.filters.http.local_ratelimit', typed_config: { '@type': LRL, stat_prefix: 'dyn_rl', token_bucket: bucket(max), filter_enabled: ALWAYS, filter_enforced: ALWAYS } });
    const chains: JsonObject[] = [{ filters: [filter] }];
    if (extraChain) chains.push({ filter_chain_match: { server_names: ['other.example'] }, filters: [hcmFilter('other', [{ match: { prefix: '/' }, direct_response: { status: 204 } }])] });
    return { '@type': LISTENER_URL, name: 'dyn', address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: chains };
  }
  const routeConfig = (version: string): JsonObject => ({
    '@type': ROUTE_URL,
    name: 'dyn-routes',
    virtual_hosts: [
      {
        name: `all-${version}`,
        domains: ['*'],
        routes: [
          { match: { prefix: '/limited' }, route: { cluster: 'backend' }, typed_per_filter_config: perRoute({ stat_prefix: 'dyn_route_rl', token_bucket: bucket(1) }) },
          { match: { prefix: '/' }, route: { cluster: 'backend' } },
        ],
      },
    ],
  });

  it("gives LDS listeners' and RDS tables' limits buckets of their own: a new table starts full, a chain an in-place update keeps keeps its bucket", async () => {
    const cp = await TestControlPlane.start();
    try {
      cp.set(LISTENER_URL, 'l1', [listener(3)]);
      cp.set(ROUTE_URL, 'r1', [routeConfig('1')]);
      const dyn = await startProxy(
        {
          node: { id: 'proxy-under-test', cluster: 'tests' },
          admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
          static_resources: { clusters: [staticCluster('xds', cp.port), staticCluster('backend', upstream.port)] },
          dynamic_resources: { ads_config: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] }, lds_config: { ads: {}, resource_api_version: 'V3' } },
        },
        ['--concurrency', '2'],
      );
      const port = await waitFor('the dynamic listener', async () => {
        const json = JSON.parse((await httpRequest(`http://${dyn.admin}/listeners?format=json`)).body) as { listener_statuses: { name: string; local_address: { socket_address: { port_value: number } } }[] };
        return json.listener_statuses.find((l) => l.name === 'dyn')?.local_address.socket_address.port_value;
      });
      const at = (path: string) => httpRequest(`http://127.0.0.1:${port}${path}`);
      await waitFor('the route table', async () => ((await at('/limited')).status === 200 ? true : undefined));
      // The route's bucket (1) is spent; the filter's (3) is not taken from where the route has its own.
      assert.equal((await at('/limited')).status, 429);
      assert.deepEqual(statuses(await Promise.all([at('/'), at('/'), at('/'), at('/')])), { 200: 3, 429: 1 });

      // A new route table version: its limit starts with a full bucket.
      cp.set(ROUTE_URL, 'r2', [routeConfig('2')]);
      await waitFor('route table r2, with a full bucket', async () => ((await at('/limited')).status === 200 ? true : undefined));
      assert.equal((await at('/limited')).status, 429);

      // A second chain is added in place: the first chain, unchanged, keeps its (spent) bucket.
      cp.set(LISTENER_URL, 'l2', [listener(3, true)]);
      await waitFor('the in-place update', async () => ((await statValue(dyn, 'listener_manager.listener_in_place_updated')) === 1 ? true : undefined));
      assert.equal((await at('/')).status, 429);

      // The listener's limit changed: a new chain, a new, full bucket.
      cp.set(LISTENER_URL, 'l3', [listener(4, true)]);
      await waitFor('the new bucket', async () => ((await at('/')).status === 200 ? true : undefined));
    } finally {
      await stopAllProxies();
      cp.stop();
    }
  });
});

describe('local rate limit configuration', () => {
  it('refuses a route configuration without a bucket, a duplicate descriptor, and what it cannot do, by name', async () => {
    const routes = [
      { match: { prefix: '/a' }, route: { cluster: 'backend' }, typed_per_filter_config: perRoute({ stat_prefix: 'a' }) },
      {
        match: { prefix: '/b' },
        route: { cluster: 'backend', rate_limits: [{ actions: [{ metadata: { descriptor_key: 'k', metadata_key: { key: 'x', path: [{ key: 'y' }] } } }] }] },
        typed_per_filter_config: perRoute({ stat_prefix: 'b', token_bucket: bucket(1), descriptors: [{ entries: [{ key: 'k', value: 'v' }], token_bucket: bucket(1) }, { entries: [{ key: 'k', value: 'v' }], token_bucket: bucket(2) }] }),
      },
    ];
    const filter = { name: 'envoy.filters.http.local_ratelimit', typed_config: { '@type': LRL, stat_prefix: 'f', local_cluster_rate_limit: {} } };
    const out = await runProxy(['--mode', 'validate', '-c', tmp.file('bad-lrl.json', JSON.stringify(filterBootstrap('bad', [filter], routes, 1)))]);
    assert.equal(out.code, 1);
    const text = out.stderr + out.stdout;
    assert.match(text, /routes\[0\]\.typed_per_filter_config\["envoy\.filters\.http\.local_ratelimit"\]\.token_bucket: a local rate limit in typed_per_filter_config must have its own token bucket/);
    assert.match(text, /descriptors\[1\]: duplicate descriptor \{k=v\} \(also descriptors\[0\]\)/);
    assert.match(text, /field 'metadata' of envoy\.config\.route\.v3\.RateLimit\.Action is not supported by this proxy \(descriptors from metadata/);
    assert.match(text, /field 'local_cluster_rate_limit' of envoy\.extensions\.filters\.http\.local_ratelimit\.v3\.LocalRateLimit is not supported/);
  });
});
