// Retries end to end, with real upstreams: Istio's default retry policy
// (connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes) retries on each
// of its five conditions, and on nothing else; the x-envoy-retry-on / -max-retries /
// -upstream-rq-timeout-ms / -upstream-rq-per-try-timeout-ms request headers are honoured for an
// internal request (internal_address_config) and removed from an external one before anything
// reads them; previous_hosts sends a retry to another host; per_try_idle_timeout cuts a try that
// stalls; a retry budget bounds concurrent retries.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createH2, constants as h2c, type Http2Server, type ServerHttp2Stream } from 'node:http2';
import { closedPort, startUpstream, type Upstream } from './helpers/upstream.js';
import { httpRequest, startProxy, statValue, stopAllProxies, type RunningProxy } from './helpers/proxy.js';
import { HCM_TYPE, ROUTER_TYPE, staticCluster } from './helpers/bootstraps.js';

const ISTIO = { retry_on: 'connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes', num_retries: 2, retriable_status_codes: [503] };

/**
 * An h2c upstream whose answer depends on the path's first segment, once per key (the rest of the path):
 *   /refuse/K        RST_STREAM REFUSED_STREAM the first time, then 200
 *   /reset/K         RST_STREAM INTERNAL_ERROR the first time, then 200
 *   /grpc/<code>/K   a trailers-only gRPC answer with grpc-status <code> the first time, then grpc-status 0
 */
async function startH2Flaky(): Promise<{ port: number; hits: () => number; close: () => Promise<void> }> {
  const seen = new Set<string>();
  let hits = 0;
  const server: Http2Server = createH2();
  server.on('stream', (stream: ServerHttp2Stream, headers) => {
    hits++;
    const path = String(headers[':path']);
    const [, kind, ...rest] = path.split('/');
    const key = path;
    const first = !seen.has(key);
    seen.add(key);
    stream.on('error', () => {});
    if (kind === 'refuse' && first) return stream.close(h2c.NGHTTP2_REFUSED_STREAM);
    if (kind === 'reset' && first) return stream.close(h2c.NGHTTP2_INTERNAL_ERROR);
    if (kind === 'grpc') {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': first ? rest[0]! : '0' }, { endStream: true });
      return;
    }
    stream.respond({ ':status': 200 });
    stream.end(`ok ${rest.join('/')}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as { port: number }).port,
    hits: () => hits,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

function listener(name: string, routes: object[], hcm: object = {}): object {
  return {
    name,
    address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
    filter_chains: [{ filters: [{ name: 'hcm', typed_config: { '@type': HCM_TYPE, stat_prefix: name, route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes }] }, http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } }], ...hcm } }] }],
  };
}

const H2 = { http2_protocol_options: {} };

describe('retries', () => {
  let proxy: RunningProxy;
  let h1: Upstream;
  let other: Upstream;
  let h2: Awaited<ReturnType<typeof startH2Flaky>>;
  const url = (l: string, path: string) => `http://127.0.0.1:${proxy.ports.get(l)}${path}`;

  before(async () => {
    h1 = await startUpstream('h1');
    other = await startUpstream('other');
    h2 = await startH2Flaky();
    const dead = await closedPort();
    const routes = [
      { match: { prefix: '/h2/' }, route: { cluster: 'h2', prefix_rewrite: '/', retry_policy: ISTIO } },
      { match: { prefix: '/deadfirst/' }, route: { cluster: 'deadfirst', prefix_rewrite: '/', retry_policy: ISTIO } },
      { match: { prefix: '/dead/' }, route: { cluster: 'dead', prefix_rewrite: '/', retry_policy: { ...ISTIO, num_retries: 1 } } },
      { match: { prefix: '/h1/' }, route: { cluster: 'h1', prefix_rewrite: '/', retry_policy: ISTIO } },
      { match: { prefix: '/plain/' }, route: { cluster: 'h1', prefix_rewrite: '/' } },
      {
        match: { prefix: '/pair/' },
        route: {
          cluster: 'pair',
          prefix_rewrite: '/',
          retry_policy: {
            retry_on: '5xx',
            num_retries: 1,
            retry_host_predicate: [{ name: 'envoy.retry_host_predicates.previous_hosts', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate' } }],
            host_selection_retry_max_attempts: 10,
          },
        },
      },
      { match: { prefix: '/nobudget/' }, route: { cluster: 'nobudget', prefix_rewrite: '/', retry_policy: { retry_on: '5xx' } } },
      { match: { prefix: '/budget/' }, route: { cluster: 'budget', prefix_rewrite: '/', retry_policy: { retry_on: '5xx' } } },
      { match: { prefix: '/idle/' }, route: { cluster: 'h1', prefix_rewrite: '/', retry_policy: { retry_on: 'reset', num_retries: 1, per_try_idle_timeout: '0.2s' } } },
    ];
    proxy = await startProxy({
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [
          listener('external', routes),
          listener('internal', routes, { use_remote_address: true, internal_address_config: { cidr_ranges: [{ address_prefix: '127.0.0.0', prefix_len: 8 }] } }),
        ],
        clusters: [
          { ...staticCluster('h2', h2.port), ...H2 },
          { ...staticCluster('deadfirst', [dead, h1.port]), lb_policy: 'ROUND_ROBIN' },
          staticCluster('dead', dead),
          staticCluster('h1', h1.port),
          { ...staticCluster('pair', [h1.port, other.port]), lb_policy: 'RANDOM' },
          // A budget of nothing, and one of all the requests in flight (one, this one) with no minimum.
          { ...staticCluster('nobudget', h1.port), circuit_breakers: { thresholds: [{ max_retries: 100, retry_budget: { budget_percent: { value: 0 }, min_retry_concurrency: 0 } }] } },
          { ...staticCluster('budget', h1.port), circuit_breakers: { thresholds: [{ max_retries: 0, retry_budget: { budget_percent: { value: 100 }, min_retry_concurrency: 0 } }] } },
        ],
      },
    });
  });

  after(async () => {
    await stopAllProxies();
    await h1.close();
    await other.close();
    await h2.close();
  });

  const retries = (cluster: string) => statValue(proxy, `cluster.${cluster}.upstream_rq_retry`);

  it('Istio\'s policy retries a connect failure (connect-failure)', async () => {
    const before = await retries('deadfirst');
    for (let i = 0; i < 4; i++) assert.equal((await httpRequest(url('external', '/deadfirst/'))).status, 200);
    // Round robin over [refusing, live]: each request that met the refusing host first was retried onto the live one.
    assert.ok((await retries('deadfirst')) > before);
    // Only a refusing host: retried once, then 503 with URX and UF (the log's flags are checked in failure-stats.test.ts).
    const dead = await httpRequest(url('external', '/dead/'));
    assert.equal(dead.status, 503);
    assert.match(dead.body, /retried and the latest reset reason: remote connection failure, transport failure reason: delayed connect error: Connection refused$/);
    assert.equal(await statValue(proxy, 'cluster.dead.upstream_rq_retry_limit_exceeded'), 1);
  });

  it('retries a stream the HTTP/2 upstream refused (refused-stream), and not one it reset otherwise', async () => {
    const before = await retries('h2');
    const r = await httpRequest(url('external', '/h2/refuse/one'));
    assert.equal(r.status, 200);
    assert.equal(r.body, 'ok one');
    assert.equal(await retries('h2'), before + 1);
    const reset = await httpRequest(url('external', '/h2/reset/one'));
    assert.equal(reset.status, 503, 'a plain reset is not among Istio\'s conditions');
    assert.match(reset.body, /reset reason: remote reset/);
    assert.equal(await retries('h2'), before + 1);
  });

  it('retries a trailers-only gRPC answer with UNAVAILABLE (unavailable) and CANCELLED (cancelled), and not INTERNAL', async () => {
    const before = await retries('h2');
    const grpc = (path: string) => httpRequest(url('external', path), { method: 'POST', headers: { 'content-type': 'application/grpc', te: 'trailers' } });
    const unavailable = await grpc('/h2/grpc/14/a');
    assert.equal(unavailable.headers['grpc-status'], '0');
    const cancelled = await grpc('/h2/grpc/1/a');
    assert.equal(cancelled.headers['grpc-status'], '0');
    assert.equal(await retries('h2'), before + 2);
    const internal = await grpc('/h2/grpc/13/a');
    assert.equal(internal.headers['grpc-status'], '13');
    assert.equal(await retries('h2'), before + 2);
  });

  it('retries a 503 (retriable-status-codes), and not a 500', async () => {
    const before = await retries('h1');
    const r = await httpRequest(url('external', '/h1/flaky?key=istio&fail=1'));
    assert.equal(r.status, 200);
    assert.equal(await retries('h1'), before + 1);
    assert.equal((await httpRequest(url('external', '/h1/status?code=500'))).status, 500);
    assert.equal(await retries('h1'), before + 1);
  });

  it('x-envoy-retry-on and x-envoy-max-retries work for an internal request and are removed from an external one', async () => {
    const headers = { 'x-envoy-retry-on': '5xx', 'x-envoy-max-retries': '3', 'x-envoy-internal': 'true' };
    const before = await retries('h1');
    const internal = await httpRequest(url('internal', '/plain/flaky?key=int&fail=3'), { headers });
    assert.equal(internal.status, 200, 'three retries, the header\'s count');
    assert.equal(await retries('h1'), before + 3);
    const external = await httpRequest(url('external', '/plain/flaky?key=ext&fail=1'), { headers });
    assert.equal(external.status, 503, 'not honoured from an external client');
    assert.equal(await retries('h1'), before + 3);
    // What the upstream sees: the consumed headers never, x-envoy-internal only where this proxy set it.
    const seenInternal = JSON.parse((await httpRequest(url('internal', '/plain/echo'), { headers })).body).headers;
    const seenExternal = JSON.parse((await httpRequest(url('external', '/plain/echo'), { headers })).body).headers;
    for (const seen of [seenInternal, seenExternal]) {
      assert.equal(seen['x-envoy-retry-on'], undefined);
      assert.equal(seen['x-envoy-max-retries'], undefined);
    }
    assert.equal(seenInternal['x-envoy-internal'], 'true');
    assert.equal(seenExternal['x-envoy-internal'], undefined, 'a client cannot claim to be internal');
  });

  it('x-envoy-upstream-rq-timeout-ms and -per-try-timeout-ms set an internal request\'s timeouts (announced upstream), not an external one\'s', async () => {
    const echo = async (l: string, h: Record<string, string>) => JSON.parse((await httpRequest(url(l, '/plain/echo'), { headers: h })).body).headers;
    assert.equal((await echo('internal', { 'x-envoy-upstream-rq-timeout-ms': '1234' }))['x-envoy-expected-rq-timeout-ms'], '1234');
    assert.equal((await echo('internal', { 'x-envoy-upstream-rq-timeout-ms': '5000', 'x-envoy-upstream-rq-per-try-timeout-ms': '700' }))['x-envoy-expected-rq-timeout-ms'], '700');
    const ext = await echo('external', { 'x-envoy-upstream-rq-timeout-ms': '1234', 'x-envoy-upstream-rq-per-try-timeout-ms': '700' });
    assert.equal(ext['x-envoy-expected-rq-timeout-ms'], '15000');
    assert.equal(ext['x-envoy-upstream-rq-timeout-ms'], undefined);
    assert.equal(ext['x-envoy-upstream-rq-per-try-timeout-ms'], undefined);
    const timedOut = await httpRequest(url('internal', '/plain/hold?key=never'), { headers: { 'x-envoy-upstream-rq-timeout-ms': '100' } });
    assert.equal(timedOut.status, 504);
    const alt = await httpRequest(url('internal', '/plain/hold?key=never'), { headers: { 'x-envoy-upstream-rq-timeout-ms': '100', 'x-envoy-upstream-rq-timeout-alt-response': '' } });
    assert.equal(alt.status, 204);
  });

  it('previous_hosts sends the retry to the other host', async () => {
    // RANDOM would pick the same host for both tries half the time; the predicate picks again.
    for (let i = 0; i < 8; i++) {
      const before = [h1.hits, other.hits];
      assert.equal((await httpRequest(url('external', '/pair/status?code=503'))).status, 503);
      assert.deepEqual([h1.hits - before[0]!, other.hits - before[1]!], [1, 1], `request ${i}: one try on each host`);
    }
  });

  it('a retry budget, not max_retries, bounds the retries in flight: a share of the requests active and pending', async () => {
    const refused = await httpRequest(url('external', '/nobudget/flaky?key=nb&fail=1'));
    assert.equal(refused.status, 503);
    assert.equal(await statValue(proxy, 'cluster.nobudget.upstream_rq_retry_overflow'), 1);
    const allowed = await httpRequest(url('external', '/budget/flaky?key=b&fail=1'));
    assert.equal(allowed.status, 200, 'max_retries 0 does not apply under a budget');
    assert.equal(await statValue(proxy, 'cluster.budget.upstream_rq_retry'), 1);
  });

  it('per_try_idle_timeout cuts a try whose upstream goes quiet, retried under reset', async () => {
    const before = await statValue(proxy, 'cluster.h1.upstream_rq_per_try_idle_timeout');
    const r = await httpRequest(url('external', '/idle/hold?key=idle'));
    assert.equal(r.status, 504);
    assert.equal(r.body, 'upstream request timeout');
    assert.equal(await statValue(proxy, 'cluster.h1.upstream_rq_per_try_idle_timeout'), before + 2);
  });
});
