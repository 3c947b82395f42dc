import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { routesListener } from './helpers/bootstraps.js';
import { fuzzAdmin } from './helpers/admin-fuzz.js';
import { httpRequest, startProxy, stopAllProxies, type RunningProxy } from './helpers/proxy.js';

/**
 * Issue 13's admin fuzz, kept small and seeded (scripts/probe-hostile.ts runs ten thousand):
 * fuzzed requests never get a 5xx or a dropped connection, the admin process survives them, and
 * nothing sent with a method other than POST changes the server's state.
 */

after(() => stopAllProxies());

/** What a mutation would change: readiness, health, runtime, drains, counters, recent lookups. */
async function fingerprint(p: RunningProxy): Promise<Record<string, string>> {
  const get = async (path: string) => {
    const r = await httpRequest(`http://${p.admin}${path}`);
    return `${r.status} ${r.body}`;
  };
  const serverInfo = JSON.parse((await httpRequest(`http://${p.admin}/server_info`)).body);
  return {
    ready: await get('/ready'),
    state: serverInfo.state,
    runtime: await get('/runtime'),
    listeners: await get('/listeners'),
    hotRestart: JSON.parse((await httpRequest(`http://${p.admin}/hot_restart_status`)).body).phase,
    counter: await get('/stats?filter=^http\\.web\\.downstream_rq_total$'),
    recentLookups: (await get('/stats/recentlookups')).split('\n')[0]!,
    serving: (await httpRequest(`http://127.0.0.1:${p.ports.get('web')}/`)).body,
  };
}

describe('the admin interface under fuzzed requests', () => {
  it('answers every one without a 5xx, survives, and changes nothing through a method other than POST', async () => {
    const p = await startProxy(
      {
        admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
        static_resources: { listeners: [routesListener('web', [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'up' } } }])] },
        layered_runtime: { layers: [{ name: 'static', static_layer: { 'some.key': 1 } }, { name: 'admin', admin_layer: {} }] },
      },
      ['--concurrency', '1'],
    );
    await httpRequest(`http://127.0.0.1:${p.ports.get('web')}/`);
    const admins = p.children();
    const before = await fingerprint(p);
    const help = (await httpRequest(`http://${p.admin}/help`)).body;
    const outcome = await fuzzAdmin(p.admin, help, 400, 13);
    assert.equal(outcome.requests, 400);
    assert.deepEqual(outcome.failures, []);
    assert.ok((outcome.statuses.get(400) ?? 0) > 0, 'mutating endpoints refused other methods');
    assert.deepEqual(p.children(), admins, 'the admin process and the workers are the same processes');
    // The fuzz itself sent requests to the listener only through /: one more is the fingerprint's own.
    const after = await fingerprint(p);
    const expected = { ...before, counter: before.counter!.replace(/: (\d+)/, (_, n) => `: ${Number(n) + 1}`) };
    assert.deepEqual(after, expected);
    assert.doesNotMatch(p.output(), /\bat .*\.(ts|js):\d+:\d+/, 'no stack trace in the log');
  });
});
