import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { HCM_TYPE, ROUTER_TYPE } from './helpers/bootstraps.js';
import { promtoolFindings, promtoolMissing } from './helpers/promtool.js';
import { httpRequest, startProxy, stopAllProxies, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

let upstream: Upstream;
let proxy: RunningProxy;
const REQUESTS = 40;
const stats = (query = '') => httpRequest(`http://${proxy.admin}/stats${query}`);
const value = (body: string, name: string) => Number(new RegExp(`^${name.replace(/\./g, '\\.')}: (\\d+)$`, 'm').exec(body)?.[1]);

before(async () => {
  upstream = await startUpstream('U');
  proxy = await startProxy(
    {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      stats_flush_on_admin: true,
      static_resources: {
        listeners: [{
          name: 'web',
          address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
          filter_chains: [{ filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: {
            '@type': HCM_TYPE,
            stat_prefix: 'web',
            route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes: [
              { match: { prefix: '/direct' }, direct_response: { status: 202 } },
              { match: { prefix: '/' }, route: { cluster: 'backend' } },
            ] }] },
            http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } }],
          } }] }],
        }],
        clusters: [{ name: 'backend', type: 'STATIC', connect_timeout: '1s', load_assignment: { cluster_name: 'backend', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: upstream.port } } } }] }] } }],
      },
    },
    ['--concurrency', '2'],
  );
  await stats(); // a first flush, so the next one holds only the test's traffic
  const base = `http://127.0.0.1:${proxy.ports.get('web')}`;
  // A new connection per request: the kernel spreads them over both workers.
  for (let i = 0; i < REQUESTS; i++) await httpRequest(`${base}/${i % 4 === 0 ? 'direct' : 'ok'}`);
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
});

describe('/stats text', () => {
  it('adds up the figures of both workers', async () => {
    const body = (await stats()).body;
    assert.equal(value(body, 'http.web.downstream_rq_total'), REQUESTS);
    assert.equal(value(body, 'http.web.downstream_rq_2xx'), REQUESTS);
    assert.equal(value(body, 'http.web.rq_direct_response'), REQUESTS / 4);
    assert.equal(value(body, 'cluster.backend.upstream_rq_200'), (REQUESTS * 3) / 4);
    assert.equal(value(body, `listener.127.0.0.1_${proxy.ports.get('web')}.downstream_cx_total`), REQUESTS);
    assert.equal(value(body, 'cluster.backend.membership_total'), 1); // process-local: not added up
    // each upstream connection counted once (the upstream only ever talks to this proxy)
    assert.equal(value(body, 'cluster.backend.upstream_cx_total'), upstream.connections);
    assert.equal(value(body, 'server.concurrency'), 2);
    assert.equal(value(body, 'server.live'), 1);
  });

  it('sorts text readouts, then counters and gauges together, then histograms', async () => {
    const lines = (await stats()).body.trim().split('\n');
    const names = lines.map((l) => l.slice(0, l.indexOf(':')));
    const firstHistogram = lines.findIndex((l) => / P0\(/.test(l) || l.endsWith('No recorded values'));
    assert.ok(firstHistogram > 0);
    const scalars = names.slice(0, firstHistogram);
    assert.deepEqual(scalars, [...scalars].sort());
    assert.ok(lines.slice(firstHistogram).every((l) => / P0\(/.test(l) || l.endsWith('No recorded values')));
  });

  it('prints histograms as P0(interval,cumulative) … P100, with the interval of the last flush', async () => {
    await stats(); // stats_flush_on_admin: every read is a flush
    for (let i = 0; i < 3; i++) await httpRequest(`http://127.0.0.1:${proxy.ports.get('web')}/direct`);
    const line = (await stats('?filter=^http\\.web\\.downstream_rq_time$')).body.trim();
    assert.match(line, /^http\.web\.downstream_rq_time: P0\([\d.]+,[\d.]+\) P25\(.*\) P50\(.*\) P75\(.*\) P90\(.*\) P95\(.*\) P99\(.*\) P99\.5\(.*\) P99\.9\(.*\) P100\([\d.]+,[\d.]+\)$/);
    // nothing happened since that read (a flush): the interval is empty
    assert.match((await stats('?filter=^http\\.web\\.downstream_rq_time$')).body, /^http\.web\.downstream_rq_time: P0\(nan,[\d.]+\)/);
  });

  it('says No recorded values for a histogram never written', async () => {
    assert.match((await stats('?filter=server.initialization_time_ms')).body, /^server\.initialization_time_ms: P0/m);
    assert.match((await stats('?filter=^cluster\\.backend\\.upstream_rq_time$')).body, /P0\(/);
  });

  it('filters by RE2 regex: partial match unless anchored; usedonly; type', async () => {
    const partial = (await stats('?filter=rq_direct')).body.trim().split('\n');
    assert.deepEqual(partial, ['http.admin.rq_direct_response: 0', `http.web.rq_direct_response: ${REQUESTS / 4 + 3}`]);
    assert.equal((await stats('?filter=^rq_direct')).body, '');
    const used = (await stats('?usedonly&filter=^http\\.web\\.downstream_rq_[0-9]xx$')).body.trim();
    assert.equal(used, `http.web.downstream_rq_2xx: ${REQUESTS + 3}`);
    const gauges = (await stats('?type=Gauges&filter=^http\\.web\\.')).body.trim().split('\n');
    assert.deepEqual(gauges, [
      'http.web.downstream_cx_active: 0',
      'http.web.downstream_cx_http1_active: 0',
      'http.web.downstream_cx_http1_soft_drain: 0',
      'http.web.downstream_cx_http2_active: 0',
      'http.web.downstream_cx_http3_active: 0',
      'http.web.downstream_cx_rx_bytes_buffered: 0',
      'http.web.downstream_cx_ssl_active: 0',
      'http.web.downstream_cx_tx_bytes_buffered: 0',
      'http.web.downstream_cx_upgrades_active: 0',
      'http.web.downstream_rq_active: 0',
    ]);
  });

  it('shows histogram buckets, cumulative and disjoint', async () => {
    const cumulative = (await stats('?filter=^http\\.web\\.downstream_rq_time$&histogram_buckets=cumulative')).body;
    assert.match(cumulative, /^http\.web\.downstream_rq_time: B0\.5\(\d+,\d+\) B1\(\d+,\d+\) .* B1\.8e\+06\(\d+,43\) B3\.6e\+06\(\d+,43\)\n$/);
    const disjoint = (await stats('?filter=^http\\.web\\.downstream_rq_time$&histogram_buckets=disjoint')).body;
    const counts = [...disjoint.matchAll(/B[\d.e+]+\(\d+,(\d+)\)/g)].map((m) => Number(m[1]));
    assert.equal(counts.reduce((a, b) => a + b), REQUESTS + 3);
  });

  it('answers 400 with Envoy\'s usage lines for bad parameters', async () => {
    const bad = async (q: string) => {
      const r = await stats(q);
      return [r.status, r.body];
    };
    assert.deepEqual(await bad('?filter=*.test'), [400, 'Invalid re2 regex: missing argument to repetition operator: `*`']);
    assert.deepEqual(await bad('?histogram_buckets=weird'), [400, 'usage: /stats?histogram_buckets=(cumulative|disjoint|detailed|summary)\n']);
    assert.deepEqual(await bad('?type=counters'), [400, 'invalid &type= param']);
    assert.deepEqual(await bad('?format=xml'), [400, 'usage: /stats?format=(html|active-html|json|prometheus|text)\n\n']);
  });
});

describe('per-host figures', () => {
  it('are hidden stats: out of /stats and Prometheus, shown with hidden=include or only', async () => {
    const host = `127.0.0.1:${upstream.port}`;
    const only = (await stats('?hidden=only')).body;
    assert.match(only, new RegExp(`^_host\\.backend\\.${host.replace(/\./g, '\\.')}\\.rq_total: \\d+$`, 'm'));
    assert.match(only, new RegExp(`^_host\\.backend\\.${host.replace(/\./g, '\\.')}\\.rq_success: \\d+$`, 'm'));
    assert.match(only, new RegExp(`^_host\\.backend\\.${host.replace(/\./g, '\\.')}\\.cx_total: [1-9]\\d*$`, 'm'));
    assert.ok(only.split('\n').filter(Boolean).every((l) => l.startsWith('_host')));
    assert.doesNotMatch((await stats()).body, /^_host\./m);
    assert.doesNotMatch((await httpRequest(`http://${proxy.admin}/stats/prometheus`)).body, /^envoy__host|\b_host\./m);
    assert.match((await stats('?hidden=include&filter=^(_host|cluster\\.backend\\.upstream_cx_total)')).body, /^cluster\.backend\.upstream_cx_total: [1-9]/m);
  });
});

describe('/stats?format=json', () => {
  it('lists counters and gauges as name/value pairs, then the histograms\' quantiles (null for an empty interval)', async () => {
    const r = await stats('?format=json&filter=^http\\.web\\.(downstream_rq_total|downstream_rq_active|downstream_rq_time)$');
    assert.equal(r.headers['content-type'], 'application/json');
    const doc = JSON.parse(r.body);
    assert.deepEqual(doc.stats.slice(0, 2), [{ name: 'http.web.downstream_rq_active', value: 0 }, { name: 'http.web.downstream_rq_total', value: REQUESTS + 3 }]);
    const h = doc.stats[2].histograms;
    assert.deepEqual(h.supported_quantiles, [0, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 100]);
    assert.equal(h.computed_quantiles[0].name, 'http.web.downstream_rq_time');
    assert.equal(h.computed_quantiles[0].values.length, 10);
    assert.equal(h.computed_quantiles[0].values[0].interval, null); // the previous read flushed
    assert.equal(typeof h.computed_quantiles[0].values[0].cumulative, 'number');
  });

  it('gives histogram buckets as an array with histogram_buckets', async () => {
    const doc = JSON.parse((await stats('?format=json&filter=^http\\.web\\.downstream_rq_time$&histogram_buckets=cumulative')).body);
    const [h] = doc.stats[0].histograms;
    assert.equal(h.name, 'http.web.downstream_rq_time');
    assert.equal(h.buckets[h.buckets.length - 1].upper_bound, 3600000);
    assert.equal(h.buckets[h.buckets.length - 1].cumulative, REQUESTS + 3);
  });

  it('is {"stats":[]} when nothing matches', async () => {
    assert.equal((await stats('?format=json&filter=^nothing$')).body, '{"stats":[]}');
  });
});

describe('/stats/prometheus', () => {
  it('types each family once, extracts Envoy\'s tags into labels, and prints histogram buckets', async () => {
    const r = await httpRequest(`http://${proxy.admin}/stats/prometheus`);
    assert.equal(r.status, 200);
    const body = r.body;
    // The admin interface's own connection manager (http.admin.*) is in the family too, as in Envoy.
    assert.match(body, /^# TYPE envoy_http_downstream_rq_xx counter\n(envoy_http_downstream_rq_xx\{envoy_response_code_class="\d",envoy_http_conn_manager_prefix="admin"\} \d+\n){5}(envoy_http_downstream_rq_xx\{envoy_response_code_class="\d",envoy_http_conn_manager_prefix="web"\} \d+\n){5}/m);
    assert.match(body, /^envoy_cluster_upstream_rq\{envoy_response_code="200",envoy_cluster_name="backend"\} 30$/m);
    assert.match(body, /^envoy_server_live\{\} 1$/m);
    assert.match(body, /^# TYPE envoy_http_downstream_rq_time histogram\n(?:[^\n]*envoy_http_conn_manager_prefix="admin"[^\n]*\n)*envoy_http_downstream_rq_time_bucket\{envoy_http_conn_manager_prefix="web",le="0.5"\} \d+$/m);
    assert.match(body, /^envoy_http_downstream_rq_time_bucket\{envoy_http_conn_manager_prefix="web",le="\+Inf"\} 43\nenvoy_http_downstream_rq_time_sum\{envoy_http_conn_manager_prefix="web"\} [\d.]+\nenvoy_http_downstream_rq_time_count\{envoy_http_conn_manager_prefix="web"\} 43$/m);
    const types = [...body.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]);
    assert.equal(new Set(types).size, types.length, 'a family typed twice');
    assert.ok(types.indexOf('envoy_cluster_upstream_rq_total') < types.indexOf('envoy_cluster_manager_x') || !types.includes('envoy_cluster_manager_x'));
  });

  it('prints summaries with histogram_buckets=summary and refuses disjoint', async () => {
    const summary = (await httpRequest(`http://${proxy.admin}/stats/prometheus?histogram_buckets=summary&filter=downstream_rq_time`)).body;
    assert.match(summary, /^# TYPE envoy_http_downstream_rq_time summary\n(?:[^\n]*envoy_http_conn_manager_prefix="admin"[^\n]*\n)*envoy_http_downstream_rq_time\{envoy_http_conn_manager_prefix="web",quantile="0"\} (nan|[\d.]+)$/m);
    const disjoint = await httpRequest(`http://${proxy.admin}/stats/prometheus?histogram_buckets=disjoint`);
    assert.deepEqual([disjoint.status, disjoint.body], [400, 'unsupported prometheus histogram bucket mode']);
  });

  it('is what /stats?format=prometheus serves', async () => {
    const a = (await httpRequest(`http://${proxy.admin}/stats?format=prometheus&filter=^cluster`)).body;
    const b = (await httpRequest(`http://${proxy.admin}/stats/prometheus?filter=^cluster`)).body;
    assert.equal(a, b);
  });

  it('passes promtool check metrics', async (t) => {
    const missing = promtoolMissing();
    if (missing) {
      t.skip(missing);
      return;
    }
    assert.deepEqual(promtoolFindings((await httpRequest(`http://${proxy.admin}/stats/prometheus`)).body), []);
  });
});

describe('/stats/recentlookups', () => {
  const admin = (path: string, method = 'GET') => httpRequest(`http://${proxy.admin}${path}`, { method });
  const total = (body: string) => Number(/\ntotal: (\d+)\n$/.exec(body)?.[1]);

  it('counts lookups while tracking is off, lists names while on, and drops the list when turned off', async () => {
    const before = (await admin('/stats/recentlookups')).body;
    assert.match(before, /^Lookup tracking is not enabled\. Use \/stats\/recentlookups\/enable to enable\.\n\ntotal: \d+\n$/);
    assert.ok(total(before) > 0, 'start-up creates stats by name');
    assert.equal((await admin('/stats/recentlookups/enable')).status, 400);
    assert.equal((await admin('/stats/recentlookups/enable', 'POST')).body, 'OK\n');
    // A status code the cluster has not seen makes a worker look up upstream_rq_418 by name.
    await httpRequest(`http://127.0.0.1:${proxy.ports.get('web')}/status?code=418`);
    const on = (await admin('/stats/recentlookups')).body;
    assert.match(on, /^ {3}Count Lookup\n(?: {7}\d [^\n]+\n)*/);
    assert.match(on, /^ {7}1 cluster\.backend\.upstream_rq_418$/m);
    assert.ok(total(on) > total(before));
    assert.equal((await admin('/stats/recentlookups/disable', 'POST')).body, 'OK\n');
    const off = (await admin('/stats/recentlookups')).body;
    assert.match(off, /^Lookup tracking is not enabled/);
    assert.ok(total(off) >= total(on), 'the total keeps accumulating');
    assert.match((await stats('?filter=^server\\.stats_recent_lookups$')).body, /^server\.stats_recent_lookups: \d+$/m);
  });

  it('clears list and total with /clear, tracking or not', async () => {
    await admin('/stats/recentlookups/enable', 'POST');
    assert.equal((await admin('/stats/recentlookups/clear', 'POST')).body, 'OK\n');
    assert.equal((await admin('/stats/recentlookups')).body, '   Count Lookup\n\ntotal: 0\n');
    await admin('/stats/recentlookups/disable', 'POST');
  });
});

describe('/reset_counters', () => {
  it('zeroes every counter (POST only) and keeps gauges', async () => {
    assert.equal((await httpRequest(`http://${proxy.admin}/reset_counters`)).status, 400);
    assert.equal((await httpRequest(`http://${proxy.admin}/reset_counters`, { method: 'POST' })).body, 'OK\n');
    const body = (await stats('?filter=^(http\\.web\\.downstream_rq_total|server\\.concurrency)$')).body;
    assert.equal(body, 'http.web.downstream_rq_total: 0\nserver.concurrency: 2\n');
  });
});
