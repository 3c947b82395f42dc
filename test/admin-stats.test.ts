import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { httpRequest, startProxy, stopAllProxies, type RunningProxy } from './helpers/proxy.js';

/**
 * The admin interface counts its own traffic as Envoy's does: `http.admin.*` (its connection
 * manager's stat prefix) and `listener.admin.*`, reset by /reset_counters and still listed
 * under usedonly afterwards.
 */

let proxy: RunningProxy;

before(async () => {
  proxy = await startProxy(
    {
      // Every stats read flushes, so the histogram's interval holds the requests before it.
      stats_flush_on_admin: true,
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: { listeners: [], clusters: [] },
    },
    ['--concurrency', '1'],
  );
});

after(() => stopAllProxies());

const stat = async (name: string, query = ''): Promise<string | undefined> => {
  const body = (await httpRequest(`http://${proxy.admin}/stats?filter=${encodeURIComponent(`^${name.replace(/\./g, '\\.')}$`)}${query}`)).body;
  return /: (.*)$/m.exec(body)?.[1];
};

describe('admin traffic', () => {
  it('is counted in http.admin.* and listener.admin.*: requests, their classes and time, connections', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await httpRequest(`http://${proxy.admin}/ready`)).status, 200);
    assert.equal((await httpRequest(`http://${proxy.admin}/no-such-page`)).status, 404);
    assert.ok(Number(await stat('http.admin.downstream_rq_total')) >= 4);
    assert.ok(Number(await stat('http.admin.downstream_rq_2xx')) >= 3);
    assert.equal(await stat('http.admin.downstream_rq_4xx'), '1');
    assert.equal(await stat('listener.admin.http.admin.downstream_rq_4xx'), '1', "the connection manager's figures on its listener");
    const prometheus = (await httpRequest(`http://${proxy.admin}/stats/prometheus`)).body;
    assert.match(prometheus, /^envoy_listener_admin_http_downstream_rq_xx\{envoy_response_code_class="4",envoy_http_conn_manager_prefix="admin"\} 1$/m, "as a real Envoy's admin shows it");
    assert.ok(Number(await stat('http.admin.downstream_cx_total')) >= 4);
    assert.ok(Number(await stat('listener.admin.downstream_cx_total')) >= 4);
    assert.match(String(await stat('http.admin.downstream_rq_time')), /^P0\(/, "Envoy's ten quantiles once requests are recorded");
    const buckets = String(await stat('http.admin.downstream_rq_time', '&histogram_buckets=cumulative'));
    assert.equal(buckets.split(' ').length, 19, "Envoy's 19 default buckets");
  });

  it('is zeroed by /reset_counters, and its counters stay listed under usedonly', async () => {
    assert.equal((await httpRequest(`http://${proxy.admin}/reset_counters`, { method: 'POST' })).status, 200);
    assert.equal(await stat('http.admin.downstream_rq_4xx', '&usedonly'), '0');
  });
});

describe('tags (Prometheus labels)', () => {
  it('carry --stats-tag and stats_config fixed tags first, then regex extractors, and no default extractor with use_all_default_tags: false', async () => {
    const tagged = await startProxy(
      {
        admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
        stats_config: {
          use_all_default_tags: false,
          stats_tags: [
            { tag_name: 'team', fixed_value: 'edge' },
            { tag_name: 'my_cluster', regex: '^cluster\\.((.+?)\\.)' },
          ],
        },
        static_resources: { listeners: [], clusters: [{ name: 'backend', type: 'STATIC', connect_timeout: '1s', load_assignment: { cluster_name: 'backend', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: 1 } } } }] }] } }] },
      },
      ['--concurrency', '1', '--stats-tag', 'region:eu1'],
    );
    const body = (await httpRequest(`http://${tagged.admin}/stats/prometheus`)).body;
    assert.match(body, /^envoy_cluster_upstream_rq_total\{region="eu1",team="edge",my_cluster="backend"\} 0$/m);
    assert.match(body, /^envoy_http_admin_downstream_rq_total\{region="eu1",team="edge"\} \d+$/m, 'no default extractor took the prefix out');
    const info = JSON.parse((await httpRequest(`http://${tagged.admin}/server_info`)).body) as { command_line_options: { stats_tag: string[] } };
    assert.deepEqual(info.command_line_options.stats_tag, ['region:eu1']);
  });
});

describe('stats_config.stats_matcher', () => {
  const bootstrap = (statsMatcher: object) => ({
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    stats_config: { stats_matcher: statsMatcher },
    static_resources: { listeners: [], clusters: [{ name: 'backend', type: 'STATIC', connect_timeout: '1s', load_assignment: { cluster_name: 'backend', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: 1 } } } }] }] } }] },
  });
  const names = async (p: RunningProxy) => (await httpRequest(`http://${p.admin}/stats`)).body.split('\n').filter(Boolean).map((l) => l.slice(0, l.indexOf(':')));

  it('leaves out what an exclusion list matches, keeps only what an inclusion list matches, and everything with reject_all', async () => {
    const excluding = await startProxy(bootstrap({ exclusion_list: { patterns: [{ prefix: 'cluster.' }] } }), ['--concurrency', '1']);
    const excluded = await names(excluding);
    assert.ok(excluded.some((n) => n.startsWith('server.')) && !excluded.some((n) => n.startsWith('cluster.')), 'no cluster.* statistic');
    const including = await startProxy(bootstrap({ inclusion_list: { patterns: [{ prefix: 'cluster.backend.' }, { exact: 'server.live' }] } }), ['--concurrency', '1']);
    const included = await names(including);
    assert.ok(included.length > 1 && included.every((n) => n.startsWith('cluster.backend.') || n === 'server.live'), included.join(', '));
    const rejecting = await startProxy(bootstrap({ reject_all: true }), ['--concurrency', '1']);
    assert.deepEqual(await names(rejecting), []);
    assert.match((await httpRequest(`http://${rejecting.admin}/clusters`)).body, /^backend::127\.0\.0\.1:1::cx_active::0$/m, '/clusters keeps its per-host figures');
  });
});

describe('stats_config.histogram_bucket_settings', () => {
  it('gives the histograms it matches their own bucket bounds, in the text, JSON and Prometheus views', async () => {
    const p = await startProxy(
      {
        stats_flush_on_admin: true,
        admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
        stats_config: { histogram_bucket_settings: [{ match: { prefix: 'http.admin.downstream_rq_time' }, buckets: [100, 1, 10] }] },
        static_resources: { listeners: [], clusters: [] },
      },
      ['--concurrency', '1'],
    );
    await httpRequest(`http://${p.admin}/ready`);
    const text = (await httpRequest(`http://${p.admin}/stats?filter=^http\\.admin\\.downstream_rq_time$&histogram_buckets=cumulative`)).body;
    assert.match(text, /^http\.admin\.downstream_rq_time: B1\(\d+,\d+\) B10\(\d+,\d+\) B100\(\d+,\d+\)$/m);
    const prometheus = (await httpRequest(`http://${p.admin}/stats/prometheus?filter=downstream_rq_time`)).body;
    const les = [...prometheus.matchAll(/^envoy_http_downstream_rq_time_bucket\{envoy_http_conn_manager_prefix="admin",le="([^"]+)"\}/gm)].map((m) => m[1]);
    assert.deepEqual(les, ['1', '10', '100', '+Inf']);
    const other = (await httpRequest(`http://${p.admin}/stats?filter=^server\\.initialization_time_ms$&histogram_buckets=cumulative`)).body;
    assert.equal(other.trim().split(' ').length - 1, 19, 'the others keep the default 19');
  });
});
