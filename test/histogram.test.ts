import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addBins, approximateSum, binBounds, binKey, countBelow, quantiles, sampleCount, SUPPORTED_QUANTILES, type Bins } from '../shared/stats/histogram.js';

function record(values: number[]): Bins {
  const bins: Bins = new Map();
  for (const v of values) addBins(bins, [[binKey(v), 1]]);
  return bins;
}

describe('log-linear histogram (Envoy / libcircllhist semantics)', () => {
  it('puts values in bins of two significant digits', () => {
    for (const [value, lower, width] of [
      [200, 200, 10], [300, 300, 10], [5, 5, 0.1], [1234, 1200, 100], [99, 99, 1], [100, 100, 10], [10, 10, 1], [0.5, 0.5, 0.01], [1e6, 1e6, 1e5], [999999, 990000, 10000], [5.1, 5.1, 0.1], [0.29, 0.29, 0.01],
    ] as const) {
      assert.deepEqual(binBounds(binKey(value)), { lower, width }, `bin of ${value}`);
    }
    assert.deepEqual(binBounds(binKey(0)), { lower: 0, width: 0 });
    assert.ok(binKey(99) < binKey(100) && binKey(0) < binKey(0.001) && binKey(5.09) < binKey(5.1));
  });

  it('reproduces Envoy\'s quantiles: a single 200 reports 205; {200,300,300} gives 205, 303.33…, 306.66…', () => {
    assert.deepEqual(quantiles(record([200]), SUPPORTED_QUANTILES), Array(10).fill(205));
    const q = quantiles(record([200, 300, 300]), [0, 0.25, 0.5, 0.75, 1]);
    assert.deepEqual(q, [205, 205, 303.3333333333333, 306.6666666666667, 306.6666666666667]);
  });

  it('reports NaN quantiles for an empty histogram', () => {
    assert.ok(quantiles(new Map(), [0.5]).every(Number.isNaN));
  });

  it('counts samples below a bound by bin lower bound, as Envoy\'s buckets do', () => {
    const bins = record([255, 1, 0, 7000]);
    assert.equal(countBelow(bins, 250), 3); // 255 is in [250, 260): lower bound 250 ≤ 250
    assert.equal(countBelow(bins, 0.5), 1); // only the zero
    assert.equal(countBelow(bins, 3600000), 4);
  });

  it('computes the sum from bin midpoints: one 300 sums to 304.918…', () => {
    assert.equal(approximateSum(record([300])), 304.91803278688524);
    assert.equal(approximateSum(record([0])), 0);
  });

  it('merges by adding counts', () => {
    const a = record([1, 2, 3]);
    addBins(a, record([3, 4]));
    assert.equal(sampleCount(a), 5);
    assert.equal(a.get(binKey(3)), 2);
  });
});
