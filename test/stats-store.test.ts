import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { binKey, quantiles } from '../shared/stats/histogram.js';
import { MergedStats } from '../shared/stats/merged.js';
import { StatsStore } from '../shared/stats/store.js';

describe('per-process stats store', () => {
  it('returns the same stat for the same name, and refuses a name of another kind', () => {
    const store = new StatsStore();
    assert.equal(store.counter('a.b'), store.counter('a.b'));
    assert.throws(() => store.gauge('a.b'), /stat 'a\.b' is a counter, not a gauge/);
  });

  it('announces new stats once, then only what changed', () => {
    const store = new StatsStore();
    const c = store.counter('c');
    const g = store.gauge('g');
    store.histogram('h');
    const first = store.takeDelta();
    assert.deepEqual(first.counters, [['c', 0]]);
    assert.deepEqual(first.gauges, [['g', 0, false, 'accumulate']]);
    assert.deepEqual(first.histograms, [['h', []]]);
    assert.deepEqual(store.takeDelta(), { lookups: 0, recentLookups: [], counters: [], gauges: [], histograms: [], textReadouts: [] });
    c.inc();
    c.inc(2);
    g.set(7);
    const second = store.takeDelta();
    assert.deepEqual(second.counters, [['c', 3]]);
    assert.deepEqual(second.gauges, [['g', 7, true, 'accumulate']]);
    assert.equal(c.value, 3);
  });

  it('queues a changed stat once however often it changes', () => {
    const store = new StatsStore();
    const c = store.counter('c');
    store.takeDelta();
    for (let i = 0; i < 1000; i++) c.inc();
    assert.equal(store.changed.length, 1);
  });
});

describe('merged stats (the admin process)', () => {
  it('adds counters and sums the latest gauge of each process', () => {
    const merged = new MergedStats();
    const w0 = new StatsStore();
    const w1 = new StatsStore();
    w0.counter('http.x.downstream_rq_total').inc(3);
    w1.counter('http.x.downstream_rq_total').inc(4);
    w0.gauge('http.x.downstream_rq_active').set(2);
    w1.gauge('http.x.downstream_rq_active').set(5);
    merged.apply('worker_0', w0.takeDelta());
    merged.apply('worker_1', w1.takeDelta());
    w1.gauge('http.x.downstream_rq_active').set(1);
    merged.apply('worker_1', w1.takeDelta());
    assert.equal(merged.counters.get('http.x.downstream_rq_total')!.value, 7);
    assert.equal(merged.gaugeValue('http.x.downstream_rq_active'), 3);
  });

  it('does not add up process-local gauges', () => {
    const merged = new MergedStats();
    for (const source of ['worker_0', 'worker_1']) {
      const w = new StatsStore();
      w.gauge('cluster.c.membership_total', 'local').set(3);
      merged.apply(source, w.takeDelta());
    }
    assert.equal(merged.gaugeValue('cluster.c.membership_total'), 3);
  });

  it('keeps counters across a replaced process, and resets them on request', () => {
    const merged = new MergedStats();
    const old = new StatsStore();
    old.counter('c').inc(5);
    merged.apply('worker_0', old.takeDelta());
    const replacement = new StatsStore();
    replacement.counter('c').inc(1);
    merged.apply('worker_0', replacement.takeDelta());
    assert.equal(merged.counters.get('c')!.value, 6);
    merged.resetCounters();
    assert.deepEqual(merged.counters.get('c'), { value: 0, used: true });
  });

  it('merges histograms into cumulative and interval parts at each flush', () => {
    const merged = new MergedStats();
    const w0 = new StatsStore();
    const w1 = new StatsStore();
    w0.histogram('h').record(200);
    w1.histogram('h').record(300);
    w1.histogram('h').record(300);
    merged.apply('worker_0', w0.takeDelta());
    merged.apply('worker_1', w1.takeDelta());
    merged.completeInterval();
    const h = merged.histograms.get('h')!;
    assert.deepEqual(quantiles(h.interval, [0, 0.5, 1]), [205, 303.3333333333333, 306.6666666666667]);
    w0.histogram('h').record(100);
    merged.apply('worker_0', w0.takeDelta());
    merged.completeInterval();
    assert.deepEqual([...h.interval], [[binKey(100), 1]]);
    assert.equal([...h.cumulative.values()].reduce((a, b) => a + b), 4);
    merged.completeInterval();
    assert.ok(quantiles(h.interval, [0.5]).every(Number.isNaN)); // no samples in the last interval
  });
});
