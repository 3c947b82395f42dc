import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { percentageOfTimeout } from '../shared/stats/cluster-optional-stats.js';
import { routesListener, staticCluster } from './helpers/bootstraps.js';
import { promtoolFindings, promtoolMissing } from './helpers/promtool.js';
import { httpRequest, startProxy, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';

/**
 * Cluster.track_cluster_stats (and the deprecated track_timeout_budgets), as Envoy's router and
 * upstream request record them: the timeout budget histograms (router_test's
 * TimeoutBudgetHistogramStat*) and the request/response size histograms, with a real client and
 * a real upstream, read from the admin's Prometheus output.
 */

describe('percentageOfTimeout', () => {
  it('is whole percent of the timeout, none of an infinite one', () => {
    // router_test: 80 ms of a 400 ms timeout is 20, of a 200 ms per-try timeout 40.
    assert.equal(percentageOfTimeout(80, 400), 20);
    assert.equal(percentageOfTimeout(80, 200), 40);
    assert.equal(percentageOfTimeout(80.9, 200), 40);
    assert.equal(percentageOfTimeout(500, 200), 250);
    assert.equal(percentageOfTimeout(500, 0), 0);
  });
});

describe('track_cluster_stats', () => {
  let upstream: Server;
  let proxy: RunningProxy;
  /** What the upstream was sent, for the last request: its headers, as received. */
  let lastRaw: string[] = [];
  let upstreamPort = 0;

  before(async () => {
    upstream = createServer((req, res) => {
      lastRaw = req.rawHeaders;
      const url = new URL(req.url ?? '/', 'http://x');
      req.resume();
      req.on('end', () => {
        const reply = () => {
          res.setHeader('x-answer', 'yes');
          res.end('z'.repeat(Number(url.searchParams.get('n') ?? 10)));
        };
        if (url.pathname === '/never') return;
        const delay = Number(url.searchParams.get('delay') ?? 0);
        if (delay) setTimeout(reply, delay);
        else reply();
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const port = (upstream.address() as { port: number }).port;
    upstreamPort = port;
    const route = (prefix: string, cluster: string, extra: object = {}) => ({ match: { prefix }, route: { cluster, ...extra } });
    proxy = await startProxy({
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [routesListener('web', [
          route('/budget', 'budgets', { timeout: '4s', retry_policy: { per_try_timeout: '1s' } }),
          route('/never', 'budgets', { timeout: '0.3s' }),
          route('/infinite', 'budgets', { timeout: '0s' }),
          route('/sizes', 'sizes'),
          route('/deprecated', 'deprecated', { timeout: '4s' }),
          route('/plain', 'plain'),
          route('/endpoints', 'endpoints'),
        ])],
        clusters: [
          { ...staticCluster('budgets', port), track_cluster_stats: { timeout_budgets: true } },
          { ...staticCluster('sizes', port), track_cluster_stats: { request_response_sizes: true } },
          { ...staticCluster('deprecated', port), track_timeout_budgets: true },
          staticCluster('plain', port),
          {
            ...staticCluster('endpoints', port),
            track_cluster_stats: { per_endpoint_stats: true },
            load_assignment: { cluster_name: 'endpoints', endpoints: [{ lb_endpoints: [{ endpoint: { hostname: 'backend.internal', address: { socket_address: { address: '127.0.0.1', port_value: port } } } }] }] },
          },
        ],
      },
    }, ['--concurrency', '1']);
  });

  after(async () => {
    await stopAllProxies();
    upstream.close();
    upstream.closeAllConnections();
  });

  const url = (path: string) => `http://127.0.0.1:${proxy.ports.get('web')}${path}`;
  const prometheus = async () => (await httpRequest(`http://${proxy.admin}/stats?format=prometheus`)).body;
  /** A histogram's bucket counts and sample count for one cluster, once it has `count` samples. */
  async function histogram(name: string, cluster: string, count: number) {
    return waitFor(`${name} of ${cluster} with ${count} samples`, async () => {
      const body = await prometheus();
      const labels = `envoy_cluster_name="${cluster}"`;
      const total = Number(new RegExp(`^envoy_cluster_${name}_count\\{${labels}\\} (\\d+)$`, 'm').exec(body)?.[1] ?? -1);
      if (total !== count) return undefined;
      const le = (bound: string) => Number(new RegExp(`^envoy_cluster_${name}_bucket\\{${labels},le="${bound}"\\} (\\d+)$`, 'm').exec(body)?.[1]);
      const sum = Number(new RegExp(`^envoy_cluster_${name}_sum\\{${labels}\\} ([\\d.e+]+)$`, 'm').exec(body)?.[1]);
      return { le, sum };
    });
  }

  it('records the share of the route timeout and of the per-try timeout a response took', async () => {
    const r = await httpRequest(url('/budget?delay=400'));
    assert.equal(r.status, 200);
    // 400 ms of a 1 s per-try timeout: at least 40 % (never 25 % or less), at most all of it.
    const perTry = await histogram('upstream_rq_timeout_budget_per_try_percent_used', 'budgets', 1);
    assert.deepEqual([perTry.le('25'), perTry.le('100')], [0, 1]);
    // Of the 4 s route timeout: at least 10 %.
    const global = await histogram('upstream_rq_timeout_budget_percent_used', 'budgets', 1);
    assert.deepEqual([global.le('5'), global.le('100')], [0, 1]);
  });

  it('a route timeout uses all of its budget; an infinite timeout none of it', async () => {
    const timedOut = await httpRequest(url('/never'));
    assert.equal(timedOut.status, 504);
    const global = await histogram('upstream_rq_timeout_budget_percent_used', 'budgets', 2);
    // Buckets are cumulative: only the first request's sample (about 10 %) is at or below 50.
    assert.equal(global.le('50'), 1, 'the timeout took at least its whole budget');
    // The try that timed out had no per-try timeout: 0 % of an infinite one.
    const perTry = await histogram('upstream_rq_timeout_budget_per_try_percent_used', 'budgets', 2);
    assert.equal(perTry.le('0.5'), 1);
    assert.equal((await httpRequest(url('/infinite?delay=50'))).status, 200);
    const after = await histogram('upstream_rq_timeout_budget_percent_used', 'budgets', 3);
    assert.equal(after.le('0.5'), 1);
  });

  it('track_timeout_budgets, deprecated, keeps the same histograms', async () => {
    assert.equal((await httpRequest(url('/deprecated?delay=250'))).status, 200);
    const global = await histogram('upstream_rq_timeout_budget_percent_used', 'deprecated', 1);
    assert.deepEqual([global.le('5'), global.le('100')], [0, 1]);
  });

  it("records the request's and response's header bytes and counts, and their bodies' bytes", async () => {
    const body = 'b'.repeat(1234);
    const r = await httpRequest(url('/sizes/echo?n=5000'), { method: 'POST', body, headers: { 'x-one': 'value-one', 'content-type': 'text/plain' } });
    assert.equal(r.status, 200);
    assert.equal(r.body.length, 5000);
    // Envoy's byteSize: every header's name and value, with :method, :path, :scheme and :authority for host.
    let size = ':method'.length + 4 + ':path'.length + '/sizes/echo?n=5000'.length + ':scheme'.length + 4;
    for (let i = 0; i < lastRaw.length; i += 2) size += (lastRaw[i]!.toLowerCase() === 'host' ? ':authority'.length : lastRaw[i]!.length) + lastRaw[i + 1]!.length;
    const near = (got: number, want: number) => assert.ok(Math.abs(got - want) <= want * 0.1, `${got} is not near ${want}`);
    near((await histogram('upstream_rq_headers_size', 'sizes', 1)).sum, size);
    near((await histogram('upstream_rq_headers_count', 'sizes', 1)).sum, lastRaw.length / 2 + 3);
    near((await histogram('upstream_rq_body_size', 'sizes', 1)).sum, 1234);
    near((await histogram('upstream_rs_body_size', 'sizes', 1)).sum, 5000);
    // :status, date, connection (keep-alive), keep-alive, x-answer, content-length: Node's answer.
    const rsCount = (await histogram('upstream_rs_headers_count', 'sizes', 1)).sum;
    assert.ok(rsCount >= 4 && rsCount <= 8, `${rsCount} response headers`);
    assert.ok((await histogram('upstream_rs_headers_size', 'sizes', 1)).sum > 'x-answer'.length + 3);
    // No budget figures for a cluster that asked for sizes only.
    assert.doesNotMatch(await prometheus(), /timeout_budget[^\n]*envoy_cluster_name="sizes"/);
  });

  it('counts a streamed (chunked) request body as it went upstream', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const rq = request(url('/sizes/stream'), { method: 'POST', headers: { 'transfer-encoding': 'chunked' } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      rq.on('error', reject);
      rq.write('a'.repeat(3000));
      setImmediate(() => rq.end('b'.repeat(3000)));
    });
    assert.equal(status, 200);
    const h = await histogram('upstream_rq_body_size', 'sizes', 2);
    assert.ok(Math.abs(h.sum - 7234) <= 7234 * 0.1, `${h.sum} is not near 1234 + 6000`);
  });

  it('a cluster that tracks nothing has none of these histograms', async () => {
    assert.equal((await httpRequest(url('/plain'))).status, 200);
    assert.doesNotMatch(await prometheus(), /(timeout_budget|_headers_size|_body_size)[^\n]*envoy_cluster_name="plain"/);
  });

  it('per_endpoint_stats: each host\'s figures in /stats and Prometheus, tagged with its cluster, address and hostname', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await httpRequest(url('/endpoints'))).status, 200);
    const address = `127.0.0.1:${upstreamPort}`;
    const name = `cluster.endpoints.endpoint.127.0.0.1_${upstreamPort}`;
    const text = await waitFor('rq_total 3 in /stats', async () => {
      const body = (await httpRequest(`http://${proxy.admin}/stats`)).body;
      return body.includes(`${name}.rq_total: 3\n`) ? body : undefined;
    });
    for (const line of ['cx_connect_fail: 0', 'cx_total: 1', 'rq_error: 0', 'rq_success: 3', 'rq_timeout: 0', 'cx_active: 1', 'rq_active: 0', 'healthy: 1']) {
      assert.ok(text.includes(`${name}.${line}\n`), `${name}.${line}`);
    }
    // After the counters and gauges, before the histograms (Envoy's renderPerHostMetrics).
    assert.ok(text.indexOf(`${name}.rq_total`) > text.indexOf('server.uptime'));
    assert.ok(text.indexOf(`${name}.rq_total`) < text.indexOf('cluster.budgets.upstream_rq_timeout_budget'));
    // Only the cluster that asked has them.
    assert.doesNotMatch(text, /cluster\.plain\.endpoint\./);
    const filtered = (await httpRequest(`http://${proxy.admin}/stats?filter=endpoint\\.&type=Gauges`)).body;
    assert.deepEqual(filtered.trim().split('\n').sort(), [`${name}.cx_active: 1`, `${name}.healthy: 1`, `${name}.rq_active: 0`]);
    const json = JSON.parse((await httpRequest(`http://${proxy.admin}/stats?format=json&filter=endpoint.*rq_success`)).body) as { stats: { name: string; value: number }[] };
    assert.deepEqual(json.stats, [{ name: `${name}.rq_success`, value: 3 }]);
    const prom = await prometheus();
    const labels = `envoy_cluster_name="endpoints",envoy_endpoint_address="${address}",envoy_endpoint_hostname="backend.internal"`;
    assert.match(prom, new RegExp(`# TYPE envoy_cluster_endpoint_rq_total counter\\nenvoy_cluster_endpoint_rq_total\\{${labels}\\} 3\\n`));
    if (!promtoolMissing()) assert.deepEqual(promtoolFindings(prom), []);
    assert.match(prom, new RegExp(`# TYPE envoy_cluster_endpoint_healthy gauge\\nenvoy_cluster_endpoint_healthy\\{${labels}\\} 1\\n`));
  });
});
