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
