import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { JsonObject } from '../shared/config/proto-json.js';
import { filterBootstrap, staticCluster } from './helpers/bootstraps.js';
import { runProxy, tempDir } from './helpers/cli.js';
import { startUnaryService } from './helpers/grpc-service.js';
import { httpRequest, startProxy, statValue, stopAllProxies, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * The global rate limit filter (envoy.filters.http.ratelimit) as Envoy's, against a rate-limit
 * service written here over @grpc/grpc-js with the published RateLimitService protos.
 */

const RATELIMIT = 'type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimit';
const tmp = tempDir();
let upstream: Upstream;
let closeService: () => Promise<void>;
let proxy: RunningProxy;
const asked: JsonObject[] = [];
const unanswered: (() => void)[] = [];

before(async () => {
  upstream = await startUpstream('A');
  const service = await startUnaryService(
    '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit',
    'envoy.service.ratelimit.v3.RateLimitRequest',
    'envoy.service.ratelimit.v3.RateLimitResponse',
    (call, callback) => {
        asked.push(call.request);
        const entries = (call.request.descriptors as { entries: { key: string; value: string }[] }[]).flatMap((d) => d.entries);
        const user = entries.find((e) => e.key === 'user')?.value;
        const status = (remaining: number) => ({ code: remaining > 0 ? 'OK' : 'OVER_LIMIT', current_limit: { requests_per_unit: 10, unit: 'MINUTE', name: 'per-user' }, limit_remaining: remaining, duration_until_reset: '30s' });
        // 'slow' is answered only after the test: past the filter's timeout whatever the machine's load.
        if (user === 'slow') unanswered.push(() => callback(null, { overall_code: 'OK' }));
        else if (user === 'alice') callback(null, { overall_code: 'OVER_LIMIT', statuses: [status(0)], response_headers_to_add: [{ key: 'x-rl-reason', value: 'too many' }], raw_body: Buffer.from('slow down').toString('base64') });
        else callback(null, { overall_code: 'OK', statuses: [status(7)], request_headers_to_add: [{ key: 'x-rl', value: 'checked' }] });
    },
  );
  closeService = service.close;
  const port = service.port;
  const filter = {
    name: 'envoy.filters.http.ratelimit',
    typed_config: {
      '@type': RATELIMIT,
      domain: 'edge',
      // Long enough for an answer on a loaded machine; the 'slow' user's never comes in time.
      timeout: '1s',
      enable_x_ratelimit_headers: 'DRAFT_VERSION_03',
      rate_limit_service: { grpc_service: { envoy_grpc: { cluster_name: 'rls' } }, transport_api_version: 'V3' },
    },
  };
  const rateLimits = [
    { actions: [{ request_headers: { header_name: 'x-user', descriptor_key: 'user' } }] },
    { disable_key: 'generic', actions: [{ generic_key: { descriptor_value: 'api' } }] },
  ];
  const routes = [
    { match: { prefix: '/free' }, route: { cluster: 'backend', prefix_rewrite: '/echo' } },
    { match: { prefix: '/' }, route: { cluster: 'backend', regex_rewrite: { pattern: { regex: '^/.*$' }, substitution: '/echo' }, rate_limits: rateLimits } },
  ];
  const bootstrap = filterBootstrap('limited', [filter], routes, upstream.port, {}, { layered_runtime: { layers: [{ name: 'admin', admin_layer: {} }] } });
  (bootstrap.static_resources as { clusters: object[] }).clusters.push(staticCluster('rls', port));
  proxy = await startProxy(bootstrap, ['--concurrency', '1']);
});

after(async () => {
  await stopAllProxies();
  for (const answer of unanswered) answer();
  await closeService();
  await upstream.close();
  tmp.cleanup();
});

const get = (path: string, headers: Record<string, string> = {}) => httpRequest(`http://127.0.0.1:${proxy.ports.get('limited')}${path}`, { headers });
const stat = (name: string) => statValue(proxy, `cluster.backend.ratelimit.${name}`);

describe('the rate limit filter', () => {
  it("asks the service with the filter's domain and the route's descriptors; an OK lets the request through with the service's headers", async () => {
    const r = await get('/a', { 'x-user': 'bob' });
    assert.equal(r.status, 200);
    assert.deepEqual(asked.at(-1), { domain: 'edge', descriptors: [{ entries: [{ key: 'user', value: 'bob' }] }, { entries: [{ key: 'generic_key', value: 'api' }] }], hits_addend: 1 });
    assert.equal((JSON.parse(r.body) as { headers: Record<string, string> }).headers['x-rl'], 'checked');
    assert.deepEqual([r.headers['x-ratelimit-limit'], r.headers['x-ratelimit-remaining'], r.headers['x-ratelimit-reset']], ['10, 10;w=60;name="per-user"', '7', '30']);
    assert.equal(await stat('ok'), 1);
  });

  it("answers OVER_LIMIT with 429, x-envoy-ratelimited, the service's headers and body", async () => {
    const r = await get('/a', { 'x-user': 'alice' });
    assert.deepEqual([r.status, r.body, r.headers['x-envoy-ratelimited'], r.headers['x-rl-reason'], r.headers['x-ratelimit-remaining']], [429, 'slow down', 'true', 'too many', '0']);
    assert.equal(await stat('over_limit'), 1);
    assert.equal(await statValue(proxy, 'cluster.backend.upstream_rq_429'), 1);
  });

  it('lets the request through when the service does not answer in time (failure mode allow)', async () => {
    const r = await get('/a', { 'x-user': 'slow' });
    assert.equal(r.status, 200);
    assert.deepEqual([await stat('error'), await stat('failure_mode_allowed')], [1, 1]);
  });

  it('leaves out a rate limit whose disable_key the runtime switches off, and asks nothing for a route without rate limits', async () => {
    const set = await httpRequest(`http://${proxy.admin}/runtime_modify?ratelimit.generic.http_filter_enabled=0`, { method: 'POST' });
    assert.equal(set.status, 200);
    await get('/a', { 'x-user': 'carol' });
    assert.deepEqual(asked.at(-1)!.descriptors, [{ entries: [{ key: 'user', value: 'carol' }] }]);
    const count = asked.length;
    assert.equal((await get('/free')).status, 200);
    assert.equal(asked.length, count);
  });
});

describe('rate limit configuration', () => {
  it('refuses a filter without a domain or service, and per-route rate_limits, by name', async () => {
    const routes = [{ match: { prefix: '/' }, route: { cluster: 'backend' }, typed_per_filter_config: { 'envoy.filters.http.ratelimit': { '@type': 'type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimitPerRoute', rate_limits: [{ actions: [{ generic_key: { descriptor_value: 'x' } }] }] } } }];
    const out = await runProxy(['--mode', 'validate', '-c', tmp.file('bad-rl.json', JSON.stringify(filterBootstrap('bad', [{ name: 'envoy.filters.http.ratelimit', typed_config: { '@type': RATELIMIT, domain: '' } }], routes, 1)))]);
    assert.equal(out.code, 1);
    const text = out.stderr + out.stdout;
    assert.match(text, /typed_config\.rate_limit_service: value is required/);
    assert.match(text, /typed_config\.domain: value length must be at least 1 characters/);
    assert.match(text, /field 'rate_limits' of envoy\.extensions\.filters\.http\.ratelimit\.v3\.RateLimitPerRoute is not supported by this proxy \(put the rate limits on the route/);
  });
});
