import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TrafficHistory } from '../admin/traffic-history.js';
import { MergedStats } from '../shared/stats/merged.js';
import { StatsStore } from '../shared/stats/store.js';

/**
 * The home page's series: rates from the tree's merged counters between flushes, the flush
 * interval's request-time quantiles, open connections; the admin's own traffic and the
 * listeners' per-worker copies left out; ten minutes kept.
 */

function tree() {
  const merged = new MergedStats();
  const workers = [new StatsStore(), new StatsStore()];
  const admin = new StatsStore();
  const flush = () => {
    workers.forEach((w, i) => merged.apply(`worker_${i}`, w.takeDelta()));
    merged.apply('admin', admin.takeDelta());
    merged.completeInterval();
  };
  return { merged, workers, admin, flush };
}

describe('traffic history', () => {
  it('turns counters into rates per second between flushes, summed over connection managers and workers', () => {
    const t = tree();
    const history = new TrafficHistory(t.merged, 1000);
    for (const w of t.workers) {
      w.counter('http.ingress.downstream_rq_total').inc(10);
      w.counter('http.other.downstream_rq_total').inc(5);
      w.counter('http.ingress.downstream_rq_5xx').inc(1);
    }
    t.admin.counter('http.admin.downstream_rq_total').inc(1000);
    t.flush();
    history.sample(10_000);
    assert.equal(history.series()[0]!.rps, null, 'no rate before a second point');
    t.workers[0]!.counter('http.ingress.downstream_rq_total').inc(40);
    t.workers[1]!.counter('http.other.downstream_rq_total').inc(20);
    t.workers[1]!.counter('http.ingress.downstream_rq_5xx').inc(4);
    t.admin.counter('http.admin.downstream_rq_total').inc(1000);
    t.flush();
    history.sample(12_000);
    const p = history.series()[1]!;
    assert.equal(p.rps, 30, '60 requests in 2 s; the admin\'s own left out');
    assert.equal(p.errors5xxPerSecond, 2);
  });

  it('takes the interval\'s p50 and p99 request time, and none in an interval without requests', () => {
    const t = tree();
    const history = new TrafficHistory(t.merged, 1000);
    const h = t.workers[0]!.histogram('http.ingress.downstream_rq_time');
    for (let i = 1; i <= 100; i++) h.record(i);
    t.admin.histogram('http.admin.downstream_rq_time').record(100_000);
    t.flush();
    history.sample(1000);
    const p = history.series()[0]!;
    assert.ok(p.p50Ms! >= 49 && p.p50Ms! <= 51, `p50 ${p.p50Ms}`);
    assert.ok(p.p99Ms! >= 98 && p.p99Ms! <= 100, `p99 ${p.p99Ms}`);
    t.flush();
    history.sample(2000);
    assert.equal(history.series()[1]!.p50Ms, null);
  });

  it('counts open connections on every listener once, not the admin\'s nor the per-worker copies', () => {
    const t = tree();
    const history = new TrafficHistory(t.merged, 1000);
    for (const w of t.workers) {
      w.gauge('listener.127.0.0.1_8080.downstream_cx_active').set(3);
      w.gauge('listener.127.0.0.1_8080.worker_0.downstream_cx_active').set(3);
      w.gauge('listener.[__1]_9000.downstream_cx_active').set(1);
    }
    t.admin.gauge('listener.admin.downstream_cx_active').set(7);
    t.flush();
    history.sample(1000);
    assert.equal(history.series()[0]!.connections, 8);
  });

  it('after /reset_counters, counts what came since rather than a negative rate', () => {
    const t = tree();
    const history = new TrafficHistory(t.merged, 1000);
    const c = t.workers[0]!.counter('http.ingress.downstream_rq_total');
    c.inc(100);
    t.flush();
    history.sample(1000);
    t.merged.resetCounters();
    c.inc(5);
    t.flush();
    history.sample(2000);
    assert.equal(history.series()[1]!.rps, 5);
  });

  it('keeps ten minutes of points', () => {
    const t = tree();
    const history = new TrafficHistory(t.merged, 5000);
    for (let i = 0; i < 200; i++) {
      t.flush();
      history.sample(i * 5000);
    }
    const s = history.series();
    assert.equal(s.length, 120);
    assert.equal(s[s.length - 1]!.at - s[0]!.at, 119 * 5000);
  });
});
