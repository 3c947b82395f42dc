import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hcmFilter, staticCluster } from './helpers/bootstraps.js';
import { runProxy, tempDir } from './helpers/cli.js';
import { httpRequest, startProxy, stopAllProxies, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/** Route matching on query parameters, gRPC and a runtime fraction; regex_rewrite of the path; clusters by header and by runtime weights. */

const tmp = tempDir();
let a: Upstream;
let b: Upstream;
let proxy: RunningProxy;

const direct = (body: string) => ({ direct_response: { status: 200, body: { inline_string: body } } });

before(async () => {
  a = await startUpstream('A');
  b = await startUpstream('B');
  const filter = hcmFilter('routes', [
    { match: { prefix: '/q', query_parameters: [{ name: 'debug', present_match: true }, { name: 'user', string_match: { prefix: 'adm' } }] }, ...direct('debug admin') },
    { match: { prefix: '/q', query_parameters: [{ name: 'user', string_match: { exact: 'jo smith' } }] }, ...direct('jo') },
    { match: { prefix: '/q' }, ...direct('plain') },
    { match: { prefix: '/svc', grpc: {} }, ...direct('grpc') },
    { match: { prefix: '/svc' }, ...direct('not grpc') },
    { match: { prefix: '/never', runtime_fraction: { default_value: { numerator: 0 }, runtime_key: 'routes.never' } }, ...direct('sampled') },
    { match: { prefix: '/never' }, ...direct('not sampled') },
    { match: { prefix: '/service/' }, route: { cluster: 'a', regex_rewrite: { pattern: { regex: '^/service/([a-z]+)$' }, substitution: '/\\1' } } },
    { match: { prefix: '/pick' }, route: { cluster_header: 'x-cluster', cluster_not_found_response_code: 'NOT_FOUND' } },
    { match: { prefix: '/by-host' }, route: { cluster_header: ':authority' } },
    { match: { prefix: '/split' }, route: { weighted_clusters: { runtime_key_prefix: 'routes.split', clusters: [{ name: 'a', weight: 100 }, { name: 'b', weight: 0 }] } } },
  ]);
  proxy = await startProxy(
    {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      layered_runtime: { layers: [{ name: 'admin', admin_layer: {} }] },
      static_resources: { listeners: [{ name: 'routes', address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [filter] }] }], clusters: [staticCluster('a', a.port), staticCluster('b', b.port)] },
    },
    ['--concurrency', '1'],
  );
});

after(async () => {
  await stopAllProxies();
  await a.close();
  await b.close();
  tmp.cleanup();
});

const get = async (path: string, headers: Record<string, string> = {}) => (await httpRequest(`http://127.0.0.1:${proxy.ports.get('routes')}${path}`, { headers })).body;

describe('route matching beyond path and headers', () => {
  it('matches query parameters: present, and by a string matcher on the first (decoded) value', async () => {
    assert.equal(await get('/q?debug&user=admin'), 'debug admin');
    assert.equal(await get('/q?user=admin'), 'plain', 'every matcher must match');
    assert.equal(await get('/q?user=jo+smith&user=other'), 'jo');
    assert.equal(await get('/q?user=jo%20smith'), 'jo');
    assert.equal(await get('/q'), 'plain');
  });

  it('matches gRPC requests by their content type (gRPC-Web is not gRPC)', async () => {
    // A direct response to a gRPC client is a gRPC reply: its body is the grpc-message.
    const grpc = await httpRequest(`http://127.0.0.1:${proxy.ports.get('routes')}/svc`, { headers: { 'content-type': 'application/grpc+proto' } });
    assert.deepEqual([grpc.status, grpc.headers['grpc-message'], grpc.headers['grpc-status'], grpc.body], [200, 'grpc', '2', '']);
    assert.equal(await get('/svc', { 'content-type': 'application/grpc-web' }), 'not grpc');
    assert.equal(await get('/svc', { 'content-type': 'application/json' }), 'not grpc');
  });

  it('matches a runtime fraction: the default, then the runtime key', async () => {
    assert.equal(await get('/never'), 'not sampled', 'numerator 0 never matches');
    const set = await httpRequest(`http://${proxy.admin}/runtime_modify?routes.never=100`, { method: 'POST' });
    assert.equal(set.status, 200);
    assert.equal(await get('/never'), 'sampled', 'the runtime says 100 of 100');
  });

  it('rewrites the path by regex_rewrite, keeping the query', async () => {
    const echo = JSON.parse(await get('/service/echo?x=1'));
    assert.equal(echo.url, '/echo?x=1', 'group 1 of the pattern, the query as it came');
  });

  it("routes by cluster_header: the header's first value names the cluster; absent or unknown, cluster_not_found", async () => {
    assert.equal(await get('/pick', { 'x-cluster': 'b' }), 'B');
    const absent = await httpRequest(`http://127.0.0.1:${proxy.ports.get('routes')}/pick`);
    const unknown = await httpRequest(`http://127.0.0.1:${proxy.ports.get('routes')}/pick`, { headers: { 'x-cluster': 'nowhere' } });
    assert.deepEqual([absent.status, unknown.status], [404, 404], "the route's cluster_not_found_response_code");
    const byHost = await httpRequest(`http://127.0.0.1:${proxy.ports.get('routes')}/by-host`, { headers: { host: 'a' } });
    assert.equal(byHost.body, 'A', 'a pseudo-header names it too (:authority, from Host)');
    const explained = JSON.parse((await httpRequest(`http://${proxy.admin}/route_explain?authority=x&path=/pick&header=x-cluster:b`)).body);
    assert.deepEqual([explained.action.route.cluster_header, explained.action.route.cluster_chosen], ['x-cluster', 'b']);
  });

  it("weighs weighted clusters by the runtime under runtime_key_prefix, the configured weights its default", async () => {
    assert.equal(await get('/split'), 'A', 'the configured 100/0');
    const set = await httpRequest(`http://${proxy.admin}/runtime_modify?routes.split.a=0&routes.split.b=100`, { method: 'POST' });
    assert.equal(set.status, 200);
    assert.equal(await get('/split'), 'B');
  });

  it('refuses prefix_rewrite with regex_rewrite, and a regex that does not compile', async () => {
    const filter = hcmFilter('bad', [{ match: { prefix: '/' }, route: { cluster: 'a', prefix_rewrite: '/x', regex_rewrite: { pattern: { regex: '(' }, substitution: '' } } }]);
    const config = { static_resources: { listeners: [{ name: 'bad', address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [filter] }] }], clusters: [staticCluster('a', 1)] } };
    const out = await runProxy(['--mode', 'validate', '-c', tmp.file('bad-rewrite.json', JSON.stringify(config))]);
    assert.equal(out.code, 1);
    const text = out.stderr + out.stdout;
    assert.match(text, /routes\[0\]\.route\.regex_rewrite\.pattern\.regex: invalid RE2 regex '\('/);
    assert.match(text, /routes\[0\]\.route: cannot specify both prefix_rewrite and regex_rewrite/);
  });
});
