import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BreakerCounts, CLUSTER_CAPACITY, listenerCountKey, listenerRegionSlot, regionBytes, RESOURCES } from '../shared/upstream/breaker-counts.js';

/** The circuit-breaker region's counts (shared/upstream/breaker-counts.ts), on a plain buffer. */
describe('circuit-breaker counts', () => {
  it("releases a gone worker's counts in the clusters' and listeners' slots, and leaves the others' and the rest of the region alone", () => {
    const layout = { capacity: CLUSTER_CAPACITY, workers: 2 };
    const buffer = new ArrayBuffer(regionBytes(layout));
    const supervisor = new BreakerCounts(buffer, layout);
    const worker = new BreakerCounts(buffer, layout);
    for (const counts of [supervisor, worker]) {
      counts.assign('a', 0);
      counts.assign('b', 7);
    }
    worker.assign(listenerCountKey('ingress'), listenerRegionSlot(0));
    const bases = [
      ...RESOURCES.flatMap((r) => [worker.base('a', 0, r), worker.base('b', 1, r)]),
      worker.base(listenerCountKey('ingress'), 0, 'cx'),
    ];
    for (const base of bases) {
      worker.add(base, 0, 3);
      worker.add(base, 1, 5);
    }
    // A slot no cluster or listener uses is never written.
    const unused = new Int32Array(buffer);
    const farSlot = (100 * 2 * RESOURCES.length) * layout.workers;
    unused[farSlot] = 9;

    supervisor.clearWorker(0, [listenerRegionSlot(0)]);
    for (const base of bases) assert.equal(worker.total(base), 5, 'worker 1 keeps its counts; worker 0 holds nothing');
    assert.equal(unused[farSlot], 9);
  });
});
