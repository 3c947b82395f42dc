import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { filterBootstrap, HCM_TYPE, ROUTER_TYPE } from './helpers/bootstraps.js';
import { runProxy, tempDir } from './helpers/cli.js';
import { httpRequest, startProxy, statValue, stopAllProxies, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * The CORS filter (envoy.filters.http.cors) as Envoy's: per-route and virtual-host policies
 * (typed_per_filter_config, the most specific setting wins), preflights answered by the proxy,
 * allowed origins' responses decorated, counted in http.<prefix>.cors.*.
 */

const tmp = tempDir();
let upstream: Upstream;
let proxy: RunningProxy;
const CORS_POLICY = 'type.googleapis.com/envoy.extensions.filters.http.cors.v3.CorsPolicy';

before(async () => {
  upstream = await startUpstream('A');
  const vhost = {
    typed_per_filter_config: {
      'envoy.filters.http.cors': { '@type': CORS_POLICY, allow_origin_string_match: [{ exact: 'https://app.example' }, { suffix: '.trusted.example' }], allow_methods: 'GET, POST', allow_headers: 'content-type, x-token', expose_headers: 'x-trace', max_age: '600' },
    },
  };
  const routes = [
    // The route's policy adds credentials; the rest comes from the virtual host's.
    { match: { prefix: '/private' }, route: { cluster: 'backend' }, typed_per_filter_config: { 'envoy.filters.http.cors': { '@type': CORS_POLICY, allow_credentials: true } } },
    { match: { prefix: '/off' }, route: { cluster: 'backend' }, typed_per_filter_config: { 'envoy.filters.http.cors': { '@type': 'type.googleapis.com/envoy.config.route.v3.FilterConfig', disabled: true } } },
    { match: { prefix: '/' }, route: { cluster: 'backend' } },
  ];
  const cors = { name: 'envoy.filters.http.cors', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.cors.v3.Cors' } };
  proxy = await startProxy(
    filterBootstrap('web', [cors], routes, upstream.port, vhost),
    ['--concurrency', '1'],
  );
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
  tmp.cleanup();
});

const request = (path: string, method = 'GET', headers: Record<string, string> = {}) => httpRequest(`http://127.0.0.1:${proxy.ports.get('web')}${path}`, { method, headers });

describe('the CORS filter', () => {
  it('answers a preflight from an allowed origin itself, with the policy\'s headers', async () => {
    const hitsBefore = upstream.hits;
    const r = await request('/api', 'OPTIONS', { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-token' });
    assert.equal(r.status, 200);
    assert.equal(r.headers['access-control-allow-origin'], 'https://app.example');
    assert.equal(r.headers['access-control-allow-methods'], 'GET, POST');
    assert.equal(r.headers['access-control-allow-headers'], 'content-type, x-token');
    assert.equal(r.headers['access-control-max-age'], '600');
    assert.equal(r.headers['access-control-allow-credentials'], undefined);
    assert.equal(upstream.hits, hitsBefore, 'the upstream never saw it');
  });

  it('decorates an allowed origin\'s response; the route\'s own policy adds credentials', async () => {
    const r = await request('/api', 'GET', { origin: 'https://b.trusted.example' });
    assert.deepEqual([r.status, r.body, r.headers['access-control-allow-origin'], r.headers['access-control-expose-headers']], [200, 'A', 'https://b.trusted.example', 'x-trace']);
    const p = await request('/private', 'GET', { origin: 'https://app.example' });
    assert.equal(p.headers['access-control-allow-credentials'], 'true');
  });

  it('leaves other origins\' responses alone and forwards their preflights; counts both', async () => {
    const valid = await statValue(proxy, 'http.web.cors.origin_valid');
    const invalid = await statValue(proxy, 'http.web.cors.origin_invalid');
    const r = await request('/api', 'GET', { origin: 'https://evil.example' });
    assert.equal(r.headers['access-control-allow-origin'], undefined);
    const hitsBefore = upstream.hits;
    const pre = await request('/api', 'OPTIONS', { origin: 'https://evil.example', 'access-control-request-method': 'POST' });
    assert.equal(pre.headers['access-control-allow-origin'], undefined);
    assert.equal(upstream.hits, hitsBefore + 1, 'a preflight from an origin not allowed goes upstream (forward_not_matching_preflights)');
    await request('/api', 'GET', { origin: 'https://app.example' });
    assert.equal(await statValue(proxy, 'http.web.cors.origin_invalid'), invalid + 2);
    assert.equal(await statValue(proxy, 'http.web.cors.origin_valid'), valid + 1);
    const none = await request('/api');
    assert.equal(none.headers['access-control-allow-origin'], undefined, 'no Origin: not a CORS request');
  });

  it('is switched off for a route by FilterConfig disabled', async () => {
    const r = await request('/off', 'OPTIONS', { origin: 'https://app.example', 'access-control-request-method': 'GET' });
    assert.equal(r.headers['access-control-allow-origin'], undefined);
  });

  it('refuses an origin regex that does not compile, naming it', async () => {
    const config = {
      static_resources: {
        listeners: [{
          name: 'bad', address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
          filter_chains: [{ filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: { '@type': HCM_TYPE, stat_prefix: 'bad', route_config: { virtual_hosts: [{ name: 'v', domains: ['*'], typed_per_filter_config: { cors: { '@type': CORS_POLICY, allow_origin_string_match: [{ safe_regex: { regex: '(' } }] } }, routes: [{ match: { prefix: '/' }, direct_response: { status: 200 } }] }] }, http_filters: [{ name: 'cors', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.cors.v3.Cors' } }, { name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } }] } }] }],
        }],
      },
    };
    const out = await runProxy(['--mode', 'validate', '-c', tmp.file('bad-cors.json', JSON.stringify(config))]);
    assert.equal(out.code, 1);
    assert.match(out.stderr + out.stdout, /virtual_hosts\[0\]\.typed_per_filter_config\["cors"\]\.allow_origin_string_match\[0\]\.safe_regex\.regex: invalid RE2 regex/);
    // A misspelt field of a filter's configuration is an unknown field, as in the rest of the API.
    const policy = config.static_resources.listeners[0]!.filter_chains[0]!.filters[0]!.typed_config.route_config.virtual_hosts[0]!.typed_per_filter_config.cors as Record<string, unknown>;
    policy.allow_origin_string_match = [{ exact: 'https://app.example' }];
    policy.allow_origins = ['https://app.example'];
    const typo = await runProxy(['--mode', 'validate', '-c', tmp.file('typo-cors.json', JSON.stringify(config))]);
    assert.equal(typo.code, 1);
    assert.match(typo.stderr + typo.stdout, /typed_per_filter_config\["cors"\]\.allow_origins: .*unknown field/i);
  });
});
