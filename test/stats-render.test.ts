import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatDouble, formatG, formatG32, percentLabel } from '../admin/render/numbers.js';
import { renderPrometheus, segmentOrder } from '../admin/render/stats-prometheus.js';
import { configureTags, extractTags } from '../shared/stats/tags.js';
import { renderStatsJson } from '../admin/render/stats-json.js';
import { renderStatsText } from '../admin/render/stats-text.js';
import { select, SortedNames, parseStatsParams } from '../admin/stats-view.js';
import { MergedStats } from '../shared/stats/merged.js';
import { parseHostStatName } from '../shared/stats/scopes.js';
import { StatsStore } from '../shared/stats/store.js';

function merged(build: (s: StatsStore) => void): MergedStats {
  const store = new StatsStore();
  build(store);
  const m = new MergedStats();
  m.apply('w', store.takeDelta());
  m.completeInterval();
  return m;
}

const render = (m: MergedStats, query: string, fn = renderStatsText) => {
  const p = parseStatsParams(new Map(new URLSearchParams(query)));
  return [...fn(m, select(m, new SortedNames(m), p), p.histogramMode)].join('');
};

describe('number formats', () => {
  it('prints doubles as Envoy does (nan, shortest round-trip, e+16)', () => {
    assert.deepEqual([NaN, 205, 303.3333333333333, 1.05, 1e16].map(formatDouble), ['nan', '205', '303.3333333333333', '1.05', '1e+16']);
  });

  it('prints %g and %.32g like C', () => {
    assert.deepEqual([0.5, 1, 1800000, 3600000, 300000, 0.0001, 0.00001].map(formatG), ['0.5', '1', '1.8e+06', '3.6e+06', '300000', '0.0001', '1e-05']);
    assert.equal(formatG32(0.1), '0.10000000000000000555111512312578');
    assert.equal(formatG32(1800000), '1800000');
    assert.equal(formatG32(304.91803278688524), '304.91803278688524869721732102334');
    assert.deepEqual([0, 0.995, 0.999, 1].map(percentLabel), ['P0', 'P99.5', 'P99.9', 'P100']);
  });
});

describe('renderers', () => {
  const m = merged((s) => {
    s.textReadout('control_plane.identifier').set('cp "1"');
    s.counter('a.counter').inc(2);
    s.gauge('b.gauge').set(3);
    s.histogram('h1').record(200);
    s.histogram('h1').record(300);
    s.histogram('h1').record(300);
    s.histogram('never');
  });

  it('text: readouts, then counters and gauges, then histograms; detailed buckets', () => {
    assert.equal(
      render(m, ''),
      'control_plane.identifier: "cp "1""\na.counter: 2\nb.gauge: 3\n' +
        'h1: P0(205,205) P25(205,205) P50(303.3333333333333,303.3333333333333) P75(306.6666666666667,306.6666666666667) P90(306.6666666666667,306.6666666666667) P95(306.6666666666667,306.6666666666667) P99(306.6666666666667,306.6666666666667) P99.5(306.6666666666667,306.6666666666667) P99.9(306.6666666666667,306.6666666666667) P100(306.6666666666667,306.6666666666667)\n' +
        'never: No recorded values\n',
    );
    assert.match(render(m, 'filter=^h1$&histogram_buckets=detailed'), /^h1:\n {2}totals=200,10:1, 300,10:2\n {2}intervals=200,10:1, 300,10:2\n {2}summary=P0\(205,205\)/);
  });

  it('json: readouts as strings, and an unused histogram with null quantiles', () => {
    const doc = JSON.parse(render(m, 'format=json', renderStatsJson));
    assert.deepEqual(doc.stats[0], { name: 'control_plane.identifier', value: 'cp "1"' });
    const never = doc.stats[3].histograms.computed_quantiles.find((h: { name: string }) => h.name === 'never');
    assert.deepEqual(never.values[0], { cumulative: null, interval: null });
  });

  it('prometheus: text readouts only with text_readouts, as gauges with a text_value label', () => {
    const text = [...renderPrometheus(m, { summaries: false, textReadouts: true, usedOnly: false })].join('');
    assert.match(text, /^# TYPE envoy_control_plane_identifier gauge\nenvoy_control_plane_identifier\{text_value="cp \\"1\\""\} 0$/m);
    assert.doesNotMatch([...renderPrometheus(m, { summaries: false, textReadouts: false, usedOnly: false })].join(''), /text_value/);
    assert.match(text, /^envoy_h1_sum\{\} 814\.714/m);
  });
});

describe('tag extraction and ordering', () => {
  it('extracts Envoy\'s default tags', () => {
    assert.deepEqual(extractTags('http.admin.downstream_rq_404'), { extracted: 'http.downstream_rq', tags: [['envoy.response_code', '404'], ['envoy.http_conn_manager_prefix', 'admin']] });
    assert.deepEqual(extractTags('http.admin.downstream_rq_4xx'), { extracted: 'http.downstream_rq_xx', tags: [['envoy.response_code_class', '4'], ['envoy.http_conn_manager_prefix', 'admin']] });
    assert.deepEqual(extractTags('listener.127.0.0.1_10000.downstream_cx_total'), { extracted: 'listener.downstream_cx_total', tags: [['envoy.listener_address', '127.0.0.1_10000']] });
    assert.deepEqual(extractTags('cluster.svc.upstream_cx_total').extracted, 'cluster.upstream_cx_total');
  });

  it('reads stats_tags regexes as Envoy\'s std::regex does (ECMAScript: Istio\'s lookahead and POSIX class names)', () => {
    // Istio's bootstrap tag for a listener's connection manager prefix.
    const istio = '^listener(?=\\.).*?\\.http\\.(((?:[_.[:digit:]]*|[_\\[\\]aAbBcCdDeEfF[:digit:]]*))\\.)';
    configureTags([], { stats_tags: [{ tag_name: 'http_conn_manager_prefix', regex: istio }], use_all_default_tags: false });
    try {
      assert.deepEqual(extractTags('listener.0.0.0.0_15006.http.10.1.2.3_8080.downstream_rq_2xx'), {
        extracted: 'listener.0.0.0.0_15006.http.downstream_rq_2xx',
        tags: [['http_conn_manager_prefix', '10.1.2.3_8080']],
      });
      assert.deepEqual(extractTags('cluster.x.upstream_rq_total').tags, [], 'the lookahead needs listener.');
    } finally {
      configureTags([], undefined);
    }
  });

  it('orders names segment by segment', () => {
    assert.ok(segmentOrder('cluster.upstream_cx_total', 'cluster_manager.cluster_added') < 0);
    assert.ok(segmentOrder('a.b', 'a.b.c') < 0);
  });

  it('parses per-host stat names', () => {
    assert.deepEqual(parseHostStatName('_host.my.cluster.10.0.0.1:80.rq_total'), { cluster: 'my.cluster', address: '10.0.0.1:80', stat: 'rq_total' });
    assert.deepEqual(parseHostStatName('_host.c.[::1]:8080.cx_active'), { cluster: 'c', address: '[::1]:8080', stat: 'cx_active' });
  });
});
