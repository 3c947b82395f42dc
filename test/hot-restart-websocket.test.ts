import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runWebSocketRestarts } from '../scripts/hot-restart-websocket.js';

/**
 * A hot restart under WebSocket load: WebSockets established on an old epoch keep working while
 * it drains and are ended cleanly (no error) when its drain time is over; new ones go to the new
 * epoch; not one handshake fails. Figures are printed by
 * `node --import tsx scripts/hot-restart-websocket.ts`; this test asserts the outcomes.
 */
describe('hot restart under WebSocket load', () => {
  it('two restarts: held WebSockets echoed to while their epoch drains and closed without error, new ones upgraded by the new epochs, 0 failed handshakes', async (t) => {
    const r = await runWebSocketRestarts(2, 3000, 6);
    t.diagnostic(`${r.handshakes} handshakes, ${r.echoes} messages echoed`);
    assert.deepEqual(Object.fromEntries(r.failures), {});
    assert.equal(r.held, 18);
    assert.ok(r.heldOnReplaced >= 6, `some held WebSockets were on a replaced epoch (${r.heldOnReplaced})`);
    assert.equal(r.echoedWhileDraining, r.heldOnReplaced, 'every held WebSocket on a replaced epoch kept working while it drained');
    assert.equal(r.closedWithError, 0);
    assert.ok((r.upgradedBy.get(2) ?? 0) > 0, `the last epoch upgraded new WebSockets: ${JSON.stringify([...r.upgradedBy])}`);
  });
});
