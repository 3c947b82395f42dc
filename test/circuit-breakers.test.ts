import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { routesListener, staticCluster, TCP_PROXY_TYPE } from './helpers/bootstraps.js';
import { connect } from 'node:net';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor, type RunningProxy, type HttpResult } from './helpers/proxy.js';
import { startEcho, startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * Circuit breakers per priority, enforced across the tree (both workers count against one limit
 * through shared memory), with Envoy's overflow reply and stats.
 */

let upstream: Upstream;
/** Behind `conns`: max_connections 2 across both workers. */
let counted: Upstream;
let proxy: RunningProxy;

before(async () => {
  upstream = await startUpstream('A');
  counted = await startUpstream('B');
  const limited = staticCluster('limited', upstream.port) as any;
  limited.circuit_breakers = { thresholds: [{ max_requests: 2, max_retries: 0 }, { priority: 'HIGH', max_requests: 10 }] };
  const conns = staticCluster('conns', counted.port) as any;
  conns.circuit_breakers = { thresholds: [{ max_connections: 2, track_remaining: true }] };
  const route = (prefix: string, extra: object = {}) => ({ match: { prefix }, route: { cluster: 'limited', ...extra } });
  proxy = await startProxy(
    {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [
          routesListener('ingress', [
            route('/high/', { priority: 'HIGH', prefix_rewrite: '/' }),
            { match: { prefix: '/conns/' }, route: { cluster: 'conns', prefix_rewrite: '/' } },
            route('/retry/', { prefix_rewrite: '/', retry_policy: { retry_on: '5xx', num_retries: 3 } }),
            route('/'),
          ]),
        ],
        clusters: [limited, conns],
      },
    },
    ['--concurrency', '2'],
  );
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
  await counted.close();
});

const stat = (name: string) => statValue(proxy, name);

/** `n` requests at once, each on its own connection (so both workers take some). */
function many(path: string, n: number): Promise<{ status: number; body: string }[]> {
  return Promise.all(Array.from({ length: n }, () => httpRequest(`http://127.0.0.1:${proxy.ports.get('ingress')}${path}`, { agent: false })));
}

/**
 * `n` requests on their own connections, each sent once the one before is settled as `settled(i)`
 * (1-based) says: in flight together, yet never two at the same instant. A breaker is checked, then
 * taken, per worker, so two workers deciding at the very same moment can both take the last unit
 * (as two of Envoy's worker threads can); these tests are about the count, not that race.
 */
async function oneByOne(path: string, n: number, settled: (i: number) => Promise<boolean>): Promise<Promise<HttpResult>[]> {
  const all: Promise<HttpResult>[] = [];
  for (let i = 1; i <= n; i++) {
    all.push(httpRequest(`http://127.0.0.1:${proxy.ports.get('ingress')}${path}`, { agent: false }));
    await waitFor(`request ${i} of ${n} to settle`, async () => ((await settled(i)) ? true : undefined));
  }
  return all;
}

describe('circuit breakers', () => {
  // The upstream holds /hold responses until the test releases them: the requests stay in flight
  // together for as long as the test needs, however slow the machine.
  it('admits max_requests across both workers, and answers the rest 503 overflow', async () => {
    const all = await oneByOne('/hold?key=admit', 6, async (i) =>
      i <= 2 ? upstream.held('admit') === i : (await stat('cluster.limited.upstream_rq_active_overflow')) === i - 2);
    upstream.release('admit');
    const results = await Promise.all(all);
    const ok = results.filter((r) => r.status === 200);
    const overflow = results.filter((r) => r.status === 503);
    assert.equal(ok.length, 2, JSON.stringify(results));
    assert.equal(overflow.length, 4);
    assert.equal(overflow[0]!.body, 'upstream connect error or disconnect/reset before headers. reset reason: overflow');
    // As Envoy's router (onUpstreamAbort with dropped): the refusal says it was overload.
    for (const r of overflow) assert.equal(r.headers['x-envoy-overloaded'], 'true');
    // As Envoy since 1.38: a max_requests refusal is an active-request overflow, not a pending one.
    assert.equal(await stat('cluster.limited.upstream_rq_active_overflow'), 4);
    assert.equal(await stat('cluster.limited.upstream_rq_pending_overflow'), 0);
    // Everything was given back: the limit admits again.
    assert.equal((await httpRequest(`http://127.0.0.1:${proxy.ports.get('ingress')}/`)).status, 200);
  });

  it('applies the HIGH thresholds to routes of priority HIGH', async () => {
    const all = many('/high/hold?key=high', 5);
    await waitFor('five requests upstream at once', () => (upstream.held('high') === 5 ? true : undefined));
    upstream.release('high');
    assert.deepEqual((await all).map((r) => r.status), [200, 200, 200, 200, 200]);
  });

  it('refuses retries beyond max_retries, counting upstream_rq_retry_overflow', async () => {
    const r = await httpRequest(`http://127.0.0.1:${proxy.ports.get('ingress')}/retry/flaky?key=cb&fail=1`);
    assert.equal(r.status, 503, 'max_retries 0: the first answer stands');
    assert.equal(await stat('cluster.limited.upstream_rq_retry_overflow'), 1);
    assert.equal(await stat('cluster.limited.upstream_rq_retry'), 0);
  });

  it('holds the tree to max_connections: requests wait for a connection instead of opening more', async () => {
    const all = await oneByOne('/conns/hold?key=conns', 6, async (i) =>
      i <= 2 ? counted.held('conns') === i : (await stat('cluster.conns.upstream_cx_overflow')) === i - 2);
    counted.release('conns');
    const results = await Promise.all(all);
    assert.deepEqual(results.map((r) => r.status), [200, 200, 200, 200, 200, 200], JSON.stringify(results));
    // Two for the tree, plus at most one opened anyway by a worker that had none (Envoy's pools do
    // the same, or that worker's requests could only wait for connections it cannot use).
    // Counted per worker, the two workers would have opened four.
    assert.ok(counted.connections >= 2 && counted.connections <= 3, `${counted.connections} connections for six requests`);
    assert.equal(await stat('cluster.conns.upstream_cx_total'), counted.connections);
    assert.equal(await stat('cluster.conns.upstream_cx_overflow'), 4, 'each request beyond the two the limit admits counts once (waiting, or opening anyway)');
    // The two keep-alive connections stay open: the breaker is still at its limit for connections only.
    assert.equal(await stat('cluster.conns.circuit_breakers.default.cx_open'), 1);
    assert.equal(await stat('cluster.conns.circuit_breakers.default.remaining_cx'), 0);
    assert.equal(await stat('cluster.conns.circuit_breakers.default.rq_open'), 0);
    assert.equal(await stat('cluster.conns.circuit_breakers.default.remaining_rq'), 1024);
    assert.equal(await stat('cluster.conns.circuit_breakers.high.cx_open'), 0);
  });

  it('reports rq_open while max_requests is reached', async () => {
    const running = many('/hold?key=open', 2);
    await waitFor('rq_open', async () => ((await stat('cluster.limited.circuit_breakers.default.rq_open')) === 1 ? true : undefined));
    upstream.release('open');
    await running;
    assert.equal(await stat('cluster.limited.circuit_breakers.default.rq_open'), 0);
  });

  it('shows every priority\'s thresholds in /clusters', async () => {
    const text = (await httpRequest(`http://${proxy.admin}/clusters`)).body;
    assert.match(text, /^limited::default_priority::max_requests::2$/m);
    assert.match(text, /^limited::default_priority::max_retries::0$/m);
    assert.match(text, /^limited::high_priority::max_requests::10$/m);
    assert.match(text, /^limited::high_priority::max_pending_requests::1024$/m);
  });
});


/** With one worker, what a worker does at the limit is certain: it has a connection, and waits or refuses. */
describe('max_connections in one worker', () => {
  let slowUpstream: Upstream;
  let echo: Awaited<ReturnType<typeof startEcho>>;
  let single: RunningProxy;

  before(async () => {
    slowUpstream = await startUpstream('C');
    echo = await startEcho();
    const one = { ...staticCluster('one', slowUpstream.port), circuit_breakers: { thresholds: [{ max_connections: 1 }] } };
    const tcpOne = { ...staticCluster('tcp_one', echo.port), circuit_breakers: { thresholds: [{ max_connections: 1 }] } };
    single = await startProxy(
      {
        admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
        static_resources: {
          listeners: [
            routesListener('ingress', [
              { match: { prefix: '/short/' }, route: { cluster: 'one', prefix_rewrite: '/', timeout: '0.3s' } },
              { match: { prefix: '/' }, route: { cluster: 'one' } },
            ]),
            {
              name: 'tcp',
              address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
              filter_chains: [{ filters: [{ name: 'envoy.filters.network.tcp_proxy', typed_config: {
                '@type': TCP_PROXY_TYPE,
                stat_prefix: 'tcp',
                cluster: 'tcp_one',
              } }] }],
            },
          ],
          clusters: [one, tcpOne],
        },
      },
      ['--concurrency', '1'],
    );
  });

  after(async () => {
    await single.stop();
    await slowUpstream.close();
    await new Promise((r) => echo.server.close(r));
  });

  it('ends a request whose route timeout fires while it waits for a connection, without sending it', async () => {
    const base = `http://127.0.0.1:${single.ports.get('ingress')}`;
    const long = httpRequest(`${base}/hold?key=long`, { agent: false });
    await waitFor('the first request upstream', () => (slowUpstream.held('long') === 1 ? true : undefined));
    const short = await httpRequest(`${base}/short/echo`, { agent: false });
    assert.equal(short.status, 504);
    assert.equal(short.body, 'upstream request timeout');
    slowUpstream.release('long');
    assert.equal((await long).status, 200);
    assert.equal(slowUpstream.hits, 1, 'the timed-out request never reached the upstream');
    assert.equal(slowUpstream.connections, 1);
    assert.equal(await statValue(single, 'cluster.one.upstream_cx_overflow'), 1);
    assert.equal(await statValue(single, 'cluster.one.upstream_rq_timeout'), 1);
  });

  it('refuses a TCP proxy connection over the limit (UO), keeping the one open', async () => {
    const port = single.ports.get('tcp')!;
    const first = connect(port, '127.0.0.1');
    first.write('ping');
    await new Promise((r) => first.once('data', r));
    const second = connect(port, '127.0.0.1');
    second.on('error', () => {});
    await new Promise((r) => second.once('close', r));
    assert.equal(await statValue(single, 'cluster.tcp_one.upstream_cx_overflow'), 1);
    first.write('still here');
    assert.equal(String(await new Promise((r) => first.once('data', r))), 'still here');
    first.destroy();
  });
});

describe('skip_pending_overflow_count_on_active_rq set false', () => {
  it('counts a max_requests refusal as a pending overflow too, as Envoy did before 1.38', async () => {
    const closed = staticCluster('closed', upstream.port) as any;
    closed.circuit_breakers = { thresholds: [{ max_requests: 0 }] };
    const old = await startProxy(
      {
        admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
        layered_runtime: { layers: [{ name: 'static', static_layer: { 'envoy.reloadable_features.skip_pending_overflow_count_on_active_rq': false } }] },
        static_resources: { listeners: [routesListener('ingress', [{ match: { prefix: '/' }, route: { cluster: 'closed' } }])], clusters: [closed] },
      },
      ['--concurrency', '1'],
    );
    assert.equal((await httpRequest(`http://127.0.0.1:${old.ports.get('ingress')}/`)).status, 503);
    assert.equal(await statValue(old, 'cluster.closed.upstream_rq_active_overflow'), 1);
    assert.equal(await statValue(old, 'cluster.closed.upstream_rq_pending_overflow'), 1);
  });
});
