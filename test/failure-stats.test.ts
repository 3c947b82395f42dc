import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { routesListener, staticCluster } from './helpers/bootstraps.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';
import { closedPort, startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * Issue 39: requests the router fails itself are counted as Envoy's router counts them
 * (router.cc's chargeUpstreamCode: upstream_rq_<code>, its class and upstream_rq_completed, also
 * under external.), and the connection manager and listener count the reply as any other; a
 * connection attempt is in upstream_cx_total from the moment the pool makes it (conn_pool_base.cc),
 * and one that fails is counted once in upstream_cx_connect_fail and destroyed. Before, a cluster
 * that failed every request read 0 % errors on every dashboard.
 */

let upstream: Upstream;
let proxy: RunningProxy;
let port: number;

const stat = (name: string) => statValue(proxy, name);

/** Each code figure of a cluster, for one status. */
async function codes(cluster: string, status: number): Promise<Record<string, number>> {
  const p = `cluster.${cluster}.`;
  const klass = `${Math.floor(status / 100)}xx`;
  return {
    code: await stat(`${p}upstream_rq_${status}`),
    klass: await stat(`${p}upstream_rq_${klass}`),
    completed: await stat(`${p}upstream_rq_completed`),
    externalCode: await stat(`${p}external.upstream_rq_${status}`),
    externalCompleted: await stat(`${p}external.upstream_rq_completed`),
  };
}

before(async () => {
  upstream = await startUpstream('up');
  const refused = await closedPort();
  const route = (prefix: string, cluster: string, extra: object = {}) => ({ match: { prefix }, route: { cluster, ...extra } });
  proxy = await startProxy(
    {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [
          routesListener('edge', [
            route('/refused', 'refused'),
            route('/retried', 'retried', { retry_policy: { retry_on: 'connect-failure', num_retries: 2 } }),
            route('/slow/', 'slow', { timeout: '0.2s', prefix_rewrite: '/' }),
            route('/narrow/', 'narrow', { prefix_rewrite: '/' }),
            route('/empty', 'empty'),
          ]),
        ],
        clusters: [
          staticCluster('refused', refused),
          staticCluster('retried', refused),
          staticCluster('slow', upstream.port),
          { ...staticCluster('narrow', upstream.port), circuit_breakers: { thresholds: [{ max_requests: 1 }] } },
          { name: 'empty', type: 'STATIC', connect_timeout: '1s', load_assignment: { cluster_name: 'empty', endpoints: [] } },
        ],
      },
    },
    ['--concurrency', '1'],
  );
  port = proxy.ports.get('edge')!;
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
});

describe('requests the router fails itself', () => {
  it('a refused connection: 503 UF in the code figures, the attempt in upstream_cx_total, its failure once', async () => {
    const r = await httpRequest(`http://127.0.0.1:${port}/refused`);
    assert.equal(r.status, 503);
    assert.deepEqual(await codes('refused', 503), { code: 1, klass: 1, completed: 1, externalCode: 1, externalCompleted: 1 });
    assert.equal(await stat('cluster.refused.upstream_cx_total'), 1);
    assert.equal(await stat('cluster.refused.upstream_cx_connect_fail'), 1);
    assert.equal(await stat('cluster.refused.upstream_cx_destroy'), 1);
    assert.equal(await stat('cluster.refused.upstream_cx_active'), 0);
    assert.equal(await stat('cluster.refused.upstream_rq_pending_failure_eject'), 1);
  });

  it('a connect failure retried twice: three attempts, three failures, one request answered 503', async () => {
    const r = await httpRequest(`http://127.0.0.1:${port}/retried`);
    assert.equal(r.status, 503);
    assert.equal(await stat('cluster.retried.upstream_cx_total'), 3);
    assert.equal(await stat('cluster.retried.upstream_cx_connect_fail'), 3);
    assert.equal(await stat('cluster.retried.upstream_rq_retry'), 2);
    assert.deepEqual(await codes('retried', 503), { code: 1, klass: 1, completed: 1, externalCode: 1, externalCompleted: 1 });
  });

  it('a route timeout: 504 UT in the code figures and upstream_rq_timeout', async () => {
    const r = await httpRequest(`http://127.0.0.1:${port}/slow/hold?key=never`);
    assert.equal(r.status, 504);
    assert.deepEqual(await codes('slow', 504), { code: 1, klass: 1, completed: 1, externalCode: 1, externalCompleted: 1 });
    assert.equal(await stat('cluster.slow.upstream_rq_timeout'), 1);
  });

  it('an overflow of max_requests: 503 UO in the code figures', async () => {
    const held = httpRequest(`http://127.0.0.1:${port}/narrow/hold?key=narrow`);
    await waitFor('the first request to be held upstream', () => upstream.held('narrow') === 1 || undefined);
    const r = await httpRequest(`http://127.0.0.1:${port}/narrow/`);
    assert.equal(r.status, 503);
    upstream.release('narrow');
    assert.equal((await held).status, 200);
    const figures = await codes('narrow', 503);
    assert.equal(figures.code, 1);
    assert.equal(figures.klass, 1);
    assert.equal(await stat('cluster.narrow.upstream_rq_completed'), 2, 'the overflow and the response that came');
    assert.equal(await stat('cluster.narrow.upstream_rq_200'), 1);
  });

  it('no healthy host: 503 UH in the code figures', async () => {
    const r = await httpRequest(`http://127.0.0.1:${port}/empty`);
    assert.equal(r.status, 503);
    assert.deepEqual(await codes('empty', 503), { code: 1, klass: 1, completed: 1, externalCode: 1, externalCompleted: 1 });
    assert.equal(await stat('cluster.empty.upstream_cx_none_healthy'), 1);
    assert.equal(await stat('cluster.empty.upstream_cx_total'), 0);
  });

  it("are counted by the connection manager and the listener as the replies they are", async () => {
    // 503 ×4 (refused, retried, narrow, empty) and 504 ×1 so far.
    assert.equal(await stat('http.edge.downstream_rq_5xx'), 5);
    assert.equal(await stat(`listener.127.0.0.1_${port}.http.edge.downstream_rq_5xx`), 5);
    assert.equal(await stat('http.edge.downstream_rq_completed'), 6);
  });
});
