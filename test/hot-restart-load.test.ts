import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runLoad } from '../scripts/hot-restart-load.js';

/**
 * The product's promise: a restart under load loses nothing. Ten hot restarts (short drain and
 * parent-shutdown times) while HTTP/1.1 keep-alive loops, HTTP/1.1 new-connection loops and an
 * h2c loop run without pause: not one request may fail. Figures (requests, hand-over times) are
 * printed by `node --import tsx scripts/hot-restart-load.ts`; this test asserts only the failures.
 */
describe('hot restart under load', () => {
  it('ten restarts, HTTP/1.1 keep-alive and new connections and h2c: 0 failed requests', async (t) => {
    const r = await runLoad(10, 1500, 3);
    t.diagnostic(`${r.requests} requests`);
    assert.deepEqual(Object.fromEntries(r.failures), {});
    assert.equal(r.handOverMs.length, 10);
    assert.ok(r.handOverMs.every((ms) => Number.isFinite(ms)), `every new epoch served the clients: ${r.handOverMs.join(', ')} ms`);
  });

  it('five restarts with a socket per worker (enable_reuse_port) and 2, 1, 3, 2, 1, 3 workers: every socket handed over, 0 failed requests', async (t) => {
    const r = await runLoad(5, 1500, 3, { reusePort: true, concurrency: (epoch) => [2, 1, 3][epoch % 3]! });
    t.diagnostic(`${r.requests} requests`);
    assert.deepEqual(Object.fromEntries(r.failures), {});
    assert.ok(r.handOverMs.every((ms) => Number.isFinite(ms)), `every new epoch served the clients: ${r.handOverMs.join(', ')} ms`);
  });
});
