import assert from 'node:assert/strict';
import { connect as h2connect } from 'node:http2';
import { connect as tcpConnect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { HCM_TYPE, ROUTER_TYPE, TCP_PROXY_TYPE } from './helpers/bootstraps.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';
import { serverLocalAddress } from '../worker/http/request-headers.js';
import { closedPort, startEcho, startH2Upstream, startUpstream, type Upstream } from './helpers/upstream.js';

const HEALTH_CHECK_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.health_check.v3.HealthCheck';

function cluster(name: string, endpoints: { port: number; weight?: number; host?: string }[], extra: object = {}): object {
  return {
    name,
    connect_timeout: '1s',
    type: 'STATIC',
    ...extra,
    load_assignment: {
      cluster_name: name,
      endpoints: [{ lb_endpoints: endpoints.map((e) => ({ endpoint: { address: { socket_address: { address: e.host ?? '127.0.0.1', port_value: e.port } } }, ...(e.weight ? { load_balancing_weight: e.weight } : {}) })) }],
    },
  };
}

let a: Upstream;
let b: Upstream;
let proxy: RunningProxy;
let echo: { port: number; server: import('node:net').Server };
let h2up: { port: number; close: () => Promise<void> };
const base = () => `http://127.0.0.1:${proxy.ports.get('http')}`;

before(async () => {
  a = await startUpstream('A');
  b = await startUpstream('B');
  echo = await startEcho();
  h2up = await startH2Upstream();
  const down = await closedPort();
  const route = (match: object, action: object) => ({ match, ...action });
  const bootstrap = {
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: {
      listeners: [
        {
          name: 'http',
          address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
          filter_chains: [{ filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: {
            '@type': HCM_TYPE,
            stat_prefix: 'http',
            use_remote_address: true,
            route_config: { validate_clusters: false, virtual_hosts: [
              { name: 'redirects', domains: ['old.example.com'], routes: [route({ prefix: '/' }, { redirect: { https_redirect: true, host_redirect: 'new.example.com' } })] },
              { name: 'main', domains: ['*'], routes: [
                route({ path: '/direct' }, { direct_response: { status: 200, body: { inline_string: 'direct' } } }),
                route({ safe_regex: { regex: '/regex/[0-9]+' } }, { direct_response: { status: 201, body: { inline_string: 'regex' } } }),
                route({ prefix: '/api/', headers: [{ name: 'x-canary', string_match: { exact: 'yes' } }] }, { route: { cluster: 'b', prefix_rewrite: '/' } }),
                route({ prefix: '/api/' }, { route: { cluster: 'a', prefix_rewrite: '/', host_rewrite_literal: 'upstream.internal' } }),
                route({ prefix: '/weighted' }, { route: { weighted_clusters: { clusters: [{ name: 'a', weight: 80 }, { name: 'b', weight: 20 }] } } }),
                route({ prefix: '/retry/' }, { route: { cluster: 'a', prefix_rewrite: '/', retry_policy: { retry_on: '5xx', num_retries: 2 } } }),
                route({ prefix: '/noretry/' }, { route: { cluster: 'a', prefix_rewrite: '/' } }),
                route({ prefix: '/timeout/' }, { route: { cluster: 'a', prefix_rewrite: '/', timeout: '0.2s' } }),
                route({ prefix: '/down' }, { route: { cluster: 'down' } }),
                route({ prefix: '/missing' }, { route: { cluster: 'not-configured', cluster_not_found_response_code: 'NOT_FOUND' } }),
                route({ prefix: '/empty' }, { route: { cluster: 'empty' } }),
                route({ prefix: '/dns/' }, { route: { cluster: 'dns', prefix_rewrite: '/' } }),
                route({ prefix: '/h2/' }, { route: { cluster: 'h2', prefix_rewrite: '/' } }),
                route({ prefix: '/h2typed/' }, { route: { cluster: 'h2_typed', prefix_rewrite: '/' } }),
                route({ prefix: '/h2down' }, { route: { cluster: 'h2_down' } }),
                route({ prefix: '/lb/rr' }, { route: { cluster: 'lb_rr' } }),
                route({ prefix: '/lb/lr' }, { route: { cluster: 'lb_lr' } }),
                route({ prefix: '/lb/random' }, { route: { cluster: 'lb_random' } }),
              ] },
            ] },
            http_filters: [
              { name: 'envoy.filters.http.health_check', typed_config: { '@type': HEALTH_CHECK_TYPE, pass_through_mode: false, headers: [{ name: ':path', string_match: { exact: '/healthz' } }] } },
              { name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } },
            ],
          } }] }],
        },
        {
          name: 'tcp',
          address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
          filter_chains: [{ filters: [{ name: 'envoy.filters.network.tcp_proxy', typed_config: { '@type': TCP_PROXY_TYPE, stat_prefix: 'tcp', cluster: 'echo' } }] }],
        },
      ],
      clusters: [
        cluster('a', [{ port: a.port }]),
        cluster('b', [{ port: b.port }]),
        cluster('down', [{ port: down }]),
        { name: 'empty', connect_timeout: '1s', type: 'STATIC' },
        cluster('echo', [{ port: echo.port }]),
        cluster('dns', [{ port: a.port, host: 'localhost' }], { type: 'STRICT_DNS', dns_lookup_family: 'V4_ONLY' }),
        cluster('h2', [{ port: h2up.port }], { http2_protocol_options: {} }),
        cluster('h2_typed', [{ port: h2up.port }], { typed_extension_protocol_options: { 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
          '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions', explicit_http_config: { http2_protocol_options: {} } } } }),
        cluster('h2_down', [{ port: down }], { http2_protocol_options: {} }),
        cluster('lb_rr', [{ port: a.port, weight: 3 }, { port: b.port, weight: 1 }], { lb_policy: 'ROUND_ROBIN' }),
        cluster('lb_lr', [{ port: a.port, weight: 3 }, { port: b.port, weight: 1 }], { lb_policy: 'LEAST_REQUEST' }),
        cluster('lb_random', [{ port: a.port, weight: 3 }, { port: b.port, weight: 1 }], { lb_policy: 'RANDOM' }),
      ],
    },
  };
  proxy = await startProxy(bootstrap, ['--concurrency', '1']);
});

after(async () => {
  await stopAllProxies();
  await a?.close();
  await b?.close();
  echo?.server.close();
  await h2up?.close();
});

describe('HTTP connection manager over HTTP/1.1', () => {
  it('answers a direct_response route itself, as server "envoy"', async () => {
    const r = await httpRequest(`${base()}/direct`);
    assert.equal(r.status, 200);
    assert.equal(r.body, 'direct');
    assert.equal(r.headers.server, 'envoy');
  });

  it('matches safe_regex routes on the whole path', async () => {
    assert.equal((await httpRequest(`${base()}/regex/123`)).status, 201);
    assert.equal((await httpRequest(`${base()}/regex/123x`)).status, 404);
  });

  it('answers 404 with an empty body when no route matches', async () => {
    const r = await httpRequest(`${base()}/nothing-here`);
    assert.deepEqual([r.status, r.body], [404, '']);
  });

  it('proxies to the cluster with prefix and host rewrites and Envoy\'s request headers', async () => {
    const r = await httpRequest(`${base()}/api/echo?q=1`, { headers: { 'x-forwarded-for': '10.0.0.1' } });
    assert.equal(r.status, 200);
    const seen = JSON.parse(r.body);
    assert.equal(seen.name, 'A');
    assert.equal(seen.url, '/echo?q=1');
    assert.equal(seen.headers.host, 'upstream.internal');
    // A loopback peer is named by the server's own address, as Envoy appends config.localAddress().
    assert.equal(seen.headers['x-forwarded-for'], `10.0.0.1,${serverLocalAddress('v4')}`);
    assert.equal(seen.headers['x-forwarded-proto'], 'http');
    assert.match(seen.headers['x-request-id'], /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(seen.headers['x-envoy-expected-rq-timeout-ms'], '15000');
    assert.match(String(r.headers['x-envoy-upstream-service-time']), /^\d+$/);
    assert.equal(r.headers.server, 'envoy');
  });

  it('routes on header matchers', async () => {
    assert.equal(JSON.parse((await httpRequest(`${base()}/api/echo`, { headers: { 'x-canary': 'yes' } })).body).name, 'B');
  });

  it('streams request and response bodies', async () => {
    const body = 'x'.repeat(1024 * 1024);
    const r = await httpRequest(`${base()}/api/echo`, { method: 'POST', body, headers: { 'content-type': 'text/plain' } });
    assert.equal(JSON.parse(r.body).body.length, body.length);
  });

  it('splits weighted clusters within tolerance', async () => {
    const hitsA = a.hits;
    const n = 400;
    for (let i = 0; i < n; i++) await httpRequest(`${base()}/weighted`);
    const share = (a.hits - hitsA) / n;
    assert.ok(Math.abs(share - 0.8) < 0.08, `cluster a got ${(share * 100).toFixed(1)}% (want 80%)`);
  });

  for (const [policy, path] of [['ROUND_ROBIN', '/lb/rr'], ['LEAST_REQUEST', '/lb/lr'], ['RANDOM', '/lb/random']] as const) {
    it(`balances ${policy} by endpoint weight (3:1)`, async () => {
      const hitsA = a.hits;
      const n = 400;
      for (let i = 0; i < n; i++) await httpRequest(`${base()}${path}`);
      const share = (a.hits - hitsA) / n;
      assert.ok(Math.abs(share - 0.75) < 0.08, `${policy}: the weight-3 host got ${(share * 100).toFixed(1)}% (want 75%)`);
    });
  }

  it('retries 5xx responses per the retry policy, each after Envoy\'s back-off', async () => {
    const retries = await statValue(proxy, 'cluster.a.upstream_rq_retry');
    const backoffs = await statValue(proxy, 'cluster.a.upstream_rq_retry_backoff_exponential');
    const r = await httpRequest(`${base()}/retry/flaky?key=r1&fail=2`);
    assert.deepEqual([r.status, r.body], [200, 'A recovered after 2']);
    assert.equal(await statValue(proxy, 'cluster.a.upstream_rq_retry'), retries + 2);
    assert.equal(await statValue(proxy, 'cluster.a.upstream_rq_retry_backoff_exponential'), backoffs + 2);
    // A body too long to keep for a retry streams once: the retry is abandoned, as Envoy counts it.
    const abandoned = await statValue(proxy, 'cluster.a.retry_or_shadow_abandoned');
    const big = await httpRequest(`${base()}/retry/echo`, { method: 'POST', body: Buffer.alloc(70_000, 'x') });
    assert.equal(big.status, 200);
    assert.equal(await statValue(proxy, 'cluster.a.retry_or_shadow_abandoned'), abandoned + 1);
    const noRetry = await httpRequest(`${base()}/noretry/flaky?key=r2&fail=1`);
    assert.deepEqual([noRetry.status, noRetry.body], [503, 'flaky']);
  });

  it('answers 504 when the upstream exceeds the route timeout', async () => {
    const r = await httpRequest(`${base()}/timeout/hold?key=timeout`);
    assert.deepEqual([r.status, r.body], [504, 'upstream request timeout']);
    a.release('timeout');
  });

  it('answers 503 for a connect failure and for a cluster without hosts', async () => {
    const down = await httpRequest(`${base()}/down`);
    assert.deepEqual([down.status, down.body], [503, 'upstream connect error or disconnect/reset before headers. reset reason: remote connection failure, transport failure reason: delayed connect error: Connection refused']);
    // The request waited for a connection that failed: Envoy's pool counts it as ejected from the pending queue.
    assert.ok((await statValue(proxy, 'cluster.down.upstream_rq_pending_failure_eject')) >= 1);
    const empty = await httpRequest(`${base()}/empty`);
    assert.deepEqual([empty.status, empty.body], [503, 'no healthy upstream']);
  });

  it('answers a route to an unknown cluster with cluster_not_found_response_code', async () => {
    assert.equal((await httpRequest(`${base()}/missing`)).status, 404);
  });

  it('resolves STRICT_DNS clusters', async () => {
    assert.equal((await httpRequest(`${base()}/dns/`)).body, 'A');
  });

  it('redirects per the virtual host chosen by domain', async () => {
    const r = await httpRequest(`${base()}/some/path?x=1`, { headers: { host: 'old.example.com' } });
    assert.equal(r.status, 301);
    assert.equal(r.headers.location, 'https://new.example.com/some/path?x=1');
  });

  it('answers health checks from the health-check filter without going upstream', async () => {
    const hits = a.hits + b.hits;
    const r = await httpRequest(`${base()}/healthz`);
    assert.equal(r.status, 200);
    assert.equal(a.hits + b.hits, hits);
  });

  it('fails every health check after POST /healthcheck/fail, and passes again after /healthcheck/ok', async () => {
    assert.equal((await httpRequest(`http://${proxy.admin}/healthcheck/fail`)).status, 400); // GET changes nothing
    assert.equal((await httpRequest(`${base()}/healthz`)).status, 200);
    assert.equal((await httpRequest(`http://${proxy.admin}/healthcheck/fail`, { method: 'POST' })).body, 'OK\n');
    const failing = await waitFor('the workers to fail health checks', async () => {
      const r = await httpRequest(`${base()}/healthz`);
      return r.status === 503 ? r : undefined;
    });
    // As Envoy's health-check filter: its own answer names the service cluster, and every other response says "fail me now".
    assert.equal(failing.headers['x-envoy-upstream-healthchecked-cluster'], '');
    assert.equal(failing.headers['x-envoy-immediate-health-check-fail'], undefined);
    assert.equal((await httpRequest(`${base()}/direct`)).headers['x-envoy-immediate-health-check-fail'], 'true');
    const ready = await httpRequest(`http://${proxy.admin}/ready`);
    assert.deepEqual([ready.status, ready.body], [503, 'DRAINING\n']);
    assert.equal(JSON.parse((await httpRequest(`http://${proxy.admin}/server_info`)).body).state, 'DRAINING');
    assert.equal((await httpRequest(`${base()}/direct`)).status, 200); // only health checks fail
    await httpRequest(`http://${proxy.admin}/healthcheck/ok`, { method: 'POST' });
    await waitFor('health checks to pass again', async () => ((await httpRequest(`${base()}/healthz`)).status === 200 ? true : undefined));
    assert.equal((await httpRequest(`http://${proxy.admin}/ready`)).status, 200);
  });

  it('refuses more than 100 headers, and headers over 60 KiB, with 431', async () => {
    const many: Record<string, string> = {};
    for (let i = 0; i < 101; i++) many[`x-h${i}`] = 'v';
    assert.equal((await httpRequest(`${base()}/direct`, { headers: many })).status, 431);
    assert.equal((await httpRequest(`${base()}/direct`, { headers: { 'x-big': 'y'.repeat(70 * 1024) } })).status, 431);
  });
});

describe('HTTP/2 upstreams', () => {
  it('speak h2c to clusters that ask for HTTP/2, either way of asking', async () => {
    for (const prefix of ['/h2/', '/h2typed/']) {
      const r = await httpRequest(`${base()}${prefix}x?y=1`);
      assert.equal(r.status, 200, r.body);
      const seen = JSON.parse(r.body);
      assert.equal(seen.httpVersion, '2.0');
      assert.equal(seen.path, '/x?y=1');
      assert.equal(seen.forwardedFor, serverLocalAddress('v4'));
      assert.equal(r.headers.server, 'envoy');
    }
  });

  it('answer Envoy\'s 503 when the HTTP/2 host refuses the connection', async () => {
    const r = await httpRequest(`${base()}/h2down`);
    assert.deepEqual([r.status, r.body], [503, 'upstream connect error or disconnect/reset before headers. reset reason: remote connection failure, transport failure reason: delayed connect error: Connection refused']);
  });
});

describe('HTTP connection manager over h2c (prior knowledge)', () => {
  it('serves direct responses and proxied requests on the same listener', async () => {
    const session = h2connect(base());
    try {
      const get = (path: string) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const stream = session.request({ ':path': path });
          let status = 0;
          let body = '';
          stream.on('response', (h) => (status = Number(h[':status'])));
          stream.setEncoding('utf8');
          stream.on('data', (d) => (body += d));
          stream.on('end', () => resolve({ status, body }));
          stream.on('error', reject);
        });
      assert.deepEqual(await get('/direct'), { status: 200, body: 'direct' });
      const proxied = await get('/api/echo');
      assert.equal(proxied.status, 200);
      assert.equal(JSON.parse(proxied.body).name, 'A');
    } finally {
      session.close();
    }
  });
});

describe('TCP proxy', () => {
  it('joins a downstream connection to the cluster, both ways', async () => {
    const socket = tcpConnect(proxy.ports.get('tcp')!, '127.0.0.1');
    const got = await new Promise<string>((resolve, reject) => {
      let data = '';
      socket.on('data', (d) => {
        data += d;
        if (data.length >= 11) resolve(data);
      });
      socket.on('error', reject);
      socket.write('hello world');
    });
    socket.destroy();
    assert.equal(got, 'hello world');
  });
});
